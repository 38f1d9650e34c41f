"""Bounds on what the daemon accepts, and the one JSON reader for request text (pure).

Everything a request carries ends up somewhere that has limits of its own: a
SQLite INTEGER (int64), a LIKE pattern (50,000 bytes), a JSON line that
Export writes and Import, ``show`` and other programs read back, a gRPC
status message in a trailer. The bounds here are chosen so that whatever is
accepted can always be stored, exported, shown and imported again; anything
beyond them is refused at the edge with INVALID_ARGUMENT and writes nothing.

JSON nesting: at most :data:`MAX_JSON_DEPTH` (64) levels of arrays and
objects in any JSON the daemon accepts (RecordEvent payloads, tool-call
arguments, the payloads of import lines; an import line is one level deeper
than its payload). Why 64: tool arguments and audit payloads nest a handful
of levels in practice, so 64 is generous; it stays well inside what every
reader of an export copes with (Python's recursive helpers, the pure-Python
``json`` pretty-printer behind ``show --json`` with Python's default recursion
limit of 1000, Rust's serde_json whose default limit is 128); and the check
is a linear scan that stops at the first level too deep, so a hostile
100,000-level text costs next to nothing.

Must never: touch storage, import grpc, or import ``store``/``validate``
(``export`` imports this module).
"""

from __future__ import annotations

import json
import math
import re
from typing import Final

__all__ = [
    "FORMAT_TAG",
    "MAX_ATTACH_LABEL_BYTES",
    "MAX_CLIENT_ID_BYTES",
    "MAX_ERROR_MESSAGE_CHARS",
    "MAX_ID_CONTAINS_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_NAME_BYTES",
    "MAX_PID",
    "MAX_PING_TIMEOUT_S",
    "MAX_POSITION",
    "MAX_RUN_ID_BYTES",
    "MAX_STORED_PAYLOAD_BYTES",
    "MAX_USAGE_COUNT",
    "MAX_WORKDIR_BYTES",
    "JsonError",
    "is_currency_code",
    "json_depth",
    "loads_limited",
    "payload_too_large",
    "utf8_len",
]

#: Deepest nesting of arrays/objects in any accepted JSON value (a scalar is depth 0, ``{}`` is 1).
MAX_JSON_DEPTH: Final = 64
#: Highest position a session may reach through Import. 2**53 - 1 is the largest integer every
#: JSON reader holds exactly (a double's mantissa), and it leaves 2**63 - 2**53 of room, so no
#: later Append, Clear or repair can overflow SQLite's int64 (each adds at most a batch).
MAX_POSITION: Final = 2**53 - 1
#: Largest stored form (JSON text) of one event's payload. An exported event is one
#: ExportResponse, and gRPC clients refuse messages over 4 MiB unless told otherwise (the
#: project's client and grpcurl included); 64 KiB is left for the line's other fields. The
#: JSON form is what counts: a control character in content is stored as a 6-byte escape,
#: so 1 MiB of them (an Append within max_message_bytes) became a 6 MiB line nobody could read.
MAX_STORED_PAYLOAD_BYTES: Final = 4 * 1024 * 1024 - 64 * 1024
#: Largest token count or cost in one usage event (SQLite INTEGER is int64).
MAX_USAGE_COUNT: Final = 2**63 - 1
#: ``id_contains`` of ListSessions: longer than the longest session id can never match.
MAX_ID_CONTAINS_BYTES: Final = 256
#: Run ids (Attach hands out 32 hex characters; anything longer is not ours).
MAX_RUN_ID_BYTES: Final = 128
#: Attach's free-form label.
MAX_ATTACH_LABEL_BYTES: Final = 256
#: Attach's pid: Linux pids are below 2**22; 0 means "not given".
MAX_PID: Final = 2**31 - 1
#: Attach's ping bound (``ping_timeout_seconds``): at most a day; 0 means none.
MAX_PING_TIMEOUT_S: Final = 86_400
#: Names and ids inside messages and usage: tool-call ids and names, message names, model, pricing version.
MAX_NAME_BYTES: Final = 256
#: An entry's client id (unique in its session's visible history).
MAX_CLIENT_ID_BYTES: Final = 256
#: An item's format tag: 1-64 characters of a-z, 0-9, ``.``, ``_`` and ``-``, starting with a letter or
#: digit (``openai.responses``, ``anthropic.messages``, ``adk.event``, ...).
FORMAT_TAG: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
#: Workdirs (a path; Linux PATH_MAX is 4096).
MAX_WORKDIR_BYTES: Final = 4096
#: Longest status message sent to a client: a message and its ErrorInfo travel in HTTP/2
#: trailers, which clients cap (grpc's default metadata limit is 8 KiB), so a message that
#: quotes a huge input must be cut, or the client sees an error about the trailer instead.
MAX_ERROR_MESSAGE_CHARS: Final = 1024

#: A JSON string literal, escapes included (the unrolled form never backtracks).
_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_SQUARE: Final = str.maketrans("{}", "[]")


_CURRENCY: Final = re.compile(r"[A-Z]{3}")


def is_currency_code(text: str) -> bool:
    """Three ASCII capital letters (the shape of ISO 4217; ``str.isupper`` would let ``ÄÖÜ`` through)."""
    return _CURRENCY.fullmatch(text) is not None


class JsonError(ValueError):
    """Text that is not acceptable JSON; the message says why (for a person)."""


def utf8_len(text: str) -> int:
    """Length of ``text`` in UTF-8 bytes (lone surrogates counted, not refused)."""
    if text.isascii():  # a flag of the string (no scan): one byte a character
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def payload_too_large(text: str) -> int:
    """The UTF-8 size of a payload's JSON text if it is over :data:`MAX_STORED_PAYLOAD_BYTES`, else 0."""
    if len(text) * 4 <= MAX_STORED_PAYLOAD_BYTES:  # at most 4 bytes a character: no need to encode
        return 0
    size = utf8_len(text)
    return size if size > MAX_STORED_PAYLOAD_BYTES else 0


def json_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """Nesting depth of JSON text, or ``limit + 1`` as soon as it is known to be deeper.

    Strings are cut out (brackets inside them do not count), then each pass
    removes every innermost ``[]`` pair at once, which is one level: at most
    ``limit + 1`` passes of C string operations, whatever the input. Exact for
    valid JSON; for invalid text only an estimate (the parser refuses it anyway).
    """
    if "[" not in text and "{" not in text:
        return 0
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_SQUARE)
    depth = 0
    while brackets:
        if depth > limit:
            return depth
        inner = brackets.replace("[]", "")
        if len(inner) == len(brackets):  # unbalanced: not JSON
            return depth + 1
        brackets = inner
        depth += 1
    return depth


def _reject_constant(value: str) -> object:
    raise JsonError(f"{value} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JsonError(f"number {text[:40]} is too large for a double")
    return value


def loads_limited(text: str, limit: int = MAX_JSON_DEPTH) -> object:
    """Parse JSON text that the daemon may store, export and read back.

    Refused: invalid JSON, NaN/Infinity, numbers beyond a double, nesting
    deeper than ``limit``, and ``\\uD800``-style escapes that decode to a
    lone surrogate (no UTF-8 spelling: SQLite and every writer would fail).

    Raises:
        JsonError: saying which rule failed.
    """
    depth = json_depth(text, limit)
    if depth > limit:
        raise JsonError(f"nested deeper than {limit} levels of arrays/objects")
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except JsonError:
        raise
    except RecursionError as exc:  # unreachable after the depth scan; kept as a guard
        raise JsonError(f"nested deeper than {limit} levels of arrays/objects") from exc
    except ValueError as exc:
        raise JsonError(str(exc)) from exc
    if "\\u" in text:  # only an escape can produce a lone surrogate: proto strings are valid UTF-8
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise JsonError("a \\u escape makes a lone UTF-16 surrogate (not a character)") from exc
    return value
