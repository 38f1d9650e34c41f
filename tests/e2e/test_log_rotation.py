"""The daemon's log file: RFC 3339 UTC timestamps, 0600, no symbolic links, rotation at a size cap.

A real daemon writes its own log (``serve --log-file``) and rotates it; the
handler is also driven directly with real files for the exact rotation rules.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from claw_sessiond.logs import LineFormatter, RotatingLogFile
from claw_sessiond_client import DaemonUnavailableError, InvalidRequestError, Message, SessionClient
from tests.helpers.daemon import DaemonProcess

_STAMPED = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR) claw_sessiond[.\w]* event=\w+"
)


pytestmark = pytest.mark.backend_neutral("the daemon's own log file: rotation, modes, links")


def _handler(path: Path, max_bytes: int, backups: int) -> tuple[logging.Logger, RotatingLogFile]:
    handler = RotatingLogFile(path, max_bytes, backups)
    handler.setFormatter(LineFormatter(timestamp=True))
    logger = logging.getLogger(f"claw_sessiond.test_rotation.{time.monotonic_ns()}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    return logger, handler


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.smoke
def test_rotation_keeps_backups_under_the_cap(tmp_path: Path) -> None:
    log = tmp_path / "sessiond.log"
    logger, handler = _handler(log, max_bytes=1000, backups=2)
    try:
        for i in range(200):
            logger.info("event=line n=%d", i)
    finally:
        handler.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["sessiond.log", "sessiond.log.1", "sessiond.log.2"], files
    for name in files:
        path = tmp_path / name
        assert 0 < path.stat().st_size <= 1000
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert all(_STAMPED.match(line) for line in _lines(path))
    kept = _lines(log.with_name("sessiond.log.2")) + _lines(log.with_name("sessiond.log.1")) + _lines(log)
    numbers = [int(line.rsplit("n=", 1)[1]) for line in kept]
    assert numbers == list(range(numbers[0], 200)), "the newest lines are kept, in order, none twice"


def test_no_backups_starts_the_file_afresh(tmp_path: Path) -> None:
    log = tmp_path / "sessiond.log"
    logger, handler = _handler(log, max_bytes=300, backups=0)
    try:
        for i in range(50):
            logger.info("event=line n=%d", i)
    finally:
        handler.close()
    assert [p.name for p in tmp_path.iterdir()] == ["sessiond.log"]
    assert 0 < log.stat().st_size <= 300 and _lines(log)[-1].endswith("n=49")


def test_a_file_rotated_by_another_process_is_reopened_not_rotated_again(tmp_path: Path) -> None:
    log = tmp_path / "sessiond.log"
    first_logger, first = _handler(log, max_bytes=2000, backups=3)
    try:
        for i in range(3):
            first_logger.info("event=first n=%d", i)
        second_logger, second = _handler(log, max_bytes=2000, backups=3)
        try:
            n = 0
            while not log.with_name("sessiond.log.1").exists():  # the second writer rotates once
                assert n < 100
                second_logger.info("event=second n=%d", n)
                n += 1
        finally:
            second.close()
        for i in range(3, 40):  # the first writer's file now has another name: past its cap it reopens
            first_logger.info("event=first n=%d", i)
    finally:
        first.close()
    assert not log.with_name("sessiond.log.2").exists(), "the renamed file was rotated a second time"
    everything = "".join(p.read_text() for p in tmp_path.iterdir())
    assert everything.count("event=first") == 40 and everything.count("event=second") == n
    assert "event=first n=39" in log.read_text()


def test_a_symbolic_link_at_the_log_path_is_refused(workspace: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("untouched\n")
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)
    link = claw / "sessiond.log"
    link.symlink_to(target)
    proc = subprocess.run(
        [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(workspace), "--log-file", str(link)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 1
    assert "cannot open the log file" in proc.stderr and "sessiond.log" in proc.stderr
    assert target.read_text() == "untouched\n"
    assert not (claw / "sessiond.sock").exists()


def test_daemon_writes_and_rotates_its_own_log(spawn_daemon: object, workspace: Path) -> None:
    log = workspace / ".claw" / "sessiond.log"
    daemon: DaemonProcess = spawn_daemon(  # type: ignore[operator]
        "--log-file", str(log), "--log-level", "debug", "--log-max-bytes", "4000", "--log-backups", "1"
    )
    with daemon.client() as client:
        for _ in range(60):  # each refused request is one debug line (event=rpc_error)
            with pytest.raises(InvalidRequestError):
                client.append("bad/id", Message.user("x"))
    assert daemon.terminate() == 0
    assert daemon.log() == "", "with --log-file nothing goes to stderr"
    rotated = log.with_name("sessiond.log.1")
    assert rotated.exists() and not log.with_name("sessiond.log.2").exists()
    for path in (log, rotated):
        assert path.stat().st_size <= 4000 and stat.S_IMODE(path.stat().st_mode) == 0o600
        assert all(_STAMPED.match(line) for line in _lines(path)), path.read_text()
    assert "event=stopped" in log.read_text()


def test_start_up_failure_is_in_the_log_file(spawn_daemon: object, workspace: Path) -> None:
    first: DaemonProcess = spawn_daemon()  # type: ignore[operator]
    log = workspace / ".claw" / "second.log"
    second: DaemonProcess = spawn_daemon("--log-file", str(log), start=False)  # type: ignore[operator]
    proc = second.spawn()
    assert proc.wait(30) == 1
    (line,) = [x for x in _lines(log) if "event=startup_failed" in x]
    assert _STAMPED.match(line) and "holds the lock" in line
    assert "holds the lock" in second.log(), "stderr still says why"
    assert first.proc is not None and first.proc.poll() is None
    os.remove(log)


def test_autostart_failure_before_the_log_is_open_is_quoted(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemon that dies before opening its log (here: a bad setting) left its words in .claw/sessiond.stderr."""
    monkeypatch.setenv("CLAW_SESSIOND_LOG_MAX_BYTES", "lots")
    started = time.monotonic()
    with SessionClient(workspace) as client, pytest.raises(DaemonUnavailableError) as failure:
        client.load("s", str(workspace))
    message = str(failure.value)
    assert "daemon exited with 2" in message and "invalid int value: 'lots'" in message, message
    assert time.monotonic() - started < 15
    early = workspace / ".claw" / "sessiond.stderr"
    assert stat.S_IMODE(early.stat().st_mode) == 0o600 and "--log-max-bytes" in early.read_text()
