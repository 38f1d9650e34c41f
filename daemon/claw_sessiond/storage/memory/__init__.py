"""The reference backend: the storage ports over plain dictionaries, in this process only.

It exists to prove that a backend's cost is its ports (``storage/port.py``): every write, Load
and paged read is the backend-neutral sequence of ``storage/`` run over :mod:`.port` and
:mod:`.read_port`, which hold rows as the SQL backends store them (the same encoded payloads,
items, labels and policies) and decide nothing. It is what the contract suite
(``tests/storage/``) runs fastest, and the model a third backend copies.

It is not a product backend: nothing is durable (the rows live as long as the process), and
it cannot be chosen from the command line or the configuration.
"""

from __future__ import annotations

from ..store import Storage
from .engine import MemoryEngine, memory_tables

__all__ = ["open_memory"]


def open_memory(name: str, *, max_open_tool_calls: int = 0) -> Storage:
    """The reference store called ``name`` (the same name: the same rows, for the life of the process)."""
    return Storage(MemoryEngine(memory_tables(name)), max_open_tool_calls)
