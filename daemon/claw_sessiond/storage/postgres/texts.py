"""How a request's strings are kept in PostgreSQL's ``text``, which holds no NUL (SQLite's does).

:func:`db_text` is the stored form of a string in a column of its own; :func:`payload_json` reads a
payload's strings in SQL in the same form, so that SQL compares a column with a payload's value.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["db_text", "from_db_text", "payload_json"]


#: The two characters that stand for one in a column's stored form (:func:`db_text`).
_ESCAPES: Final = {"\x01\x01": "\x00", "\x01\x02": "\x01"}
_ESCAPED: Final = re.compile("\x01[\x01\x02]")


def db_text(text: str) -> str:
    """The stored form of a request's string in a ``text`` column of its own (a client id, a call id, a model,
    a pricing version, a run's label). PostgreSQL's ``text`` holds no NUL, which SQLite stores: NUL is stored as
    U+0001 U+0001 and U+0001 as U+0001 U+0002. One-to-one, the same string for text without either (nearly
    all), and in the same byte order (``COLLATE "C"``) as the text itself. :func:`payload_json` reads a payload's
    strings in this form too, so that SQL compares a column with a payload's value."""
    if "\x00" not in text and "\x01" not in text:
        return text
    return text.replace("\x01", "\x01\x02").replace("\x00", "\x01\x01")


def from_db_text(stored: str) -> str:
    """The string :func:`db_text` stored as ``stored``."""
    if "\x01" not in stored:
        return stored
    return _ESCAPED.sub(lambda m: _ESCAPES[m.group(0)], stored)


def payload_json(column: str = "payload") -> str:
    """SQL: a stored ``payload`` read as ``json`` for ``->>``, each string in :func:`db_text`'s form.

    PostgreSQL's ``->>`` refuses the JSON escape of NUL (``\\u0000``), which a message may carry (the payload
    keeps it as written). A payload is JSON written by ``json.dumps``: every control character in it is an
    escape, so a raw U+0001 never occurs and stands in for each escaped backslash (``\\\\``) while the escapes
    of U+0001 and NUL become those of :func:`db_text`'s two characters; then each backslash pair is put back.
    Only for SQL's own use (search, filters, usage sums, joins with the columns above): what a Load or an
    export returns is the payload itself."""
    steps = f"replace({column}, '\\\\', chr(1))"
    steps = f"replace({steps}, '\\u0001', '\\u0001\\u0002')"
    steps = f"replace({steps}, '\\u0000', '\\u0001\\u0001')"
    return f"replace({steps}, chr(1), '\\\\')::json"
