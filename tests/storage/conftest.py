"""The storage contract suite's fixtures: one ``storage`` per backend, opened through the interface only.

Every test of ``tests/storage/`` (but not of its per-backend folders, such as
``tests/storage/sqlite/``) runs once per entry of :data:`BACKENDS`. A backend
joins the suite with one entry there: an async factory that opens a
:class:`~claw_sessiond.storage.Storage` for a test's folder, given overrides
of :class:`~claw_sessiond.config.Config` (such as ``max_open_tool_calls``).
Opening twice for the same folder must open the same stored data (the
suite closes and reopens to check durability), and two folders must never
share data (a round trip exports from one and imports into another).

Tests see what was stored only through the interface: load, history pages,
export, listings, usage and figures; never a backend's files or tables.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond.config import Config
from claw_sessiond.storage import Storage, open_storage
from claw_sessiond.storage.memory import open_memory
from tests.helpers.postgres import SHARED as POSTGRES
from tests.storage._support import BackendFactory, Stores


async def _sqlite(folder: Path, **overrides: Any) -> Storage:
    """The embedded default: a database file under the folder's ``.claw/``."""
    (folder / ".claw").mkdir(mode=0o700, parents=True, exist_ok=True)
    return await open_storage(Config(workspace=folder, **overrides))


async def _postgres(folder: Path, **overrides: Any) -> Storage:
    """A database of its own per folder on the test process's throwaway server (``tests/helpers/postgres.py``)."""
    (folder / ".claw").mkdir(mode=0o700, parents=True, exist_ok=True)
    url = POSTGRES.database_for(str(folder))
    return await open_storage(Config(workspace=folder, database_url=url, **overrides))


async def _memory(folder: Path, **overrides: Any) -> Storage:
    """The reference backend (``storage/memory/``): the folder names its store for the life of the test process."""
    return open_memory(str(folder), max_open_tool_calls=Config(workspace=folder, **overrides).max_open_tool_calls)


#: Every backend the contract suite runs against.
BACKENDS: dict[str, BackendFactory] = {
    "memory": _memory,
    "sqlite": _sqlite,
    "postgres": _postgres,
}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> str:
    """The name of the backend under test."""
    return str(request.param)


@pytest.fixture
async def stores(backend: str) -> AsyncIterator[Stores]:
    """Opens storages of the backend under test (closed at teardown)."""
    opened = Stores(BACKENDS[backend])
    try:
        yield opened
    finally:
        await opened.close_all()


@pytest.fixture
async def storage(stores: Stores, tmp_path: Path) -> Storage:
    """A fresh, empty storage of the backend under test, in ``tmp_path / "main"``."""
    return await stores.open(tmp_path / "main")
