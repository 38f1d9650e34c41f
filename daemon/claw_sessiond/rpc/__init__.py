"""The RPC edge: the only package that imports grpc.

- ``edge.py``: the error edge (domain error → status, one table) and the
  wrappers every RPC runs in;
- ``convert.py``: proto ↔ domain model;
- ``service.py``: the RPC methods of ``claw.sessiond.v1.SessionService``, each in
  the error edge; the families it hands on, each with its dependencies:
  ``service_appends.py``, ``service_watch.py``, ``service_runs.py``,
  ``service_history.py``, ``service_sessions.py``, ``service_edits.py``;
- ``server.py``: building the grpc.aio server;
- ``auth.py`` (the ``--tcp`` token, a server interceptor) and ``idle.py``
  (the idle-exit clock, wrapped around each handler at registration).

Nothing below this package imports it.
"""
