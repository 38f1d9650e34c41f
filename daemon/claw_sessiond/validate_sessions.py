"""Request checks of CreateSession, ForkSession, UpdateSession and GetScopeStates (pure).

Raw request values in, the writer's jobs out (``state.py``): everything these
requests can be refused for without looking at storage is checked here, so a
refused request never reaches a transaction. Each error names the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .errors import InvalidRequestError, Reason
from .events import fingerprint
from .ids import check_request_id, check_session_id
from .state import (
    EMPTY,
    MAX_SCOPES,
    CreateJob,
    ForkJob,
    UpdateJob,
    check_label_key,
    check_labels,
    check_scope,
    labels_json,
    parse_delta,
    prepare_deltas,
)
from .validate import check_workdir

__all__ = [
    "check_label_filter",
    "check_scopes",
    "prepare_create",
    "prepare_fork",
    "prepare_update",
]


def check_scopes(scopes: Sequence[str], field_name: str = "scopes", *, required: bool = True) -> list[str]:
    """Scopes to read: 1 to :data:`~claw_sessiond.state.MAX_SCOPES` valid names (0 allowed unless ``required``).

    Raises:
        InvalidRequestError: naming the field.
    """
    if required and not scopes:
        raise InvalidRequestError(f"{field_name}: name at least one scope", field=field_name)
    if len(scopes) > MAX_SCOPES:
        raise InvalidRequestError(
            f"{field_name}: at most {MAX_SCOPES} scopes in one request (got {len(scopes)})",
            reason=Reason.FIELD_TOO_LARGE,
            field=field_name,
        )
    return [check_scope(s, f"{field_name}[{i}]") for i, s in enumerate(scopes)]


def check_label_filter(labels: Mapping[str, str]) -> dict[str, str]:
    """ListSessions' ``labels``: valid labels (a key that can never be stored could never match).

    Raises:
        InvalidRequestError: naming the key.
    """
    return check_labels(labels, "labels")


def prepare_create(
    session_id: str,
    *,
    workdir: str,
    state: str,
    labels: Mapping[str, str],
    tool_policy: str,
    request_id: str,
    trace_id: str,
) -> CreateJob:
    """Validate a CreateSession (``tool_policy``: its stored text, ``state.policy_json``).

    Raises:
        InvalidRequestError: the first problem found, naming the field.
    """
    check_session_id(session_id)
    check_request_id(request_id)
    check_workdir(workdir, required=False)
    initial = parse_delta(state, "state") if state else EMPTY
    checked = check_labels(labels, "labels")
    fp = fingerprint("create", session_id, initial, labels_json(checked), tool_policy)
    return CreateJob(session_id, workdir, initial, checked, tool_policy, request_id, fp, trace_id)


def prepare_fork(
    source_id: str,
    session_id: str,
    *,
    up_to_position: int,
    workdir: str,
    labels: Mapping[str, str] | None,
    request_id: str,
    trace_id: str,
) -> ForkJob:
    """Validate a ForkSession (``labels``: None to copy the source's).

    Raises:
        InvalidRequestError: the first problem found, naming the field.
    """
    try:
        check_session_id(source_id)
    except InvalidRequestError as exc:
        raise InvalidRequestError(
            f"source_session_id: {exc.message}", reason=exc.reason, field="source_session_id"
        ) from None
    check_session_id(session_id)
    check_request_id(request_id)
    check_workdir(workdir, required=False)
    if up_to_position < 0:
        raise InvalidRequestError(
            "up_to_position must be 0 (every visible entry) or a position", field="up_to_position"
        )
    checked = None if labels is None else check_labels(labels, "labels")
    fp = fingerprint("fork", source_id, session_id, up_to_position, None if checked is None else labels_json(checked))
    return ForkJob(source_id, session_id, up_to_position, workdir, checked, request_id, fp, trace_id)


def prepare_update(
    session_id: str,
    *,
    state_deltas: Sequence[tuple[str, str]],
    set_labels: Mapping[str, str],
    remove_labels: Sequence[str],
    tool_policy: str | None,
    expected_last_position: int,
    request_id: str,
    trace_id: str,
) -> UpdateJob:
    """Validate an UpdateSession (``tool_policy``: the new policy's stored text, or None to keep it).

    Raises:
        InvalidRequestError: the first problem found, naming the field.
    """
    check_session_id(session_id)
    check_request_id(request_id)
    if expected_last_position < -1:
        raise InvalidRequestError(
            "expected_last_position must be -1, 0 (no check) or a position", field="expected_last_position"
        )
    deltas = prepare_deltas(state_deltas)
    to_set = check_labels(set_labels, "set_labels")
    removed = [check_label_key(k, "remove_labels") for k in remove_labels]
    both = sorted(set(to_set) & set(removed))
    if both:
        raise InvalidRequestError(
            f"remove_labels: {both[0]!r} is also in set_labels (set it, or remove it, not both)",
            field="remove_labels",
        )
    fp = fingerprint(
        "update",
        session_id,
        [(d.scope, d.delta) for d in deltas],
        labels_json(to_set),
        sorted(set(removed)),
        tool_policy,
        expected_last_position,
    )
    return UpdateJob(
        session_id, deltas, to_set, tuple(removed), tool_policy, expected_last_position, request_id, fp, trace_id
    )
