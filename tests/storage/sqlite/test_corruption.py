"""Broken storage stops the daemon at start-up, naming the file, and leaves every byte as it was (SPEC §2).

Table-driven (STYLE T3): each case builds real state with a real daemon,
breaks it, checks that the daemon refuses to start (exit 1, a message
naming the file) and that the ``.db`` and ``-wal`` bytes are unchanged.
Positive controls (a crashed database with its own WAL, a clean one) must
start, so the check cannot pass by refusing everything.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from claw_sessiond_client import Message
from tests.helpers.daemon import DaemonProcess
from tests.helpers.data import populate_turns
from tests.helpers.figures import record
from tests.helpers.process import wait_refused
from tests.helpers.sqlite_file import db_path, file_digests, read_only

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)


@dataclass(frozen=True)
class Templates:
    """Real databases made by real daemons, copied into each case."""

    clean: Path  # stopped with SIGTERM: checkpointed, no WAL
    crashed: Path  # killed with SIGKILL after writes: data in its WAL
    other_crashed: Path  # another database, killed: its WAL is foreign to the others


def _make(root: Path, name: str, *, crash: bool, sessions: int) -> Path:
    ws = root / name
    ws.mkdir()
    d = DaemonProcess(ws).start()
    try:
        with d.client() as c:
            populate_turns(c, sessions=sessions, turns=4, prefix=name)
        if crash:
            d.kill()
            assert Path(f"{db_path(ws)}-wal").stat().st_size > 0, "a killed daemon should leave a WAL"
        else:
            assert d.terminate() == 0
    finally:
        d.stop()
    return db_path(ws)


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Templates:
    root = tmp_path_factory.mktemp("corruption-templates")
    return Templates(
        clean=_make(root, "clean", crash=False, sessions=3),
        crashed=_make(root, "crashed", crash=True, sessions=3),
        other_crashed=_make(root, "other", crash=True, sessions=5),
    )


def _copy_db(src: Path, dst_ws: Path, *, with_wal: bool = True) -> Path:
    claw = dst_ws / ".claw"
    claw.mkdir(mode=0o700)
    dst = claw / "sessions.db"
    shutil.copyfile(src, dst)
    wal = Path(f"{src}-wal")
    if with_wal and wal.exists():
        shutil.copyfile(wal, f"{dst}-wal")
    return dst


def _page_size(db: Path) -> int:
    raw = db.read_bytes()[16:18]
    size = int.from_bytes(raw, "big")
    return 65536 if size == 1 else size


# ---------------------------------------------------------------- the breakages


def random_bytes(t: Templates, ws: Path) -> Path:
    dst = _copy_db(t.clean, ws)
    dst.write_bytes(os.urandom(64 * 1024))
    return dst


def random_after_magic(t: Templates, ws: Path) -> Path:
    dst = _copy_db(t.clean, ws)
    dst.write_bytes(b"SQLite format 3\x00" + os.urandom(64 * 1024 - 16))
    return dst


def truncated_mid_page(t: Templates, ws: Path) -> Path:
    dst = _copy_db(t.clean, ws)
    size, page = dst.stat().st_size, _page_size(dst)
    assert size >= 4 * page, "template too small to truncate mid-page"
    with open(dst, "r+b") as fh:
        fh.truncate(size - page - page // 2)  # cut the last page off and half of the one before
    return dst


def truncated_in_first_page(t: Templates, ws: Path) -> Path:
    dst = _copy_db(t.clean, ws)
    with open(dst, "r+b") as fh:
        fh.truncate(1500)
    return dst


def header_magic_zeroed(t: Templates, ws: Path) -> Path:
    dst = _copy_db(t.clean, ws)
    with open(dst, "r+b") as fh:
        fh.write(b"\x00" * 16)
    return dst


def header_page_size_invalid(t: Templates, ws: Path) -> Path:
    dst = _copy_db(t.clean, ws)
    with open(dst, "r+b") as fh:
        fh.seek(16)
        fh.write((3).to_bytes(2, "big"))  # not a power of two
    return dst


def header_page_count_too_big(t: Templates, ws: Path) -> Path:
    """The header claims pages past the end of the file, and the root page of the tables is garbage."""
    dst = _copy_db(t.clean, ws)
    page = _page_size(dst)
    with open(dst, "r+b") as fh:
        fh.seek(page)  # page 2: a b-tree page of the schema
        fh.write(os.urandom(page))
    return dst


def btree_pages_overwritten(t: Templates, ws: Path) -> Path:
    dst = _copy_db(t.clean, ws)
    page = _page_size(dst)
    pages = dst.stat().st_size // page
    with open(dst, "r+b") as fh:
        for n in range(2, pages, 2):
            fh.seek(n * page + 8)
            fh.write(b"\xff" * 64)
    return dst


def wal_from_another_db(t: Templates, ws: Path) -> Path:
    """A clean database next to a (valid!) WAL written by a different database."""
    dst = _copy_db(t.clean, ws, with_wal=False)
    shutil.copyfile(f"{t.other_crashed}-wal", f"{dst}-wal")
    return dst


def wal_from_another_db_after_crash(t: Templates, ws: Path) -> Path:
    """A crashed database whose own WAL was replaced by another database's."""
    dst = _copy_db(t.crashed, ws, with_wal=False)
    shutil.copyfile(f"{t.other_crashed}-wal", f"{dst}-wal")
    return dst


def wal_without_db(t: Templates, ws: Path) -> Path:
    dst = _copy_db(t.crashed, ws)
    dst.write_bytes(b"")
    return dst


def foreign_sqlite_db(t: Templates, ws: Path) -> Path:
    claw = ws / ".claw"
    claw.mkdir(mode=0o700)
    dst = claw / "sessions.db"
    conn = sqlite3.connect(dst)
    conn.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("INSERT INTO notes(text) VALUES ('someone else''s data')")
    conn.commit()
    conn.close()
    return dst


def newer_schema(t: Templates, ws: Path) -> Path:
    dst = _copy_db(t.clean, ws)
    conn = sqlite3.connect(dst, isolation_level=None)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    return dst


CASES: dict[str, Callable[[Templates, Path], Path]] = {
    f.__name__: f
    for f in (
        random_bytes,
        random_after_magic,
        truncated_mid_page,
        truncated_in_first_page,
        header_magic_zeroed,
        header_page_size_invalid,
        header_page_count_too_big,
        btree_pages_overwritten,
        wal_from_another_db,
        wal_from_another_db_after_crash,
        wal_without_db,
        foreign_sqlite_db,
        newer_schema,
    )
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_broken_database_is_refused_and_untouched(case: str, templates: Templates, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    db = CASES[case](templates, ws)
    before = file_digests(db)
    d = DaemonProcess(ws)
    d.spawn()
    try:
        code = wait_refused(d)
    finally:
        d.stop()
    log = d.log()
    after = file_digests(db)
    assert code == 1, f"{case}: daemon should refuse to start (exit 1), got {code}:\n{log}"
    assert str(db) in log, f"{case}: the message should name {db}:\n{log}"
    assert "Traceback" not in log, f"{case}: a clear message, not a traceback:\n{log}"
    assert after == before, f"{case}: the files were changed: {before} -> {after}"
    assert not d.socket_path.exists(), f"{case}: a refused daemon must not leave a socket"
    record("corruption", cases_refused=1, files_unchanged=1)


@pytest.mark.parametrize("template", ["clean", "crashed"])
def test_healthy_database_starts_with_its_data(template: str, templates: Templates, tmp_path: Path) -> None:
    """Positive control: the same templates, unbroken, start and keep their data (recovery from a crash included)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    src: Path = getattr(templates, template)
    db = _copy_db(src, ws)
    with read_only(src) as conn:
        expected = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    assert expected > 0
    d = DaemonProcess(ws).start()
    try:
        with d.client() as c:
            stats = c.stats()
            assert stats["events"] == expected
            c.append(f"{template}0", Message.user("after restart"))
    finally:
        assert d.terminate() == 0
    with read_only(db) as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == expected + 1
    record("corruption", healthy_started=1)


def _wal_frames(wal: Path, page_size: int) -> int:
    return (wal.stat().st_size - 32) // (24 + page_size)


@pytest.mark.parametrize("damage", ["garbage_shm", "torn_wal_tail"])
def test_volatile_damage_after_a_crash_is_recovered_not_refused(
    damage: str, templates: Templates, tmp_path: Path
) -> None:
    """What a crash or power cut can really leave behind must not stop the daemon.

    ``-shm`` is an index SQLite rebuilds; a WAL whose last frame is torn ends
    at the last complete commit (only an unacknowledged write can be torn,
    since every acknowledged one was fsynced).
    """
    ws = tmp_path / "ws"
    ws.mkdir()
    db = _copy_db(templates.crashed, ws)
    wal = Path(f"{db}-wal")
    with read_only(templates.crashed) as conn:
        before = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    if damage == "garbage_shm":
        Path(f"{db}-shm").write_bytes(os.urandom(32 * 1024))
    else:
        page = _page_size(db)
        frames = _wal_frames(wal, page)
        assert frames > 2
        with open(wal, "r+b") as fh:
            fh.truncate(32 + (frames - 1) * (24 + page) + page // 3)  # the last frame cut mid-page
    d = DaemonProcess(ws).start()
    try:
        with d.client() as c:
            events = c.stats()["events"]
            assert 0 < events <= before
            if damage == "garbage_shm":
                assert events == before
            c.append("after", Message.user("written after recovery"))
    finally:
        assert d.terminate() == 0
    with read_only(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    record("corruption", healthy_started=1)
