"""A pytest plugin for the OpenAI Agents SDK's own tests: its ``SQLiteSession`` becomes a
:class:`~claw_sessiond_client.contrib.openai_agents.ClawSession` on a real daemon.

Loaded by ``tests/e2e/test_contrib_openai_agents_sdk.py`` as ``-p claw_openai_agents_swap`` in a
pytest run inside the SDK's unpacked sdist (this folder alone on ``PYTHONPATH``), before any test
module is collected, so every ``from agents import SQLiteSession`` and ``from agents.memory
import SQLiteSession`` gets the swapped class. The tests' assertions are untouched.

Environment: ``CLAW_SWAP_ADDRESS``, the daemon's address; ``CLAW_SWAP_TOUCHED``, a file that
receives the node id of every test that constructed the swapped class (so the runner can tell
the swap took effect).

SQLiteSession's constructor takes ``(session_id, db_path=":memory:", sessions_table,
messages_table, session_settings)``. Sessions on one database file with different ids are
separate, and a new object on the same file and id sees the old one's items; an in-memory
database belongs to its object alone. So the daemon's session id is a digest of the resolved
file path, the table names and the id (a fresh random name for ``":memory:"``).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import types
import uuid
from collections.abc import Generator
from pathlib import Path
from typing import Any

import agents
import agents.memory
import agents.memory.sqlite_session
import grpc._channel  # noqa: F401 - loaded now, so that the clock below covers it
import pytest

from claw_sessiond_client.contrib.openai_agents import ClawSession

ADDRESS = os.environ["CLAW_SWAP_ADDRESS"]
_touched: set[str] = set()
_current = [""]


class SwappedSQLiteSession(ClawSession):
    """SQLiteSession's constructor over a ClawSession (the rest is ClawSession's own)."""

    def __init__(
        self,
        session_id: str,
        db_path: str | Path = ":memory:",
        sessions_table: str = "agent_sessions",
        messages_table: str = "agent_messages",
        session_settings: Any = None,
    ) -> None:
        space = uuid.uuid4().hex if str(db_path) == ":memory:" else str(Path(db_path).expanduser().resolve())
        key = "\0".join((space, sessions_table, messages_table, session_id))
        store_id = "sdk-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:48]
        super().__init__(
            session_id, address=ADDRESS, autostart=False, session_settings=session_settings, store_id=store_id
        )
        self.db_path = db_path
        self.sessions_table = sessions_table
        self.messages_table = messages_table
        _touched.add(_current[0])


# Some of the SDK's tests fake Fernet's clock with monkeypatch.setattr("cryptography.fernet.time.time", ...),
# which replaces time.time in the one time module every library shares. gRPC turns a call's timeout
# into an absolute deadline with time.time(), so under that fake clock (1970) every call to the daemon
# would expire at once: the transport, not the session, would fail. gRPC's modules get their own view
# of the time module, with the real wall clock, taken before any test runs.
_wall_clock = types.ModuleType("time")
_wall_clock.__dict__.update(time.__dict__)
for _name, _grpc_module in list(sys.modules.items()):
    if _name.split(".")[0] == "grpc" and getattr(_grpc_module, "time", None) is time:
        _grpc_module.time = _wall_clock  # type: ignore[attr-defined]

# Everything that names SQLiteSession gets the swapped class, including the SDK's EncryptedSession,
# which gives its own SQLiteSession an authenticated pop (ClawSession has one: _pop_item_with_validation).
for _module in (agents, agents.memory, agents.memory.sqlite_session):
    _module.SQLiteSession = SwappedSQLiteSession  # type: ignore[attr-defined]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    _current[0] = item.nodeid
    try:
        return (yield)
    finally:
        _current[0] = ""


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    out = os.environ.get("CLAW_SWAP_TOUCHED")
    if out:
        Path(out).write_text("".join(f"{nodeid}\n" for nodeid in sorted(_touched - {""})), encoding="utf-8")
