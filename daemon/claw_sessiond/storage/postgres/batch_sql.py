"""The server-side functions of plain appends: ``append_batch`` (schema version 5) and ``apply_appends`` (6).

``apply_appends`` (:data:`APPLY_APPENDS_SQL`) writes, in the one statement that calls it, the
rows that ``writes.append`` decided in Python for a queue of plain appends of one session
(``batch_plan.py``, ``batch_tx.py``): the events, the request records and the session row's new
last position, message count, time and workdir, then one ``pg_notify``. It decides nothing; it
only checks, under the session's row lock, that what the plan was decided from still holds (the
*guard*):

- the plan saw a row (``p_version``): the row is still that version (its ``xmin``: any write to
  the session since, by this daemon or another, updated the row and so changed it) with that
  last position, locked ``FOR UPDATE``;
- the plan saw no row (``p_version`` ''): the row it creates (``INSERT … ON CONFLICT DO
  NOTHING``) is its own, not one another writer created since;
- none of the request ids the plan took for new is stored now;
- ``p_version`` NULL (nothing known of the session): the guard fails, nothing is planned.

Its one row answers whether it wrote (``o_applied``), its time, and the row as it is now with
its version; if the guard failed, also the stored records of the queue's request ids (the caller
decides again from those). The time is the transaction's: it goes in the events, the session row
and each request record, whose text the caller sends cut where the time goes (head, tail). The
follow-all announcement (``follow.ANNOUNCE_SQL``) comes first, as in every history write.

``append_batch`` (:data:`APPEND_BATCH_SQL`) is what schema version 5 installed, kept as that
step's text so that migrating an empty database runs the steps it always ran; version 6 drops it
(:data:`V6_SQL`). It did the same writes but decided the replay and the expected-position check
again in PL/pgSQL.

Tables are found through the connection's ``search_path`` (the daemon's schema).
"""

from __future__ import annotations

from typing import Final

from .follow import ANNOUNCE_SQL

__all__ = ["APPEND_BATCH_SQL", "APPLY_APPENDS_SQL", "V6_SQL"]

_ANNOUNCE: Final = "PERFORM" + ANNOUNCE_SQL.removeprefix("SELECT")
_NOW: Final = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

APPEND_BATCH_SQL: Final = f"""
CREATE FUNCTION append_batch(
    p_session text, p_channel text, p_note text, p_schema_version integer,
    p_request_ids text[], p_fingerprints text[], p_expected bigint[], p_workdirs text[],
    p_traces text[], p_trace_json text[], p_incarnation text, p_counts integer[],
    p_types text[], p_payloads text[], p_formats text[], p_items bytea[]
) RETURNS TABLE (
    outcome text, first_position bigint, last_position bigint, at text, kind text, fingerprint text, result text
) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
    v_now text := {_NOW};
    v_found boolean;
    v_last bigint := 0;
    v_workdir text;          -- the workdir the last written append set ('' sets none)
    v_added bigint := 0;     -- messages written
    v_wrote boolean := false;
    v_lo integer := 1;       -- the first message of append i in the flat arrays
    v_hi integer;
    v_want bigint;
    v_kind text; v_fp text; v_result text;
    i integer;
BEGIN
    {_ANNOUNCE};
    SELECT s.last_position INTO v_last FROM sessions AS s WHERE s.session_id = p_session FOR UPDATE;
    v_found := FOUND;
    v_last := coalesce(v_last, 0);
    FOR i IN 1 .. coalesce(array_length(p_counts, 1), 0) LOOP
        v_hi := v_lo + p_counts[i] - 1;
        outcome := NULL; first_position := NULL; last_position := NULL; at := NULL;
        kind := NULL; fingerprint := NULL; result := NULL;
        LOOP  -- at most twice: again once a missing row was created (another daemon may have made it first)
            v_kind := NULL;
            IF p_request_ids[i] <> '' THEN
                SELECT r.kind, r.fingerprint, r.result INTO v_kind, v_fp, v_result
                FROM requests AS r WHERE r.session_id = p_session AND r.request_id = p_request_ids[i];
            END IF;
            IF v_kind IS NOT NULL THEN
                outcome := 'stored'; kind := v_kind; fingerprint := v_fp; result := v_result;
                EXIT;
            END IF;
            v_want := CASE p_expected[i] WHEN 0 THEN NULL WHEN -1 THEN 0 ELSE p_expected[i] END;
            IF v_want IS NOT NULL AND v_want <> v_last THEN
                outcome := 'conflict'; last_position := v_last;
                EXIT;
            END IF;
            EXIT WHEN v_found;
            INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation)
            VALUES (p_session, p_workdirs[i], v_now, v_now, p_incarnation) ON CONFLICT (session_id) DO NOTHING;
            SELECT s.last_position INTO v_last FROM sessions AS s WHERE s.session_id = p_session FOR UPDATE;
            v_found := true;
        END LOOP;
        IF outcome IS NULL THEN
            INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item)
            SELECT p_session, v_last + u.n, u.t, p_traces[i], v_now, p_schema_version, u.p, u.f, u.it
            FROM unnest(p_types[v_lo:v_hi], p_payloads[v_lo:v_hi], p_formats[v_lo:v_hi], p_items[v_lo:v_hi])
                 WITH ORDINALITY AS u(t, p, f, it, n)
            ORDER BY u.n;
            outcome := 'ok'; first_position := v_last + 1; last_position := v_last + p_counts[i]; at := v_now;
            v_last := v_last + p_counts[i];
            v_added := v_added + p_counts[i];
            v_wrote := true;
            IF p_workdirs[i] <> '' THEN
                v_workdir := p_workdirs[i];
            END IF;
            IF p_request_ids[i] <> '' THEN
                INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at)
                VALUES (p_session, p_request_ids[i], 'append', p_fingerprints[i],
                        '{{"first": ' || first_position || ', "last": ' || last_position || ', "at": "' || v_now
                        || '", "trace": ' || p_trace_json[i] || '}}', v_now);
            END IF;
        END IF;
        RETURN NEXT;
        v_lo := v_hi + 1;
    END LOOP;
    IF v_wrote THEN
        UPDATE sessions SET last_position = v_last, message_count = message_count + v_added, updated_at = v_now,
               workdir = coalesce(v_workdir, workdir)
        WHERE session_id = p_session;
        PERFORM pg_notify(p_channel, p_note);
    END IF;
END
$fn$;
"""

APPLY_APPENDS_SQL: Final = f"""
CREATE FUNCTION apply_appends(
    p_session text, p_channel text, p_note text, p_version text, p_last_read bigint,
    p_ids text[], p_new_ids text[], p_incarnation text, p_created_workdir text, p_schema_version integer,
    p_positions bigint[], p_types text[], p_traces text[], p_payloads text[], p_formats text[], p_items bytea[],
    p_client_ids text[], p_request_ids text[], p_kinds text[], p_fingerprints text[],
    p_record_heads text[], p_record_tails text[], p_last bigint, p_added bigint, p_workdir text
) RETURNS TABLE (
    o_applied boolean, o_now text, o_version text,
    o_session_id text, o_workdir text, o_created_at text, o_updated_at text, o_last_position bigint,
    o_clear_position bigint, o_message_count bigint, o_input_tokens bigint, o_output_tokens bigint,
    o_cache_read_tokens bigint, o_cache_write_tokens bigint, o_cost_micros bigint, o_currency text,
    o_records text[]
) LANGUAGE plpgsql AS $fn$
DECLARE
    v_now text := {_NOW};
    v_ok boolean := false;
    v_created boolean := false;
    v_version text;
    v_last bigint;
BEGIN
    {_ANNOUNCE};
    IF p_version = '' THEN  -- the plan saw no row: it creates it, unless a writer did since
        IF NOT EXISTS (SELECT 1 FROM requests AS r WHERE r.session_id = p_session AND r.request_id = ANY(p_new_ids))
        THEN
            INSERT INTO sessions(session_id, workdir, created_at, updated_at, incarnation)
            VALUES (p_session, p_created_workdir, v_now, v_now, p_incarnation) ON CONFLICT (session_id) DO NOTHING;
            v_ok := FOUND;
            v_created := FOUND;
        END IF;
    ELSIF p_version IS NOT NULL THEN  -- the plan saw this version of the row
        SELECT s.xmin::text, s.last_position INTO v_version, v_last
        FROM sessions AS s WHERE s.session_id = p_session FOR UPDATE;
        v_ok := coalesce(v_version = p_version AND v_last = p_last_read, false)
            AND NOT EXISTS (SELECT 1 FROM requests AS r
                            WHERE r.session_id = p_session AND r.request_id = ANY(p_new_ids));
    END IF;
    IF v_ok AND (v_created OR cardinality(p_positions) + cardinality(p_request_ids) > 0) THEN
        INSERT INTO events(session_id, position, type, trace_id, ts, schema_version, payload, format, item, client_id)
        SELECT p_session, u.pos, u.t, u.tr, v_now, p_schema_version, u.p, u.f, u.it, u.c
        FROM unnest(p_positions, p_types, p_traces, p_payloads, p_formats, p_items, p_client_ids)
             WITH ORDINALITY AS u(pos, t, tr, p, f, it, c, n)
        ORDER BY u.n;
        INSERT INTO requests(session_id, request_id, kind, fingerprint, result, created_at)
        SELECT p_session, u.id, u.k, u.fp, u.head || to_json(v_now)::text || u.tail, v_now
        FROM unnest(p_request_ids, p_kinds, p_fingerprints, p_record_heads, p_record_tails)
             WITH ORDINALITY AS u(id, k, fp, head, tail, n)
        ORDER BY u.n;
        UPDATE sessions AS s SET last_position = p_last, message_count = s.message_count + p_added, updated_at = v_now,
               workdir = CASE WHEN p_workdir <> '' THEN p_workdir ELSE s.workdir END
        WHERE s.session_id = p_session;
        PERFORM pg_notify(p_channel, p_note);
    END IF;
    RETURN QUERY
    SELECT v_ok, v_now, s.xmin::text, s.session_id::text, s.workdir, s.created_at::text, s.updated_at::text,
           s.last_position, s.clear_position, s.message_count, s.input_tokens, s.output_tokens,
           s.cache_read_tokens, s.cache_write_tokens, s.cost_micros, s.currency,
           CASE WHEN v_ok THEN '{{}}'::text[] ELSE ARRAY(
               SELECT ARRAY[r.request_id::text, r.kind::text, r.fingerprint::text, r.result::text] FROM requests AS r
               WHERE r.session_id = p_session AND r.request_id = ANY(p_ids)) END
    FROM (VALUES (1)) AS one LEFT JOIN sessions AS s ON s.session_id = p_session;
END
$fn$;
"""

#: Schema version 6: plain appends are decided in Python and applied by ``apply_appends``.
V6_SQL: Final = (
    "DROP FUNCTION append_batch(text, text, text, integer, text[], text[], bigint[], text[], text[], text[], text, "
    "integer[], text[], text[], text[], bytea[]);\n" + APPLY_APPENDS_SQL
)
