"""The ``edits`` section: ``pop_item`` (EditTail ``remove_last=1``) against a serial Append and SQLiteSession.

An agent framework's ``pop_item`` removes the newest item and returns it. Ours
is one EditTail (one transaction: the edit event, the removed entry marked
hidden and returned); before EditTail it took a Clear and a re-Append of the
whole history. Pops are measured interleaved with the appends that refill
the session, one sync client, one call at a time, so the history keeps its
length (``Size.load_messages // 10`` entries) and both calls see the same
database; the OpenAI Agents SDK's ``SQLiteSession.pop_item`` is measured the
same way on its own file when the ``bench`` extra is installed.

Target: the pop's p50 within 2x the serial Append's.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

from bench.main import Row, Size, SQLiteSession, _fmt, _log, _Loop, _prefill_ours, _prefill_sqlite, _timed
from bench.procs import Daemon
from bench.stats import median, percentile, ratio
from bench.worker import content

__all__ = ["bench_pop", "pop_rows"]


def bench_pop(size: Size, daemon: Daemon, root: Path, loop: _Loop) -> dict[str, Any]:
    """Serial Append then ``pop_item`` in turns, ours and SQLiteSession's; p50 and p99 of each."""
    from claw_sessiond_client import Message, SessionClient

    n = max(10, size.load_messages // 10)
    rounds = max(10, size.serial // 2)
    client = SessionClient(address=daemon.address, autostart=False, timeout_s=30)
    session = None
    appends: list[float] = []
    pops: list[float] = []
    theirs: list[float] = []
    try:
        _prefill_ours(client, "pop", n, size.payload_bytes)
        if SQLiteSession is not None:
            session = SQLiteSession("pop", root / "agents-pop.db")
            _prefill_sqlite(session, n, size.payload_bytes, loop)
        for i in range(rounds + size.warmup):
            body = content(7, i, size.payload_bytes)
            appended = _timed(lambda body=body: client.append("pop", Message.user(body)))
            started = time.perf_counter()
            popped = client.edit_tail("pop", remove_last=1)  # back to n entries
            took = (time.perf_counter() - started) * 1000.0
            if [m.content for m in popped.removed] != [body]:
                raise AssertionError(f"pop returned {popped.removed!r}, expected the entry just appended")
            if session is not None:
                s = session
                loop.run(s.add_items([{"role": "user", "content": body}]))
                their = _timed(lambda s=s: loop.run(s.pop_item()))
            if i >= size.warmup:
                appends.append(appended)
                pops.append(took)
                if session is not None:
                    theirs.append(their)
        loaded = client.load("pop", workdir="/")
        if len(loaded.messages) != n:
            raise AssertionError(f"the session holds {len(loaded.messages)} entries, expected {n}")
    finally:
        if session is not None:
            session.close()
        client.close()
    out = {
        "entries": n,
        "rounds": rounds,
        "pop_p50_ms": median(pops),
        "pop_p99_ms": percentile(pops, 99),
        "append_p50_ms": median(appends),
        "append_p99_ms": percentile(appends, 99),
        "sqlite_pop_p50_ms": median(theirs),
    }
    _log(
        f"pop_item at {n:,} entries: EditTail p50 {out['pop_p50_ms']:.3f} ms, serial Append p50 "
        f"{out['append_p50_ms']:.3f} ms, SQLiteSession.pop_item p50 {out['sqlite_pop_p50_ms']:.3f} ms"
    )
    return out


def pop_rows(res: dict[str, Any]) -> list[Row]:
    """The section's rows of the results table."""
    pop = res["pop"]
    r = ratio(pop["pop_p50_ms"], pop["append_p50_ms"])
    rows = [
        Row(
            "edits",
            f"pop_item p50 (EditTail remove_last=1), {pop['entries']:,} entries",
            _fmt(pop["pop_p50_ms"], " ms", 3),
            _fmt(pop["append_p50_ms"], " ms serial Append", 3),
            r,
            "<= 2x",
            r <= 2,
        )
    ]
    theirs = pop["sqlite_pop_p50_ms"]
    rows.append(
        Row(
            "edits",
            "pop_item p50 vs SQLiteSession.pop_item",
            _fmt(pop["pop_p50_ms"], " ms", 3),
            "openai-agents not installed" if math.isnan(theirs) else _fmt(theirs, " ms", 3),
            ratio(pop["pop_p50_ms"], theirs),
            "(time ratio)",
            None,
        )
    )
    return rows
