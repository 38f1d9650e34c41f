"""Where a run's JSON goes: ``bench/results/<UTC time>-<mode>[-<label>].json``, kept in git.

The full-size runs are the record the README's and docs/benchmarks.md's
figures come from, so they are committed (``.gitignore`` keeps them). Scratch
output is ignored: ``latest-<mode>.json`` (a copy of the newest run of each
mode), tiny runs (``*-tiny*.json``: CI's and anyone's smoke runs), plots and
py-spy profiles.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import grpc

from bench.procs import ROOT

RESULTS = ROOT / "bench" / "results"

__all__ = ["RESULTS", "machine", "save"]


def machine() -> dict[str, Any]:
    """What the figures depend on: cores, Python, grpcio, SQLite."""
    return {
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "grpcio": grpc.__version__,
        "sqlite": sqlite3.sqlite_version,
    }


def save(res: dict[str, Any], label: str = "") -> Path:
    """Write ``res`` (it has ``mode`` and ``started_utc``) to its named file and to ``latest-<mode>.json``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    clean = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-")
    res["label"] = clean
    name = f"{res['started_utc']}-{res['mode']}{'-' + clean if clean else ''}.json"
    text = json.dumps(res, indent=2, default=str) + "\n"
    for path in (RESULTS / name, RESULTS / f"latest-{res['mode']}.json"):
        path.write_text(text)
    return RESULTS / name
