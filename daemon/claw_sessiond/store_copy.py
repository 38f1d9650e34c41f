"""Copying a whole store from one storage to another (``claw-sessiond copy``): SQLite ↔ PostgreSQL.

The copy goes through the export format (:mod:`claw_sessiond.export`), session by session:
the source's export lines of a session are parsed exactly as the Import RPC parses them and
imported into the target (one transaction per session, all or nothing). Then it is verified:
the target's export of that session must be the same lines, byte for byte (positions,
timestamps, trace ids, items, usage, state, labels, tool policy, repairs and edits all show in
them), and at the end the target must hold as many sessions and events as were copied.

The states of shared scopes (``app:…``, ``user:…``: not part of the export format) are copied
after the sessions, verbatim (state and time), page by page, and verified the same way: the
target's rows of the copied scopes must equal the source's, and the target must hold as many
scopes as expected.

Idempotency records (request ids) are not copied; see :data:`NOT_COPIED`.

No SQL here and no I/O but through :class:`~claw_sessiond.storage.Storage`. Raises only
``claw_sessiond.errors`` (and :class:`CopyError`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from . import events, export
from .model import ImportMode
from .storage import Storage
from .words import counted

__all__ = ["CopyError", "CopyFigures", "copy_store", "export_lines"]

#: Largest item the copy accepts (the export format's own bound is per daemon configuration; a copy
#: must never refuse what a daemon stored).
MAX_COPY_ITEM_BYTES: Final = 1 << 30


#: Scope states read and written per page.
SCOPE_PAGE: Final = 500

#: Why idempotency records are not copied (docs/postgres.md says the same).
#:
#: A record holds the first reply of a request, and for RecordEvent that reply is the event's id,
#: which the target numbers anew (the export format carries positions, not event ids): copied as
#: is, a retry would be answered with an id that names another event or none in the target. Copying
#: them right needs the id translated per record and two more storage operations for a case that
#: stopped writers (which the copy requires anyway) leave narrow: a request whose reply was lost
#: when the source's daemon stopped, retried against the target, is applied again there (an
#: Append with ``expected_last_position`` is refused with SEQUENCE_CONFLICT instead).
NOT_COPIED: Final = "idempotency records (request ids)"


class CopyError(Exception):
    """The copy stopped: the message says why and what was written."""


@dataclass(slots=True)
class CopyFigures:
    """What a copy did (also what its progress reports)."""

    sessions_total: int = 0
    """Sessions in the source when the copy started."""
    sessions: int = 0
    """Sessions copied and verified so far."""
    events: int = 0
    """Events copied and verified so far."""
    replaced: list[str] = field(default_factory=list)
    """Sessions of the target replaced by the source's (``replace=True`` only)."""
    target_sessions: int = 0
    """Sessions in the target at the end."""
    scopes: int = 0
    """Shared scope states copied and verified."""
    replaced_scopes: int = 0
    """Of them, scopes the target held already and now hold the source's state (``replace=True`` only)."""
    target_scopes: int = 0
    """Shared scope states in the target at the end."""


async def export_lines(store: Storage, session_id: str) -> list[str] | None:
    """The export lines of one session (one snapshot), or None when it is not stored."""
    found = await store.export_start(session_id)
    if found is None:
        return None
    header, cursor, max_event_id = found
    lines = [export.header_line(header)]
    pages = store.export_pages(cursor, max_event_id)
    async with contextlib.aclosing(pages):
        async for rows in pages:
            lines.extend(export.event_line(len(lines), session_id, e) for e in events.decode_events(rows))
    if len(lines) - 1 != header.events:
        raise CopyError(f"session {session_id!r} changed while it was read; stop its writers and copy again")
    return lines


async def copy_store(
    source: Storage,
    target: Storage,
    *,
    replace: bool,
    progress: Callable[[CopyFigures, str], None],
) -> CopyFigures:
    """Copy every session of ``source`` into ``target`` and verify it; ``progress`` is told after each one.

    Args:
        replace: the target may hold sessions already; a session with the same id as one of the source's
            is replaced by it (all or nothing per session), the others are kept. Without it a target
            holding any session is refused before anything is written.

    Raises:
        CopyError: the target holds sessions (without ``replace``), a session changed while it was copied,
            or the verification found a difference (the message names the session).
        SessiondError: the source or the target failed (unreachable, full, ...).
    """
    figures = CopyFigures()
    before = await target.count_sessions("")
    target_scopes = await _scopes(target)
    if (before or target_scopes) and not replace:
        raise CopyError(
            f"the target holds {counted(before, 'session')} and {counted(len(target_scopes), 'scope state')}; "
            "nothing was written "
            "(add --replace to replace the sessions and scopes the source also has and keep the others)"
        )
    ids = await source.session_ids()
    figures.sessions_total = len(ids)
    existing = set(await target.session_ids()) if before else set()
    for session_id in ids:
        lines = await export_lines(source, session_id)
        if lines is None:
            figures.sessions_total -= 1  # deleted since the listing
            continue
        imported = export.parse_session(lines, MAX_COPY_ITEM_BYTES)
        mode: ImportMode = "replace" if session_id in existing else "refuse"
        written = await target.import_session(imported, mode)
        if mode == "replace":
            figures.replaced.append(session_id)
        again = await export_lines(target, session_id)
        if again != lines:
            raise CopyError(_difference(session_id, lines, again))
        if written != imported.header.events:
            raise CopyError(
                f"session {session_id!r}: {counted(written, 'event')} written, {imported.header.events} exported"
            )
        figures.sessions += 1
        figures.events += written
        progress(figures, session_id)
    figures.target_sessions = await target.count_sessions("")
    expected = len(existing | set(ids)) if before else figures.sessions
    if figures.target_sessions != expected:
        raise CopyError(
            f"the target holds {counted(figures.target_sessions, 'session')} after the copy, {expected} expected "
            "(did something else write to it meanwhile?)"
        )
    await _copy_scopes(source, target, target_scopes, figures)
    return figures


async def _scopes(store: Storage) -> set[str]:
    """Every scope ``store`` holds a state of."""
    names: set[str] = set()
    after = ""
    while True:
        page = await store.list_scope_states(after, SCOPE_PAGE)
        names.update(s.scope for s in page)
        if len(page) < SCOPE_PAGE:
            return names
        after = page[-1].scope


async def _copy_scopes(source: Storage, target: Storage, existing: set[str], figures: CopyFigures) -> None:
    """Copy every scope state of ``source`` verbatim, a page per transaction, each page verified when written."""
    copied: set[str] = set()
    after = ""
    while True:
        page = await source.list_scope_states(after, SCOPE_PAGE)
        if page:
            await target.put_scope_states(page)
            again = await target.scope_states([s.scope for s in page])
            for want, got in zip(page, again, strict=True):
                if want != got:
                    raise CopyError(f"scope {want.scope!r}: the target's state differs from the source's")
            copied.update(s.scope for s in page)
            figures.scopes = len(copied)
        if len(page) < SCOPE_PAGE:
            break
        after = page[-1].scope
    figures.replaced_scopes = len(copied & existing)
    figures.target_scopes = len(await _scopes(target))
    expected = len(copied | existing)
    if figures.target_scopes != expected:
        raise CopyError(
            f"the target holds {counted(figures.target_scopes, 'scope state')} after the copy, {expected} expected "
            "(did something else write to it meanwhile?)"
        )


def _difference(session_id: str, want: list[str], got: list[str] | None) -> str:
    if got is None:
        return f"session {session_id!r} is missing from the target after its import"
    for n, (a, b) in enumerate(zip(want, got, strict=False)):
        if a != b:
            return f"session {session_id!r}: the target's export differs from the source's at line {n + 1}"
    return f"session {session_id!r}: the target's export has {len(got)} lines, the source's {len(want)}"
