"""The server-side function of schema version 5: a queue of plain appends to one session in one call.

``append_batch`` does, in the one statement that calls it, what ``writes.append`` does with
6-9 statements per append for an append of plain messages (no tool calls or results, no usage,
no client ids, no state deltas, no run): the follow-all announcement (``follow.ANNOUNCE_SQL``),
the session row lock (first creating a missing row with ``INSERT … ON CONFLICT DO NOTHING``),
and for each append in order: the request-id lookup, the expected-position check, the events,
the request record; then one update of the session row and one ``pg_notify``.

It decides nothing the rules decide: an append whose request id is already stored, or whose
expected position is not the session's, writes nothing and comes back as ``stored`` (with the
record) or ``conflict`` (with the position), and the caller asks ``rules.replay_record`` /
``rules.check_expected`` what that means (a replay, or the error). The conditions under which
it writes are exactly those under which these rules let an append through. ``batch_tx.py``
calls it and maps the outcomes.

The request record is spelled as ``rules.result_record`` spells an Append's
(``{"first": 1, "last": 2, "at": "…", "trace": "…"}``, the trace id JSON-encoded by the caller).
Tables are found through the connection's ``search_path`` (the daemon's schema).
"""

from __future__ import annotations

from typing import Final

from .follow import ANNOUNCE_SQL

__all__ = ["APPEND_BATCH_SQL"]

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
