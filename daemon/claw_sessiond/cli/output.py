"""What the commands print: ``--json`` documents, lines for people, tables, times and money.

Every ``--json`` document is an object whose first key is ``"format": 1``
(:func:`json_document`), written by :func:`print_json` (one indented document)
or :func:`print_json_line` (one document per line: JSON Lines). Both go through
:func:`claw_sessiond.cli.termsafe.json_text`: exact once parsed, and no
terminal control in the bytes. Every line for people goes through
:func:`claw_sessiond.cli.termsafe.visible` (:func:`say`, :func:`table`) and fits
the terminal's width (:mod:`claw_sessiond.cli.terminal`, 80 columns off a terminal).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from claw_sessiond_client import ToolCall, Usage

from ..words import counted
from . import terminal
from .termsafe import json_text, visible

__all__ = [
    "JSON_FORMAT",
    "Narrower",
    "call_json",
    "clip",
    "cost",
    "counted",
    "json_document",
    "print_json",
    "print_json_line",
    "rfc3339",
    "say",
    "short_time",
    "table",
    "usage_json",
]

#: The version of every ``--json`` document (its top-level ``"format"`` key); bumped only for breaking changes.
JSON_FORMAT: Final = 1


def call_json(call: ToolCall) -> dict[str, Any]:
    """A tool call in a ``--json`` document: its arguments parsed (text as stored when they are not JSON)."""
    out: dict[str, Any] = {"id": call.id, "name": call.name}
    if call.arguments_not_json:
        out["arguments"] = call.arguments
        out["arguments_not_json"] = True
    else:
        out["arguments"] = json.loads(call.arguments)
    if call.pending:
        out["pending"] = True
    return out


def json_document(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A ``--json`` document: ``{"format": 1, ...payload}`` (see docs/cli.md, "JSON output")."""
    return {"format": JSON_FORMAT, **payload}


def print_json(payload: Mapping[str, Any]) -> None:
    """Print one ``--json`` document (terminal-safe JSON, exact once parsed)."""
    sys.stdout.write(json_text(json_document(payload), indent=2) + "\n")


def print_json_line(payload: Mapping[str, Any], *, flush: bool = False) -> None:
    """Print one ``--json`` document on one line (JSON Lines: ``follow``, ``search``, ``usage``)."""
    print(json_text(json_document(payload)), flush=flush)


def say(text: str, *, err: bool = False, flush: bool = False) -> None:
    """Print a line for people: every stored or user-given string in it is made terminal-safe."""
    print(visible(text), file=sys.stderr if err else sys.stdout, flush=flush)


def rfc3339(value: dt.datetime | None) -> str | None:
    """The exact time as ``--json`` gives it (``...Z`` for UTC), or None."""
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def short_time(value: dt.datetime | None) -> str:
    """Seconds precision, UTC (``2026-12-02T16:17:05Z``): 20 columns; ``--json`` has the exact time."""
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else "-"


def cost(u: Usage) -> str:
    """A usage's cost for people (``0.000450 USD``; ``0`` when none)."""
    return f"{u.cost_micros / 1_000_000:.6f} {u.currency}".rstrip() if u.cost_micros else "0"


def usage_json(u: Usage) -> dict[str, Any]:
    """A usage in ``--json`` documents."""
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_read_tokens": u.cache_read_tokens,
        "cache_write_tokens": u.cache_write_tokens,
        "cost_micros": u.cost_micros,
        "currency": u.currency,
    }


def clip(text: str, room: int) -> str:
    """``text`` cut to ``room`` characters, the last one "…" when it was cut."""
    return text if len(text) <= room else text[: max(1, room - 1)] + "…"


@dataclass(frozen=True, slots=True)
class Narrower:
    """One way :func:`table` makes rows narrower: cut ``column`` with "…" down to ``least`` characters
    (never below its header's width), or, with ``least`` None, leave the column out."""

    column: int
    least: int | None = None


def table(
    rows: list[list[str]], right: set[int], *, narrower: Sequence[Narrower] = (), width: int | None = None
) -> list[str]:
    """Columns two spaces apart, ``right`` ones right-aligned; plain text, easy to grep.

    While a row would pass ``width`` (the terminal's; 0: no limit), the steps of ``narrower`` are taken in
    order, each only as far as needed; a table that still does not fit is printed as it is then.

    Returns:
        The headers (first row) of the columns left out.
    """
    rows = [[visible(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    limit = terminal.width() if width is None else width
    kept = list(range(len(widths)))
    for step in narrower:
        over = sum(widths[i] for i in kept) + 2 * (len(kept) - 1) - limit
        if not limit or over <= 0:
            break
        if step.least is None:
            kept.remove(step.column)
            continue
        room = max(step.least, len(rows[0][step.column]), widths[step.column] - over)
        if room < widths[step.column]:
            widths[step.column] = room
            rows = [[clip(c, room) if i == step.column else c for i, c in enumerate(r)] for r in rows]
    for row in rows:
        cells = [row[i].rjust(widths[i]) if i in right else row[i].ljust(widths[i]) for i in kept]
        print("  ".join(cells).rstrip())
    return [rows[0][i] for i in range(len(widths)) if i not in kept]
