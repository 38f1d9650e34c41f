"""A writer process for the crash test (tests/e2e/test_crash.py), run as a module.

Usage: ``python -m tests.helpers.crash_writer ADDRESS WRITER SESSIONS LOG STOP_FILE DEADLINE_EPOCH``
(WRITER ``loader``: Load the sessions in a loop instead, which repairs interrupted calls;
with ``CLAW_CRASH_STREAM=1``: the same appends, 4 in flight at a time over AppendStream.)

Appends batches with request ids ``w<WRITER>-<i>`` (the assistant of a kind-1 batch with an item
and a client id, :func:`item_fields`) round-robin to the given
sessions until STOP_FILE exists. Each append is retried with the *same*
request id until it is acknowledged, across daemon kills and restarts. Every
acknowledgement is logged as one JSON line:
``{"rid", "session", "first", "last", "texts", "replayed"}``; every third
append is followed by a RecordUsage (own request id, same retry rule), logged
as ``{"usage", "session", "input_tokens"}``. A request that is still
unacknowledged at DEADLINE_EPOCH is logged as ``{"rid", "gave_up": true}``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from claw_sessiond_client import Message, SessionClient, ToolCall
from claw_sessiond_client.errors import (
    DaemonUnavailableError,
    DeadlineError,
    ShuttingDownError,
    StorageUnavailableError,
)

_RETRY = (DaemonUnavailableError, DeadlineError, ShuttingDownError, StorageUnavailableError)


#: Messages per batch kind (``i % 4``); the crash test checks stored batches against it.
BATCH_SIZES = (1, 2, 3, 2)


def item_fields(rid: str) -> dict[str, Any]:
    """The item and client id of the assistant entry of a kind-1 batch."""
    return {"format": "crash.item", "item": (rid.encode() + b"\x00\xff") * 50, "client_id": f"{rid}/1"}


def _batch(rid: str, i: int) -> list[Message]:
    """Kind ``i % 4``: a user message; user + assistant; a whole tool round; an interrupted call (no result).

    Every other interrupted call (``i % 8 == 3``) is *pending* (awaiting approval): no Load may repair it,
    across every kill; the crash test answers it at the end.
    """
    kind = i % 4
    call = ToolCall(f"call-{rid}", "bash", json.dumps({"cmd": f"echo {rid}"}), pending=i % 8 == 3)
    if kind == 0:
        return [Message.user(f"{rid}/0")]
    if kind == 1:  # the assistant carries an item and a client id (their bytes are checked after the crashes)
        return [Message.user(f"{rid}/0"), Message.assistant(f"{rid}/1", **item_fields(rid))]
    if kind == 2:
        return [Message.user(f"{rid}/0"), Message.assistant(f"{rid}/1", [call]), Message.tool(call.id, f"{rid}/2")]
    return [Message.user(f"{rid}/0"), Message.assistant(f"{rid}/1", [call])]


def _load_loop(client: SessionClient, sessions: list[str], stop_file: str, deadline: float) -> int:
    """Loader mode: Load (and so repair) the sessions in turn until STOP_FILE exists."""
    n = 0
    while not os.path.exists(stop_file) and time.time() < deadline:
        try:
            client.load(sessions[n % len(sessions)], workdir="/tmp")
        except _RETRY:
            time.sleep(0.05)
            continue
        n += 1
        time.sleep(0.02)
    return 0


async def _stream_main(
    address: str, writer: str, sessions: list[str], log_path: str, stop_file: str, deadline: float
) -> int:
    """Stream mode: the same appends, 4 in flight at a time over AppendStream (AsyncSessionClient)."""
    import asyncio

    from claw_sessiond_client import AsyncSessionClient

    client = AsyncSessionClient(address=address, autostart=False, timeout_s=5, retry_window_s=0.5)

    async def until_acked(stream: Any, session: str, batch: list[Message], rid: str) -> Any:
        while True:
            try:
                return await stream.append(session, batch, request_id=rid)
            except _RETRY:
                if time.time() > deadline:
                    raise
                await asyncio.sleep(0.05)

    i = 0
    with open(log_path, "a", buffering=1) as log:
        async with client.append_stream() as stream:
            while not os.path.exists(stop_file) and time.time() < deadline:
                round_ = []
                for k in range(i, i + 4):
                    rid = f"w{writer}-{k}"
                    round_.append((rid, sessions[(int(writer) + k) % len(sessions)], _batch(rid, k)))
                # Pipelined: 4 in flight. What fails is retried one at a time, in order (a concurrent retry
                # could put a later append of a session before an earlier one).
                first = await asyncio.gather(
                    *(stream.append(s, b, request_id=r) for r, s, b in round_), return_exceptions=True
                )
                results = []
                for (rid, session, batch), outcome in zip(round_, first, strict=True):
                    if isinstance(outcome, BaseException):
                        if not isinstance(outcome, _RETRY):
                            raise outcome
                        try:
                            outcome = await until_acked(stream, session, batch, rid)
                        except _RETRY:
                            log.write(json.dumps({"rid": rid, "gave_up": True}) + "\n")
                            return 1
                    results.append(outcome)
                for (rid, session, batch), result in zip(round_, results, strict=True):
                    entry = {
                        "rid": rid,
                        "session": session,
                        "first": result.first_position,
                        "last": result.last_position,
                        "texts": [m.content for m in batch],
                        "replayed": result.replayed,
                    }
                    log.write(json.dumps(entry) + "\n")
                i += 4
    await client.close()
    return 0


def main() -> int:
    address, writer, sessions_arg, log_path, stop_file, deadline_arg = sys.argv[1:7]
    sessions = sessions_arg.split(",")
    deadline = float(deadline_arg)
    if os.environ.get("CLAW_CRASH_STREAM") == "1":
        import asyncio

        return asyncio.run(_stream_main(address, writer, sessions, log_path, stop_file, deadline))
    client = SessionClient(address=address, autostart=False, timeout_s=5, retry_window_s=0.5)
    if writer == "loader":
        return _load_loop(client, sessions, stop_file, deadline)
    i = 0
    with open(log_path, "a", buffering=1) as log:
        while not os.path.exists(stop_file) and time.time() < deadline:
            rid = f"w{writer}-{i}"
            session = sessions[(int(writer) + i) % len(sessions)]
            batch = _batch(rid, i)
            while True:
                try:
                    result = client.append(session, batch, request_id=rid)
                    break
                except _RETRY:
                    if time.time() > deadline:
                        log.write(json.dumps({"rid": rid, "gave_up": True}) + "\n")
                        return 1
                    time.sleep(0.05)
            record = {
                "rid": rid,
                "session": session,
                "first": result.first_position,
                "last": result.last_position,
                "texts": [m.content for m in batch],
                "replayed": result.replayed,
            }
            log.write(json.dumps(record) + "\n")
            if i % 3 == 2:  # usage with its own request id: counted exactly once, whatever the kills
                urid, tokens = f"u{writer}-{i}", i + 1
                while True:
                    try:
                        client.record_usage(session, input_tokens=tokens, output_tokens=1, request_id=urid)
                        break
                    except _RETRY:
                        if time.time() > deadline:
                            log.write(json.dumps({"rid": urid, "gave_up": True}) + "\n")
                            return 1
                        time.sleep(0.05)
                log.write(json.dumps({"usage": urid, "session": session, "input_tokens": tokens}) + "\n")
            i += 1
    client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
