"""The RPC edge: the only package that imports grpc.

- ``edge.py``: the error edge (domain error → status, one table) and the
  wrappers every RPC runs in;
- ``convert.py``: proto ↔ domain model.

Nothing below this package imports it.
"""
