"""Request checks of what an entry carries beside its text: item and format, client id, metadata, usage.

A history entry (a :class:`~claw_sessiond.model.Message`) may carry the
caller's own item (``format`` tag + ``item`` bytes, stored byte for byte), a
client id (unique in the session's visible history), metadata (a JSON
object text, returned exactly as given) and usage (added to the session's
totals in the append's transaction). A ``other`` entry (ROLE_OTHER) has no
conversation role: it needs an item and takes part in no pairing.

Also here: the bounds of a bounded Load (:func:`check_load_window`).

Pure (no storage, no gRPC): called by :mod:`claw_sessiond.validate` before
anything is queued, so a refused request never reaches a transaction.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final

from . import selection
from .bounds import FORMAT_TAG, MAX_CLIENT_ID_BYTES, JsonError, loads_limited, utf8_len
from .errors import AlreadyExistsError, InvalidRequestError, Reason
from .model import LoadWindow, Message

__all__ = [
    "check_client_ids",
    "check_entry",
    "check_items_format",
    "check_load_window",
    "entry_bytes",
]


def entry_bytes(msg: Message) -> int:
    """The size an entry counts against ``max_entry_bytes``: text, tool calls, item and metadata."""
    size = utf8_len(msg.content) + len(msg.item)
    if msg.name:
        size += utf8_len(msg.name)
    if msg.metadata:
        size += utf8_len(msg.metadata)
    for call in msg.tool_calls:
        size += utf8_len(call.id) + utf8_len(call.name) + utf8_len(call.arguments)
    return size


def check_entry(where: str, index: int, msg: Message, max_entry_bytes: int) -> None:
    """Check the entry fields of one message of a request (``where``: ``messages[i]``).

    Raises:
        InvalidRequestError: naming the field: a malformed format tag, an item without a format
            or a format without an item, an ``other`` entry without an item or with tool-call
            fields, a client id out of bounds, metadata that is not a JSON object, an entry over
            ``max_entry_bytes`` (reason FIELD_TOO_LARGE).
    """

    def bad(why: str, reason: Reason = Reason.INVALID_MESSAGE) -> InvalidRequestError:
        return InvalidRequestError(f"{where}: {why}", reason=reason, index=index)

    if msg.format and not _is_tag(msg.format):
        raise bad(_not_a_tag("format", msg.format))
    if msg.item and not msg.format:
        raise bad("item needs a format (the tag of what the bytes are, for example 'openai.responses')")
    if msg.format and not msg.item:
        raise bad(f"format {msg.format!r} is set but item is empty (an entry with a format carries its item)")
    if msg.role == "other":
        if not msg.item:
            raise bad("an entry with role other needs an item (and its format)")
        if msg.tool_calls or msg.tool_call_id:
            raise bad("an entry with role other takes no tool_calls or tool_call_id (it is never paired)")
    if msg.client_id and utf8_len(msg.client_id) > MAX_CLIENT_ID_BYTES:
        raise bad(f"client_id is longer than {MAX_CLIENT_ID_BYTES} bytes", Reason.FIELD_TOO_LARGE)
    if msg.metadata:
        try:
            value = loads_limited(msg.metadata)
        except JsonError as exc:
            raise bad(f"metadata is not valid JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise bad('metadata must be a JSON object (for example {"source": "web"})')
    size = entry_bytes(msg)
    if size > max_entry_bytes:
        raise bad(
            f"entry is {size} bytes (content, tool calls, item and metadata); at most {max_entry_bytes} "
            "(--max-entry-bytes)",
            Reason.FIELD_TOO_LARGE,
        )


def check_client_ids(messages: Sequence[Message]) -> None:
    """No client id may appear twice in one request.

    Raises:
        AlreadyExistsError: reason CLIENT_ID_EXISTS, naming the id and both indexes.
    """
    seen: dict[str, int] = {}
    for i, msg in enumerate(messages):
        if not msg.client_id:
            continue
        if msg.client_id in seen:
            raise AlreadyExistsError(
                f"messages[{i}]: client_id {msg.client_id[:80]!r} is also on messages[{seen[msg.client_id]}]; "
                "client ids are unique within a session",
                reason=Reason.CLIENT_ID_EXISTS,
                client_id=msg.client_id,
                index=i,
            )
        seen[msg.client_id] = i


def _is_tag(text: str) -> bool:
    """Whether ``text`` is a format tag (an append's entries carry a handful of tags, each matched once).

    Only text short enough to be a tag reaches the cache: a refused format of any length must not
    stay in memory (the cache holds at most 64 strings of at most 64 characters).
    """
    return len(text) <= _TAG_CHARS and _matched_tag(text)


#: The longest format tag (``bounds.FORMAT_TAG``).
_TAG_CHARS: Final = 64


@functools.lru_cache(maxsize=64)
def _matched_tag(text: str) -> bool:
    return FORMAT_TAG.fullmatch(text) is not None


def _not_a_tag(field: str, value: str) -> str:
    return (
        f"{field} {value[:80]!r} is not a format tag: 1-64 characters of a-z, 0-9, '.', '_' and '-', "
        "starting with a letter or digit (for example 'openai.responses')"
    )


def check_items_format(item_format: str) -> str:
    """A Load's ``items_format`` ("" when not set): a format tag, as an entry's ``format``.

    Raises:
        InvalidRequestError: reason INVALID_MESSAGE, naming the field.
    """
    if item_format and not FORMAT_TAG.fullmatch(item_format):
        raise InvalidRequestError(_not_a_tag("items_format", item_format), reason=Reason.INVALID_MESSAGE)
    return item_format


def check_load_window(
    last: int,
    after_position: int,
    after_time: str,
    *,
    before_position: int = 0,
    client_ids: Sequence[str] = (),
    client_id_prefix: str = "",
    max_ids: int = 0,
) -> LoadWindow | None:
    """A bounded or filtered Load's window (None for a full Load); ``after_time`` is stored-time text or "".

    ``max_ids``: the most client ids one Load names, and the most entries a prefix read returns.

    Raises:
        InvalidRequestError: more than one bound set, or a negative one; filters that do not combine
            (``selection.check_filters``); a client id or prefix out of bounds.
    """
    ids = selection.check_id_list(client_ids, max_ids, "client_ids")
    selection.check_prefix(client_id_prefix, "client_id_prefix")
    selection.check_filters(
        last=last,
        after_position=after_position,
        after_time=after_time,
        before_position=before_position,
        client_ids=len(ids),
        client_id_prefix=client_id_prefix,
    )
    if ids or client_id_prefix or before_position:
        if last < 0 or after_position < 0:
            raise InvalidRequestError(
                "last and after_position must not be negative (0: not set)", reason=Reason.INVALID_MESSAGE
            )
        return LoadWindow(
            last=last,
            after_position=after_position,
            before_position=before_position,
            client_ids=ids,
            client_id_prefix=client_id_prefix,
            max_entries=max_ids,
        )
    given = [
        name for name, on in (("last", last), ("after_position", after_position), ("after_time", after_time)) if on
    ]
    if len(given) > 1:
        raise InvalidRequestError(
            f"a Load takes at most one of last, after_position and after_time (got {' and '.join(given)})",
            reason=Reason.INVALID_MESSAGE,
        )
    if last < 0 or after_position < 0:
        raise InvalidRequestError(
            "last and after_position must not be negative (0: not set)", reason=Reason.INVALID_MESSAGE
        )
    if not given:
        return None
    return LoadWindow(last=last, after_position=after_position, after_time=after_time)
