"""The seed's store, as a baseline: one JSON file per session, rewritten whole per append.

Each append reads the file, adds the message, writes ``<file>.tmp``, fsyncs
it, renames it over the file and fsyncs the folder. That is the safe way to
rewrite a file (no torn writes), and it is what makes the cost grow with the
history: every append rewrites every earlier message. Two processes doing it
at once silently drop each other's messages (the later rename wins).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class JsonSessionStore:
    """Sessions as ``<folder>/<session_id>.json`` (``{"id": ..., "messages": [...]}``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def _path(self, session_id: str) -> Path:
        return self.folder / f"{session_id}.json"

    def load(self, session_id: str) -> list[dict[str, Any]]:
        """The session's messages (empty if the file does not exist)."""
        try:
            with open(self._path(session_id), encoding="utf-8") as fh:
                data: dict[str, Any] = json.load(fh)
        except FileNotFoundError:
            return []
        messages: list[dict[str, Any]] = data["messages"]
        return messages

    def save(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """Rewrite the whole file durably: tmp + fsync + rename + fsync(folder)."""
        path = self._path(session_id)
        tmp = path.with_suffix(".json.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"id": session_id, "messages": messages}, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def append(self, session_id: str, message: dict[str, Any]) -> None:
        """Load, add one message, rewrite (what the seed's harness does per message)."""
        messages = self.load(session_id)
        messages.append(message)
        self.save(session_id, messages)
