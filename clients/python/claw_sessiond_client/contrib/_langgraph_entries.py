"""How the LangGraph checkpointer lays a thread out in the daemon (pure, no I/O).

One LangGraph thread namespace (``thread_id``, ``checkpoint_ns``) is three sessions of the daemon:

- the **checkpoints** session, :func:`session_ids`\\ ``[0]``: each checkpoint one entry of role
  ``other``, format :data:`FORMAT_CHECKPOINT`, client id the checkpoint id, item
  :func:`encode_checkpoint` (the checkpoint without its ``channel_values`` and its metadata as
  the saver's ``serde`` writes them, with the parent checkpoint id), entry metadata the checkpoint
  metadata as JSON (what the CLI, search and export show);
- the **writes** session, :func:`session_ids`\\ ``[1]``: each pending write one entry of role
  ``other``, format :data:`FORMAT_WRITE`, client id :func:`write_client_id` (the checkpoint's
  :func:`write_prefix`, the task, the write's index), item :func:`encode_write`;
- the **blobs** session, :func:`session_ids`\\ ``[2]``: one channel's value at one version per
  entry of role ``other``, format :data:`FORMAT_BLOB`, client id :func:`blob_client_id`, item
  :func:`encode_blob`, written by a put for each channel its ``new_versions`` names (as
  LangGraph's SQL savers keep their blobs); a read assembles ``channel_values`` from the
  checkpoint's ``channel_versions``. A checkpoint item of header version 1 (written before the
  values had their session) holds its values itself.

All carry the labels of :func:`labels` (saver prefix, thread, namespace, kind), so a thread's
sessions are found by ListSessions' label filter. Session ids are ``<prefix>~c~<thread>~<ns>``,
``<prefix>~w~<thread>~<ns>`` and ``<prefix>~b~<thread>~<ns>`` with thread and namespace
:func:`~._names.escape`\\ d (an escape never holds ``~``, so no two pairs share an id); a pair
whose id would pass 256 bytes is ``<prefix>~c~sha256~<digest>``.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from typing import Any, Final

from ._names import MAX_NAME_BYTES, digest, escape, label_value, name_of

__all__ = [
    "EMPTY",
    "FORMAT_BLOB",
    "FORMAT_CHECKPOINT",
    "FORMAT_WRITE",
    "KIND_BLOBS",
    "KIND_CHECKPOINTS",
    "KIND_WRITES",
    "LABEL_KIND",
    "LABEL_NS",
    "LABEL_SAVER",
    "LABEL_THREAD",
    "blob_client_id",
    "check_prefix",
    "decode_blob",
    "decode_checkpoint",
    "decode_write",
    "encode_blob",
    "encode_checkpoint",
    "encode_write",
    "labels",
    "metadata_json",
    "session_ids",
    "thread_of",
    "write_client_id",
    "write_prefix",
]

#: The entry format of a checkpoint, and of a pending write.
FORMAT_CHECKPOINT: Final = "langgraph.checkpoint"
FORMAT_WRITE: Final = "langgraph.write"
#: The entry format of one channel's value at one version.
FORMAT_BLOB: Final = "langgraph.blob"
#: A blob's serde type when ``new_versions`` names a channel the checkpoint holds no value of.
EMPTY: Final = "empty"
#: The header version of a checkpoint item whose channel values are blobs (1: the values are in the checkpoint).
CHECKPOINT_V: Final = 2
#: The labels every session of the checkpointer carries.
LABEL_SAVER: Final = "langgraph.saver"
LABEL_THREAD: Final = "langgraph.thread"
LABEL_NS: Final = "langgraph.ns"
LABEL_KIND: Final = "langgraph.kind"
KIND_CHECKPOINTS: Final = "checkpoints"
KIND_WRITES: Final = "writes"
KIND_BLOBS: Final = "blobs"
#: A saver's prefix: the first part of its session ids and the value of its LABEL_SAVER label.
_PREFIX: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: A client id part longer than this is its digest instead (a write's client id stays under 256 bytes).
_MAX_PART: Final = 96
#: The header of an item ends at the first newline; the serialized bytes follow it.
_NL: Final = b"\n"


def check_prefix(prefix: str) -> str:
    """``prefix`` if it is 1-64 characters of ``[A-Za-z0-9_-]``; else ValueError."""
    if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
        raise ValueError(f"prefix must be 1-64 characters of A-Z, a-z, 0-9, '_' and '-', not {prefix!r}")
    return prefix


def session_ids(prefix: str, thread_id: str, checkpoint_ns: str) -> tuple[str, str, str]:
    """The checkpoints session, the writes session and the blobs session of one thread namespace."""
    ids = []
    for kind in ("c", "w", "b"):
        readable = f"{prefix}~{kind}~{escape(thread_id)}~{escape(checkpoint_ns)}"
        if len(readable.encode()) > MAX_NAME_BYTES:
            readable = f"{prefix}~{kind}~sha256~{digest(thread_id, checkpoint_ns)}"
        ids.append(readable)
    return ids[0], ids[1], ids[2]


def _label(name: str, what: str) -> str:
    value = label_value(name)
    if len(value.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise ValueError(
            f"a LangGraph {what} is at most {MAX_NAME_BYTES} bytes here (a label value), got {name[:40]!r}..."
        )
    return value


def labels(prefix: str, thread_id: str, checkpoint_ns: str, kind: str) -> dict[str, str]:
    """The labels of a session of the thread namespace (ValueError for a thread id or namespace over 256 bytes)."""
    return {
        LABEL_SAVER: prefix,
        LABEL_THREAD: _label(thread_id, "thread_id"),
        LABEL_NS: _label(checkpoint_ns, "checkpoint_ns"),
        LABEL_KIND: kind,
    }


def check_names(thread_id: Any, checkpoint_ns: Any) -> tuple[str, str]:
    """The thread id and namespace of a config, checked: str, and each fits a label (ValueError, TypeError)."""
    if not isinstance(thread_id, str):
        raise TypeError(f"thread_id must be a str, not {type(thread_id).__name__}")
    if not isinstance(checkpoint_ns, str):
        raise TypeError(f"checkpoint_ns must be a str, not {type(checkpoint_ns).__name__}")
    _label(thread_id, "thread_id")
    _label(checkpoint_ns, "checkpoint_ns")
    return thread_id, checkpoint_ns


def thread_of(session_labels: dict[str, str]) -> tuple[str, str] | None:
    """The (thread_id, checkpoint_ns) a session's labels name, or None if they are not the checkpointer's."""
    if LABEL_THREAD not in session_labels or LABEL_NS not in session_labels:
        return None
    return name_of(session_labels[LABEL_THREAD]), name_of(session_labels[LABEL_NS])


def _part(value: str) -> str:
    """A part of a write's client id: escaped (no ``/``), or ``#`` and its digest when long (no escape has ``#``)."""
    escaped = escape(value)
    return escaped if len(escaped) <= _MAX_PART else "#" + digest(value)


def write_prefix(checkpoint_id: str, task_id: str | None = None) -> str:
    """The client id prefix of every pending write of a checkpoint (of one of its tasks, if given)."""
    return _part(checkpoint_id) + "/" + ("" if task_id is None else _part(task_id) + "/")


def write_client_id(checkpoint_id: str, task_id: str, idx: int) -> str:
    """The client id of a pending write: ``<checkpoint>/<task>/<idx>``.

    A regular write (``idx`` >= 0) has one id: a second put of it is a duplicate, and the first
    one stays (as LangGraph's savers keep it). A special write (``idx`` < 0: an error, an
    interrupt, ...) replaces the earlier one of its task and index: each gets a fresh suffix, and
    a read keeps the newest (highest position).
    """
    base = f"{write_prefix(checkpoint_id, task_id)}{idx}"
    return base if idx >= 0 else f"{base}/{uuid.uuid4().hex}"


def blob_client_id(channel: str, version: Any) -> str:
    """The client id of a channel's value at one version: ``<channel>/<version>``, each part as a write's.

    A version is a str or an int (what LangGraph's savers and this one's ``get_next_version`` give): the
    TypeScript saver writes the same id for either; a float's text is not the same in both languages.
    """
    return f"{_part(channel)}/{_part(str(version))}"


def _frame(header: dict[str, Any], *blobs: bytes) -> bytes:
    return json.dumps(header, separators=(",", ":")).encode() + _NL + b"".join(blobs)


def _unframe(item: bytes) -> tuple[dict[str, Any], bytes]:
    head, _, rest = item.partition(_NL)
    header = json.loads(head)
    if not isinstance(header, dict):
        raise ValueError("not an item of the LangGraph checkpointer")
    return header, rest


def encode_checkpoint(
    checkpoint_typed: tuple[str, bytes], metadata_typed: tuple[str, bytes], parent_id: str | None
) -> bytes:
    """A checkpoint's item: a JSON header line (version :data:`CHECKPOINT_V`, parent id, the two serde types, the
    checkpoint's length), then the serialized checkpoint (its ``channel_values`` left out) and the serialized
    metadata."""
    header = {
        "v": CHECKPOINT_V,
        "parent": parent_id,
        "c": checkpoint_typed[0],
        "m": metadata_typed[0],
        "n": len(checkpoint_typed[1]),
    }
    return _frame(header, checkpoint_typed[1], metadata_typed[1])


def decode_checkpoint(item: bytes) -> tuple[tuple[str, bytes], tuple[str, bytes], str | None, bool]:
    """The serialized checkpoint, the serialized metadata, the parent id of an :func:`encode_checkpoint` item, and
    whether its channel values are blobs (False: an item of header version 1 holds them itself)."""
    header, rest = _unframe(item)
    n = int(header["n"])
    blobs = int(header.get("v", 1)) >= CHECKPOINT_V
    return (str(header["c"]), rest[:n]), (str(header["m"]), rest[n:]), header.get("parent"), blobs


def encode_blob(channel: str, value_typed: tuple[str, bytes] | None) -> bytes:
    """A channel value's item: a JSON header line (channel, serde type: :data:`EMPTY` for no value), then the value."""
    if value_typed is None:
        return _frame({"ch": channel, "t": EMPTY})
    return _frame({"ch": channel, "t": value_typed[0]}, value_typed[1])


def decode_blob(item: bytes) -> tuple[str, tuple[str, bytes] | None]:
    """(channel, serialized value) of an :func:`encode_blob` item (None: the channel had no value)."""
    header, rest = _unframe(item)
    kind = str(header["t"])
    return str(header["ch"]), None if kind == EMPTY else (kind, rest)


def encode_write(task_id: str, channel: str, task_path: str, idx: int, value_typed: tuple[str, bytes]) -> bytes:
    """A pending write's item: a JSON header line (task, channel, task path, index, serde type), then the value."""
    header = {"task": task_id, "ch": channel, "path": task_path, "idx": idx, "t": value_typed[0]}
    return _frame(header, value_typed[1])


def decode_write(item: bytes) -> tuple[str, str, str, int, tuple[str, bytes]]:
    """(task id, channel, task path, index, serialized value) of an :func:`encode_write` item."""
    header, rest = _unframe(item)
    return str(header["task"]), str(header["ch"]), str(header["path"]), int(header["idx"]), (str(header["t"]), rest)


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """The checkpoint metadata as the entry's JSON metadata (a value JSON cannot hold is written as its repr)."""
    return json.dumps(metadata, default=repr, ensure_ascii=False, separators=(",", ":"))
