"""How the adapters spell a framework's names (session ids, app and user names) for the daemon (pure, no I/O).

A daemon session id is 1-256 bytes of UTF-8 without ``/``, ``\\``, ``..``, control or
invisible format characters, and without whitespace at either end; a framework's own store
takes any string. One escape serves every adapter: :func:`escape` writes every character
but ``[A-Za-z0-9_-]`` as ``%XX`` of its UTF-8 bytes (injective, the result holds no ``~``),
and :func:`unescape` reverses it.

:func:`store_id` maps a framework's session id to a daemon session id (the OpenAI and
LangChain adapters; ADK's adapter builds its ids from the same escape, see
:func:`~claw_sessiond_client.contrib._adk_mapping.session_key`):

- an id the daemon takes as it is and that holds no ``%`` is its own daemon id (sessions
  stored before this mapping keep working);
- any other id is :func:`escape`\\ d (``"user/123"`` → ``"user%2F123"``, ``".."`` →
  ``"%2E%2E"``); the empty id is ``"%"``;
- an id whose escaped form is longer than 256 bytes is ``"%sha256:"`` and its :func:`digest`
  (SHA-256, hex; the one case :func:`session_id_of` cannot reverse).

Two different ids never share a daemon id: the ids kept as they are hold no ``%``, every
other form does, and ``"%"`` and ``"%sha256:..."`` are not escapes (``%`` is then not
followed by two upper-case hex digits).
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Final

__all__ = [
    "HASHED_PREFIX",
    "MAX_NAME_BYTES",
    "bounded",
    "digest",
    "escape",
    "label_value",
    "name_of",
    "session_id_of",
    "store_id",
    "unescape",
]

#: The daemon's limits: a session id, a scope name and a label value are at most 256 bytes.
MAX_NAME_BYTES: Final = 256
#: The daemon id of a session id whose escaped form does not fit: this prefix and the id's SHA-256.
HASHED_PREFIX: Final = "%sha256:"
#: The daemon id of the empty session id.
_EMPTY: Final = "%"
#: Characters an escaped name keeps as they are (everything else becomes %XX of its UTF-8 bytes).
_PLAIN: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def escape(name: str) -> str:
    """``name`` with every character but ``[A-Za-z0-9_-]`` as %XX of its UTF-8 bytes (injective, no ``~``)."""
    out = []
    for ch in name:
        if ch in _PLAIN:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    return "".join(out)


def unescape(value: str) -> str:
    """The name an :func:`escape` (or a :func:`label_value`) spells: each %XX back to its byte."""
    if "%" not in value:
        return value
    raw = bytearray()
    i = 0
    while i < len(value):
        if value[i] == "%":
            raw.append(int(value[i + 1 : i + 3], 16))
            i += 3
        else:
            raw.extend(value[i].encode("utf-8", "surrogatepass"))
            i += 1
    return raw.decode("utf-8", "surrogatepass")


#: The inverse of :func:`label_value` (the same decoding as :func:`unescape`).
name_of: Final = unescape


def digest(*parts: str) -> str:
    """SHA-256 (hex) of ``parts``, each length-prefixed so that no two tuples share it."""
    h = hashlib.sha256()
    for part in parts:
        raw = part.encode("utf-8", "surrogatepass")
        h.update(len(raw).to_bytes(8, "big"))
        h.update(raw)
    return h.hexdigest()


def bounded(readable: str, hashed_prefix: str, *parts: str) -> str:
    """``readable`` if it fits the daemon's 256 bytes, else ``hashed_prefix`` + the digest of ``parts``."""
    if len(readable.encode()) <= MAX_NAME_BYTES:
        return readable
    return hashed_prefix + digest(*parts)


def label_value(name: str) -> str:
    """``name`` as a label value: as is, but for ``%``, control characters and lone surrogates
    (which a label cannot hold) as %XX of their UTF-8 bytes; :func:`name_of` reverses it."""
    out: list[str] = []
    for ch in name:
        code = ord(ch)
        if ch == "%" or code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append(ch)
    return "".join(out)


def _kept(name: str) -> bool:
    """True if the daemon takes ``name`` as a session id as it is and it holds no ``%``."""
    if not name or "%" in name or "/" in name or "\\" in name or ".." in name or name == "." or name != name.strip():
        return False
    try:
        if len(name.encode("utf-8")) > MAX_NAME_BYTES:
            return False
    except UnicodeEncodeError:  # a lone surrogate
        return False
    for ch in name:
        code = ord(ch)
        if code < 0x20 or 0x7F <= code <= 0x9F or (code > 0x7F and unicodedata.category(ch) == "Cf"):
            return False
    return True


def store_id(session_id: str) -> str:
    """The daemon session id of a framework's session id (see the module's documentation).

    Raises:
        TypeError: ``session_id`` is not a str.
    """
    if not isinstance(session_id, str):
        raise TypeError(f"session_id must be a str, not {type(session_id).__name__}")
    if _kept(session_id):
        return session_id
    if not session_id:
        return _EMPTY
    return bounded(escape(session_id), HASHED_PREFIX, session_id)


def session_id_of(daemon_id: str) -> str | None:
    """The framework's session id that :func:`store_id` maps to ``daemon_id``; None for a hashed one."""
    if daemon_id.startswith(HASHED_PREFIX):
        return None
    if daemon_id == _EMPTY:
        return ""
    return unescape(daemon_id)
