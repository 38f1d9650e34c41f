"""A Load by client id on PostgreSQL touches the same few blocks on a 10-entry and a 10,000-entry session.

Measured, not timed: ``pg_stat_statements`` counts, per statement and at its end, the shared buffer
blocks it touched (hit or read). A Load whose statements walked the session's history (its positions,
or the whole table) would touch hundreds of blocks on the large session. A real, private server (the
module must be preloaded), a real storage in this process (no daemon: nothing else runs statements).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from claw_sessiond.config import Config
from claw_sessiond.model import LoadWindow, Message
from claw_sessiond.storage import Storage, open_storage
from tests.helpers.postgres import Server, require_server, throwaway_postgres
from tests.storage._support import WORKDIR, append, history

pytestmark = pytest.mark.processes  # a server of its own: the full tier (tests/helpers/tiers.py)

#: Blocks the statements of one Load touched (the extension's own statements left out).
_BLOCKS = (
    "SELECT coalesce(sum(shared_blks_hit + shared_blks_read), 0) FROM pg_stat_statements "
    "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND query NOT LIKE '%pg_stat_statements%'"
)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with throwaway_postgres(require_server(), "-c shared_preload_libraries=pg_stat_statements") as running:
        yield running


@pytest.fixture
async def storage(server: Server, tmp_path: Path) -> AsyncIterator[Storage]:
    url = server.create_database("point_reads")
    server.psql("CREATE EXTENSION pg_stat_statements", "point_reads")
    (tmp_path / ".claw").mkdir(mode=0o700)
    opened = await open_storage(Config(workspace=tmp_path, database_url=url))
    try:
        yield opened
    finally:
        await opened.close()


async def _blocks(storage: Storage, server: Server, sid: str, client_id: str) -> int:
    server.psql("SELECT pg_stat_statements_reset()", "point_reads")
    loaded = await storage.load(sid, WORKDIR, "t", repair=False, window=LoadWindow(client_ids=(client_id,)))
    assert [m.client_id for m in await history(storage, loaded)] == [client_id]
    return int(server.psql(_BLOCKS, "point_reads"))


async def test_a_client_ids_load_touches_the_same_blocks_at_10_and_10000_entries(
    storage: Storage, server: Server
) -> None:
    for sid, n in (("small", 10), ("large", 10_000)):
        for start in range(0, n, 1000):
            batch = [Message("user", f"u{i}", client_id=f"e{i}") for i in range(start, min(n, start + 1000))]
            await append(storage, sid, *batch)
    server.psql("ANALYZE", "point_reads")  # the planner sees the table's real size, as a server long in use does
    for sid, client_id in (("small", "e5"), ("large", "e5000")):  # warm: the statements prepared, as in a daemon
        await _blocks(storage, server, sid, client_id)
    small = await _blocks(storage, server, "small", "e5")
    large = await _blocks(storage, server, "large", "e5000")
    assert small > 0, "the measure saw the Load's statements"
    # An index one level deeper on the large table costs a block or two per lookup; a walk costs hundreds.
    assert large <= small * 2 + 20, (small, large)
