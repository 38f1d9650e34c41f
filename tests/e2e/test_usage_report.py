"""``claw-sessiond usage`` and GetUsageReport: real daemon, the CLI as a subprocess, a real pty for the chart.

Usage events on several UTC days (imported with their original times) and in
two currencies: groups by model, day and session; exact integer costs that
are never added across currencies; ``--since``/``--until``; ``--json`` with
``"format": 1``; an ASCII chart in a pipe and a unicode one on an 80-column
terminal.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from claw_sessiond_client import SessionClient
from tests.helpers.cli import claw, on_daemon, on_daemon_pty
from tests.helpers.daemon import DaemonProcess


def usage_event(n: int, ts: str, model: str, cost: int, currency: str, tokens: int) -> dict[str, Any]:
    return {
        "event_id": n,
        "session_id": "",
        "position": None,
        "type": "usage",
        "ts": ts,
        "trace_id": "t",
        "schema_version": 1,
        "payload": {
            "model": model,
            "pricing_version": "2026-01",
            "input_tokens": tokens,
            "output_tokens": tokens // 10,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "cost_micros": cost,
            "currency": currency,
        },
    }


def import_usage(c: SessionClient, sid: str, events: list[dict[str, Any]]) -> None:
    header = {
        "format": "claw-sessiond-export",
        "version": 1,
        "session_id": sid,
        "workdir": "/w",
        "created_at": events[0]["ts"],
        "updated_at": events[-1]["ts"],
        "events": len(events),
    }
    for e in events:
        e["session_id"] = sid
    c.import_lines([json.dumps(header), *(json.dumps(e) for e in events)])


def populate(c: SessionClient) -> None:
    import_usage(
        c,
        "s1",
        [
            usage_event(1, "2026-11-01T10:00:00.000000Z", "big-model", 1_500_000, "USD", 1000),
            usage_event(2, "2026-11-01T23:59:59.999999Z", "big-model", 250_001, "USD", 500),
            usage_event(3, "2026-11-02T00:00:00.000000Z", "small-model", 1, "USD", 100),
        ],
    )
    import_usage(
        c,
        "s2",
        [
            usage_event(1, "2026-11-02T08:00:00.000000Z", "big-model", 2_000_000, "EUR", 2000),
            usage_event(2, "2026-11-03T08:00:00.000000Z", "free-model", 0, "", 50),
        ],
    )


def cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return on_daemon(daemon, "usage", *args, timeout_s=30)


def report(daemon: DaemonProcess, *args: str) -> dict[str, Any]:
    proc = cli(daemon, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    assert out["format"] == 1 and out["truncated"] is False
    return out


@pytest.mark.smoke
def test_usage_by_model_day_and_session_never_mixes_currencies(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        populate(c)
        rows = c.usage_report().rows
        assert [(r.day, r.model, r.usage.currency, r.usage.cost_micros, r.events) for r in rows] == [
            ("2026-11-01", "big-model", "USD", 1_750_001, 2),
            ("2026-11-02", "big-model", "EUR", 2_000_000, 1),
            ("2026-11-02", "small-model", "USD", 1, 1),
            ("2026-11-03", "free-model", "", 0, 1),
        ]

    by_model = report(daemon)
    assert by_model["by"] == "model"
    assert [(g["model"], g["currency"], g["cost_micros"], g["input_tokens"]) for g in by_model["groups"]] == [
        ("big-model", "EUR", 2_000_000, 2000),
        ("big-model", "USD", 1_750_001, 1500),  # two currencies: two rows, never one sum
        ("free-model", "", 0, 50),
        ("small-model", "USD", 1, 100),
    ]
    assert [(t["currency"], t["cost_micros"], t["events"]) for t in by_model["totals"]] == [
        ("", 0, 1),
        ("EUR", 2_000_000, 1),
        ("USD", 1_750_002, 3),
    ]

    by_day = report(daemon, "--by", "day")
    assert [(g["day"], g["currency"]) for g in by_day["groups"]] == [
        ("2026-11-01", "USD"),
        ("2026-11-02", "EUR"),
        ("2026-11-02", "USD"),
        ("2026-11-03", ""),
    ]
    by_session = report(daemon, "--by", "session")
    assert [(g["session"], g["currency"], g["cost_micros"]) for g in by_session["groups"]] == [
        ("s1", "USD", 1_750_002),
        ("s2", "", 0),
        ("s2", "EUR", 2_000_000),
    ]
    window = report(daemon, "--by", "day", "--since", "2026-11-02", "--until", "2026-11-03")
    assert [g["day"] for g in window["groups"]] == ["2026-11-02", "2026-11-02"]
    assert window["since"] == "2026-11-02T00:00:00Z" and window["until"] == "2026-11-03T00:00:00Z"
    assert report(daemon, "--since", "2999-01-01")["groups"] == []


def test_usage_text_and_chart_fit_80_columns(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        populate(c)
    piped = cli(daemon)
    assert piped.returncode == 0, piped.stderr
    lines = piped.stdout.splitlines()
    assert lines[0].split()[:5] == ["MODEL", "EVENTS", "INPUT", "OUTPUT", "COST"]
    assert "1.750001 USD" in piped.stdout and "2.000000 EUR" in piped.stdout and "0.000001 USD" in piped.stdout
    assert all(len(line) <= 80 for line in lines), lines
    assert "#" in piped.stdout and "█" not in piped.stdout  # not a terminal: plain ASCII
    big = next(line for line in lines if line.startswith("big-model") and "EUR" in line)
    small = next(line for line in lines if line.startswith("small-model"))
    assert big.count("#") > small.count("#") >= 1

    tty = on_daemon_pty(daemon, "usage", "--by", "day")
    tty_lines = [line for line in tty.replace("\r\n", "\n").splitlines() if line]
    assert any("█" in line for line in tty_lines) and all(len(line) <= 80 for line in tty_lines), tty_lines
    ascii_tty = on_daemon_pty(daemon, "usage", "--ascii")
    assert "█" not in ascii_tty and "#" in ascii_tty

    assert cli(daemon, "--since", "last tuesday").returncode == 2
    assert cli(daemon, "--by", "week").returncode == 2


def test_no_usage_and_unreachable_daemon(daemon: DaemonProcess, tmp_path: Any) -> None:
    empty = cli(daemon)
    assert empty.returncode == 0 and "no usage recorded" in empty.stdout
    gone = claw("usage", "--socket", str(tmp_path / "nothing.sock"), "--no-offline", timeout_s=30)
    assert gone.returncode == 1 and "Try:" in gone.stderr
    # Without --no-offline: the read-only view of the workspace, which has no .claw/ here: a clear failure.
    empty_ws = tmp_path / "empty-ws"
    empty_ws.mkdir()
    offline = claw("usage", "--workspace", str(empty_ws), "--socket", str(tmp_path / "nothing.sock"), timeout_s=30)
    assert offline.returncode == 1 and "nothing is stored" in offline.stderr, offline.stderr
