"""The decisions both clients share (``_core``): retry, start a daemon, or raise at once.

Pure apart from looking at a temporary workspace's ``.claw/`` (no socket, no
lock, so "no daemon runs"); no daemon runs and nothing is sent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claw_sessiond_client import errors as E
from claw_sessiond_client._core import CallRetry, ClientCore, FollowRetry
from claw_sessiond_client._liveness import ping_verdict
from claw_sessiond_client._responses import BackupCopy
from claw_sessiond_client._runs import WatchCursor
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / ".claw").mkdir(mode=0o700)
    return tmp_path


def _core(workspace: Path | None, *, autostart: bool, retry_window_s: float = 15.0) -> ClientCore:
    address = None if workspace is not None else "unix:/nonexistent/sessiond.sock"
    return ClientCore(workspace, address, autostart, 30.0, retry_window_s)


def test_a_client_by_address_never_starts_a_daemon() -> None:
    core = _core(None, autostart=True)
    assert core.target == "unix:/nonexistent/sessiond.sock"
    assert core.workspace is None and core.autostart is False
    assert core.socket_path == Path("/nonexistent/sessiond.sock")
    core._verified = True
    assert CallRetry(core).needs_daemon(E.DaemonUnavailableError("gone")) is False
    assert core._verified is False  # whoever answers next is checked again


def test_a_unary_call_starts_at_most_two_daemons(workspace: Path) -> None:
    core = _core(workspace, autostart=True)
    retry = CallRetry(core)
    gone = E.DaemonUnavailableError("gone")
    assert [retry.needs_daemon(gone) for _ in range(3)] == [True, True, False]
    assert CallRetry(core).needs_daemon(E.DeadlineError("slow")) is False


def test_a_unary_call_backs_off_doubling_up_to_one_second(workspace: Path) -> None:
    retry = CallRetry(_core(workspace, autostart=False, retry_window_s=100.0))
    err = E.DaemonUnavailableError("restarting")
    assert [retry.pause(err) for _ in range(8)] == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]


def test_a_unary_call_gives_up_with_the_error_itself_when_the_window_is_spent(workspace: Path) -> None:
    retry = CallRetry(_core(workspace, autostart=False, retry_window_s=0.9))
    err = E.ShuttingDownError("stopping")
    delays = []
    with pytest.raises(E.ShuttingDownError) as raised:
        for _ in range(10):
            delays.append(retry.pause(err))
    assert raised.value is err
    assert delays[:3] == [0.05, 0.1, 0.2]
    assert all(d <= 0.9 for d in delays)  # the pause of 1 s would end after the window: raised instead


def test_an_error_that_is_not_an_outage_is_not_retried(workspace: Path) -> None:
    retry = CallRetry(_core(workspace, autostart=True))
    err = E.SequenceConflictError("moved on")
    assert retry.needs_daemon(err) is False
    with pytest.raises(E.SequenceConflictError) as raised:
        retry.pause(err)
    assert raised.value is err


def test_a_client_closed_during_the_call_says_so(workspace: Path) -> None:
    core = _core(workspace, autostart=True)
    retry, follow = CallRetry(core), FollowRetry(core, WatchCursor("s", 0, 1.0), "Watch")
    core._closed = True
    with pytest.raises(E.ClientClosedError):
        retry.needs_daemon(E.DaemonUnavailableError("gone"))
    with pytest.raises(E.ClientClosedError):
        follow.needs_daemon(E.DaemonUnavailableError("gone"))
    with pytest.raises(E.ClientClosedError):
        core._check_open()


def test_with_no_daemon_and_no_autostart_the_error_names_the_workspace(workspace: Path) -> None:
    core = _core(workspace, autostart=False)
    check = core._final_check(E.DaemonUnavailableError("UNAVAILABLE"))
    assert check is not None
    err = check()
    assert type(err) is E.DaemonUnavailableError
    assert err.message.startswith(f"no claw-sessiond runs for {workspace} (no socket at ")
    assert err.message.endswith(f"start one with: claw-sessiond serve --workspace {workspace}, or use autostart=True")
    assert err.metadata["workspace"] == str(workspace)


def test_once_a_daemon_answered_an_outage_is_retried_not_diagnosed(workspace: Path) -> None:
    core = _core(workspace, autostart=False)
    core._served = True
    assert core._final_check(E.DaemonUnavailableError("restarting")) is None
    assert _core(workspace, autostart=True)._final_check(E.DaemonUnavailableError("starting")) is None


def test_only_a_plain_deadline_is_checked_for_a_hung_daemon(workspace: Path) -> None:
    core = _core(workspace, autostart=False)
    deadline = E.DeadlineError("slow")
    check = core._final_check(deadline)
    assert check is not None
    assert check() is None  # nothing accepts on the socket: the deadline error itself is raised
    assert core._final_check(E.DaemonNotRespondingError("hung")) is None
    assert core._final_check(E.InvalidRequestError("bad")) is None


def test_a_watch_starts_one_daemon_and_diagnoses_only_before_its_first_reply(workspace: Path) -> None:
    core = _core(workspace, autostart=False)
    follow = FollowRetry(core, WatchCursor("s", 0, 1.0), "Watch")
    gone = E.DaemonUnavailableError("gone")
    assert follow.needs_daemon(gone) is False  # auto-start off
    assert follow.final_check(gone) is not None
    (event,) = follow.accept(pb.WatchResponse(position=1, cleared=True))
    assert event.cleared and event.position == 1
    assert follow.final_check(gone) is None
    assert follow.pause(E.WatchLaggedError("behind")) == 0.0
    ended = follow.ended()
    assert type(ended) is E.DaemonUnavailableError and ended.message == "the daemon ended the Watch stream"

    starting = FollowRetry(_core(workspace, autostart=True), WatchCursor("s", 0, 1.0), "WatchAll")
    assert [starting.needs_daemon(gone) for _ in range(2)] == [True, False]


def test_a_batched_watch_reply_delivers_each_new_event_once_in_order(workspace: Path) -> None:
    cursor = WatchCursor("s", 2, 1.0)
    assert cursor.request().batch  # the client asks for batches
    follow = FollowRetry(_core(workspace, autostart=False), cursor, "Watch")
    batch = pb.WatchResponse(events=[pb.WatchResponse(position=p, cleared=True, incarnation="i") for p in (1, 2, 3, 4)])
    assert [e.position for e in follow.accept(batch)] == [3, 4]  # 1 and 2 were delivered before
    assert cursor.position == 4 and cursor.incarnation == "i"
    assert follow.accept(pb.WatchResponse(events=[pb.WatchResponse(position=4, cleared=True)])) == []


def test_the_health_check_reading_of_errors() -> None:
    import grpc

    assert ping_verdict(grpc.StatusCode.DEADLINE_EXCEEDED) is False
    assert ping_verdict(grpc.StatusCode.UNAVAILABLE) is None
    assert ping_verdict(grpc.StatusCode.UNIMPLEMENTED) is True
    assert ping_verdict(grpc.StatusCode.UNAUTHENTICATED) is True


def test_a_backup_stream_must_start_with_figures_and_add_up_to_them() -> None:
    figures = pb.BackupFigures(sessions=2, events=9, bytes=5, schema_version=7)
    copy = BackupCopy()
    assert copy.data(pb.BackupResponse(figures=figures, data=b"abc")) == b"abc"
    assert copy.data(pb.BackupResponse(data=b"de")) == b"de"
    result = copy.result()
    assert (result.sessions, result.events, result.bytes, result.schema_version) == (2, 9, 5, 7)
    short = BackupCopy()
    short.data(pb.BackupResponse(figures=figures, data=b"abcd"))
    with pytest.raises(E.SessiondError, match=r"^the backup stream ended after 4 bytes of 5$"):
        short.result()
    with pytest.raises(E.SessiondError, match="did not start with the copy's figures"):
        BackupCopy().data(pb.BackupResponse(data=b"x"))
    with pytest.raises(E.SessiondError, match=r"^the backup stream ended after 0 bytes of unknown$"):
        BackupCopy().result()
