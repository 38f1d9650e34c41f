"""The web viewer's first pages: a 100,000-session store's list and a 10,000-entry session's timeline.

``python -m bench.ui`` builds (once, then copies from the bench cache: ``bench/growth_db.py``) a
SQLite store of 100,000 two-message sessions and one session of 10,000 entries, starts the daemon
and ``claw-sessiond ui`` on it, and times the viewer's answers as the browser asks for them:

* the sessions list's first page (``/api/sessions?limit=50``, with the store's total);
* the big session's first page (``/api/sessions/big``: its last 200 entries);
* an older page near the big session's start (``before=400``): Load's last 201 entries before
  position 400 (``before_position`` with ``last``), a read that does not grow with the session.

The figure is the server's time (the viewer's ``Server-Timing`` header: from the request's arrival
to its answer, the daemon's call included), p50 and p90 over ``--rounds`` requests after warm-up;
the client's wall time is kept beside it. Target: the two first pages under 300 ms. Results go to
``bench/results/<time>-ui[-label].json``. ``--tiny`` runs 2,000 sessions and a 1,000-entry session.
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench import results
from bench.growth_db import _bulk_events, _connect, _session_row, _ts, cached_workspace, insert_events, write_sessions
from bench.procs import BenchError, Daemon, stop
from bench.stats import median, percentile

#: The big session's id.
BIG = "big"
#: The target of both first pages, server time (ms).
TARGET_MS = 300.0
_URL = re.compile(r"^claw-sessiond ui: http://127\.0\.0\.1:(\d+)/\?token=(\S+)$")


def _build(sessions: int, entries: int) -> Any:
    def build(db: Path) -> None:
        write_sessions(db, sessions)
        conn = _connect(db)
        try:
            conn.execute("BEGIN")
            conn.execute(
                "INSERT INTO sessions(session_id, workdir, created_at, updated_at, last_position, message_count, "
                "incarnation) VALUES (?, ?, ?, ?, ?, ?, ?)",
                _session_row(BIG, _ts(sessions * 1000 + 1), entries),
            )
            insert_events(conn, _bulk_events(BIG, 0, entries, 400))
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()

    return build


class _Viewer:
    """``claw-sessiond ui`` on a workspace: its port and secret, stopped by pid."""

    def __init__(self, workspace: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "claw_sessiond", "ui", "--workspace", str(workspace)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stdout is not None
        out = self.proc.stdout
        threading.Thread(target=lambda: lines.put(out.readline()), daemon=True).start()
        try:
            found = _URL.match(lines.get(timeout=60).strip())
        except queue.Empty:
            found = None
        if found is None:
            self.close()
            raise BenchError("claw-sessiond ui printed no URL line within 60 s")
        self.port, self.token = int(found.group(1)), found.group(2)

    def get(self, path: str) -> tuple[float, float, bytes]:
        """One GET: (server ms from Server-Timing, client wall ms, body)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            started = time.perf_counter()
            conn.request("GET", path, headers={"Authorization": f"Bearer {self.token}"})
            reply = conn.getresponse()
            body = reply.read()
            wall = (time.perf_counter() - started) * 1000.0
        finally:
            conn.close()
        if reply.status != 200:
            raise BenchError(f"GET {path}: {reply.status} {body[:200]!r}")
        timing = reply.getheader("Server-Timing", "")
        return float(timing.split("dur=")[1]), wall, body

    def close(self) -> None:
        stop(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _timed(viewer: _Viewer, path: str, rounds: int, warmup: int, check: Any) -> dict[str, float]:
    server: list[float] = []
    wall: list[float] = []
    for i in range(warmup + rounds):
        took, waited, body = viewer.get(path)
        check(body)
        if i >= warmup:
            server.append(took)
            wall.append(waited)
    return {
        "server_p50_ms": median(server),
        "server_p90_ms": percentile(server, 90),
        "wall_p50_ms": median(wall),
        "samples": len(server),
    }


def run(sessions: int, entries: int, rounds: int, label: str, tiny: bool) -> dict[str, Any]:
    import json

    root = Path(tempfile.mkdtemp(prefix="claw-bench-ui-"))
    daemon = viewer = None
    try:
        ws = root / "ws"
        cached = cached_workspace(ws, f"ui-{sessions}-{entries}", _build(sessions, entries))
        daemon = Daemon(ws)
        viewer = _Viewer(ws)

        def list_ok(body: bytes) -> None:
            page = json.loads(body)
            if page["total"] != sessions + 1 or len(page["sessions"]) != 50:
                raise BenchError(f"the list's first page: total {page['total']}, {len(page['sessions'])} rows")

        def tail_ok(body: bytes) -> None:
            page = json.loads(body)
            if len(page["entries"]) != 200 or page["entries"][-1]["position"] != entries:
                raise BenchError("the big session's first page is not its last 200 entries")

        def older_ok(body: bytes) -> None:
            if [e["position"] for e in json.loads(body)["entries"]] != list(range(200, 400)):
                raise BenchError("the older page is not entries 200-399")

        out: dict[str, Any] = {
            "mode": "ui",
            "started_utc": dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ"),
            "machine": results.machine(),
            "sessions": sessions + 1,
            "big_session_entries": entries,
            "store_from_cache": cached,
            "target_ms": TARGET_MS,
            "list_first_page": _timed(viewer, "/api/sessions?limit=50", rounds, 3, list_ok),
            "session_first_page": _timed(viewer, f"/api/sessions/{BIG}", rounds, 3, tail_ok),
            "session_older_page_near_start": _timed(viewer, f"/api/sessions/{BIG}?before=400", rounds, 3, older_ok),
        }
    finally:
        if viewer is not None:
            viewer.close()
        if daemon is not None:
            daemon.close()
        shutil.rmtree(root, ignore_errors=True)
    for name in ("list_first_page", "session_first_page", "session_older_page_near_start"):
        row = out[name]
        print(
            f"{name}: server p50 {row['server_p50_ms']:.1f} ms, p90 {row['server_p90_ms']:.1f} ms "
            f"(client wall p50 {row['wall_p50_ms']:.1f} ms, {row['samples']} requests)"
        )
    if not tiny:
        print(f"results: {results.save(out, label)}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ui", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="2,000 sessions and a 1,000-entry session; no file kept")
    parser.add_argument("--rounds", type=int, default=30, help="timed requests per page (default 30)")
    parser.add_argument("--label", default="", help="added to the results file's name")
    args = parser.parse_args(argv)
    sessions, entries = (2_000, 1_000) if args.tiny else (100_000, 10_000)
    os.umask(0o077)
    run(sessions, entries, args.rounds, args.label, args.tiny)
    return 0


if __name__ == "__main__":
    sys.exit(main())
