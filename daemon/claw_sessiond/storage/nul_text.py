"""Strings holding NUL in SQL, on both backends.

PostgreSQL's ``text`` holds no NUL; SQLite's does, but its ``json_extract`` returns a string only up
to one. A request's strings may hold NUL (a client id, a tool call id, a model name, message text).
So:

- :func:`db_text` is a NUL-free stored form: NUL as U+0001 U+0001 and U+0001 as U+0001 U+0002.
  It is one-to-one, keeps the byte order of the text (``COLLATE "C"``, SQLite's BINARY), and is the
  text itself for anything without either character. PostgreSQL's columns that keep such a string
  store it; :func:`from_db_text` reads it back.
- :func:`payload_sql` is SQL for a stored payload (JSON text) whose strings, once extracted
  (``->>``, ``json_extract``), come out in :func:`db_text`'s form. A payload is JSON written by
  ``json.dumps``: every control character in it is an escape, so a raw U+0001 never occurs and
  stands in for each escaped backslash while the escapes of U+0001 and NUL become those of the
  two characters; then the backslashes are put back.
- :func:`decoded_sql` is SQL undoing :func:`db_text` (SQLite only: it compares an extracted value
  with a column that holds the string itself).

Only for SQL's own use (search filters, usage reports, joins of a payload's call id with the index
of calls): what a Load or an export returns is the payload itself.
"""

from __future__ import annotations

import re
from typing import Final, Literal

__all__ = ["db_text", "decoded_sql", "from_db_text", "payload_sql"]

#: The two characters that stand for one in the stored form (:func:`db_text`).
_ESCAPES: Final = {"\x01\x01": "\x00", "\x01\x02": "\x01"}
_ESCAPED: Final = re.compile("\x01[\x01\x02]")

#: The SQL function that makes a character from its code point: PostgreSQL's, SQLite's.
Dialect = Literal["chr", "char"]


def db_text(text: str) -> str:
    """The NUL-free stored form of ``text`` (see the module's docstring)."""
    if "\x00" not in text and "\x01" not in text:
        return text
    return text.replace("\x01", "\x01\x02").replace("\x00", "\x01\x01")


def from_db_text(stored: str) -> str:
    """The string :func:`db_text` stored as ``stored``."""
    if "\x01" not in stored:
        return stored
    return _ESCAPED.sub(lambda m: _ESCAPES[m.group(0)], stored)


def payload_sql(column: str, char: Dialect) -> str:
    """SQL: the JSON text in ``column`` with its strings' NUL and U+0001 escapes as :func:`db_text`'s."""
    steps = f"replace({column}, '\\\\', {char}(1))"
    steps = f"replace({steps}, '\\u0001', '\\u0001\\u0002')"
    steps = f"replace({steps}, '\\u0000', '\\u0001\\u0001')"
    return f"replace({steps}, {char}(1), '\\\\')"


def decoded_sql(expr: str, char: Dialect) -> str:
    """SQL: the string whose :func:`db_text` form ``expr`` is. Left to right, the pairs never overlap:
    a U+0001 in the stored form always starts a pair, and no pair ends in one that starts another."""
    nul = f"replace({expr}, {char}(1) || {char}(1), {char}(0))"
    return f"replace({nul}, {char}(1) || {char}(2), {char}(1))"
