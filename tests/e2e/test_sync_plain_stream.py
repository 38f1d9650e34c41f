"""SessionClient.append over its long-lived AppendStream (``_sync_stream.py``): the unary Append's promises.

Each test runs the default sync client (appends over one stream) against a
real daemon and, where the promise is "same as unary", a
``stream_appends=False`` client beside it.
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from claw_sessiond_client import Message, SessionClient
from claw_sessiond_client import errors as E
from claw_sessiond_client._sync_stream import IDLE_CLOSE_S
from tests.helpers.daemon import DaemonProcess
from tests.helpers.tiers import scale


def _client(daemon: DaemonProcess, **kw: object) -> SessionClient:
    args: dict[str, object] = {"timeout_s": 30, "retry_window_s": 30, **kw}
    return SessionClient(address=daemon.address, autostart=False, **args)  # type: ignore[arg-type]


def _streaming(client: SessionClient) -> bool:
    appends = client._appends
    return appends is not None and appends._stream is not None and not appends._stream.ended


def _run_threads(n: int, target: object) -> list[BaseException]:
    failures: list[BaseException] = []

    def run(t: int) -> None:
        try:
            target(t)  # type: ignore[operator]
        except BaseException as exc:  # reported by the caller
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not any(th.is_alive() for th in threads), "a thread is still appending"
    return failures


@pytest.mark.smoke
def test_appends_go_over_one_stream_in_order(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    n = scale(100, 500)
    with _client(daemon) as client:
        results = [client.append(sid, Message.user(f"m{i}")) for i in range(n)]
        assert _streaming(client), "append() did not use the stream"
        assert [r.last_position for r in results] == list(range(1, n + 1))
        assert not any(r.replayed for r in results)
        loaded = client.load(sid, workdir="/")
    assert [m.content for m in loaded.messages] == [f"m{i}" for i in range(n)]


def test_each_append_gets_its_own_error_with_the_unary_type_and_reason(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    bad = [
        (sid, Message.user("stale"), {"expected_last_position": 9}),
        ("bad/id", Message.user("x"), {}),
        (sid, [Message.user("before"), Message.tool("call_404", "r")], {}),
        (sid, Message.user("too new"), {"expected_last_position": -1}),
    ]
    seen: dict[str, list[tuple[type, str]]] = {}
    with _client(daemon) as streamed, _client(daemon, stream_appends=False) as unary:
        streamed.append(sid, Message.user("one"))
        for name, client in (("stream", streamed), ("unary", unary)):
            errors = []
            for target, msgs, kw in bad:
                with pytest.raises(E.SessiondError) as err:
                    client.append(target, msgs, **kw)  # type: ignore[arg-type]
                errors.append((type(err.value), str(err.value.reason)))
                # The stream is not broken by an append's error: the next append goes over it.
                assert client.append(sid, Message.user("fine")).replayed is False
            seen[name] = errors
            if client is streamed:
                assert _streaming(streamed), "an append's error ended the stream"
        loaded = streamed.load(sid, workdir="/")
    assert seen["stream"] == seen["unary"]
    assert [t for t, _ in seen["stream"]] == [
        E.SequenceConflictError,
        E.InvalidRequestError,
        E.ToolCallStateError,
        E.SequenceConflictError,
    ]
    assert [m.content for m in loaded.messages] == ["one"] + ["fine"] * 8, "a refused append wrote something"


def test_expected_position_checks_hold_over_the_stream(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    with _client(daemon) as a, _client(daemon) as b:
        assert a.append(sid, Message.user("a1"), expected_last_position=-1).last_position == 1
        with pytest.raises(E.SequenceConflictError):
            b.append(sid, Message.user("b-new"), expected_last_position=-1)
        assert b.append(sid, Message.user("b2"), expected_last_position=1).last_position == 2
        with pytest.raises(E.SequenceConflictError):
            a.append(sid, Message.user("a-stale"), expected_last_position=1)
        assert _streaming(a) and _streaming(b)
        contents = [m.content for m in a.load(sid, workdir="/").messages]
    assert contents == ["a1", "b2"]


def test_a_retried_request_id_is_replayed_not_written_twice(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    with _client(daemon) as client, _client(daemon, stream_appends=False) as unary:
        first = client.append(sid, Message.user("same"), request_id="req-1")
        again = client.append(sid, Message.user("same"), request_id="req-1")
        across = unary.append(sid, Message.user("same"), request_id="req-1")  # the fallback's path
        assert (first.replayed, again.replayed, across.replayed) == (False, True, True)
        assert first.last_position == again.last_position == across.last_position == 1
        with pytest.raises(E.InvalidRequestError):
            client.append(sid, Message.user("other content"), request_id="req-1")
        assert client.append(sid, Message.user("fresh"), expected_last_position=1).last_position == 2
        loaded = client.load(sid, workdir="/")
    assert [m.content for m in loaded.messages] == ["same", "fresh"]


def test_a_daemon_restart_mid_stream_loses_and_duplicates_nothing(spawn_daemon: object) -> None:
    daemon: DaemonProcess = spawn_daemon()  # type: ignore[operator]
    threads_n, per = 4, scale(60, 250)
    results: dict[int, list[int]] = {t: [] for t in range(threads_n)}
    with _client(daemon) as client:
        client.append("s", Message.user("warm"))
        assert _streaming(client)
        started = threading.Event()

        def writer(t: int) -> None:
            for i in range(per):
                if t == 0 and i == per // 4:
                    started.set()
                # While the socket is gone the unary Append (the fallback) says so at once, as it
                # would without the stream; the caller retries with the same request id.
                for _ in range(200):
                    try:
                        reply = client.append("s", Message.user(f"t{t}-{i}"), request_id=f"r-{t}-{i}")
                        break
                    except E.DaemonUnavailableError:
                        time.sleep(0.05)
                else:
                    raise AssertionError("the daemon did not come back")
                results[t].append(reply.last_position)

        killer_done: list[bool] = []

        def killer() -> None:
            started.wait(60)
            daemon.kill()  # SIGKILL: appends committed, in flight and not yet sent
            daemon.start()
            killer_done.append(True)

        k = threading.Thread(target=killer)
        k.start()
        failures = _run_threads(threads_n, writer)
        k.join(120)
        assert not failures, failures
        assert killer_done, "the daemon was not restarted"
        assert client._appends is not None and client._appends.resent > 0, "no append was in flight at the kill"
        after = client.append("s", Message.user("after"))
        again = client.append("s", Message.user("again"))
        assert _streaming(client), "no new stream after the restart"
        loaded = client.load("s", workdir="/")
    counts = Counter(m.content for m in loaded.messages)
    want = {"warm", "after", "again", *(f"t{t}-{i}" for t in range(threads_n) for i in range(per))}
    assert set(counts) == want, "an acknowledged append is missing"
    assert max(counts.values()) == 1, "an append was written twice"
    positions = sorted(p for ps in results.values() for p in ps)
    assert positions == list(range(2, threads_n * per + 2)), "two appends were given one position"
    assert (after.last_position, again.last_position) == (threads_n * per + 2, threads_n * per + 3)
    contents = [m.content for m in loaded.messages]
    for t in range(threads_n):
        assert [x for x in contents if x.startswith(f"t{t}-")] == [f"t{t}-{i}" for i in range(per)], "reordered"


def test_a_hung_daemon_gives_the_unary_error_within_the_retry_window(daemon: DaemonProcess) -> None:
    assert daemon.proc is not None
    kinds: dict[bool, type] = {}

    def late(client: SessionClient, stream_appends: bool) -> None:
        started = time.monotonic()
        with pytest.raises(E.SessiondError) as err:
            client.append("s", Message.user("late"), request_id=f"late-{stream_appends}")
        # A sanity bound, not a timing target: a 0.5 s deadline and a 1 s retry window, ten times over.
        assert time.monotonic() - started < 15, "the deadline was not kept"
        kinds[stream_appends] = type(err.value)

    streamed = _client(daemon, timeout_s=0.5, retry_window_s=1.0)
    unary = _client(daemon, timeout_s=0.5, retry_window_s=1.0, stream_appends=False)
    try:
        streamed.append("s", Message.user("one"))
        unary.stats()  # connected too (a new client's connect deadline is tests/e2e/test_client_errors.py's)
        os.kill(daemon.proc.pid, signal.SIGSTOP)
        try:
            # The two appends wait out their deadlines and retry windows independently: at the same time.
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                for done in [pool.submit(late, streamed, True), pool.submit(late, unary, False)]:
                    done.result()
        finally:
            os.kill(daemon.proc.pid, signal.SIGCONT)
        assert kinds[True] is kinds[False], kinds
        # Once the daemon runs again, the same request id settles it: written once (the unary
        # client's timed-out "late" may or may not have landed, once at most).
        settled = streamed.append("s", Message.user("late"), request_id="late-True")
        contents = [m.content for m in streamed.load("s", workdir="/").messages]
        assert contents[0] == "one" and 1 <= contents.count("late") <= 2, contents
        assert settled.last_position in (2, 3)
    finally:
        streamed.close()
        unary.close()


def test_one_client_on_many_threads_keeps_each_threads_order(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    threads_n, per = 6, scale(40, 200)
    with _client(daemon) as client:

        def writer(t: int) -> None:
            for i in range(per):
                client.append(sid, Message.user(f"t{t}-{i}"))

        failures = _run_threads(threads_n, writer)
        assert not failures, failures
        assert _streaming(client)
        contents = [m.content for m in client.load(sid, workdir="/").messages]
    assert len(contents) == len(set(contents)) == threads_n * per
    for t in range(threads_n):
        assert [x for x in contents if x.startswith(f"t{t}-")] == [f"t{t}-{i}" for i in range(per)]


def test_a_closed_client_refuses_appends(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    client = _client(daemon)
    client.append(sid, Message.user("one"))
    client.close()
    with pytest.raises(E.ClientClosedError):
        client.append(sid, Message.user("two"))
    with daemon.client() as c:
        assert [m.content for m in c.load(sid, workdir="/").messages] == ["one"]


def test_an_idle_client_lets_the_daemon_idle_out(spawn_daemon: object, workspace: Path) -> None:
    daemon: DaemonProcess = spawn_daemon("--idle-exit-s", "1")  # type: ignore[operator]
    assert daemon.proc is not None
    with _client(daemon) as client:
        client.append("s", Message.user("one"))
        assert _streaming(client)
        time.sleep(IDLE_CLOSE_S + 0.5)
        assert not _streaming(client), "the idle stream was not finished"
        deadline = time.monotonic() + 20
        while daemon.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert daemon.proc.poll() == 0, "the client's idle stream kept the daemon alive"
