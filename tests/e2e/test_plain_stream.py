"""AsyncSessionClient.append over its long-lived AppendStream (``_plain_stream.py``): the unary Append's promises.

Each test runs the default client (appends over one stream) against a real
daemon and, where the promise is "same as unary", a ``stream_appends=False``
client beside it. Tests that work on a session of their own (``sid``) share the file's daemon
(``module_daemon``); those that restart, hang, idle out or tear down around it start their own.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import threading
import time
import warnings
from collections import Counter
from pathlib import Path

import pytest

from claw_sessiond_client import AsyncSessionClient, Message
from claw_sessiond_client import errors as E
from claw_sessiond_client._plain_stream import IDLE_CLOSE_S
from tests.helpers.daemon import DaemonProcess
from tests.helpers.tiers import scale


def _client(daemon: DaemonProcess, **kw: object) -> AsyncSessionClient:
    args: dict[str, object] = {"timeout_s": 30, "retry_window_s": 30, **kw}
    return AsyncSessionClient(address=daemon.address, autostart=False, **args)  # type: ignore[arg-type]


def _streaming(client: AsyncSessionClient) -> bool:
    plain = client._plain
    return plain is not None and plain._pipe._stream is not None and not plain._pipe._stream.broken


@pytest.mark.smoke
async def test_appends_go_over_one_stream_in_call_order(module_daemon: DaemonProcess, sid: str) -> None:
    n = scale(100, 500)
    async with _client(module_daemon) as client:
        results = await asyncio.gather(*(client.append(sid, Message.user(f"m{i}")) for i in range(n)))
        assert _streaming(client), "append() did not use the stream"
        assert [r.last_position for r in results] == list(range(1, n + 1))
        loaded = await client.load(sid, workdir="/")
    assert [m.content for m in loaded.messages] == [f"m{i}" for i in range(n)]


async def test_each_append_gets_its_own_error_with_the_unary_type_and_reason(
    module_daemon: DaemonProcess, sid: str
) -> None:
    bad = {
        "conflict": (sid, Message.user("stale"), {"expected_last_position": 9}),
        "bad id": ("bad/id", Message.user("x"), {}),
        "unknown result": (sid, [Message.user("before"), Message.tool("call_404", "r")], {}),
    }
    async with _client(module_daemon) as streamed, _client(module_daemon, stream_appends=False) as unary:
        await streamed.append(sid, Message.user("one"))
        seen: dict[str, list[tuple[type, str]]] = {}
        for client in (streamed, unary):
            calls = [client.append(session, msgs, **kw) for session, msgs, kw in bad.values()]
            calls.insert(1, client.append(sid, Message.user("fine")))
            out = await asyncio.gather(*calls, return_exceptions=True)
            assert not isinstance(out[1], BaseException), out[1]
            errors = [x for i, x in enumerate(out) if i != 1]
            assert all(isinstance(x, E.SessiondError) for x in errors), errors
            seen["stream" if client is streamed else "unary"] = [(type(x), str(x.reason)) for x in errors]  # type: ignore[union-attr]
        assert seen["stream"] == seen["unary"]
        assert [t for t, _ in seen["stream"]] == [E.SequenceConflictError, E.InvalidRequestError, E.ToolCallStateError]
        assert _streaming(streamed)
        loaded = await streamed.load(sid, workdir="/")
    assert [m.content for m in loaded.messages] == ["one", "fine", "fine"]


async def test_a_retried_request_id_is_replayed_not_written_twice(module_daemon: DaemonProcess, sid: str) -> None:
    async with _client(module_daemon) as client:
        first = await client.append(sid, Message.user("same"), request_id="req-1")
        again = await client.append(sid, Message.user("same"), request_id="req-1")
        assert (again.last_position, again.replayed, first.replayed) == (first.last_position, True, False)
        with pytest.raises(E.InvalidRequestError):
            await client.append(sid, Message.user("other content"), request_id="req-1")
        new = await client.append(sid, Message.user("fresh"), expected_last_position=1)
        assert new.last_position == 2
        loaded = await client.load(sid, workdir="/")
    assert [m.content for m in loaded.messages] == ["same", "fresh"]


async def test_a_daemon_restart_mid_use_loses_and_duplicates_nothing(spawn_daemon: object) -> None:
    daemon: DaemonProcess = spawn_daemon()  # type: ignore[operator]
    n = scale(150, 600)
    async with _client(daemon) as client:
        await client.append("s", Message.user("warm"))
        tasks = [asyncio.ensure_future(client.append("s", Message.user(f"m{i}"))) for i in range(n)]
        await asyncio.sleep(0.05)  # some committed, some in flight, some not sent yet
        daemon.kill()
        daemon.start()
        results = await asyncio.gather(*tasks)
        after = await client.append("s", Message.user("after"))  # the client reconnects by itself
        # The first stream opened after the restart may meet the channel still reconnecting
        # (the append then goes through the unary Append); the next append finds it ready.
        again = await client.append("s", Message.user("again"))
        assert _streaming(client), "no new stream after the restart"
        loaded = await client.load("s", workdir="/")
    counts = Counter(m.content for m in loaded.messages)
    assert set(counts) == {"warm", "after", "again", *(f"m{i}" for i in range(n))}, "an acknowledged append is missing"
    assert max(counts.values()) == 1, "an append was written twice"
    assert sorted(r.last_position for r in results) == list(range(2, n + 2))
    assert (after.last_position, again.last_position) == (n + 2, n + 3)
    assert [m.content for m in loaded.messages][1:-2] == [f"m{i}" for i in range(n)]


async def test_a_hung_daemon_gives_the_unary_error_within_the_retry_window(daemon: DaemonProcess) -> None:
    assert daemon.proc is not None
    kinds: dict[bool, type] = {}

    async def late(client: AsyncSessionClient, stream_appends: bool) -> None:
        started = time.monotonic()
        with pytest.raises(E.SessiondError) as err:
            await client.append("s", Message.user("late"), request_id=f"late-{stream_appends}")
        # A sanity bound, not a timing target: a 0.5 s deadline and a 1 s retry window, ten times over.
        assert time.monotonic() - started < 15, "the deadline was not kept"
        kinds[stream_appends] = type(err.value)

    # Both clients connected before the daemon hangs (a new client's connect deadline is
    # tests/e2e/test_client_errors.py's); their appends wait out their deadlines and retry windows
    # independently: at the same time.
    async with (
        _client(daemon, timeout_s=0.5, retry_window_s=1.0) as streamed,
        _client(daemon, timeout_s=0.5, retry_window_s=1.0, stream_appends=False) as unary,
    ):
        await streamed.append("s", Message.user("one"))
        await unary.stats()
        os.kill(daemon.proc.pid, signal.SIGSTOP)
        try:
            await asyncio.gather(late(streamed, True), late(unary, False))
        finally:
            os.kill(daemon.proc.pid, signal.SIGCONT)
    assert kinds[True] is kinds[False], kinds


def test_clients_on_many_threads_each_keep_their_order(module_daemon: DaemonProcess, sid: str) -> None:
    threads_n, per = 4, scale(40, 200)
    failures: list[BaseException] = []

    def worker(t: int) -> None:
        async def run() -> None:
            async with _client(module_daemon) as client:
                await asyncio.gather(*(client.append(sid, Message.user(f"t{t}-{i}")) for i in range(per)))

        try:
            asyncio.run(run())
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(threads_n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not any(th.is_alive() for th in threads) and not failures, failures
    with module_daemon.client() as c:
        contents = [m.content for m in c.load(sid, workdir="/").messages]
    assert len(contents) == len(set(contents)) == threads_n * per
    for t in range(threads_n):
        mine = [x for x in contents if x.startswith(f"t{t}-")]
        assert mine == [f"t{t}-{i}" for i in range(per)], "one client's appends were reordered"


async def test_an_idle_client_lets_the_daemon_idle_out(spawn_daemon: object, workspace: Path) -> None:
    daemon: DaemonProcess = spawn_daemon("--idle-exit-s", "1")  # type: ignore[operator]
    assert daemon.proc is not None
    async with _client(daemon) as client:
        await client.append("s", Message.user("one"))
        assert _streaming(client)
        await asyncio.sleep(IDLE_CLOSE_S + 0.5)
        assert not _streaming(client), "the idle stream was not finished"
        deadline = time.monotonic() + 20
        while daemon.proc.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert daemon.proc.poll() == 0, "the client's idle stream kept the daemon alive"


class _SkewLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock can be moved ahead: every timer due by then fires in its next turn."""

    skew = 0.0

    def time(self) -> float:
        return super().time() + self.skew


@pytest.mark.backend_neutral("the client's teardown on its own event loop; the daemon only answers appends")
def test_the_idle_close_firing_in_a_loops_last_turn_leaves_nothing_pending(daemon: DaemonProcess) -> None:
    # A program that ends its loop without closing the client (asyncio.run, a framework's loop per
    # call): asyncio.run cancels the tasks, then runs its last turns (async generators, the default
    # executor). The idle close's timer may fall due in the very last one: it must not start work
    # that no later turn runs (a task destroyed while pending, "coroutine ... never awaited").
    loop = _SkewLoop()

    async def use() -> AsyncSessionClient:
        client = _client(daemon)  # a grpc.aio channel belongs to the loop it is made on
        await client.append("s", Message.user("one"))
        assert _streaming(client)
        return client

    client = loop.run_until_complete(use())
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))  # as asyncio.run does
    loop.skew = IDLE_CLOSE_S + 60  # the idle timer is due in the next turn, which is the last
    loop.call_soon(loop.stop)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        loop.run_forever()
        left = asyncio.all_tasks(loop)
        loop.close()
        del pending, client
        gc.collect()
    assert not left, f"the loop's last turn started work no turn will run: {left}"
    assert not [w for w in seen if "never awaited" in str(w.message)], [str(w.message) for w in seen]
