"""Google ADK sessions stored by claw-sessiond: :class:`ClawSessionService`, a ``BaseSessionService``.

Install with ``pip install './clients/python[adk]' .`` in a checkout (google-adk 2.13.0; the git URL
form: README's Install section)::

    from google.adk.runners import Runner
    from claw_sessiond_client.contrib.adk import ClawSessionService

    sessions = ClawSessionService(".")            # the workspace whose daemon stores them
    runner = Runner(agent=agent, app_name="weather", session_service=sessions)

How ADK's sessions map onto the daemon (README "Google ADK" in docs/adapters.md):

- one daemon session per ``(app_name, user_id, session_id)``, id
  ``adk~<app>~<user>~<session>`` (escaped; hashed when longer than 256
  bytes), labelled ``app``, ``user`` and ``session`` with the originals;
- each event is one entry holding the Event's own JSON (format
  ``adk.event``, client id = the event id) with its role, text, tool calls and
  results derived for the daemon (search, the CLI, pairing); tool policy:
  repair ``off``, orphan results and unparsed calls allowed (ADK handles
  unanswered calls itself);
- state: the session's own keys in the daemon session's state, ``app:`` keys in
  the scope ``app:<app>``, ``user:`` keys in ``user:<app>/<user>``, written
  atomically with the event that changes them; ``temp:`` keys are never stored;
- stale sessions: a ``Session`` read from this service remembers the daemon's
  last position; an append from a copy that is behind is refused
  (``StaleSessionError``), as ADK's database services do.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import uuid
from collections.abc import Sequence
from typing import Any, Final

from claw_sessiond_client.install import missing_framework

try:
    from google.adk.errors import StaleSessionError
    from google.adk.errors.already_exists_error import AlreadyExistsError
    from google.adk.errors.session_not_found_error import SessionNotFoundError as AdkSessionNotFoundError
    from google.adk.events.event import Event
    from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig, ListSessionsResponse
    from google.adk.sessions.session import Session
    from google.adk.sessions.state import State
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise missing_framework(__name__, "google-adk", client_extra="adk") from exc

from claw_sessiond_client import (
    AsyncSessionClient,
    LoadResult,
    Message,
    SequenceConflictError,
    SessiondError,
    ToolPolicy,
)

from ._adk_mapping import (
    MAX_NAME_BYTES,
    app_scope,
    check_name,
    decode_state,
    deltas_of,
    entries_of,
    event_of,
    label_value,
    labels_of,
    name_of,
    opaque_entry,
    session_key,
    split_state,
    state_deltas,
    user_scope,
)
from ._order import in_written_order

__all__ = ["ClawSessionService"]

#: ADK handles unanswered calls itself: never repaired, and whatever a model or tool produced is stored.
POLICY: Final = ToolPolicy(repair="off", allow_orphan_results=True, allow_unparsed_calls=True)
#: The smallest window of a read from the end that stops at a time (grows by doubling).
_TAIL_WINDOW: Final = 32
#: How much earlier than an ``after_timestamp`` the first window starts, by the daemon's clock.
_CLOCK_MARGIN_S: Final = 60.0
#: Refusals of the derived tool calls and results (a result for an answered call, a call id used
#: twice, too many open calls): the event is then stored as one entry without a role instead.
_PAIRING_REASONS: Final = frozenset(
    {"DUPLICATE_TOOL_CALL_ID", "TOOL_CALL_ALREADY_ANSWERED", "UNKNOWN_TOOL_CALL", "TOO_MANY_OPEN_CALLS"}
)
#: Loads running at once while listing sessions.
_LIST_CONCURRENCY: Final = 16
#: Scopes one GetScopeStates may name (the daemon's limit).
_SCOPES_PER_READ: Final = 100


class ClawSessionService(BaseSessionService):
    """ADK's session service on a claw-sessiond daemon (see the module's documentation).

    Args:
        workspace: the workspace whose daemon stores the sessions (as
            :class:`~claw_sessiond_client.AsyncSessionClient` finds it).
        address: connect here instead (no auto-start).
        client: use this client (and its event loop) instead of making one;
            the service then never closes it.
        **client_options: more arguments of ``AsyncSessionClient`` (``timeout_s``, ...).

    A client is bound to the event loop it first runs on, and ADK's sync
    ``Runner.run`` starts a new loop per call: without ``client``, the service
    makes one client per event loop it is used from. :meth:`close` closes the
    one of the running loop.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        *,
        address: str | None = None,
        client: AsyncSessionClient | None = None,
        **client_options: Any,
    ) -> None:
        self._given = client
        self._workspace = workspace
        self._address = address
        self._options = client_options
        self._clients: dict[asyncio.AbstractEventLoop, AsyncSessionClient] = {}

    def _client(self) -> AsyncSessionClient:
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        for ended in [old for old in self._clients if old.is_closed()]:
            del self._clients[ended]  # its channel cannot be closed any more (its loop is gone): dropped
        client = self._clients.get(loop)
        if client is None:
            client = AsyncSessionClient(self._workspace, address=self._address, **self._options)
            self._clients[loop] = client
        return client

    async def close(self) -> None:
        """Close the client this service made for the running event loop (a given client stays open)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def __aenter__(self) -> ClawSessionService:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------ BaseSessionService

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create an empty session with ``state`` (exclusive: ``AlreadyExistsError`` if it exists).

        The session's own keys are written with the session; the ``app:`` and
        ``user:`` keys right after it, in one more call (a crash between the two
        leaves the session without them).
        """
        sid = (check_name("session_id", session_id).strip() if session_id else "") or str(uuid.uuid4())
        labels = labels_of(check_name("app_name", app_name), check_name("user_id", user_id), sid)
        key = session_key(app_name, user_id, sid)
        own, app, user = split_state(state or {})
        client = self._client()
        try:
            created = await client.create_session(key, state=own, labels=labels, tool_policy=POLICY)
        except SessiondError as err:
            if err.reason == "SESSION_EXISTS":
                raise AlreadyExistsError(f"Session with id {sid} already exists.") from None
            raise
        if app or user:
            await client.update_session(key, state_deltas=deltas_of({}, app, user, app_name, user_id))
        scopes = await client.scope_states([app_scope(app_name), user_scope(app_name, user_id)])
        session = Session(
            id=sid,
            app_name=app_name,
            user_id=user_id,
            state=self._merged(created.state, scopes, app_name, user_id),
            events=[],
            last_update_time=_seconds(created.created_at),
        )
        session._storage_update_marker = str(created.last_position)
        return session

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """The session with its events (all, or those ``config`` selects, exactly as ADK's in-memory service
        selects them), its state merged with its app's and user's; None if it is not stored.

        ``after_timestamp`` compares each event's own ``timestamp`` (the writer's clock), never
        the time the daemon stored it: the end of the history is read in growing windows
        (:meth:`_read`) until an event older than the bound (or the start) is in one, so clocks
        that differ or events stamped by the caller change nothing.
        """
        sid = session_id.strip() if session_id else session_id
        key = session_key(
            check_name("app_name", app_name), check_name("user_id", user_id), check_name("session_id", sid)
        )
        scopes = [app_scope(app_name), user_scope(app_name, user_id)]
        recent = config.num_recent_events if config is not None else None
        after = config.after_timestamp if config is not None else None
        read = await self._read(key, recent, after, scopes)
        if read is None:
            return None
        loaded, events, last_update = read
        if recent is not None:
            events = events[-recent:] if recent else []
        if after is not None:
            older = [i for i, e in enumerate(events) if e.timestamp < after]
            if older:
                events = events[older[-1] + 1 :]
        session = Session(
            id=sid,
            app_name=app_name,
            user_id=user_id,
            state=self._merged(loaded.session.state, loaded.scope_states, app_name, user_id),
            events=events,
            last_update_time=last_update,
        )
        session._storage_update_marker = str(loaded.session.last_position)
        return session

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """The sessions of an app (of one user, or of all), without events, with merged state; least
        recently updated first (ties by user id and session id), as ADK's services order them."""
        labels = {"app": label_value(check_name("app_name", app_name))}
        if user_id is not None:
            labels["user"] = label_value(check_name("user_id", user_id))
        if any(len(v.encode()) > MAX_NAME_BYTES for v in labels.values()):
            return ListSessionsResponse()  # no session could be created with such a name
        client = self._client()
        keys: list[str] = []
        token = ""
        while True:  # every page: ADK lists all of them
            page = await client.list_sessions_page(limit=1000, page_token=token, labels=labels)
            keys.extend(s.id for s in page.sessions)
            token = page.next_page_token
            if not token:
                break
        gate = asyncio.Semaphore(_LIST_CONCURRENCY)

        async def one(key: str) -> tuple[LoadResult, float] | None:
            async with gate:
                read = await self._read(key, 0, None, ())
            return None if read is None else (read[0], read[2])

        loaded = [r for r in await asyncio.gather(*(one(k) for k in keys)) if r is not None]
        loaded = [r for r in loaded if all(r[0].session.labels.get(k) == v for k, v in labels.items())]
        users = sorted({name_of(r[0].session.labels.get("user", "")) for r in loaded})
        names = [app_scope(app_name), *(user_scope(app_name, u) for u in users)]
        scopes: dict[str, dict[str, Any]] = {}
        for start in range(0, len(names), _SCOPES_PER_READ):
            scopes.update(await client.scope_states(names[start : start + _SCOPES_PER_READ]))
        sessions = []
        for result, last_update in loaded:
            found = result.session
            owner = name_of(found.labels.get("user", ""))
            session = Session(
                id=name_of(found.labels.get("session", "")),
                app_name=app_name,
                user_id=owner,
                state=self._merged(found.state, scopes, app_name, owner),
                events=[],
                last_update_time=last_update,
            )
            session._storage_update_marker = str(found.last_position)
            sessions.append(session)
        sessions.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=sessions)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session (its events and own state; the app's and user's shared state stay)."""
        sid = session_id.strip() if session_id else session_id
        key = session_key(
            check_name("app_name", app_name), check_name("user_id", user_id), check_name("session_id", sid)
        )
        await self._client().delete(key)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The ``user:`` state of a user of an app, with keys un-prefixed."""
        scope = user_scope(check_name("app_name", app_name), check_name("user_id", user_id))
        states = await self._client().scope_states([scope])
        return decode_state(states.get(scope, {}))

    async def append_event(self, session: Session, event: Event) -> Event:
        """Store ``event`` and its state delta atomically, then apply both to ``session``.

        Raises:
            SessionNotFoundError (ADK's): the session is not stored (never created, or deleted).
            StaleSessionError: the session was changed since ``session`` was read from this
                service (another writer appended); read it again.
            AlreadyExistsError: the session already holds an event with this id.
        """
        if event.partial:
            return event
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        key = session_key(session.app_name, session.user_id, session.id)
        expected = await self._expected_position(key, session)
        item = event.model_dump_json(exclude_none=True).encode()
        deltas = state_deltas(event.actions.state_delta or {}, session.app_name, session.user_id)
        client = self._client()

        async def write(entries: Sequence[Message]) -> int:
            result = await client.append(
                key, list(entries), expected_last_position=expected, tool_policy=POLICY, state_deltas=deltas
            )
            return result.last_position

        try:
            try:
                position = await write(entries_of(event, item))
            except SessiondError as err:
                if err.reason not in _PAIRING_REASONS:
                    raise
                position = await write([opaque_entry(event, item)])
        except SequenceConflictError:
            stored = await client.load(key, last=1, no_repair=True)
            if not stored.session.stored:
                raise AdkSessionNotFoundError(f"Session {session.id} not found.") from None
            raise StaleSessionError(_STALE) from None
        except SessiondError as err:
            if err.reason != "CLIENT_ID_EXISTS":
                raise
            if await self._holds(key, event):
                return event  # an equal event delivered again: stored once (as ADK's in-memory service does)
            raise AlreadyExistsError(f"Session {session.id} already holds another event with id {event.id}.") from None
        session.last_update_time = event.timestamp
        session._storage_update_marker = str(position)
        return self._commit_event_to_session(session, event)

    # ------------------------------------------------------------ reading

    async def _holds(self, key: str, event: Event) -> bool:
        """True if one of the session's last events is ``event`` (the same id and fields)."""
        read = await self._read(key, _TAIL_WINDOW, None, ())
        return read is not None and any(e.id == event.id and e == event for e in read[1])

    async def _expected_position(self, key: str, session: Session) -> int:
        """The daemon position an append from ``session`` must find (Append's ``expected_last_position``).

        A session read from this service carries it. A fresh one (position 0) and a
        ``Session`` made elsewhere are checked against the store first: it must be
        stored, and (made elsewhere) its last event must be the stored session's
        last, as ADK's database service checks a session without its marker.
        """
        marker = session._storage_update_marker
        if marker is not None and marker.isdigit() and int(marker) > 0:
            return int(marker)
        read = await self._read(key, 1, None, ())
        if read is None:
            raise AdkSessionNotFoundError(f"Session {session.id} not found.")
        loaded, stored, _ = read
        if marker is not None:
            current = loaded.session.last_position == 0
        elif session.events:
            current = bool(stored) and stored[-1].id == session.events[-1].id
        else:
            current = not stored
        if not current:
            raise StaleSessionError(_STALE)
        return loaded.session.last_position or -1

    async def _read(
        self, key: str, recent: int | None, after: float | None, scopes: Sequence[str]
    ) -> tuple[LoadResult, list[Event], float] | None:
        """Load the session (None if not stored) with enough of its end for ``recent`` events and the
        ``after`` bound, and the time of its last update (ADK's ``last_update_time``: the timestamp
        of the last event appended, else the time it was created).

        Events come in the order they were written (by position, as ADK's own services keep
        them): a long-running tool's late answer stays after the events written before it.
        Every window read is the end of the history (a suffix). It is enough once it holds
        the whole history, or ``recent`` events, or (with ``after``) an event whose own
        timestamp is before the bound: ADK keeps what follows the last such event. The first
        window with ``after`` is what the daemon stored from :data:`_CLOCK_MARGIN_S` before
        the bound (one read when the events' clock is the daemon's, as on one machine); each
        next one doubles the size, so an event stamped long before it was stored costs a few
        more reads, never a wrong answer.
        """
        client = self._client()
        if recent is None and after is None:
            loaded = in_written_order(await client.load(key, no_repair=True, scopes=scopes))
            events = _events(loaded.messages)
        else:
            size = max(recent or 0, _TAIL_WINDOW if after is not None else 1)
            hint = _utc(after - _CLOCK_MARGIN_S) if after is not None else None
            for _ in range(64):  # doubling: 64 rounds pass any history length
                if hint is not None:
                    loaded = in_written_order(await client.load(key, no_repair=True, after_time=hint, scopes=scopes))
                    size = max(size, 2 * len(loaded.messages), _TAIL_WINDOW)
                    hint = None
                else:
                    loaded = in_written_order(await client.load(key, no_repair=True, last=size, scopes=scopes))
                    size *= 2
                events = _events(loaded.messages)
                if (
                    not loaded.session.stored
                    or loaded.complete
                    or (recent is not None and len(events) >= recent and (recent or events))
                    or (after is not None and any(e.timestamp < after for e in events))
                ):
                    break
        if not loaded.session.stored:
            return None
        last_update = events[-1].timestamp if events else _seconds(loaded.session.created_at)
        return loaded, events, last_update

    @staticmethod
    def _merged(own: dict[str, Any], scopes: dict[str, dict[str, Any]], app_name: str, user_id: str) -> dict[str, Any]:
        """ADK's merged state: the session's own keys, then ``app:`` and ``user:`` keys."""
        state = decode_state(own)
        state.update(decode_state(scopes.get(app_scope(app_name), {}), State.APP_PREFIX))
        state.update(decode_state(scopes.get(user_scope(app_name, user_id), {}), State.USER_PREFIX))
        return state


#: What ADK's own database session service says when a session was modified since it was read.
_STALE: Final = (
    "The session has been modified in storage since it was loaded. "
    "Please reload the session before appending more events."
)


def _events(messages: Sequence[Message]) -> list[Event]:
    return [e for m in messages if (e := event_of(m)) is not None]


def _utc(seconds: float) -> dt.datetime | None:
    """``seconds`` since the epoch as a UTC datetime, or None where a datetime cannot say it."""
    try:
        return dt.datetime.fromtimestamp(seconds, dt.UTC) if seconds > 0 else None
    except (OverflowError, OSError, ValueError):
        return None


def _seconds(when: dt.datetime | None) -> float:
    return when.timestamp() if when is not None else 0.0
