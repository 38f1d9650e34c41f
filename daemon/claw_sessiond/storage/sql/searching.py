"""What Search and the usage report write alike on both SQL backends: the filter clause and the too-long error.

Must never: run a statement (each backend's ``queries.py`` runs its own, within its time bound).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import InvalidRequestError, Reason
from ...queries import SearchFilter

__all__ = ["filter_clause", "too_long"]


def filter_clause(filters: SearchFilter, role: str, arg: Callable[[Any], str]) -> str:
    """The ``AND ...`` conditions of a search's ``filters`` over ``events AS e`` joined to ``sessions AS s``
    (``role``: the backend's expression of the message's role; ``arg``: the placeholder of a value, in order)."""
    where = ""
    if filters.session_id:
        where += f" AND e.session_id = {arg(filters.session_id)}"
    if filters.role:
        where += f" AND {role} = {arg(filters.role)}"
    if filters.since:
        where += f" AND e.ts >= {arg(filters.since)}"
    if filters.until:
        where += f" AND e.ts < {arg(filters.until)}"
    if not filters.include_cleared:
        where += " AND e.position > s.clear_position AND e.hidden_by IS NULL"  # neither cleared nor edited away
    return where


def too_long(what: str, timeout_s: float) -> InvalidRequestError:
    """The error of a search or report stopped at its time bound."""
    return InvalidRequestError(
        f"the {what} took longer than {timeout_s:g}s and was stopped; narrow it "
        "(a session, a role, a time range, more words)",
        reason=Reason.FIELD_TOO_LARGE,
    )
