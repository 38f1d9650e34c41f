"""Session state, shared scope states and a new session's settings: their write sequences, once for every backend.

A session's own state is a column of its row; a shared scope's is a row of ``scope_states``
that belongs to no session, so two sessions' writes may change one scope at once. A write that
applies deltas therefore first *holds* every scope it names (:meth:`~.port.Port.hold_scope_states`:
on PostgreSQL each row made to exist and locked, all in sorted order before the first change, so
no two writers deadlock and no delta is lost; on SQLite the single writer already holds them),
then decides each new state (``state.state_after``), records each delta as a ``state`` event in
order, and writes each changed state once. The rules are ``state.py``'s; these are the
sequences (``steps.py``) that Append, UpdateSession, CreateSession and ForkSession share.

Must never: touch a connection or a clock (the port does), or decide what ``state.py`` decides.
"""

# A write verb answers None: ``yield port.write_labels(...)`` hands the call to the driver, and the
# None it sends back is not used (mypy's func-returns-value would refuse the ``yield`` of such a call).
# mypy: disable-error-code="func-returns-value"

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..model import StateDelta
from ..state import EMPTY, ScopeState, settings_payload, state_after, state_payload
from .port import Port
from .steps import Steps

__all__ = ["apply_deltas", "settle_new_session"]


def apply_deltas(port: Port, session_id: str, deltas: Sequence[StateDelta], trace_id: str, now: str) -> Steps[None]:
    """Apply deltas in order (the session's own state, or a shared scope's), each recorded as a ``state`` event.

    The session must be stored, its row held. Each state is read once and written once.

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE, a state would exceed its bound (``state_deltas[i]``).
    """
    scopes = sorted({d.scope for d in deltas if d.scope})
    shared: dict[str, str] = dict((yield port.hold_scope_states(scopes, now))) if scopes else {}
    own: str | None = None
    for i, delta in enumerate(deltas):
        where = f"state_deltas[{i}]"
        if delta.scope:
            shared[delta.scope] = state_after(shared.get(delta.scope, EMPTY), delta.delta, where)
        else:
            if own is None:
                settings = yield port.settings(session_id)
                own = settings.state if settings is not None else EMPTY
            own = state_after(own, delta.delta, where)
        yield port.insert_event(session_id, None, "state", trace_id, now, state_payload(delta))
    if scopes:
        yield port.put_scope_states([ScopeState(scope, shared[scope], now) for scope in scopes])
    if own is not None:
        yield port.set_session_state(session_id, own)


def settle_new_session(
    port: Port,
    session_id: str,
    labels: Mapping[str, str],
    tool_policy: str,
    state: str,
    trace_id: str,
    now: str,
    *,
    forked_from: str = "",
    forked_at_position: int = 0,
) -> Steps[None]:
    """A new session's labels, its ``session_settings`` event and, for a state that is not empty, its
    ``state`` event (CreateSession, ForkSession: the row already carries state and policy)."""
    yield port.write_labels(session_id, labels)
    payload = settings_payload(
        labels=labels, tool_policy=tool_policy, forked_from=forked_from, forked_at_position=forked_at_position
    )
    yield port.insert_event(session_id, None, "session_settings", trace_id, now, payload)
    if state != EMPTY:
        yield port.insert_event(session_id, None, "state", trace_id, now, state_payload(StateDelta("", state)))
