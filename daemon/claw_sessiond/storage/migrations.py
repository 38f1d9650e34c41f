"""What both databases' schema modules share: a forward migration step, and the refusal of a newer schema.

Each backend keeps its own ordered steps (``sqlite/schema.py``, ``postgres/schema.py``); a step, once
released, is never edited (a database written by the previous version migrates through it).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import CorruptDatabaseError

__all__ = ["Migration", "newer_schema"]


@dataclass(frozen=True)
class Migration:
    """One forward step: ``version`` is the schema version after it runs."""

    version: int
    name: str
    sql: str


def newer_schema(version: int, this: int) -> CorruptDatabaseError:
    """The refusal of a database whose schema ``version`` is newer than this build's (``this``): it is not touched."""
    return CorruptDatabaseError(
        f"database schema version {version} is newer than this claw-sessiond ({this}); upgrade claw-sessiond"
    )
