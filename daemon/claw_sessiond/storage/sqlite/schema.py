"""Database schema: ordered, named forward migrations and the schema version.

The version is ``PRAGMA user_version``; each migration runs in its own
``BEGIN IMMEDIATE`` transaction together with its row in
``schema_migrations``. ``application_id`` marks the file as ours, so a
foreign SQLite database is refused rather than written into. A database
whose version is newer than :data:`SCHEMA_VERSION` is refused.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Final

from ...errors import CorruptDatabaseError
from ...model import now_rfc3339
from ..migrations import Migration, newer_schema

__all__ = ["APPLICATION_ID", "MIGRATIONS", "SCHEMA_VERSION", "migrate", "pending"]

#: "CLAW" as a big-endian 32-bit integer (PRAGMA application_id).
APPLICATION_ID: Final = 0x434C4157


_V1 = """
CREATE TABLE schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
-- One row per stored session: metadata and running totals (derived from events,
-- kept here so Load and Append need no scan).
CREATE TABLE sessions (
    session_id         TEXT PRIMARY KEY,
    workdir            TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    last_position      INTEGER NOT NULL DEFAULT 0,
    clear_position     INTEGER NOT NULL DEFAULT 0,
    message_count      INTEGER NOT NULL DEFAULT 0,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_micros        INTEGER NOT NULL DEFAULT 0,
    currency           TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_updated ON sessions(updated_at);
-- The source of truth: an append-only log. History events (messages, repairs,
-- clears) have a per-session position; usage and audit events have none.
CREATE TABLE events (
    event_id       INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id     TEXT NOT NULL,
    position       INTEGER,
    type           TEXT NOT NULL,
    trace_id       TEXT NOT NULL,
    ts             TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    payload        TEXT NOT NULL
);
CREATE UNIQUE INDEX events_position ON events(session_id, position);
CREATE INDEX events_session ON events(session_id, event_id);
-- Index of the tool calls in the visible history (rebuilt by Clear), so that
-- Append can check a tool result and Load can find open calls without a scan.
CREATE TABLE tool_calls (
    session_id         TEXT NOT NULL,
    call_id            TEXT NOT NULL,
    assistant_position INTEGER NOT NULL,
    call_index         INTEGER NOT NULL,
    result_position    INTEGER,
    run_id             TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (session_id, call_id)
) WITHOUT ROWID;
CREATE INDEX tool_calls_open ON tool_calls(session_id) WHERE result_position IS NULL;
-- Idempotency keys: the first result of each request id, and a fingerprint of
-- its content so that a reused id with other content is refused.
CREATE TABLE requests (
    session_id  TEXT NOT NULL,
    request_id  TEXT NOT NULL,
    kind        TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    result      TEXT NOT NULL,
    PRIMARY KEY (session_id, request_id)
) WITHOUT ROWID;
-- Usage per (model, pricing version), for reconciliation.
CREATE TABLE usage_by_model (
    session_id         TEXT NOT NULL,
    model              TEXT NOT NULL,
    pricing_version    TEXT NOT NULL,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_micros        INTEGER NOT NULL DEFAULT 0,
    currency           TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (session_id, model, pricing_version)
) WITHOUT ROWID;
"""

# v2: a session's incarnation (a random id fixed when its row is created, new
# when a deleted id is created again: Watch follows one incarnation only), and
# the time each idempotency record was written (records older than the retry
# window are pruned). Rows written before the upgrade get a fresh incarnation
# and the upgrade time, so their retry window starts at the upgrade.
_V2 = """
ALTER TABLE sessions ADD COLUMN incarnation TEXT NOT NULL DEFAULT '';
UPDATE sessions SET incarnation = lower(hex(randomblob(8)));
ALTER TABLE requests ADD COLUMN created_at TEXT NOT NULL DEFAULT '';
UPDATE requests SET created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
CREATE INDEX requests_created ON requests(created_at);
"""

# v3: full-text search over message content (FTS5, external content). The index
# holds no copy of the text: snippets read it back from the events through the
# ``message_text`` view. It is kept in step with ``events`` inside the writer's
# own transaction (append, repair, import, delete, retention), so it can never
# disagree with the log: by triggers up to v5; from v6 each write step that
# inserts messages indexes them in one statement (port.py), and a trigger still
# takes deleted rows out. Deleting a session also runs FTS5 'optimize'
# (port.py ``erase_search_index_in_tx``): a delete alone only adds tombstones and the old
# index segments keep the words until merged. The 'rebuild' indexes what an
# older database already holds. A partial index makes the usage report's time
# filter cheap.
#: The event types the search index holds (those of the view ``message_text``).
INDEXED_TYPE_NAMES: Final = ("system_message", "user_message", "assistant_message", "tool_result", "repair")
_MESSAGE_TYPES = "(" + ", ".join(f"'{t}'" for t in INDEXED_TYPE_NAMES) + ")"
_V3 = f"""
CREATE VIEW message_text AS
    SELECT event_id, json_extract(payload, '$.content') AS content FROM events WHERE type IN {_MESSAGE_TYPES};
CREATE VIRTUAL TABLE message_fts USING fts5(
    content, content = 'message_text', content_rowid = 'event_id', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER message_fts_insert AFTER INSERT ON events WHEN new.type IN {_MESSAGE_TYPES} BEGIN
    INSERT INTO message_fts(rowid, content) VALUES (new.event_id, json_extract(new.payload, '$.content'));
END;
CREATE TRIGGER message_fts_delete AFTER DELETE ON events WHEN old.type IN {_MESSAGE_TYPES} BEGIN
    INSERT INTO message_fts(message_fts, rowid, content)
        VALUES ('delete', old.event_id, json_extract(old.payload, '$.content'));
END;
INSERT INTO message_fts(message_fts) VALUES ('rebuild');
CREATE INDEX events_usage_ts ON events(ts) WHERE type = 'usage';
"""

# v4: faithful history (issue 14). Each history event may carry the caller's
# own item (``format`` tag + ``item`` bytes, kept byte for byte beside the JSON
# payload) and a client id (unique in the visible history: checked in the write
# transaction through ``events_client_id``). ``hidden_by`` is the position of
# the event that took an entry out of the projection while the log keeps it:
# an EditTail's ``edit`` event, or the real result that superseded a synthetic
# repair. Tool calls record ``pending`` and their repair mode ('' means the
# session's policy). ``tool_calls.synthetic_position`` is reserved and never
# written (always NULL): a supersede finds the synthetic repair it replaces by
# the type of the event at ``result_position`` (one lookup by key), so nothing
# else needs to remember where the repair went. Sessions gain a JSON state, labels (JSON, mirrored into
# ``session_labels`` for exact-match listing), a default tool policy (JSON) and
# their lineage; ``scope_states`` holds states shared by many sessions.
_V4 = """
ALTER TABLE events ADD COLUMN format TEXT;
ALTER TABLE events ADD COLUMN item BLOB;
ALTER TABLE events ADD COLUMN client_id TEXT;
ALTER TABLE events ADD COLUMN hidden_by INTEGER;
CREATE INDEX events_client_id ON events(session_id, client_id) WHERE client_id IS NOT NULL;
CREATE INDEX events_session_ts ON events(session_id, ts) WHERE position IS NOT NULL;
ALTER TABLE tool_calls ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tool_calls ADD COLUMN repair_mode TEXT NOT NULL DEFAULT '';
ALTER TABLE tool_calls ADD COLUMN synthetic_position INTEGER;
ALTER TABLE sessions ADD COLUMN state TEXT NOT NULL DEFAULT '{}';
ALTER TABLE sessions ADD COLUMN labels TEXT NOT NULL DEFAULT '{}';
ALTER TABLE sessions ADD COLUMN tool_policy TEXT NOT NULL DEFAULT '{}';
ALTER TABLE sessions ADD COLUMN forked_from TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN forked_at_position INTEGER NOT NULL DEFAULT 0;
CREATE TABLE session_labels (
    session_id TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
) WITHOUT ROWID;
CREATE INDEX session_labels_match ON session_labels(key, value, session_id);
CREATE TABLE scope_states (
    scope      TEXT PRIMARY KEY,
    state      TEXT NOT NULL,
    updated_at TEXT NOT NULL
) WITHOUT ROWID;
"""

# v5: each history entry may keep its encoded reply form (``entry_wire.encode_entry``: the bytes of its
# ``claw.sessiond.v1.Message``), written with it by an append, so that a Load sends stored bytes
# instead of decoding the payload and encoding the entry again. NULL where not written (rows of
# earlier versions: no backfill, a Load encodes them as before; imports, forks, repairs). It lives
# and dies with its row: an erasure deletes the row, a clear or an edit hides it, nothing rewrites
# a stored payload.
_V5 = """
ALTER TABLE events ADD COLUMN encoded BLOB;
"""

# v6: the search index is kept by the writer, not by a trigger on every inserted row: each verb
# that inserts history entries indexes the messages it inserted in one more statement (port.py:
# an append's by their positions, the other verbs' through ``index_messages_after``). A trigger on
# ``events``, even one whose condition is false, made each row of a 1,000-entry Append cost about
# 2.5 us more. The delete trigger stays (a delete must give FTS5 the very text it indexed). Rows
# already stored are indexed already: nothing to rebuild.
_V6 = """
DROP TRIGGER message_fts_insert;
"""

# v7: an entry's item is stored once. An entry with an item keeps its encoded reply form less the item's
# bytes (``entry_wire.encode_stored``), and ``item_at`` is the offset they go back in at: a read splices the
# row's ``item`` back in (``reads.py``), so a Load sends the very bytes it sent before. NULL where the form
# is whole: rows without an item, and every row of earlier versions, which are read as they are (no
# rewrite: a store of any size upgrades in one ``ALTER TABLE``, and what a rewrite would free stays in the
# file until a VACUUM anyway). Dropping the form (``set_payloads``) drops ``item_at`` with it.
_V7 = """
ALTER TABLE events ADD COLUMN item_at INTEGER;
"""
#: :data:`INDEXED_TYPE_NAMES` in SQL, and what the index holds of each.
INDEXED_TYPES: Final = _MESSAGE_TYPES
INDEXED_TEXT: Final = "json_extract(payload, '$.content')"

MIGRATIONS: Final[Sequence[Migration]] = (
    Migration(1, "initial event log", _V1),
    Migration(2, "session incarnation and request record time", _V2),
    Migration(3, "full-text search index of message content; usage time index", _V3),
    Migration(4, "faithful history: items, client ids, edits, pending calls, session state and labels", _V4),
    Migration(5, "encoded reply form of each appended entry", _V5),
    Migration(6, "search index kept by the writer's statements, not a trigger per row", _V6),
    Migration(7, "an entry's item stored once: the encoded reply form less the item, and where it goes", _V7),
)
SCHEMA_VERSION: Final = MIGRATIONS[-1].version


def pending(conn: sqlite3.Connection) -> list[Migration]:
    """Migrations not yet applied (read-only).

    Raises:
        CorruptDatabaseError: the database is newer than this code, or not ours.
    """
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    if version == 0:
        tables = conn.execute("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").fetchone()[0]
        if tables:
            raise CorruptDatabaseError(
                "not a claw-sessiond database (it has tables but no claw-sessiond schema version)"
            )
    elif app_id != APPLICATION_ID:
        raise CorruptDatabaseError(f"not a claw-sessiond database (application_id {app_id:#x})")
    if version > SCHEMA_VERSION:
        raise newer_schema(version, SCHEMA_VERSION)
    return [m for m in MIGRATIONS if m.version > version]


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply pending migrations in order, each in its own transaction; return their names."""
    applied = []
    for step in pending(conn):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(step.sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (step.version, step.name, now_rfc3339()),
            )
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {step.version}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(step.name)
    return applied


def _statements(script: str) -> list[str]:
    """Split a DDL script at statement ends (a trigger's body keeps its ';': ``sqlite3.complete_statement``)."""
    lines = [line for line in script.splitlines() if not line.lstrip().startswith("--")]
    out: list[str] = []
    pending = ""
    for piece in "\n".join(lines).split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                out.append(pending.strip().removesuffix(";"))
            pending = ""
    if pending.strip(" \n;"):
        out.append(pending.strip().removesuffix(";"))
    return out
