"""LangChain chat history kept by claw-sessiond: :class:`ClawChatMessageHistory`.

Install with ``pip install './clients/python[langchain]' .`` in a checkout (pins ``langchain-core``; the
git URL form: README's Install section)::

    from claw_sessiond_client import SessionClient
    from claw_sessiond_client.contrib.langchain import ClawChatMessageHistory

    with SessionClient(".") as client:
        history = ClawChatMessageHistory("chat-1", client)
        history.add_messages([HumanMessage("hi"), AIMessage("hello")])
        assert history.messages == [HumanMessage("hi"), AIMessage("hello")]

Each message is one entry of the session, format ``langchain``, whose item is the JSON of
``message_to_dict(message)``: every field of every message type comes back equal (ids,
``additional_kwargs``, ``response_metadata``, ``usage_metadata``, content blocks with images and
signed thinking, tool calls valid and invalid, a tool message's status and artifact, chunks).
What the daemon derives beside it for search, the CLI and tool-call pairing is described in
:mod:`claw_sessiond_client.contrib._langchain_entries` and docs/adapters.md.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Iterator, Sequence
from typing import Any

from claw_sessiond_client.install import missing_framework

try:
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.messages import BaseMessage
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise missing_framework(__name__, "langchain-core", client_extra="langchain") from exc

from claw_sessiond_client import AsyncSessionClient, LoadResult, Message, SessionClient
from claw_sessiond_client.errors import DaemonUnavailableError, SequenceConflictError, SessiondError

from ._langchain_entries import (
    FORMAT,
    MAX_DERIVED_ARGUMENTS_BYTES,
    MAX_DERIVED_TEXT_BYTES,
    POLICY,
    Known,
    decode_entries,
    derive_entries,
    encode_item,
)
from ._names import store_id

__all__ = [
    "FORMAT",
    "MAX_BATCH_BYTES",
    "MAX_BATCH_MESSAGES",
    "MAX_DERIVED_ARGUMENTS_BYTES",
    "MAX_DERIVED_TEXT_BYTES",
    "ClawChatMessageHistory",
]

#: A batch larger than this is sent in several appends (each one atomic).
MAX_BATCH_MESSAGES = 500
#: ... and so is one whose items and text add up to more than this many bytes.
MAX_BATCH_BYTES = 32 * 1024 * 1024
#: Reasons of a refusal that a second derivation, against the stored history, avoids.
_INDEX_CONFLICTS = frozenset({"CLIENT_ID_EXISTS", "DUPLICATE_TOOL_CALL_ID", "TOOL_CALL_ALREADY_ANSWERED"})
#: How often a batch is derived again when another writer appended in between ...
_ATTEMPTS = 30
#: ... after a random pause of up to this many seconds, doubling from 2 ms per attempt (writers racing
#: on one session would otherwise keep meeting each other: three threads once lost ten rounds in a row).
_MAX_PAUSE_S = 0.1


def _pause_s(attempt: int) -> float:
    """A random pause before attempt ``attempt + 1`` (full jitter)."""
    return random.uniform(0, min(_MAX_PAUSE_S, 0.002 * 2**attempt))


class ClawChatMessageHistory(BaseChatMessageHistory):
    """A LangChain chat message history stored in a claw-sessiond session.

    Note that LangChain has deprecated ``BaseChatMessageHistory`` (since langchain-core 1.6.4,
    for removal in 2.0) in favour of LangGraph's persistence, see
    https://docs.langchain.com/oss/python/langchain/short-term-memory ; this class implements
    it for the code that still uses it (``RunnableWithMessageHistory``, chains, agents).

    Args:
        session_id: the history's id: any string, as LangChain's other stores take. The
            daemon session that holds it is ``store_id``
            (:func:`~claw_sessiond_client.contrib._names.store_id`): the same id when the daemon
            takes it and it holds no ``%`` (``"chat-1"``), else escaped (``"user/123"`` is
            ``"user%2F123"``); ``TypeError`` if it is not a str.
        client: the sync client to use (not closed by this class). Default: one made from
            ``workspace`` / ``address`` / ``token`` and closed by :meth:`close`.
        async_client: the asyncio client for :meth:`aget_messages`, :meth:`aadd_messages`
            and :meth:`aclear`, used only on the event loop it belongs to. Default: the history
            makes one asyncio client per event loop, to the sync client's address.
        workspace, address, token: how to reach the daemon when ``client`` is not given
            (as for :class:`~claw_sessiond_client.SessionClient`).
        erase_on_clear: :meth:`clear` erases the stored messages (as LangChain's other stores
            delete them); False keeps them in the session's log, hidden (claw's plain Clear).

    Reading (``messages``) loads the session without repair and without writing anything.
    ``add_messages`` appends the batch in one atomic append (a batch over
    ``MAX_BATCH_MESSAGES`` messages or ``MAX_BATCH_BYTES`` bytes in several), with the tool
    policy LangChain needs (no repair; orphan results and id-less calls allowed). A message
    that LangChain cannot serialize to JSON (bytes in an artifact) raises ``TypeError``
    before anything is sent; daemon errors are raised as
    :class:`~claw_sessiond_client.errors.SessiondError` subclasses.
    """

    def __init__(
        self,
        session_id: str,
        client: SessionClient | None = None,
        *,
        async_client: AsyncSessionClient | None = None,
        workspace: str | os.PathLike[str] | None = None,
        address: str | None = None,
        token: str | None = None,
        erase_on_clear: bool = True,
    ) -> None:
        self.store_id = store_id(session_id)
        self.session_id = session_id
        self.erase_on_clear = erase_on_clear
        self._owns_client = client is None and async_client is None
        if client is None and async_client is None:
            client = SessionClient(workspace, address=address, token=token)
        self._client = client
        self._given_async = async_client
        self._token = token
        self._loop_client: tuple[asyncio.AbstractEventLoop, AsyncSessionClient] | None = None

    # -- LangChain's interface

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The stored messages, in order (read-only: nothing is repaired or written)."""
        return decode_entries(self._sync().load(self.store_id, no_repair=True).messages)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` in order (atomically, up to the batch bounds)."""
        client = self._sync()
        for batch, items in _batches(messages):
            try:
                client.append(self.store_id, _first_try(batch, items), tool_policy=POLICY)
                continue
            except SessiondError as err:
                _retry_or_raise(err, -1)
            bare = False
            for attempt in range(_ATTEMPTS):
                entries, expected = _again(batch, items, client.load(self.store_id, no_repair=True), bare)
                try:
                    client.append(self.store_id, entries, tool_policy=POLICY, expected_last_position=expected)
                    break
                except SessiondError as err:
                    bare = _retry_or_raise(err, attempt)
                time.sleep(_pause_s(attempt))

    def clear(self) -> None:
        """Remove every message (erased, unless ``erase_on_clear`` is False)."""
        self._sync().clear(self.store_id, erase=self.erase_on_clear)

    async def aget_messages(self) -> list[BaseMessage]:
        """:attr:`messages`, through the asyncio client."""
        result = await self._async_call(lambda c: c.load(self.store_id, no_repair=True))
        return decode_entries(result.messages)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """:meth:`add_messages`, through the asyncio client."""
        for batch, items in _batches(messages):
            first = _first_try(batch, items)
            try:
                await self._async_call(lambda c, e=first: c.append(self.store_id, e, tool_policy=POLICY))
                continue
            except SessiondError as err:
                _retry_or_raise(err, -1)
            bare = False
            for attempt in range(_ATTEMPTS):
                loaded = await self._async_call(lambda c: c.load(self.store_id, no_repair=True))
                entries, expected = _again(batch, items, loaded, bare)
                try:
                    await self._async_call(
                        lambda c, e=entries, x=expected: c.append(
                            self.store_id, e, tool_policy=POLICY, expected_last_position=x
                        )
                    )
                    break
                except SessiondError as err:
                    bare = _retry_or_raise(err, attempt)
                await asyncio.sleep(_pause_s(attempt))

    async def aclear(self) -> None:
        """:meth:`clear`, through the asyncio client."""
        await self._async_call(lambda c: c.clear(self.store_id, erase=self.erase_on_clear))

    # -- clients

    def close(self) -> None:
        """Close the clients this history made (not the ones it was given)."""
        if self._owns_client and self._client is not None:
            self._client.close()
        self._loop_client = None

    async def aclose(self) -> None:
        """Close the clients this history made, the current event loop's asyncio client included."""
        pair, self._loop_client = self._loop_client, None
        if pair is not None and pair[0] is asyncio.get_running_loop():
            await pair[1].close()
        if self._owns_client and self._client is not None:
            await asyncio.to_thread(self._client.close)

    def __enter__(self) -> ClawChatMessageHistory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _sync(self) -> SessionClient:
        if self._client is None:  # made from the asyncio client given alone
            assert self._given_async is not None
            self._client = SessionClient(
                self._given_async.workspace, address=self._given_async.target, token=self._token
            )
            self._owns_client = True
        return self._client

    def _async(self) -> AsyncSessionClient:
        """The asyncio client for the running event loop (a grpc.aio channel serves one loop)."""
        if self._given_async is not None:
            return self._given_async
        loop = asyncio.get_running_loop()
        if self._loop_client is None or self._loop_client[0] is not loop:
            sync = self._sync()
            made = AsyncSessionClient(
                address=sync.target,
                autostart=False,
                timeout_s=sync.timeout_s,
                retry_window_s=sync.retry_window_s,
                token=self._token,
            )
            self._loop_client = (loop, made)
        return self._loop_client[1]

    async def _async_call(self, call: Any) -> Any:
        """``call(client)`` on this loop's asyncio client; a daemon not running yet is started
        by the sync client (in a thread) when it may auto-start one."""
        client = self._async()
        try:
            return await call(client)
        except DaemonUnavailableError:
            if client is self._given_async or not self._sync().autostart:
                raise
        await asyncio.to_thread(self._sync().stats)
        return await call(client)


def _batches(messages: Sequence[BaseMessage]) -> Iterator[tuple[list[BaseMessage], list[bytes]]]:
    """``messages`` with their items, cut at the batch bounds; every item is encoded (and a
    message JSON cannot carry refused) before the first batch is sent."""
    batch = list(messages)
    items = [encode_item(m, i) for i, m in enumerate(batch)]
    start, size = 0, 0
    for i, item in enumerate(items):
        if i > start and (i - start >= MAX_BATCH_MESSAGES or size + len(item) > MAX_BATCH_BYTES):
            yield batch[start:i], items[start:i]
            start, size = i, 0
        size += len(item)
    if start < len(batch):
        yield batch[start:], items[start:]


def _first_try(batch: list[BaseMessage], items: list[bytes]) -> list[Message]:
    """The entries of a batch derived without a look at the session (the daemon tells of a taken id)."""
    return derive_entries(batch, items, Known())


def _retry_or_raise(err: SessiondError, attempt: int) -> bool:
    """After ``err``, whether the next attempt derives no ids at all, or raise ``err``.

    Only two refusals are worth another attempt: another writer appended in between (derive
    again against the newer history), and an id the daemon still counts as taken though the
    loaded history does not show it (hidden by an edit or superseded): then the batch is
    appended with no client ids, call ids or answers indexed, as no LangChain id is worth
    losing a message for. ``attempt`` -1 is the first try, made without a look at the history.
    """
    conflict = err.reason in _INDEX_CONFLICTS
    if attempt + 1 >= _ATTEMPTS or not (conflict or isinstance(err, SequenceConflictError)):
        raise err
    return conflict and attempt >= 0


def _again(batch: list[BaseMessage], items: list[bytes], loaded: LoadResult, bare: bool) -> tuple[list[Message], int]:
    """The entries derived against the loaded history, and the position that history ends at."""
    expected = loaded.session.last_position if loaded.session.stored else -1
    return derive_entries(batch, items, Known.of(loaded.messages), bare=bare), expected
