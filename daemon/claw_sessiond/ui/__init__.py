"""``claw-sessiond ui``: a local, read-only web viewer of a workspace's sessions.

A client of the workspace's daemon (the public asyncio client, so a daemon on PostgreSQL is viewed the
same way), or of the CLI's read-only view of a stopped store; it writes nothing. Modules by job:

=================  ===========================================================
:mod:`.server`     the app, the static pages, the listener and :func:`~.server.serve`
:mod:`.auth`       the per-start secret, the cookie, the Host check, the security headers
:mod:`.params`     query parameters, their bounds, the error answers
:mod:`.api`        the JSON routes (info, sessions, one session, search, usage, lookup)
:mod:`.lists`      the sessions list's filters applied over bounded scans
:mod:`.live`       a session's live view (Watch relayed as Server-Sent Events)
:mod:`.export_html` the JSONL and self-contained HTML exports
:mod:`.shapes`     the JSON shapes of sessions, entries, hits and usage
:mod:`.source`     where it reads: the daemon, or the offline view
=================  ===========================================================

docs/ui.md says how to start it, what it shows, and its security.
"""
