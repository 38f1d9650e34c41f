"""Text for terminals: stored content shown to people can never drive the terminal (pure; no I/O).

Stored transcripts hold whatever agents and tools wrote, including bytes a
terminal obeys: ``ESC ] 52`` (write the clipboard), ``ESC ] 0`` (set the
title), CSI sequences that hide, move or recolour text, BEL, the 8-bit C1
forms (``\\x9b`` is CSI), and bidi overrides that show text in another order
than it is stored (CVE-2021-42574, "Trojan Source"). Every human-readable
line the CLI prints goes through :func:`visible`, which this module alone
defines:

* C0 controls (U+0000-U+001F), DEL (U+007F) and C1 controls (U+0080-U+009F)
  become ``\\xNN`` (``\\n``, ``\\r``, ``\\t`` for those three). Only ``show``'s message bodies keep ``\\n`` and ``\\t``
  (``keep_layout=True``): a newline there starts an indented line, and a tab
  moves the cursor to the next tab stop and nothing else. Everywhere else
  (ids, names, paths, table cells, error messages) they are escaped too, so a
  value can never fake a line of output. ``\\r`` is always escaped: it would
  let text overwrite what precedes it.
* Invisible format characters (Unicode category Cf: bidi embeddings and
  overrides U+202A-U+202E, isolates U+2066-U+2069, marks U+200E/U+200F,
  zero-width U+200B-U+200D, U+FEFF, soft hyphen ...), the line and paragraph
  separators U+2028/U+2029 and lone surrogates become ``\\uNNNN``
  (``\\UNNNNNNNN`` above the BMP).

The escape is visible, not silent: a reader sees that something was there.
A literal backslash is printed as is, so ``\\x1b`` may be either the escape or
the four characters; ``--json`` is the exact form.

``--json`` output is exact: :func:`json_text` is ``json.dumps`` (which writes
C0 as ``\\u001b``), plus ``\\uNNNN`` escapes for the characters above that
``ensure_ascii=False`` would leave raw, so that parsing the output gives
exactly the stored strings while the bytes written are still terminal-safe.

Rich is used by ``show`` and ``migrate-legacy``'s progress bar: content goes
to it as :class:`rich.text.Text` or with markup off, never as markup, so
``[bold]`` or ``[link=...]`` in a message is printed as typed.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, Final

__all__ = ["json_safe", "json_text", "visible"]

#: Categories escaped wherever they appear: controls, format characters, line/paragraph separators, surrogates.
_UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_LAYOUT: Final = frozenset("\n\t")
_SHORT: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch in _SHORT:
        return _SHORT[ch]
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in _UNSAFE_CATEGORIES


def visible(text: str, *, keep_layout: bool = False) -> str:
    """``text`` with every control and invisible format character written as a visible escape.

    Args:
        text: any string (stored content, an id, a path, an error message).
        keep_layout: keep ``\\n`` and ``\\t`` (multi-line message bodies only).
    """
    if text.isprintable():  # the common case: no Cc, Cf, Zl, Zp, Cs (nor Zs other than space) at all
        return text
    keep = _LAYOUT if keep_layout else frozenset()
    return "".join(_escape(ch) if ch not in keep and _unsafe(ch) else ch for ch in text)


def json_text(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON whose parse is exactly ``value`` and whose bytes hold no terminal control.

    Non-ASCII text stays readable (``ensure_ascii=False``); the characters
    :func:`visible` escapes are written as ``\\uNNNN`` JSON escapes instead.
    Outside strings JSON has only printable ASCII, spaces and (with ``indent``)
    newlines, and ``json.dumps`` already escapes C0 inside strings, so every
    character replaced here is inside a string.
    """
    return json_safe(json.dumps(value, ensure_ascii=False, indent=indent))


def json_safe(text: str) -> str:
    """Valid JSON text (``json.dumps`` output, an export line) re-spelt so no terminal control is raw in it.

    In valid JSON a raw control or format character can only be inside a
    string (C0 must be escaped there, so in practice DEL, C1, Cf, U+2028/9),
    where ``\\uNNNN`` means the same character; newlines between values stay.
    """
    if text.isascii() and "\x7f" not in text:
        return text
    return "".join(ch if ch == "\n" or not _unsafe(ch) else _json_escape(ch) for ch in text)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)  # a UTF-16 surrogate pair, as JSON spells astral characters
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
