"""Session operations from two daemons on one PostgreSQL database at once (what no SQLite test can reach).

Two storages opened on the same database stand for two daemons: each has its own pool, lanes and
memory, so only the database orders what they do. Every case ends with what is stored, read
through the interface.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from claw_sessiond.config import Config
from claw_sessiond.errors import AlreadyExistsError, PreconditionError, Reason, SessiondError
from claw_sessiond.events import decode_events
from claw_sessiond.storage import Storage, open_storage
from claw_sessiond.validate_sessions import prepare_create, prepare_fork, prepare_update
from tests.helpers.postgres import SHARED as POSTGRES
from tests.storage._support import append, contents, export_lines, import_lines, renamed, user

WORKDIR = "/work/dir"


async def _two_daemons(tmp_path: Path) -> tuple[Storage, Storage]:
    (tmp_path / ".claw").mkdir(mode=0o700, exist_ok=True)
    config = Config(workspace=tmp_path, database_url=POSTGRES.database_for(str(tmp_path)))
    return await open_storage(config), await open_storage(config)


def _create(sid: str, request_id: str, state: str = '{"a":1}'):  # type: ignore[no-untyped-def]
    return prepare_create(
        sid, workdir=WORKDIR, state=state, labels={"k": "v"}, tool_policy="{}", request_id=request_id, trace_id=sid
    )


async def test_the_same_create_from_two_daemons_at_once_creates_once_and_replays(tmp_path: Path) -> None:
    a, b = await _two_daemons(tmp_path)
    try:
        for i in range(10):
            sid = f"s{i}"
            made = await asyncio.gather(a.create_session(_create(sid, "r")), b.create_session(_create(sid, "r")))
            assert sorted(m.replayed for m in made) == [False, True]
            assert made[0].session.settings.incarnation == made[1].session.settings.incarnation
            lines = [e async for e in _events(a, sid)]
            assert lines == ["session_settings", "state"]  # written once
    finally:
        await a.close()
        await b.close()


async def test_two_different_creates_of_one_id_at_once_one_is_refused(tmp_path: Path) -> None:
    a, b = await _two_daemons(tmp_path)
    try:
        for i in range(10):
            sid = f"s{i}"
            made = await asyncio.gather(
                a.create_session(_create(sid, "ra", '{"from":"a"}')),
                b.create_session(_create(sid, "rb", '{"from":"b"}')),
                return_exceptions=True,
            )
            refused = [m for m in made if isinstance(m, BaseException)]
            assert len(refused) == 1 and isinstance(refused[0], AlreadyExistsError)
            assert refused[0].reason == Reason.SESSION_EXISTS
            winner = next(m for m in made if not isinstance(m, BaseException))
            stored = await b.load(sid, WORKDIR, "t", repair=False)
            assert stored.session.settings.state == winner.session.settings.state
    finally:
        await a.close()
        await b.close()


#: Rounds of each race (each round a new id; the two writes meet on it at once).
RACES = 10


async def _figures(store: Storage) -> tuple[int, int, int]:
    f = await store.figures()
    return f.sessions, f.events, f.request_records


def _one_refused(made: list[object]) -> tuple[object, SessiondError]:
    """The winner and the refusal of a race: exactly one write succeeded, the other is SESSION_EXISTS."""
    refused = [m for m in made if isinstance(m, BaseException)]
    assert len(refused) == 1, f"expected one refusal, got {made}"
    assert isinstance(refused[0], AlreadyExistsError | PreconditionError), repr(refused[0])
    assert refused[0].reason == Reason.SESSION_EXISTS, repr(refused[0])
    return next(m for m in made if not isinstance(m, BaseException)), refused[0]


async def test_two_imports_of_one_new_id_at_once_one_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    """Issue 17 item 12: the second import ended on the unique keys (UNAVAILABLE) instead of SESSION_EXISTS."""
    a, b = await _two_daemons(tmp_path)
    try:
        await append(a, "from-a", user("a one"), user("a two"))
        await append(a, "from-b", user("b one"), user("b two"), user("b three"))
        lines_a, lines_b = await export_lines(a, "from-a"), await export_lines(a, "from-b")
        for i in range(RACES):
            sid = f"imported-{i}"
            before = await _figures(a)
            made = await asyncio.gather(
                import_lines(a, renamed(lines_a, sid)), import_lines(b, renamed(lines_b, sid)), return_exceptions=True
            )
            winner, _refused = _one_refused(made)
            won_a = made[0] is winner
            assert winner == (2 if won_a else 3)
            assert await contents(b, sid) == (["a one", "a two"] if won_a else ["b one", "b two", "b three"])
            sessions, events, records = await _figures(a)
            assert (sessions, events, records) == (before[0] + 1, before[1] + winner, before[2])  # the loser: nothing
    finally:
        await a.close()
        await b.close()


async def test_an_import_and_a_create_of_one_new_id_at_once_one_is_refused(tmp_path: Path) -> None:
    a, b = await _two_daemons(tmp_path)
    try:
        await append(a, "src", user("imported"))
        lines = await export_lines(a, "src")
        for i in range(RACES):
            sid = f"both-{i}"
            before = await _figures(a)
            made = await asyncio.gather(
                import_lines(a, renamed(lines, sid)), b.create_session(_create(sid, "")), return_exceptions=True
            )
            winner, _refused = _one_refused(made)
            imported = made[0] is winner
            assert await contents(b, sid) == (["imported"] if imported else [])
            stored = await b.load(sid, WORKDIR, "t", repair=False)
            assert stored.session.settings.state == ("{}" if imported else '{"a":1}')
            sessions, events, _records = await _figures(a)
            assert sessions == before[0] + 1
            assert events == before[1] + (1 if imported else 2)  # the entry; or the create's settings and state
    finally:
        await a.close()
        await b.close()


async def test_two_forks_to_one_new_id_at_once_one_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    a, b = await _two_daemons(tmp_path)
    try:
        await append(a, "src-a", user("a one"))
        await append(a, "src-b", user("b one"), user("b two"))

        def fork(src: str, sid: str):  # type: ignore[no-untyped-def]
            return prepare_fork(
                src, sid, up_to_position=0, workdir=WORKDIR, labels=None, request_id=f"{src}-{sid}", trace_id="t"
            )

        for i in range(RACES):
            sid = f"forked-{i}"
            before = await _figures(a)
            made = await asyncio.gather(
                a.fork_session(fork("src-a", sid)), b.fork_session(fork("src-b", sid)), return_exceptions=True
            )
            winner, _refused = _one_refused(made)
            won_a = made[0] is winner
            assert await contents(b, sid) == (["a one"] if won_a else ["b one", "b two"])
            sessions, events, records = await _figures(a)
            assert sessions == before[0] + 1 and records == before[2] + 1
            assert events == before[1] + 1 + (1 if won_a else 2)  # settings, then the copies
    finally:
        await a.close()
        await b.close()


async def test_deltas_to_one_scope_from_many_sessions_on_two_daemons_lose_nothing(tmp_path: Path) -> None:
    rounds = 3
    a, b = await _two_daemons(tmp_path)
    try:
        sessions = [f"s{i}" for i in range(8)]
        for sid in sessions:
            await a.create_session(_create(sid, ""))

        async def writes(store: Storage, sid: str) -> None:
            for r in range(rounds):
                # each write also names a second scope, in an order that differs by session (no deadlock)
                scopes = ["app:x", "app:y"] if int(sid[1:]) % 2 else ["app:y", "app:x"]
                job = prepare_update(
                    sid,
                    state_deltas=[(s, json.dumps({f"{sid}-{r}": r})) for s in scopes],
                    set_labels={},
                    remove_labels=[],
                    tool_policy=None,
                    expected_last_position=0,
                    request_id="",
                    trace_id="t",
                )
                await store.update_session(job)

        await asyncio.gather(*(writes(a if i % 2 else b, sid) for i, sid in enumerate(sessions)))
        wanted = {f"{sid}-{r}": r for sid in sessions for r in range(rounds)}
        for scope in await a.scope_states(["app:x", "app:y"]):
            assert json.loads(scope.state) == wanted
    finally:
        await a.close()
        await b.close()


async def _events(store: Storage, sid: str):  # type: ignore[no-untyped-def]
    found = await store.export_start(sid)
    assert found is not None
    _header, cursor, last = found
    async for page in store.export_pages(cursor, last):
        for event in decode_events(page):
            yield event.type
