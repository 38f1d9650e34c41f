"""A ``.claw/`` that others can write, and links planted in it (issue "Harden", item 2).

Whoever can write in ``.claw/`` can plant links where the daemon opens its
files: the lock (truncated and rewritten at start), the database and its
``-wal``, the auto-start log (appended by the client). Such a folder is
refused at start with a message naming it, its owner and its mode; the files
are opened without following links. Every test keeps a "precious" file of the
victim outside ``.claw/`` and checks that it is byte for byte unchanged.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from claw_sessiond_client import DaemonUnavailableError, SessionClient, UntrustedPeerError
from tests.helpers.backend import on_postgres
from tests.helpers.daemon import DaemonProcess
from tests.helpers.process import is_root, stop_lock_holder, wait_refused

NOBODY = 65534
PRECIOUS = b"the victim's own file: must never change\n"


@pytest.fixture
def precious(tmp_path: Path) -> Path:
    path = tmp_path / "precious.txt"
    path.write_bytes(PRECIOUS)
    return path


@pytest.fixture
def stop_autostarted(workspace: Path) -> Iterator[None]:
    """Teardown: stop a daemon a client auto-started (found by the pid in the lock file), by its pid."""
    yield
    stop_lock_holder(workspace)


def _refused(workspace: Path) -> tuple[int, str]:
    d = DaemonProcess(workspace)
    d.spawn()
    try:
        code = wait_refused(d)
    finally:
        d.stop()
    return code, d.log()


def _refused_as_a_database(workspace: Path, name: str) -> tuple[int, str]:
    """:func:`_refused` for a planted ``name``; asserts the exit code and that the log names it. On the
    SQLite file's own name with a PostgreSQL URL, the refusal is the configuration error naming both stores
    (exit 2, before anything is opened); else ``serve``'s check of the file (exit 1)."""
    code, log = _refused(workspace)
    path = workspace / ".claw" / name
    two_stores = on_postgres() and name == "sessions.db"
    assert code == (2 if two_stores else 1), log
    assert str(path) in log and "Traceback" not in log, log
    if two_stores:
        assert "also holds the SQLite file" in log and "PostgreSQL" in log, log
    return code, log


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_claw_folder_others_can_write_is_refused_and_left_alone(workspace: Path, mode: int) -> None:
    claw = workspace / ".claw"
    claw.mkdir()
    os.chmod(claw, mode)
    code, log = _refused(workspace)
    assert code == 1, log
    assert str(claw) in log and f"{mode:04o}" in log and "writable by group or others" in log, log
    assert "uid 0" in log or f"uid {os.getuid()}" in log, log  # names the owner
    assert "Traceback" not in log, log
    assert sorted(p.name for p in claw.iterdir()) == [], "nothing may be created in a refused folder"
    assert stat.S_IMODE(claw.stat().st_mode) == mode, "a refused folder is not changed either"


@pytest.mark.smoke
def test_a_lock_file_planted_as_a_link_is_not_followed(workspace: Path, precious: Path) -> None:
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)
    (claw / "sessiond.lock").symlink_to(precious)
    code, log = _refused(workspace)
    assert code == 1, log
    assert str(claw / "sessiond.lock") in log and "symbolic link" in log and "Traceback" not in log, log
    assert precious.read_bytes() == PRECIOUS


@pytest.mark.parametrize("name", ["sessions.db", "sessions.db-wal", "sessions.db-shm"])
def test_database_files_planted_as_links_are_not_followed(
    workspace: Path, tmp_path: Path, precious: Path, name: str
) -> None:
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)
    # A dangling link into the attacker's folder: SQLite would create the file there and write sessions into it.
    elsewhere = tmp_path / "attacker" / f"planted-{name}"
    elsewhere.parent.mkdir()
    (claw / name).symlink_to(elsewhere)
    code, log = _refused_as_a_database(workspace, name)
    assert code == 2 or "symbolic link" in log, log
    assert not elsewhere.exists(), f"{name}: SQLite followed the planted link"
    # A link to one of the victim's files: refused the same way, the file unchanged.
    os.unlink(claw / name)
    (claw / name).symlink_to(precious)
    code, log = _refused_as_a_database(workspace, name)
    assert code == 2 or "symbolic link" in log, log
    assert precious.read_bytes() == PRECIOUS
    assert (claw / name).is_symlink() and sorted(p.name for p in claw.iterdir()) == [name], "nothing was written"


@pytest.mark.skipif(not is_root(), reason="a file owned by another uid needs root (chown)")
def test_a_database_owned_by_another_user_is_refused(workspace: Path) -> None:
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)
    db = claw / "sessions.db"
    db.write_bytes(b"")
    os.chown(db, NOBODY, NOBODY)
    code, log = _refused_as_a_database(workspace, "sessions.db")
    assert code == 2 or f"uid {NOBODY}" in log, log
    assert db.stat().st_size == 0 and db.stat().st_uid == NOBODY


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_autostart_does_not_append_its_log_through_a_planted_link(
    workspace: Path, precious: Path, kind: str, stop_autostarted: None
) -> None:
    claw = workspace / ".claw"
    claw.mkdir(mode=0o700)
    (claw / "sessiond.log").symlink_to(precious)
    with pytest.raises(DaemonUnavailableError) as caught:
        if kind == "sync":
            with SessionClient(workspace, retry_window_s=0) as c:
                c.stats()
        else:
            import asyncio

            from claw_sessiond_client import AsyncSessionClient

            async def main() -> None:
                async with AsyncSessionClient(workspace, retry_window_s=0) as c:
                    await c.stats()

            asyncio.run(main())
    assert str(claw / "sessiond.log") in str(caught.value) and "symbolic link" in str(caught.value), caught.value
    assert precious.read_bytes() == PRECIOUS
    assert not (claw / "sessiond.lock").exists(), "no daemon may have been started"


def test_a_claw_folder_others_can_write_is_refused_by_the_autostarting_client(
    workspace: Path, stop_autostarted: None
) -> None:
    claw = workspace / ".claw"
    claw.mkdir()
    os.chmod(claw, 0o777)
    with pytest.raises(UntrustedPeerError) as caught, SessionClient(workspace, retry_window_s=0) as c:
        c.stats()
    assert str(claw) in str(caught.value) and "0777" in str(caught.value), caught.value
    assert sorted(p.name for p in claw.iterdir()) == [], "the client wrote into a folder others control"


def test_a_private_folder_still_works_and_read_bits_are_tightened(workspace: Path) -> None:
    """The positive control: a .claw/ that is ours and 0755 (readable, not writable) is tightened and served."""
    claw = workspace / ".claw"
    claw.mkdir()
    os.chmod(claw, 0o755)
    d = DaemonProcess(workspace).start()
    try:
        assert stat.S_IMODE(claw.stat().st_mode) == 0o700
        with d.client() as c:
            assert c.stats()["pid"] == d.proc.pid  # type: ignore[union-attr]
    finally:
        assert d.terminate() == 0
