"""Choosing visible entries by client id, by client id prefix or by a range of positions.

A filtered Load (``LoadRequest.client_ids``, ``client_id_prefix``, ``before_position``) and a
DeleteEntries choose entries the same way; what both check of a request, and the range a prefix
scans in a backend's index of client ids, are decided here once:

- a client id in a selector is 1 to ``MAX_CLIENT_ID_BYTES`` bytes (as an entry's), at most
  ``max_ids`` of them (the daemon's batch bound), repeats counted once (:func:`check_id_list`);
- a prefix is 1 to ``MAX_CLIENT_ID_BYTES`` bytes (:func:`check_prefix`), scanned as the range
  ``[prefix, prefix_end(prefix))`` of the index (:func:`prefix_end`: in code point order, which
  is the byte order of UTF-8 in both backends' indexes);
- a selection may match at most ``max_entries`` entries (:func:`check_match_count`);
- which filters of a Load combine (:func:`check_filters`), and a DeleteEntries request as a
  job (:func:`prepare_delete_entries`).

Pure (no storage, no gRPC). Raises only ``claw_sessiond.errors``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .bounds import MAX_CLIENT_ID_BYTES, utf8_len
from .errors import InvalidRequestError, Reason
from .events import fingerprint
from .ids import check_request_id, check_session_id
from .model import DeleteEntriesJob

__all__ = [
    "check_filters",
    "check_id_list",
    "check_match_count",
    "check_prefix",
    "prefix_end",
    "prepare_delete_entries",
]

_MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)


def check_id_list(ids: Sequence[str], max_ids: int, field: str) -> tuple[str, ...]:
    """The client ids of a selector, each once, in the order given.

    Raises:
        InvalidRequestError: an empty or over-long id (INVALID_MESSAGE, FIELD_TOO_LARGE), more than
            ``max_ids`` ids (FIELD_TOO_LARGE); each naming ``field``.
    """
    if max_ids and len(ids) > max_ids:
        raise InvalidRequestError(
            f"{field} holds {len(ids)} ids, more than {max_ids} (--max-batch-messages); ask in parts",
            reason=Reason.FIELD_TOO_LARGE,
            field=field,
            limit=max_ids,
        )
    for i, client_id in enumerate(ids):
        if not client_id:
            raise InvalidRequestError(
                f"{field}[{i}] is empty (a client id is 1-256 bytes)", reason=Reason.INVALID_MESSAGE
            )
        if utf8_len(client_id) > MAX_CLIENT_ID_BYTES:
            raise InvalidRequestError(
                f"{field}[{i}] is longer than {MAX_CLIENT_ID_BYTES} bytes", reason=Reason.FIELD_TOO_LARGE, field=field
            )
    return tuple(dict.fromkeys(ids))


def check_prefix(prefix: str, field: str) -> None:
    """A client id prefix is at most ``MAX_CLIENT_ID_BYTES`` bytes (empty: not set).

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE, naming ``field``.
    """
    if utf8_len(prefix) > MAX_CLIENT_ID_BYTES:
        raise InvalidRequestError(
            f"{field} is longer than {MAX_CLIENT_ID_BYTES} bytes", reason=Reason.FIELD_TOO_LARGE, field=field
        )


def prefix_end(prefix: str) -> str | None:
    """The least string greater than every string that starts with ``prefix`` (None: there is none).

    Code point order: the last character that is not U+10FFFF goes up by one (over the
    surrogates, which no stored text holds), and what follows it is dropped.
    """
    head = prefix.rstrip(chr(_MAX_CODE_POINT))
    if not head:
        return None
    code = ord(head[-1]) + 1
    if code in _SURROGATES:
        code = _SURROGATES.stop
    return head[:-1] + chr(code)


def check_match_count(found: int, max_entries: int) -> None:
    """A selection that removes entries may match at most ``max_entries`` of them (``found``: how many it
    matched, read up to one more than the bound).

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE.
    """
    if max_entries and found > max_entries:
        raise InvalidRequestError(
            f"the selection matches more than {max_entries} entries (--max-batch-messages); remove them in parts "
            "(for example by narrower position ranges); nothing was written",
            reason=Reason.FIELD_TOO_LARGE,
            limit=max_entries,
        )


def check_filters(
    *, last: int, after_position: int, after_time: str, before_position: int, client_ids: int, client_id_prefix: str
) -> None:
    """The filters a Load combines (``client_ids``: how many ids were given).

    ``client_ids`` stands alone; ``client_id_prefix`` takes ``after_position`` and
    ``before_position``; ``before_position`` takes ``last`` or ``after_position`` (and must be
    above it); at most one of ``last``, ``after_position`` and ``after_time``.

    Raises:
        InvalidRequestError: reason INVALID_MESSAGE, naming the fields that may not go together.
    """

    def refuse(why: str) -> InvalidRequestError:
        return InvalidRequestError(f"a Load {why}", reason=Reason.INVALID_MESSAGE)

    if before_position < 0:
        raise refuse("takes a positive before_position (0: not set)")
    others = [
        name
        for name, on in (
            ("last", last),
            ("after_position", after_position),
            ("after_time", after_time),
            ("before_position", before_position),
            ("client_id_prefix", client_id_prefix),
        )
        if on
    ]
    if client_ids and others:
        raise refuse(f"with client_ids takes no other filter (got {' and '.join(others)})")
    if client_id_prefix and (last or after_time):
        raise refuse("with client_id_prefix takes only after_position and before_position as bounds")
    if before_position and after_time:
        raise refuse("takes before_position with last or after_position, not with after_time")
    if before_position and after_position >= before_position:
        raise refuse(f"range is empty: after_position {after_position} is not below before_position {before_position}")


def prepare_delete_entries(
    session_id: str,
    *,
    client_ids: Sequence[str],
    client_id_prefix: str,
    from_position: int,
    to_position: int,
    expected_last_position: int,
    request_id: str,
    trace_id: str,
    discard_pending: bool,
    max_entries: int,
) -> DeleteEntriesJob:
    """Validate a DeleteEntries and build the writer's job.

    Raises:
        InvalidRequestError: the first problem found, naming the field (no selector or more than
            one: INVALID_MESSAGE).
    """
    check_session_id(session_id)
    check_request_id(request_id)
    ids = check_id_list(client_ids, max_entries, "client_ids")
    check_prefix(client_id_prefix, "client_id_prefix")
    for name, value in (("from_position", from_position), ("to_position", to_position)):
        if value < 0:
            raise InvalidRequestError(f"{name} must not be negative (got {value})", field=name)
    if to_position and not from_position:
        raise InvalidRequestError("to_position needs from_position (the range's first position)", field="to_position")
    if to_position and to_position < from_position:
        raise InvalidRequestError(
            f"to_position {to_position} is below from_position {from_position}", field="to_position"
        )
    chosen = [
        n for n, on in (("client_ids", ids), ("client_id_prefix", client_id_prefix), ("a range", from_position)) if on
    ]
    if len(chosen) != 1:
        raise InvalidRequestError(
            "DeleteEntries takes exactly one selector: client_ids, client_id_prefix, or a range "
            f"(from_position, to_position) (got {' and '.join(chosen) if chosen else 'none'})",
            field="client_ids",
        )
    if expected_last_position < 0:
        raise InvalidRequestError("expected_last_position must be 0 (no check) or a position")
    fp = fingerprint(
        "delete", session_id, ids, client_id_prefix, from_position, to_position, expected_last_position, discard_pending
    )
    return DeleteEntriesJob(
        session_id,
        ids,
        client_id_prefix,
        from_position,
        to_position,
        expected_last_position,
        request_id,
        fp,
        trace_id,
        discard_pending,
        max_entries,
    )
