"""The framework-session section (issue 14): what an OpenAI Agents SDK ``Session`` would ask of us.

Each measure is one operation of the SDK's ``SessionABC`` done both ways, in
the same run, serially, on sessions filled with the same items (Responses
message items as JSON, ``bench.worker.content`` sized):

* adding one item: ``Append`` of one entry carrying the item (format
  ``openai.responses``) versus ``SQLiteSession.add_items([item])``;
* ``get_items(limit=10)``: ``Load(last=10)`` versus ``get_items(limit=10)``,
  at 10 and at N entries (N = 10,000 at full size); the target is that ours
  at N stays within 1.2x of ours at 10 (a bounded read does not grow with
  the history);
* a full read: ``Load`` versus ``get_items()`` at N entries.

The rows are ratios ours / SQLiteSession (lower is better for times). The
``pop_item`` measure (``EditTail(remove_last=1)`` versus
``SQLiteSession.pop_item()``, target within 2x of a serial Append) belongs in
:data:`MEASURES` next to these, as one more function of the same shape.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.stats import median, ratio
from bench.worker import content

__all__ = ["MEASURES", "Bench", "bench_items", "item_rows"]

FORMAT = "openai.responses"


def item_of(seq: int, size: int) -> dict[str, Any]:
    """A Responses user message item whose text is ``size`` bytes."""
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": content(42, seq, size)}]}


def _entry(item: dict[str, Any]) -> Any:
    from claw_sessiond_client import Message

    raw = json.dumps(item, separators=(",", ":")).encode()
    return Message.user(item["content"][0]["text"], format=FORMAT, item=raw)


def _timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000.0


@dataclass
class Bench:
    """What the measures share: our client, the SDK session class (None: not installed), sizes, a loop."""

    client: Any
    sqlite_session: Any
    root: Path
    run: Callable[[Any], Any]
    payload: int
    large: int
    rounds: int
    warmup: int
    seq: int = 0

    def fill(self, sid: str, n: int) -> Any:
        """Sessions ``sid`` of ``n`` items, ours and (if installed) SQLiteSession's; returns the latter or None."""
        done = 0
        while done < n:
            batch = min(1000, n - done)
            self.client.append(sid, [_entry(item_of(done + i, self.payload)) for i in range(batch)])
            done += batch
        if self.sqlite_session is None:
            return None
        session = self.sqlite_session(sid, self.root / "agents-items.db")
        done = 0
        while done < n:
            batch = min(1000, n - done)
            self.run(session.add_items([item_of(done + i, self.payload) for i in range(batch)]))
            done += batch
        return session

    def samples(self, ours: Callable[[], Any], theirs: Callable[[], Any] | None) -> tuple[list[float], list[float]]:
        """Interleaved timings (ours, theirs) after a warm-up."""
        a: list[float] = []
        b: list[float] = []
        for rnd in range(self.rounds + self.warmup):
            t = _timed(ours)
            u = _timed(theirs) if theirs is not None else math.nan
            if rnd >= self.warmup:
                a.append(t)
                b.append(u)
        return a, [x for x in b if not math.isnan(x)]


def _pair(ours: list[float], theirs: list[float]) -> dict[str, float]:
    return {"ours_p50_ms": median(ours), "sqlite_p50_ms": median(theirs), "samples": len(ours)}


def measure_add_item(b: Bench) -> dict[str, Any]:
    """Adding one item to a 10-item session."""
    session = b.fill("items-add", 10)

    def ours() -> None:
        b.seq += 1
        b.client.append("items-add", _entry(item_of(10_000_000 + b.seq, b.payload)))

    def theirs() -> None:
        b.seq += 1
        b.run(session.add_items([item_of(10_000_000 + b.seq, b.payload)]))

    try:
        return {"add_item": _pair(*b.samples(ours, theirs if session else None))}
    finally:
        if session is not None:
            session.close()


def measure_reads(b: Bench) -> dict[str, Any]:
    """``get_items(limit=10)`` at 10 and at ``large`` items, and a full read at ``large``."""
    out: dict[str, Any] = {}
    for n in (10, b.large):
        sid = f"items-read-{n}"
        session = b.fill(sid, n)
        try:
            got = b.client.load(sid, workdir="/", last=10)
            if [m.item for m in got.messages] != [
                json.dumps(item_of(i, b.payload), separators=(",", ":")).encode() for i in range(n - 10, n)
            ]:
                raise AssertionError(f"Load(last=10) of {n} items did not return the last ten items")
            out[f"last10_at_{n}"] = _pair(
                *b.samples(
                    lambda sid=sid: b.client.load(sid, workdir="/", last=10),
                    (lambda s=session: b.run(s.get_items(limit=10))) if session else None,
                )
            )
            if n == b.large:
                out[f"full_at_{n}"] = _pair(
                    *b.samples(
                        lambda sid=sid: b.client.load(sid, workdir="/"),
                        (lambda s=session: b.run(s.get_items())) if session else None,
                    )
                )
        finally:
            if session is not None:
                session.close()
    return out


#: The measures of this section, in order; each takes a :class:`Bench` and returns result entries.
#: EditTail's ``pop_item`` measure joins here (see the module docstring).
MEASURES: list[Callable[[Bench], dict[str, Any]]] = [measure_add_item, measure_reads]


def bench_items(
    daemon_address: str, sqlite_session: Any, root: Path, run: Callable[[Any], Any], *, payload: int, large: int,
    rounds: int, warmup: int,
) -> dict[str, Any]:  # fmt: skip
    """Run every measure of :data:`MEASURES`; returns their results (and ``large``, the size used)."""
    from claw_sessiond_client import SessionClient

    client = SessionClient(address=daemon_address, autostart=False, timeout_s=120)
    try:
        b = Bench(client, sqlite_session, root, run, payload, large, rounds, warmup)
        out: dict[str, Any] = {"large": large, "sqlite": sqlite_session is not None}
        for measure in MEASURES:
            out.update(measure(b))
        return out
    finally:
        client.close()


def _fmt(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:,.2f} ms"


def item_rows(res: dict[str, Any]) -> list[dict[str, Any]]:
    """The table rows of this section (the fields of ``bench.main.Row``)."""
    rows: list[dict[str, Any]] = []
    large = res["large"]

    def row(key: str, label: str, target: str = "", met: bool | None = None) -> None:
        m = res[key]
        rows.append(
            {
                "section": "SDK session",
                "measure": label,
                "ours": _fmt(m["ours_p50_ms"]),
                "baseline": f"SQLiteSession {_fmt(m['sqlite_p50_ms'])}" if res["sqlite"] else "openai-agents absent",
                "ratio": ratio(m["ours_p50_ms"], m["sqlite_p50_ms"]),
                "target": target or "(ours / theirs)",
                "met": met,
            }
        )

    row("add_item", "add one item p50 (Append / add_items)")
    row("last10_at_10", "get_items(limit=10) at 10 (Load last=10)")
    row(f"last10_at_{large}", f"get_items(limit=10) at {large:,} (Load last=10)")
    growth = ratio(res[f"last10_at_{large}"]["ours_p50_ms"], res["last10_at_10"]["ours_p50_ms"])
    rows.append(
        {
            "section": "SDK session",
            "measure": f"Load(last=10): ours at {large:,} / ours at 10",
            "ours": "",
            "baseline": "",
            "ratio": growth,
            "target": "<= 1.2x",
            "met": growth <= 1.2,
        }
    )
    row(f"full_at_{large}", f"full read at {large:,} (Load / get_items())")
    # pop_item (EditTail remove_last=1 / SQLiteSession.pop_item, target <= 2x a serial Append) goes here.
    return rows
