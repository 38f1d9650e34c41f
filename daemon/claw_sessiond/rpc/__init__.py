"""The RPC edge: the only package that imports grpc.

- ``edge.py``: the error edge (domain error → status, one table) and the
  wrappers every RPC runs in;
- ``convert.py``: proto ↔ domain model;
- ``service.py`` (with ``service_watch.py`` and ``service_history.py``): the
  RPC methods of ``claw.sessiond.v1.SessionService``;
- ``server.py``: building the grpc.aio server;
- ``auth.py`` (the ``--tcp`` token, a server interceptor) and ``idle.py``
  (the idle-exit clock, wrapped around each handler at registration).

Nothing below this package imports it.
"""
