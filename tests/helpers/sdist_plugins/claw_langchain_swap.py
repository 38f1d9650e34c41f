"""pytest plugin (``-p claw_langchain_swap``) for langchain-core's own tests, run from its sdist.

Loaded before the tests are collected, it puts :class:`DaemonHistory`, a
:class:`~claw_sessiond_client.contrib.langchain.ClawChatMessageHistory` bound to the real
daemon at ``$CLAW_LANGCHAIN_ADDRESS``, where ``langchain_core.chat_history`` keeps
``InMemoryChatMessageHistory``, so every test that constructs the in-memory history gets a
daemon-backed one instead (a fresh session each); the tests themselves are untouched. It
writes, per test, how many histories it made to ``$CLAW_LANGCHAIN_RECORD`` (JSON lines), so the
runner can tell which tests exercised the adapter.

Not part of this repository's own suite: tests/e2e/test_langchain_sdist.py puts this folder on
PYTHONPATH of a separate pytest process whose rootdir is the unpacked sdist.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import langchain_core.chat_history as chat_history
import pytest
from langchain_core.messages import BaseMessage

from claw_sessiond_client import SessionClient
from claw_sessiond_client.contrib.langchain import ClawChatMessageHistory

_CLIENT = SessionClient(address=os.environ["CLAW_LANGCHAIN_ADDRESS"], autostart=False)
_RECORD = os.environ["CLAW_LANGCHAIN_RECORD"]
_made = 0


class DaemonHistory(ClawChatMessageHistory):
    # The in-memory history's constructor (``messages=``) and value equality (the tests compare
    # stores of histories with ``==``), over a fresh session of the real daemon.
    __doc__ = ClawChatMessageHistory.__doc__

    def __init__(self, messages: Sequence[BaseMessage] | None = None, **_ignored: Any) -> None:
        global _made
        _made += 1
        super().__init__(f"lc-sdist-{uuid.uuid4().hex}", _CLIENT)
        if messages:
            self.add_messages(messages)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClawChatMessageHistory) and self.messages == other.messages

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"DaemonHistory(session_id={self.session_id!r}, messages={self.messages!r})"


chat_history.InMemoryChatMessageHistory = DaemonHistory  # type: ignore[misc]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    global _made
    _made = 0
    try:
        return (yield)
    finally:
        with open(_RECORD, "a", encoding="utf-8") as out:
            out.write(json.dumps({"test": item.nodeid, "histories": _made}) + "\n")
