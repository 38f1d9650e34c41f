"""The OpenAI adapter's whole-history decode (``_openai_items.items_from_bytes``) gives what ``json.loads`` of each
item gives: the same values, the same items left out (not a JSON object), the same error for an item that is not JSON.

Its fast path reads each item with json's scanner and keeps the value only if it spans the whole
text; every other case must fall back to ``json.loads``, and these are the edges where the two
could part: whitespace, a byte order mark, UTF-16 (``json.loads`` of bytes detects it), lone
surrogates, NaN, numbers next to the end, non-ASCII text, a value followed by more text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claw_sessiond_client.contrib._openai_items import item_from_bytes, items_from_bytes

EDGES: list[bytes] = [
    b'{"type":"message","role":"user","content":"hi"}',
    b' {"a": 1} ',
    b'\n{"a":1}',
    '\ufeff{"a": 1}'.encode(),
    '{"a": "é ✓ 😀"}'.encode(),
    '{"a": 1}'.encode("utf-16"),
    '{"a": 1}'.encode("utf-16-le"),
    b'{"a": "\\ud800"}',
    b'{"a": NaN, "b": -Infinity}',
    b"[1, 2]",
    b'"text"',
    b"12",
    b"null",
    b'{"a": 1}{"b": 2}'[:8],
    b'{"a": {"b": [1, 2, {"c": null}]}, "d": 1e400}',
]


def _expected(data: list[bytes]) -> list[Any]:
    return [item for item in map(item_from_bytes, data) if item is not None]


def test_the_edges_decode_as_json_loads_does() -> None:
    assert items_from_bytes(EDGES) == _expected(EDGES)
    assert len(items_from_bytes(EDGES)) >= 7  # the objects among them, whatever their spelling


@pytest.mark.parametrize("bad", [b'{"a": 1} x', b'{"a": 1', b"\xff\xfe\x00", b'{"a": 1}, {"b": 2}', b""])
def test_an_item_that_is_not_json_raises_as_json_loads_does(bad: bytes) -> None:
    with pytest.raises(ValueError) as ours:
        items_from_bytes([b'{"ok": 1}', bad])
    with pytest.raises(ValueError) as theirs:
        json.loads(bad)
    assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.lists(st.tuples(_JSON, st.booleans(), st.sampled_from(["", " ", "\t\n"])), max_size=8))
def test_any_json_items_decode_as_json_loads_does(found: list[tuple[Any, bool, str]]) -> None:
    data = [(pad + json.dumps(v, ensure_ascii=ascii) + pad).encode("utf-8", "surrogatepass") for v, ascii, pad in found]
    assert items_from_bytes(data) == _expected(data)
