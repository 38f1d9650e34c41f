"""PostgreSQL's dialect of the shared SQL (``storage/sql/``): ``$n`` placeholders, lists as one array parameter
(``= ANY($n)``), row locks, and strings that may hold NUL in their NUL-free form (``nul_text.db_text``);
and its reading of payloads whose strings may hold NUL (:func:`payload_json`)."""

from __future__ import annotations

from typing import Final

from ..nul_text import db_text, from_db_text, payload_sql
from ..sql.dialect import Dialect

__all__ = ["POSTGRES", "payload_json"]


def payload_json(column: str = "payload") -> str:
    """SQL: a stored ``payload`` read as ``json`` for ``->>``, each string in ``nul_text.db_text``'s form.

    PostgreSQL's ``->>`` refuses the JSON escape of NUL (``\\u0000``), which a message may carry (the
    payload keeps it as written); through this it never meets one."""
    return f"{payload_sql(column, 'chr')}::json"


#: PostgreSQL's spelling of the shared SQL: lists as one array parameter, strings in their NUL-free form.
POSTGRES: Final = Dialect(
    "postgres",
    {
        "event_bytes": "octet_length(payload) + coalesce(octet_length(item), 0)",
        "strpos": "strpos",
        "for_update": " FOR UPDATE",
        "for_share": " FOR SHARE",
        "skip_locked": " FOR UPDATE SKIP LOCKED",
        "open_calls_index": "",
        "ts_index": "",
        "client_id_index": "",
        "fence": " OFFSET 0",
        "result_call_id": f"({payload_json('e.payload')} ->> 'tool_call_id')",
        "drop_encoded": "",
        "like": "ILIKE",
    },
    arrays=True,
    text=db_text,
    from_text=from_db_text,
)
