"""A client that ends its AppendStream by closing its channel, every append answered, is not counted
as ``AppendStream CANCELLED`` by ``stats``: that is how clients end a stream they are done with.

Real client processes against a real daemon; the figures are read with ``claw-sessiond stats``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.helpers.cli import claw
from tests.helpers.daemon import DaemonProcess, run_python

#: A client process that appends through an AppendStream and closes its client with the stream open.
CLOSE_WITH_STREAM_OPEN = """
import asyncio, sys
from claw_sessiond_client import Message
from claw_sessiond_client.aio import AsyncSessionClient

async def main():
    async with AsyncSessionClient(address=sys.argv[1], autostart=False) as client:
        stream = client.append_stream()
        await stream.__aenter__()
        for n in range(3):
            await stream.append(sys.argv[2], Message.user(f"m{n}"))
        # the client closes its channel here, the stream still open: its own teardown

asyncio.run(main())
"""


def append_streams(workspace: Path) -> dict[str, int]:
    """AppendStream's request counts by code, as ``claw-sessiond stats --json`` gives them."""
    proc = claw("stats", "--json", "--workspace", str(workspace))
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["stats"].get("requests", [])
    return {r["code"]: r["count"] for r in rows if r["method"] == "AppendStream"}


@pytest.mark.smoke
def test_a_client_closing_its_stream_is_not_counted_cancelled(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    daemon = DaemonProcess(workspace).start()
    try:
        for n in range(3):
            run_python(CLOSE_WITH_STREAM_OPEN, daemon.address, f"s{n}")
        with daemon.client() as client:
            assert [len(client.load(f"s{n}", no_repair=True).messages) for n in range(3)] == [3, 3, 3]
        counts = append_streams(workspace)
        end = time.monotonic() + 10
        while not counts.get("OK") and time.monotonic() < end:  # the daemon sees the last teardown on its own time
            time.sleep(0.2)
            counts = append_streams(workspace)
        assert counts.get("OK", 0) >= 1 and "CANCELLED" not in counts, counts
        text = claw("stats", "--workspace", str(workspace)).stdout
        assert "AppendStream  OK" in text and "CANCELLED" not in text, text
    finally:
        daemon.stop()
