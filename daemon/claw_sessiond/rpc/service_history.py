"""Whole histories and reads across sessions: Export, Import, Backup, Search, GetUsageReport.

Module functions with their dependencies as arguments; :class:`.service.SessionService`
calls them inside the error edge.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator
from typing import Final

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from .. import events, queries
from ..config import Config
from ..errors import PreconditionError, Reason, SequenceConflictError, SessionNotFoundError
from ..ids import check_session_id
from ..storage import BACKUP_CHUNK_BYTES, BackingUp, Storage
from ..validate import check_search_limit
from .convert import import_mode_of, role_filter_of, role_pb, set_timestamp, time_bound

__all__ = ["EXPORT_PAUSE_RATIO", "backup", "export_sessions", "import_session", "search", "usage_report"]

_log = logging.getLogger("claw_sessiond.service")

#: Export pacing: pause this many times the time a page took before the next page.
EXPORT_PAUSE_RATIO: Final = 1.0


async def export_sessions(store: Storage, request: pb.ExportRequest) -> AsyncIterator[pb.ExportResponse]:
    """Export: each session's header line, then its events, page by page (paced)."""
    from .. import export  # the export format is imported by the RPCs that use it, not at a daemon's start

    if request.session_id:
        check_session_id(request.session_id)
        ids = [request.session_id]
    else:
        ids = await store.session_ids()
    for session_id in ids:
        found = await store.export_start(session_id)
        if found is None:
            if request.session_id:
                raise SessionNotFoundError(f"session {session_id!r} is not stored", session_id=session_id)
            continue  # deleted while the export ran
        header, cursor, max_event_id = found
        yield pb.ExportResponse(line=export.header_line(header))
        ordinal = 0
        # One page at a time, and the next page is read only once this one was
        # handed on. Each line is encoded just before it is sent: the cost is spread
        # over the stream's writes, so it never blocks the loop in one piece.
        # (Encoding in a worker thread measured worse: the thread holds the GIL in
        # 5 ms slices and every other request's thread hand-offs queue behind it.)
        #
        # Paced: after each page the stream pauses for EXPORT_PAUSE_RATIO times the
        # wall time the page took, so that an export (and the client draining it as
        # fast as it can) uses at most about half of the machine's time. On a busy
        # machine an export at full speed starved everything else, down to the disk's
        # journal thread: commits (fsync) of ordinary Appends took 20-130 ms.
        pages = store.export_pages(cursor, max_event_id)
        async with contextlib.aclosing(pages):
            started = time.perf_counter()
            async for rows in pages:
                for row in rows:
                    ordinal += 1
                    # the line's ordinal: its 1-based index in the session
                    line = export.event_line(ordinal, session_id, events.decode_events([row])[0])
                    yield pb.ExportResponse(line=line)
                del rows
                now = time.perf_counter()
                await asyncio.sleep((now - started) * EXPORT_PAUSE_RATIO)
                started = time.perf_counter()
        if ordinal != header.events:
            raise SequenceConflictError(
                f"session {session_id!r} changed while it was exported ({ordinal} events sent, header says "
                f"{header.events}); export it again",
                expected=header.events,
                actual=ordinal,
            )


async def import_session(store: Storage, config: Config, request: pb.ImportRequest) -> pb.ImportResponse:
    """Import: the lines parsed and checked whole, then stored in one transaction."""
    from .. import export  # as in export_sessions

    mode = import_mode_of(request.mode)
    session = export.parse_session(request.lines, config.max_entry_bytes)
    count = await store.import_session(session, mode)
    _log.info("event=session_imported mode=%s events=%d", mode, count)
    return pb.ImportResponse(session_id=session.header.session_id, events_imported=count)


async def backup(store: Storage) -> AsyncIterator[pb.BackupResponse]:
    """Backup: a consistent copy made by the store, streamed in chunks, then removed."""
    if not isinstance(store, BackingUp):  # a database server's backups are its own job
        raise PreconditionError(
            "Backup copies the SQLite file; with a PostgreSQL database use pg_dump or the server's backups",
            reason=Reason.STORAGE_UNAVAILABLE,
        )
    path, figures = await store.backup()
    try:
        _log.info("event=backup_copied sessions=%d events=%d bytes=%d", figures.sessions, figures.events, figures.bytes)
        fd = await asyncio.to_thread(os.open, path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            first = pb.BackupFigures(
                sessions=figures.sessions,
                events=figures.events,
                bytes=figures.bytes,
                schema_version=figures.schema_version,
            )
            chunk = await asyncio.to_thread(fh.read, BACKUP_CHUNK_BYTES)
            yield pb.BackupResponse(data=chunk, figures=first)
            # At most one chunk in memory here; the next is read once this one was handed on.
            while chunk := await asyncio.to_thread(fh.read, BACKUP_CHUNK_BYTES):
                yield pb.BackupResponse(data=chunk)
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


async def search(store: Storage, request: pb.SearchRequest) -> pb.SearchResponse:
    """Search: full-text hits with their snippets."""
    match = queries.fts_query(request.query, raw=request.raw)
    if request.session_id:
        check_session_id(request.session_id)
    role = role_filter_of(request.role)
    limit = check_search_limit(
        request.limit, max_hits=queries.MAX_SEARCH_HITS, default_hits=queries.DEFAULT_SEARCH_HITS
    )
    filters = queries.SearchFilter(
        session_id=request.session_id,
        role=role,
        since=time_bound(request, "since"),
        until=time_bound(request, "until"),
        include_cleared=request.include_cleared,
    )
    hits, truncated = await store.search(match, filters, limit)
    out = pb.SearchResponse(truncated=truncated)
    for h in hits:
        hit = out.hits.add(
            session_id=h.session_id,
            position=h.position,
            role=role_pb(h.role),
            rank=h.rank,
            cleared=h.cleared,
        )
        set_timestamp(hit.created_at, h.ts)
        for text, is_match in queries.split_snippet(h.snippet):
            hit.snippet.add(text=text, match=is_match)
    return out


async def usage_report(store: Storage, request: pb.GetUsageReportRequest) -> pb.GetUsageReportResponse:
    """GetUsageReport: usage by day and model (and session, if asked)."""
    rows, truncated = await store.usage_report(
        time_bound(request, "since"), time_bound(request, "until"), by_session=request.by_session
    )
    return pb.GetUsageReportResponse(
        rows=[
            pb.UsageReportRow(
                day=r.day,
                model=r.model,
                pricing_version=r.pricing_version,
                session_id=r.session_id,
                events=r.events,
                usage=pb.Usage(
                    input_tokens=r.input_tokens,
                    output_tokens=r.output_tokens,
                    cache_read_tokens=r.cache_read_tokens,
                    cache_write_tokens=r.cache_write_tokens,
                    cost_micros=r.cost_micros,
                    currency=r.currency,
                ),
            )
            for r in rows
        ],
        truncated=truncated,
    )
