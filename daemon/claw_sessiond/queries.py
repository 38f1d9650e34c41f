"""Cross-session reads for people: what full-text search, the usage report and follow-all ask and return.

The vocabulary and the bounds shared by the RPC and every storage backend
(which runs the reads: ``storage/sqlite/queries.py``): the search filter and
its rows, the usage report's rows, the query language (FTS5 syntax in raw
mode, every word as a phrase otherwise: :func:`fts_query`) and the match
marks a backend puts around matched words in a snippet (:func:`split_snippet`).

Bounds (documented in ``docs/security.md``): a search returns at most
:data:`MAX_SEARCH_HITS` hits, its query is at most :data:`MAX_QUERY_BYTES`,
each snippet part at most :data:`MAX_SNIPPET_PART_CHARS` characters, and the
statement is interrupted (``sqlite3_interrupt``) after
:data:`SEARCH_TIMEOUT_S` or as soon as the caller goes away. The usage report
returns at most :data:`MAX_REPORT_ROWS` groups within
:data:`REPORT_TIMEOUT_S`. A follow-all page holds at most the rows asked for
and about ``storage.paging.PAGE_BYTES`` of payload.

A backend must never run a search or report without these time bounds, nor
hold a connection across a yield. This module does no I/O and imports no
driver.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from .errors import InvalidRequestError, Reason

__all__ = [
    "DEFAULT_SEARCH_HITS",
    "MATCH_CLOSE",
    "MATCH_OPEN",
    "MAX_FOLLOW_LAST",
    "MAX_QUERY_BYTES",
    "MAX_REPORT_ROWS",
    "MAX_SEARCH_HITS",
    "MAX_SNIPPET_PART_CHARS",
    "REPORT_TIMEOUT_S",
    "SEARCH_TIMEOUT_S",
    "SNIPPET_TOKENS",
    "SearchFilter",
    "SearchRow",
    "UsageRow",
    "fts_query",
    "split_snippet",
]

#: Longest search query, in UTF-8 bytes.
MAX_QUERY_BYTES: Final = 1024
#: Hits returned when the request says 0.
DEFAULT_SEARCH_HITS: Final = 20
#: Most hits one search returns.
MAX_SEARCH_HITS: Final = 200
#: A search statement is interrupted after this long.
SEARCH_TIMEOUT_S: Final = 2.0
#: Longest text of one snippet part (a snippet has at most 16 tokens, but a token may be long).
MAX_SNIPPET_PART_CHARS: Final = 200
#: Most groups a usage report returns.
MAX_REPORT_ROWS: Final = 10_000
#: A usage report statement is interrupted after this long.
REPORT_TIMEOUT_S: Final = 5.0
#: Most history events a follow-all sends before the new ones (``WatchAll.last``).
MAX_FOLLOW_LAST: Final = 1000

#: Match marks a backend puts around matched words in a snippet, split out again by split_snippet()
#: (private-use code points: stored text that holds them only gets a wrong highlight).
MATCH_OPEN: Final = "\ue000"
MATCH_CLOSE: Final = "\ue001"
#: Most tokens of a snippet.
SNIPPET_TOKENS: Final = 16
_WORD: Final = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """What a search is restricted to (empty strings: no restriction; times are RFC 3339 UTC)."""

    session_id: str = ""
    role: str = ""
    since: str = ""
    until: str = ""
    include_cleared: bool = False


@dataclass(frozen=True, slots=True)
class SearchRow:
    """One hit: where the message is, its role and time, its bm25 rank and snippet text (with marks)."""

    session_id: str
    position: int
    role: str
    ts: str
    rank: float
    snippet: str
    cleared: bool


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One group of the usage report."""

    day: str
    model: str
    pricing_version: str
    currency: str
    session_id: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_micros: int
    events: int


def fts_query(query: str, *, raw: bool) -> str:
    """The FTS5 MATCH expression for a user's query.

    Plain (the default): every word of the query, each as an FTS5 string, so
    that no character of the query is FTS5 syntax (``"``, ``*``, ``AND``,
    ``:`` are just text); all words must occur. Raw: the query as given.

    Raises:
        InvalidRequestError: the query is empty, too long, or has no words.
    """
    if len(query.encode()) > MAX_QUERY_BYTES:
        raise InvalidRequestError(
            f"the search query is longer than {MAX_QUERY_BYTES} bytes", reason=Reason.FIELD_TOO_LARGE
        )
    if raw:
        if not query.strip():
            raise InvalidRequestError("the search query is empty", reason=Reason.INVALID_MESSAGE)
        return query
    words = _WORD.findall(query)
    if not words:
        raise InvalidRequestError(
            "the search query has no words (letters or digits) to look for", reason=Reason.INVALID_MESSAGE
        )
    return " ".join('"' + w.replace('"', '""') + '"' for w in words)


def split_snippet(snippet: str) -> list[tuple[str, bool]]:
    """Snippet text with match marks → ``[(text, is_match)]``, each part clipped."""
    parts: list[tuple[str, bool]] = []
    for i, piece in enumerate(snippet.split(MATCH_OPEN)):
        if i == 0:
            matched, rest = "", piece
        else:
            matched, _, rest = piece.partition(MATCH_CLOSE)
        for text, is_match in ((matched, True), (rest.replace(MATCH_CLOSE, ""), False)):
            if text:
                clipped = text if len(text) <= MAX_SNIPPET_PART_CHARS else text[: MAX_SNIPPET_PART_CHARS - 1] + "…"
                parts.append((clipped, is_match))
    return parts
