"""Where the viewer reads: the workspace's daemon (its asyncio client) or, offline, the read-only view.

:class:`Source` is the few reads the viewer makes, as coroutines. :class:`DaemonSource` asks the daemon
through the public client (:class:`~claw_sessiond_client.AsyncSessionClient`, never auto-started, nothing
re-sent), so a daemon on PostgreSQL is viewed the same way. :class:`OfflineSource` reads a stopped store
through the CLI's read-only view, which the ``ui`` command hands it as a factory (the viewer does not import
the CLI): each request opens the view, reads and closes it again on one worker thread, so the workspace lock
is held only while a request reads and a daemon can still start between requests. Every Load is look-only
(``no_repair``): the viewer writes nothing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime as dt
import json
import os
from collections.abc import AsyncGenerator, Callable
from typing import Any, Protocol, cast

from claw_sessiond_client import (
    AsyncSessionClient,
    CrossSessionUsage,
    LoadResult,
    SearchResult,
    SessionClient,
    SessionPage,
    WatchEvent,
)

__all__ = ["DaemonSource", "OfflineSource", "OfflineUnavailableError", "Source", "ViewRefusedError"]


class OfflineUnavailableError(Exception):
    """What the offline view cannot give (live updates, a store it cannot open): the message says why."""


class ViewRefusedError(Exception):
    """A request the offline view refuses as the daemon would (a malformed query): the message says why."""


class Source(Protocol):
    """The viewer's reads."""

    #: True for the read-only view of a stopped store.
    offline: bool
    #: "sqlite" or "postgresql" (as the daemon's GetStats says, or the offline view's).
    backend: str

    async def list_page(self, id_contains: str, limit: int, page_token: str, labels: dict[str, str]) -> SessionPage: ...

    async def load(
        self,
        session_id: str,
        *,
        last: int | None = None,
        after: int | None = None,
        before: int | None = None,
        client_ids: tuple[str, ...] = (),
    ) -> LoadResult: ...

    async def search(self, query: str, session_id: str, limit: int) -> SearchResult: ...

    async def usage_report(self, since: dt.datetime | None, until: dt.datetime | None) -> CrossSessionUsage: ...

    def export(self, session_id: str) -> AsyncGenerator[str]: ...

    def watch(self, session_id: str, after: int) -> AsyncGenerator[WatchEvent]: ...

    def history(self, session_id: str, after: int) -> AsyncGenerator[WatchEvent]:
        """The history events after ``after`` in order (Watch's replay; it goes on live while the daemon runs,
        and ends after the last stored one offline)."""
        ...

    async def close(self) -> None: ...


class DaemonSource:
    """Reads through the workspace's running daemon."""

    offline = False

    def __init__(self, client: AsyncSessionClient, backend: str) -> None:
        self.client = client
        self.backend = backend

    async def list_page(self, id_contains: str, limit: int, page_token: str, labels: dict[str, str]) -> SessionPage:
        return await self.client.list_sessions_page(id_contains, limit, page_token, labels)

    async def load(
        self,
        session_id: str,
        *,
        last: int | None = None,
        after: int | None = None,
        before: int | None = None,
        client_ids: tuple[str, ...] = (),
    ) -> LoadResult:
        return await self.client.load(
            session_id, no_repair=True, last=last, after_position=after, before_position=before, client_ids=client_ids
        )

    async def search(self, query: str, session_id: str, limit: int) -> SearchResult:
        return await self.client.search(query, session_id=session_id, limit=limit)

    async def usage_report(self, since: dt.datetime | None, until: dt.datetime | None) -> CrossSessionUsage:
        return await self.client.usage_report(since=since, until=until)

    async def export(self, session_id: str) -> AsyncGenerator[str]:
        async for line in self.client.export(session_id):
            yield line

    async def watch(self, session_id: str, after: int) -> AsyncGenerator[WatchEvent]:
        following = cast(AsyncGenerator[WatchEvent], self.client.watch(session_id, after))
        async with contextlib.aclosing(following) as events:
            async for event in events:
                yield event

    def history(self, session_id: str, after: int) -> AsyncGenerator[WatchEvent]:
        return self.watch(session_id, after)

    async def close(self) -> None:
        await self.client.close()


#: Opens the CLI's read-only view of the workspace (a context manager offering SessionClient's read methods).
OpenView = Callable[[], contextlib.AbstractContextManager[SessionClient]]


class OfflineSource:
    """Reads a stopped store through the read-only view, one request at a time on one worker thread."""

    offline = True

    def __init__(
        self,
        open_view: OpenView,
        backend: str,
        *,
        refused: tuple[type[Exception], ...],
        failed: tuple[type[Exception], ...],
    ) -> None:
        """``refused``: the view's errors for a bad request (:class:`ViewRefusedError`); ``failed``: for a view
        it cannot give (:class:`OfflineUnavailableError`)."""
        self._open = open_view
        self.backend = backend
        self._refused = refused
        self._failed = failed
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="claw-ui-offline")

    async def _read(self, read: Callable[[SessionClient], Any]) -> Any:
        def run() -> Any:
            try:
                with self._open() as view:
                    return read(view)
            except self._refused as exc:
                raise ViewRefusedError(str(exc)) from None
            except self._failed as exc:
                raise OfflineUnavailableError(str(exc)) from None

        return await asyncio.get_running_loop().run_in_executor(self._thread, run)

    async def list_page(self, id_contains: str, limit: int, page_token: str, labels: dict[str, str]) -> SessionPage:
        page: SessionPage = await self._read(lambda v: v.list_sessions_page(id_contains, limit, page_token, labels))
        return page

    async def load(
        self,
        session_id: str,
        *,
        last: int | None = None,
        after: int | None = None,
        before: int | None = None,
        client_ids: tuple[str, ...] = (),
    ) -> LoadResult:
        # The read-only view reads the whole history (docs/ui.md): the same selection, made here.
        result: LoadResult = await self._read(lambda v: v.load(session_id, os.sep, repair=False))
        chosen = [
            m
            for m in result.messages
            if (after is None or m.position > after)
            and (before is None or m.position < before)
            and (not client_ids or m.client_id in client_ids)
        ]
        result.messages[:] = chosen if last is None else chosen[-last:]
        return result

    async def search(self, query: str, session_id: str, limit: int) -> SearchResult:
        found: SearchResult = await self._read(lambda v: v.search(query, session_id=session_id, limit=limit))
        return found

    async def usage_report(self, since: dt.datetime | None, until: dt.datetime | None) -> CrossSessionUsage:
        report: CrossSessionUsage = await self._read(lambda v: v.usage_report(since=since, until=until))
        return report

    async def export(self, session_id: str) -> AsyncGenerator[str]:
        lines: list[str] = await self._read(lambda v: list(v.export(session_id)))
        for line in lines:
            yield line

    async def watch(self, session_id: str, after: int) -> AsyncGenerator[WatchEvent]:
        raise OfflineUnavailableError("live updates need the daemon: start it (claw-sessiond serve)")
        yield  # pragma: no cover  (an async generator)

    async def history(self, session_id: str, after: int) -> AsyncGenerator[WatchEvent]:
        # The export's clears and edits (the read-only view reads whole histories anyway: docs/ui.md).
        async for line in self.export(session_id):
            event = json.loads(line)
            kind, position, payload = event.get("type"), event.get("position", 0), event.get("payload") or {}
            if position <= after or kind not in ("clear", "edit"):
                continue
            if kind == "clear":
                yield WatchEvent(position, None, cleared=True, erased=bool(payload.get("erased")))
            else:
                yield WatchEvent(position, None, edited=True, removed_positions=tuple(payload.get("removed", ())))

    async def close(self) -> None:
        self._thread.shutdown(wait=True)
