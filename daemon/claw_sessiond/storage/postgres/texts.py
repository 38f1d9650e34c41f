"""PostgreSQL's reading of payloads whose strings may hold NUL (``storage/nul_text.py``)."""

from __future__ import annotations

from ..nul_text import payload_sql

__all__ = ["payload_json"]


def payload_json(column: str = "payload") -> str:
    """SQL: a stored ``payload`` read as ``json`` for ``->>``, each string in ``nul_text.db_text``'s form.

    PostgreSQL's ``->>`` refuses the JSON escape of NUL (``\\u0000``), which a message may carry (the
    payload keeps it as written); through this it never meets one."""
    return f"{payload_sql(column, 'chr')}::json"
