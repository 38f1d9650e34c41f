"""Session-id validation (pure).

Rows are not files, but an id can end up in a file name (exports, logs), so
the seed's rules stay: no empty id, no ``/``, ``\\``, ``..``, NUL or control
characters, at most :data:`MAX_SESSION_ID_BYTES` bytes of UTF-8.

An id is shown to people (``ls``, ``show``, logs, file names), so it may not
hold invisible format characters either (Unicode category Cf: bidi embeddings,
overrides and isolates such as U+202E, zero-width U+200B-U+200D, U+FEFF, soft
hyphen): with them two different ids look the same, or an id is displayed in
an order other than the one stored.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from .errors import InvalidRequestError, Reason

__all__ = ["MAX_REQUEST_ID_BYTES", "MAX_SESSION_ID_BYTES", "check_request_id", "check_session_id", "has_control"]

MAX_SESSION_ID_BYTES: Final = 256
MAX_REQUEST_ID_BYTES: Final = 128
#: C0 and C1 control characters (and DEL).
_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f]")


def has_control(text: str) -> bool:
    """True if ``text`` holds a C0/C1 control character, NUL or DEL."""
    # A regex scans in C: this runs on the session and request id of every request.
    return _CONTROL.search(text) is not None


def _format_character(text: str) -> str | None:
    """The first Unicode category Cf character of ``text``, or None."""
    if text.isascii():  # the common case, checked in C
        return None
    return next((ch for ch in text if unicodedata.category(ch) == "Cf"), None)


def check_session_id(session_id: str) -> str:
    """Return ``session_id`` if valid.

    Raises:
        InvalidRequestError: reason INVALID_SESSION_ID, saying which rule failed.
    """

    def bad(why: str) -> InvalidRequestError:
        shown = session_id if len(session_id) <= 64 else session_id[:64] + "..."
        return InvalidRequestError(
            f"invalid session id {shown!r}: {why}", reason=Reason.INVALID_SESSION_ID, session_id=shown
        )

    if not session_id:
        raise bad("it is empty")
    size = len(session_id.encode("utf-8", "surrogatepass"))
    if size > MAX_SESSION_ID_BYTES:
        raise bad(f"it is {size} bytes long (at most {MAX_SESSION_ID_BYTES})")
    if "\x00" in session_id:
        raise bad("it contains NUL")
    if has_control(session_id):
        raise bad("it contains a control character")
    invisible = _format_character(session_id)
    if invisible is not None:
        raise bad(f"it contains the invisible format character U+{ord(invisible):04X} (bidi control or zero-width)")
    if "/" in session_id or "\\" in session_id:
        raise bad("it contains a path separator ('/' or '\\')")
    if ".." in session_id or session_id == ".":
        raise bad("it contains '..' or is '.'")
    if session_id != session_id.strip():
        raise bad("it starts or ends with whitespace")
    return session_id


def check_request_id(request_id: str) -> str:
    """Return ``request_id`` if it is usable as an idempotency key ("" means none).

    Raises:
        InvalidRequestError: over-long or containing control characters.
    """
    if len(request_id.encode("utf-8", "surrogatepass")) > MAX_REQUEST_ID_BYTES:
        raise InvalidRequestError(
            f"request id is longer than {MAX_REQUEST_ID_BYTES} bytes", reason=Reason.FIELD_TOO_LARGE
        )
    if has_control(request_id):
        raise InvalidRequestError("request id contains a control character", reason=Reason.INVALID_MESSAGE)
    return request_id
