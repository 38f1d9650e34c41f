"""Read-only inspection with the daemon down: ``ls``, ``show``, ``stats``, ``export``, ``search`` and ``usage``
offline.

When no daemon answers (or with ``--offline``), these commands take the
daemon's own lock (``.claw/sessiond.lock``) first, after ``serve``'s checks of
``.claw/`` (:mod:`claw_sessiond.claw_dir`; a folder that fails them is refused
with ``serve``'s message), so no daemon can start
while they read and there is never a second writer, then read the database
through :func:`claw_sessiond.storage.open_read_only` (``mode=ro``
connections, the daemon's own read code). Nothing is written: no repair, no
migration, no checkpoint. One line on stderr says that the view is offline.
With a PostgreSQL database configured for the workspace (``CLAW_DATABASE_URL`` or
``database`` in ``.claw/config.toml``, as the daemon reads them) the view reads that
database instead, never a SQLite file left in ``.claw/`` (opening it migrates an older schema,
as ``copy`` does; nothing else is written).

:class:`OfflineClient` offers the few methods those commands call on a
``SessionClient`` (``list_sessions``, ``export``, ``stats``, ``search``, ``usage_report``, with the
daemon's own rules and limits) and returns the
client library's types, so the command bodies are the same online and
offline. ``load`` (``show --repair``) needs the daemon and is refused.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from claw_sessiond_client.paths import claw_dir

from ..config import ConfigError, environ, store_label
from ..errors import InvalidRequestError
from ..errors import SessiondError as DomainError
from ..ids import check_session_id
from .failure import EXIT_USAGE, UsageError, report_error
from .termsafe import visible

if TYPE_CHECKING:
    import asyncio

    from claw_sessiond_client import (
        CrossSessionUsage,
        LoadResult,
        Message,
        SearchResult,
        SessionClient,
        SessionPage,
        SessionSummary,
        Stats,
        Usage,
    )

    from ..storage import Storage

# The storage code (and asyncio, which runs it), its event codec, the daemon's request checks and the
# client's result types are imported by the functions that use them: commands import this module for
# its options, and most never open the read-only view.

__all__ = [
    "OPEN_CALL_NOTE",
    "OfflineClient",
    "OfflineError",
    "add_offline_options",
    "configured_database",
    "run_offline",
]

#: The roles a search may be limited to (as the client library names them).
_ROLES: Final = ("system", "user", "assistant", "tool")
#: How ``show`` marks a tool call without a result in an offline view (nothing repairs it).
OPEN_CALL_NOTE: Final = "no result (daemon down: not repaired)"


class OfflineError(Exception):
    """The offline view cannot be given; the message says why (exit 1)."""


def add_offline_options(add: Callable[[argparse.ArgumentParser], None]) -> Callable[[argparse.ArgumentParser], None]:
    """Wrap a command's ``add_arguments`` with ``--offline`` / ``--no-offline``."""

    def add_with_offline(parser: argparse.ArgumentParser) -> None:
        add(parser)
        group = parser.add_mutually_exclusive_group()
        group.add_argument(
            "--offline",
            dest="offline",
            action="store_true",
            default=None,
            help="read the database read-only under the workspace lock, without asking a daemon (refused while "
            "one runs); by default this happens only when no daemon answers",
        )
        group.add_argument(
            "--no-offline",
            dest="offline",
            action="store_false",
            help="fail if no daemon answers, instead of reading the database read-only",
        )

    return add_with_offline


def configured_database(workspace: Path) -> tuple[str, str]:
    """The PostgreSQL URL of ``workspace``'s store as the daemon decides it
    (:func:`~claw_sessiond.workspace_config.resolve_backend`: ``.claw/config.toml``, ``CLAW_DATABASE_URL``
    when it agrees; "" for the SQLite file under ``.claw/``), and a configuration error ("" if none)."""
    from ..claw_dir import check_password_file
    from ..workspace_config import explicit_database, resolve_backend

    env = environ()
    try:
        backend = resolve_backend(workspace, env, explicit_database(None, None, env))
        check_password_file(backend.url, env)
    except ConfigError as exc:
        return "", str(exc)
    return ("" if backend.database.backend == "sqlite" else backend.url), ""


def _stored_time(when: dt.datetime | None) -> str:
    """A time bound as the daemon stores times (RFC 3339 UTC text, microseconds); "" for none."""
    if when is None:
        return ""
    when = when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when.astimezone(dt.UTC)
    return when.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _time(value: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


class OfflineClient:
    """A read-only view of a workspace's database under its lock; use as a context manager.

    Raises (on entering):
        OfflineError: no ``.claw/`` or no database, a daemon holds the lock, or the database is damaged.
    """

    #: Read by ``show``: tool calls without a result are marked :data:`OPEN_CALL_NOTE`, not running/interrupted.
    offline: Final = True

    def __init__(self, workspace: str | os.PathLike[str]) -> None:
        self.workspace = Path(os.path.abspath(workspace))
        self.db = claw_dir(self.workspace) / "sessions.db"
        #: What the view reads: the SQLite file, or the redacted URL of the workspace's PostgreSQL database.
        self.source = str(self.db)
        self._url = ""
        self._lock_fd: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._store: Storage | None = None

    def __enter__(self) -> OfflineClient:
        import asyncio

        from ..claw_dir import claim_workspace
        from ..errors import LockHeldError, StartupError
        from ..storage import open_read_only, open_url, redacted_url

        folder = self.db.parent
        if not folder.is_dir():
            raise OfflineError(f"{folder} does not exist: nothing is stored for {self.workspace}")
        self._url, problem = configured_database(self.workspace)
        if problem:
            raise OfflineError(problem)
        if self._url:
            self.source = redacted_url(self._url)
        # SQLite may create -shm (and an empty -wal) beside the database even for a read-only connection.
        os.umask(0o077)
        try:
            self._lock_fd = claim_workspace(folder, create=False)  # serve's checks of .claw/, then its lock
        except LockHeldError as exc:
            raise OfflineError(
                f"{exc}; no read-only view while it holds the lock (if it does not answer, it is starting or "
                "stopping: try again in a moment)"
            ) from exc
        except StartupError as exc:
            raise OfflineError(str(exc)) from exc
        try:
            if not self._url and (not self.db.exists() or self.db.stat().st_size == 0):
                raise OfflineError(f"{self.db} does not exist yet: nothing is stored")
            self._loop = asyncio.new_event_loop()
            try:
                self._store = self._run(open_url(self._url) if self._url else open_read_only(self.db))
            except DomainError as exc:
                raise OfflineError(exc.message) from exc
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections, then release the lock."""
        if self._store is not None and self._loop is not None:
            with contextlib.suppress(Exception):
                self._run(self._store.close())
            self._store = None
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _run(self, coro: Any) -> Any:
        assert self._loop is not None
        return self._loop.run_until_complete(coro)

    @property
    def store(self) -> Storage:
        assert self._store is not None, "use OfflineClient as a context manager"
        return self._store

    # -- the SessionClient methods the inspection commands call

    def list_sessions(
        self, id_contains: str = "", limit: int = 100, labels: dict[str, str] | None = None
    ) -> list[SessionSummary]:
        """Stored sessions, most recently updated first (as ``SessionClient.list_sessions``)."""
        from ..validate import check_list_sessions
        from ..validate_sessions import check_label_filter

        try:
            limit = check_list_sessions(id_contains, limit)
            rows = self._run(self.store.list_sessions(id_contains, limit, None, check_label_filter(labels or {})))
        except DomainError as exc:
            raise OfflineError(exc.message) from exc
        return [_summary(r) for r in rows]

    def export(self, session_id: str | None = None, *, timeout_s: float | None = None) -> Iterator[str]:
        """Export lines, exactly as the daemon's Export writes them (one snapshot per session)."""
        from .. import events, export

        try:
            ids = [session_id] if session_id else self._run(self.store.session_ids())
            for sid in ids:
                found = self._run(self.store.export_start(sid))
                if found is None:
                    if session_id:
                        raise OfflineError(f"session {sid!r} is not stored")
                    continue
                header, cursor, max_event_id = found
                yield export.header_line(header)
                ordinal = 0
                pages = self.store.export_pages(cursor, max_event_id)
                try:
                    while True:
                        try:
                            rows = self._run(pages.__anext__())
                        except StopAsyncIteration:
                            break
                        for event in events.decode_events(rows):
                            ordinal += 1
                            yield export.event_line(ordinal, sid, event)
                finally:
                    self._run(pages.aclose())
        except DomainError as exc:
            raise OfflineError(exc.message) from exc

    def stats(self) -> Stats:
        """Database figures (no daemon figures: none runs)."""
        from claw_sessiond_client import Stats

        from ..metrics import figure_fields  # here: the CLI does not load prometheus-client for every command

        try:
            figures: dict[str, Any] = figure_fields(self._run(self.store.figures()))
        except DomainError as exc:
            raise OfflineError(exc.message) from exc
        figures["daemon"] = "not running (read-only view)"
        figures["backend"] = "postgresql" if self._url else "sqlite"
        figures["database"] = store_label(self._url, self.db)
        return Stats(figures)

    def list_sessions_page(
        self, id_contains: str = "", limit: int = 100, page_token: str = "", labels: dict[str, str] | None = None
    ) -> SessionPage:
        """One page of :meth:`list_sessions`, with the same cursor and total as ListSessions."""
        from claw_sessiond_client import SessionPage

        from ..validate import check_list_sessions
        from ..validate import page_after as _page_after
        from ..validate import page_key as _page_key
        from ..validate import page_token as _page_token
        from ..validate_sessions import check_label_filter

        try:
            limit = check_list_sessions(id_contains, limit)
            match = check_label_filter(labels or {})
            after = _page_after(page_token) if page_token else None
            rows = self._run(self.store.list_sessions(id_contains, limit, after, match))
            total = int(self._run(self.store.count_sessions(id_contains, match)))
            more = len(rows) == limit and bool(
                self._run(self.store.list_sessions(id_contains, 1, _page_key(rows[-1]), match))
            )
        except DomainError as exc:
            raise OfflineError(exc.message) from exc
        return SessionPage([_summary(r) for r in rows], _page_token(rows[-1]) if more else "", total)

    def search(
        self,
        query: str,
        *,
        raw: bool = False,
        session_id: str = "",
        role: str = "",
        since: dt.datetime | None = None,
        until: dt.datetime | None = None,
        limit: int = 0,
        include_cleared: bool = False,
    ) -> SearchResult:
        """Full-text search, with the daemon's rules and limits (as ``SessionClient.search``).

        Raises:
            UsageError: a query, filter or limit the daemon would refuse as invalid (exit 2, as online).
        """
        from claw_sessiond_client import SearchHit, SearchResult

        from .. import queries
        from ..validate import check_search_limit

        if role and role not in _ROLES:
            raise UsageError(f"role must be one of {', '.join(_ROLES)} (got {role!r})")
        try:
            match = queries.fts_query(query, raw=raw)
            if session_id:
                check_session_id(session_id)
            limit = check_search_limit(
                limit, max_hits=queries.MAX_SEARCH_HITS, default_hits=queries.DEFAULT_SEARCH_HITS
            )
            filters = queries.SearchFilter(
                session_id=session_id,
                role=role,
                since=_stored_time(since),
                until=_stored_time(until),
                include_cleared=include_cleared,
            )
            rows, truncated = self._run(self.store.search(match, filters, limit))
        except InvalidRequestError as exc:
            raise UsageError(exc.message) from exc
        except DomainError as exc:
            raise OfflineError(exc.message) from exc
        hits = [
            SearchHit(
                h.session_id,
                h.position,
                h.role,
                _time(h.ts),
                h.rank,
                tuple(queries.split_snippet(h.snippet)),
                h.cleared,
            )
            for h in rows
        ]
        return SearchResult(hits, truncated)

    def usage_report(
        self, *, since: dt.datetime | None = None, until: dt.datetime | None = None, by_session: bool = False
    ) -> CrossSessionUsage:
        """Usage and cost across sessions, grouped as the daemon groups them (as ``SessionClient.usage_report``)."""
        from claw_sessiond_client import CrossSessionUsage, UsageReportRow

        try:
            rows, truncated = self._run(
                self.store.usage_report(_stored_time(since), _stored_time(until), by_session=by_session)
            )
        except DomainError as exc:
            raise OfflineError(exc.message) from exc
        return CrossSessionUsage(
            [UsageReportRow(r.day, r.model, r.pricing_version, _usage(r), r.session_id, r.events) for r in rows],
            truncated,
        )

    def load(
        self, session_id: str, workdir: str | os.PathLike[str] | None = None, *, repair: bool = True
    ) -> LoadResult:
        """Look at a session without repairing (``repair=False``); a Load that repairs is refused offline."""
        from claw_sessiond_client import LoadResult, Session

        if repair:
            raise OfflineError("this needs the daemon (Load may repair, a write); start it: claw-sessiond serve")
        try:
            result = self._run(self.store.load(session_id, os.fspath(workdir or "/"), "offline", repair=False))
            messages = list(result.messages)
            if result.cursor is not None:
                pages = self.store.history_pages(result.cursor)
                try:
                    while True:
                        try:
                            messages += self._run(pages.__anext__())
                        except StopAsyncIteration:
                            break
                finally:
                    self._run(pages.aclose())
        except DomainError as exc:
            raise OfflineError(exc.message) from exc
        s = result.session
        session = Session(
            s.id,
            s.workdir,
            _time(s.created_at),
            _time(s.updated_at),
            _usage(s.usage),
            s.last_position,
            s.stored,
            s.message_count,
            json.loads(s.settings.state),
            dict(s.settings.labels),
            forked_from=s.settings.forked_from,
            forked_at_position=s.settings.forked_at_position,
            incarnation=s.settings.incarnation,
        )
        return LoadResult(session, [_message(m) for m in messages], [], [])


def _usage(u: Any) -> Usage:
    from claw_sessiond_client import Usage

    return Usage(u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cost_micros, u.currency)


def _summary(r: Any) -> SessionSummary:
    from claw_sessiond_client import SessionSummary

    return SessionSummary(
        r.id,
        r.message_count,
        _usage(r.usage),
        _time(r.updated_at),
        r.workdir,
        r.last_position,
        dict(r.labels),
        _time(r.created_at or None),
    )


def _message(m: Any) -> Message:
    from claw_sessiond_client import EntryUsage, Message, ToolCall

    calls = tuple(ToolCall._stored(c.id, c.name, c.arguments, c.pending, c.arguments_not_json) for c in m.tool_calls)
    message = Message(
        m.role,
        m.content,
        calls,
        m.tool_call_id,
        m.name,
        m.synthetic_reason,
        m.position,
        _time(m.created_at or None),
        m.trace_id,
        format=m.format,
        item=m.item,
        client_id=m.client_id,
        metadata=m.metadata,
        usage=None if m.usage is None else EntryUsage(*dataclasses.astuple(m.usage)),
        cancelled=m.cancelled,
    )
    for flag in ("orphan", "supersedes"):  # the daemon's own flags (not constructor arguments)
        if getattr(m, flag):
            object.__setattr__(message, flag, getattr(m, flag))
    return message


def run_offline(args: argparse.Namespace, fn: Callable[[argparse.Namespace, SessionClient], int]) -> int:
    """Run an inspection command on an :class:`OfflineClient`; errors become exit 1 with a message."""
    client = OfflineClient(args.workspace)
    try:
        with client:
            print(visible(f"claw-sessiond: no daemon running; read-only view of {client.source}"), file=sys.stderr)
            # The command calls only the read methods above (load with a repair is refused).
            return fn(args, cast("SessionClient", client))
    except UsageError as exc:  # a query or filter the daemon would refuse as invalid: as online, exit 2
        return report_error(args, str(exc), reason="USAGE", code=EXIT_USAGE)
    except OfflineError as exc:
        # No daemon answered and no read-only view either: for --json, the same reason as the online failure.
        return report_error(args, str(exc), reason="DAEMON_UNAVAILABLE")
