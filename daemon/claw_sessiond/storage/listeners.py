"""The change listeners of a store: each event told to every listener, in the order they were added.

Both backends' stores (and PostgreSQL's change feed across daemons, ``postgres/cluster.py``)
hold their listeners in one :class:`ChangeListeners` and tell them through it, on the event
loop, after the change is durable (``base.ChangeListener``). The list holds what the daemon
adds at start (the watch hub): it does not grow with requests.
"""

from __future__ import annotations

from .base import ChangeListener

__all__ = ["ChangeListeners"]


class ChangeListeners:
    """The listeners of one store, told of each change in the order they were added."""

    __slots__ = ("_listeners",)

    def __init__(self) -> None:
        self._listeners: list[ChangeListener] = []

    def add(self, listener: ChangeListener) -> None:
        self._listeners.append(listener)

    def changed(self, session_ids: set[str]) -> None:
        """A commit changed the history of these sessions (``ChangeListener.changed``)."""
        for listener in self._listeners:
            listener.changed(session_ids)

    def erased(self, session_id: str) -> None:
        """The session was erased (``ChangeListener.erased``)."""
        for listener in self._listeners:
            listener.erased(session_id)

    def resync(self) -> None:
        """Changes may have been missed (``ChangeListener.resync``)."""
        for listener in self._listeners:
            listener.resync()
