"""The PostgreSQL schema: ordered, named forward migrations, applied once under an advisory lock.

Everything lives in its own schema (:data:`SCHEMA`), marked as ours by a
``meta`` row ``application = claw-sessiond``; the version is the highest row
of ``schema_migrations``. Each migration runs in one transaction (PostgreSQL
DDL is transactional) that first takes ``pg_advisory_xact_lock`` on
:data:`MIGRATION_LOCK`, so daemons starting together on an empty database
migrate once: the others wait, then find nothing pending. A schema that
exists without our ``meta`` row, or whose version is newer than this code,
is refused and not touched.

The tables mirror the SQLite schema at version 4, with these differences
(docs/postgres.md): every text column that is ordered or compared is
``COLLATE "C"`` (bytewise, as SQLite's BINARY: list and export order do not
depend on the server's locale); ``payload`` stays ``text``, not ``jsonb``
(jsonb rewrites numbers and key order, and an export round trip is
byte-stable); event ids come from an identity column (unique, but not
commit-ordered across sessions: a follow-all reads up to a horizon, ``follow.py``); the search
index is a stored ``tsvector`` column with a GIN index instead of FTS5.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ...errors import CorruptDatabaseError
from ..migrations import Migration, newer_schema
from .batch_sql import APPEND_BATCH_SQL

__all__ = [
    "APPLICATION",
    "MIGRATIONS",
    "MIGRATION_LOCK",
    "SCHEMA",
    "SCHEMA_VERSION",
    "migrate",
]

#: The schema (namespace) that holds every table.
SCHEMA: Final = "claw_sessiond"
#: ``meta.application`` of a claw-sessiond schema.
APPLICATION: Final = "claw-sessiond"
#: Key of the transaction-level advisory lock every migration takes ("CLAW" and 1).
MIGRATION_LOCK: Final = (0x434C4157, 1)

#: Event types whose payload ``content`` is searchable (as the SQLite index: messages and repairs).
_MESSAGE_TYPES: Final = "('system_message', 'user_message', 'assistant_message', 'tool_result', 'repair')"


def _payload_json_v3(column: str = "payload") -> str:
    """What :func:`payload_json` was when schema version 3 was written (NUL read as a space); kept so that
    version 3's migration stays what it was."""
    return f"replace({column}, '\\u0000', '\\u0020')::json"


_V1 = f"""
CREATE TABLE meta (
    key   text COLLATE "C" PRIMARY KEY,
    value text NOT NULL
);
CREATE TABLE schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE sessions (
    session_id         text COLLATE "C" PRIMARY KEY,
    workdir            text NOT NULL,
    created_at         text COLLATE "C" NOT NULL,
    updated_at         text COLLATE "C" NOT NULL,
    last_position      bigint NOT NULL DEFAULT 0,
    clear_position     bigint NOT NULL DEFAULT 0,
    message_count      bigint NOT NULL DEFAULT 0,
    input_tokens       bigint NOT NULL DEFAULT 0,
    output_tokens      bigint NOT NULL DEFAULT 0,
    cache_read_tokens  bigint NOT NULL DEFAULT 0,
    cache_write_tokens bigint NOT NULL DEFAULT 0,
    cost_micros        bigint NOT NULL DEFAULT 0,
    currency           text NOT NULL DEFAULT '',
    incarnation        text NOT NULL,
    state              text NOT NULL DEFAULT '{{}}',
    labels             text NOT NULL DEFAULT '{{}}',
    tool_policy        text NOT NULL DEFAULT '{{}}',
    forked_from        text COLLATE "C" NOT NULL DEFAULT '',
    forked_at_position bigint NOT NULL DEFAULT 0
);
CREATE INDEX sessions_updated ON sessions(updated_at, session_id);
CREATE INDEX sessions_created ON sessions(created_at, session_id);
CREATE TABLE events (
    event_id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id     text COLLATE "C" NOT NULL,
    position       bigint,
    type           text COLLATE "C" NOT NULL,
    trace_id       text NOT NULL,
    ts             text COLLATE "C" NOT NULL,
    schema_version integer NOT NULL,
    payload        text NOT NULL,
    format         text,
    item           bytea,
    client_id      text COLLATE "C",
    hidden_by      bigint,
    search         tsvector GENERATED ALWAYS AS (
        CASE WHEN type IN {_MESSAGE_TYPES}
             THEN to_tsvector('simple'::regconfig, coalesce(payload::json ->> 'content', ''))
        END
    ) STORED
);
CREATE UNIQUE INDEX events_position ON events(session_id, position);
CREATE INDEX events_session ON events(session_id, event_id);
CREATE INDEX events_history ON events(event_id) WHERE position IS NOT NULL;
CREATE INDEX events_usage_ts ON events(ts) WHERE type = 'usage';
CREATE INDEX events_client_id ON events(session_id, client_id) WHERE client_id IS NOT NULL;
CREATE INDEX events_search ON events USING gin (search);
CREATE TABLE tool_calls (
    session_id         text COLLATE "C" NOT NULL,
    call_id            text COLLATE "C" NOT NULL,
    assistant_position bigint NOT NULL,
    call_index         integer NOT NULL,
    result_position    bigint,
    run_id             text NOT NULL DEFAULT '',
    pending            boolean NOT NULL DEFAULT false,
    repair_mode        text NOT NULL DEFAULT '',
    synthetic_position bigint,
    PRIMARY KEY (session_id, call_id)
);
CREATE INDEX tool_calls_open ON tool_calls(session_id) WHERE result_position IS NULL;
CREATE TABLE requests (
    session_id  text COLLATE "C" NOT NULL,
    request_id  text COLLATE "C" NOT NULL,
    kind        text NOT NULL,
    fingerprint text NOT NULL,
    result      text NOT NULL,
    created_at  text COLLATE "C" NOT NULL,
    PRIMARY KEY (session_id, request_id)
);
CREATE INDEX requests_created ON requests(created_at);
CREATE TABLE usage_by_model (
    session_id         text COLLATE "C" NOT NULL,
    model              text COLLATE "C" NOT NULL,
    pricing_version    text COLLATE "C" NOT NULL,
    input_tokens       bigint NOT NULL DEFAULT 0,
    output_tokens      bigint NOT NULL DEFAULT 0,
    cache_read_tokens  bigint NOT NULL DEFAULT 0,
    cache_write_tokens bigint NOT NULL DEFAULT 0,
    cost_micros        bigint NOT NULL DEFAULT 0,
    currency           text NOT NULL DEFAULT '',
    PRIMARY KEY (session_id, model, pricing_version)
);
CREATE TABLE session_labels (
    session_id text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    value      text COLLATE "C" NOT NULL,
    PRIMARY KEY (session_id, key)
);
CREATE INDEX session_labels_match ON session_labels(key, value, session_id);
CREATE TABLE scope_states (
    scope      text COLLATE "C" PRIMARY KEY,
    state      text NOT NULL,
    updated_at text COLLATE "C" NOT NULL
);
"""

#: Version 2: runs across daemons (``runs.py``): each daemon's lease, and the live runs it owns.
_V2 = """
CREATE TABLE daemons (
    daemon_no    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    host         text NOT NULL,
    pid          integer NOT NULL,
    lease_ms     integer NOT NULL,
    started_at   timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL
);
CREATE TABLE runs (
    run_id     text COLLATE "C" PRIMARY KEY,
    session_id text COLLATE "C" NOT NULL UNIQUE,
    daemon_no  bigint NOT NULL REFERENCES daemons ON DELETE CASCADE,
    pid        integer NOT NULL,
    label      text NOT NULL,
    started_at timestamptz NOT NULL
);
CREATE INDEX runs_daemon ON runs(daemon_no);
"""

# v3: the search column reads the payload through payload_json(), so that a message holding NUL is stored (it
# failed with 22P05 "unsupported Unicode escape sequence" before); the column is made again (a table rewrite).
_V3 = f"""
DROP INDEX IF EXISTS events_search;
ALTER TABLE events DROP COLUMN search;
ALTER TABLE events ADD COLUMN search tsvector GENERATED ALWAYS AS (
    CASE WHEN type IN {_MESSAGE_TYPES}
         THEN to_tsvector('simple'::regconfig, coalesce({_payload_json_v3()} ->> 'content', ''))
    END
) STORED;
CREATE INDEX events_search ON events USING gin (search);
"""

# v4: the columns that keep a request's own string store db_text() of it, so that one holding NUL is stored (it
# failed with 22021 "invalid byte sequence" before). No stored value held NUL; one holding U+0001 is escaped.
_ENCODED_COLUMNS: Final = (
    ("events", "client_id"),
    ("tool_calls", "call_id"),
    ("usage_by_model", "model"),
    ("usage_by_model", "pricing_version"),
    ("runs", "label"),
)
_V4 = "".join(
    f"UPDATE {table} SET {column} = replace({column}, chr(1), chr(1) || chr(2)) WHERE strpos({column}, chr(1)) > 0;\n"
    for table, column in _ENCODED_COLUMNS
)

MIGRATIONS: Final[Sequence[Migration]] = (
    Migration(1, "event log, sessions, tool calls, requests, usage, labels, scope states, search index", _V1),
    Migration(2, "daemons and their leases, runs across daemons", _V2),
    Migration(3, "messages holding NUL: the search column reads such payloads", _V3),
    Migration(4, "ids and names holding NUL: such columns store db_text()", _V4),
    Migration(5, "append_batch: a queue of plain appends of one session in one call", APPEND_BATCH_SQL),
)
SCHEMA_VERSION: Final = MIGRATIONS[-1].version


async def schema_version(conn: Any) -> int:
    """The schema version of the database ``conn`` is connected to (0: no schema yet).

    Raises:
        CorruptDatabaseError: the schema is not ours, or newer than this code.
    """
    exists = await conn.fetchval("SELECT count(*) FROM pg_namespace WHERE nspname = $1", SCHEMA)
    if not exists:
        return 0
    has_meta = await conn.fetchval(
        "SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename IN ('meta', 'schema_migrations')", SCHEMA
    )
    if has_meta != 2:
        tables = await conn.fetchval("SELECT count(*) FROM pg_tables WHERE schemaname = $1", SCHEMA)
        if tables == 0:
            return 0
        raise CorruptDatabaseError(f"schema {SCHEMA!r} exists but is not a claw-sessiond schema (no meta table)")
    app = await conn.fetchval(f"SELECT value FROM {SCHEMA}.meta WHERE key = 'application'")
    if app != APPLICATION:
        raise CorruptDatabaseError(f"schema {SCHEMA!r} is not a claw-sessiond schema (meta application {app!r})")
    version = int(await conn.fetchval(f"SELECT coalesce(max(version), 0) FROM {SCHEMA}.schema_migrations"))
    if version > SCHEMA_VERSION:
        raise newer_schema(version, SCHEMA_VERSION)
    return version


async def migrate(conn: Any) -> list[str]:
    """Apply pending migrations in order, each in its own transaction under the migration lock; their names.

    The version is read again after the lock is granted, so of several
    daemons migrating at once only the first writes; the others wait and
    find the migration applied.
    """
    applied: list[str] = []
    if await schema_version(conn) >= SCHEMA_VERSION:
        return applied  # the common case: no lock taken
    for step in MIGRATIONS:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1, $2)", *MIGRATION_LOCK)
            if await schema_version(conn) >= step.version:
                continue
            if step.version == 1:
                await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
                await conn.execute(f"REVOKE ALL ON SCHEMA {SCHEMA} FROM PUBLIC")
            await conn.execute(f"SET LOCAL search_path = {SCHEMA}")
            await conn.execute("SET LOCAL statement_timeout = 0")  # a step rewrites whole tables: unbounded
            await conn.execute(step.sql)
            if step.version == 1:
                await conn.execute(
                    "INSERT INTO meta(key, value) VALUES ('application', $1), ('database_id', $2)",
                    APPLICATION,
                    await conn.fetchval("SELECT md5(random()::text || clock_timestamp()::text)"),
                )
            await conn.execute("INSERT INTO schema_migrations(version, name) VALUES ($1, $2)", step.version, step.name)
        applied.append(step.name)
    return applied
