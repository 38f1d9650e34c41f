"""Size caps of the free-form strings in requests that have no other check (pure).

Every other string field is capped where it is validated: session and
request ids in ``ids.py``, message fields, workdir, usage labels and event
payloads in ``validate.py``, trace ids in ``service.py``. The fields here
used to be accepted at any size (up to the 16 MiB request limit) and then
kept for the life of a run or scanned against every session.

Must never: touch storage or grpc.
"""

from __future__ import annotations

from typing import Final

from .errors import InvalidRequestError, Reason

__all__ = ["MAX_ID_CONTAINS_BYTES", "MAX_LABEL_BYTES", "MAX_RUN_ID_BYTES", "check_text"]

#: Attach ``label`` (kept in memory while the run lives, shown in logs).
MAX_LABEL_BYTES: Final = 256
#: ListSessions ``id_contains`` (a session id is at most 256 bytes, so a longer filter matches nothing).
MAX_ID_CONTAINS_BYTES: Final = 256
#: Append ``run_id`` (the daemon issues 32-character ids).
MAX_RUN_ID_BYTES: Final = 128


def check_text(value: str, field: str, max_bytes: int) -> str:
    """Refuse a string longer than ``max_bytes`` UTF-8 bytes.

    Raises:
        InvalidRequestError: reason FIELD_TOO_LARGE.
    """
    if len(value) > max_bytes or len(value.encode("utf-8", "surrogatepass")) > max_bytes:
        raise InvalidRequestError(
            f"{field} is longer than {max_bytes} bytes (got {len(value.encode('utf-8', 'surrogatepass'))})",
            reason=Reason.FIELD_TOO_LARGE,
            field=field,
        )
    return value
