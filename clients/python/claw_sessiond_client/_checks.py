"""Argument checks: a wrong type is a ``TypeError`` naming the field, raised before anything is sent."""

from __future__ import annotations

import json

__all__ = ["arguments_text", "check_ints", "check_type"]


def _type_names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def check_type(field: str, value: object, kind: type | tuple[type, ...]) -> None:
    """Raise ``TypeError`` naming ``field`` unless ``value`` is a ``kind`` (a bool is not an int here).

    Raises:
        TypeError: ``field: expected str, got dict``.
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        raise TypeError(f"{field}: expected {_type_names(kind)}, got {type(value).__name__} ({value!r:.80})")


def check_ints(**fields: object) -> None:
    """:func:`check_type` of several int fields."""
    for name, value in fields.items():
        check_type(name, value, int)


def arguments_text(arguments: object, field: str) -> str:
    """Tool-call arguments as JSON text: a str as is, anything else JSON-encoded (compact, ``ensure_ascii=False``).

    Raises:
        TypeError: neither a str nor JSON-serialisable; the message names ``field``.
    """
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise TypeError(
            f"{field}: expected JSON text (str) or a JSON-serialisable value (dict, list, ...), "
            f"got {type(arguments).__name__}: {exc}"
        ) from None
