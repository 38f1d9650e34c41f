"""The JSON depth scan (``bounds.json_depth``, ``loads_limited``): it agrees with the parsed value's depth,
the limit is 64 levels, and a hostile depth costs next to nothing.
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claw_sessiond.bounds import MAX_JSON_DEPTH, JsonError, json_depth, loads_limited
from tests.helpers.data import depth_of, nested_array, nested_object
from tests.helpers.tiers import scale

TRICKY_TEXT = st.text(alphabet=st.sampled_from('[]{}"\\ax,:\u00e9'), max_size=8)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TRICKY_TEXT,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(TRICKY_TEXT, kids, max_size=3),
    max_leaves=40,
)


@settings(max_examples=scale(300, 1000), deadline=None)
@given(value=VALUES, ascii_only=st.booleans(), spaced=st.booleans())
def test_depth_scan_agrees_with_the_parsed_value(value: Any, ascii_only: bool, spaced: bool) -> None:
    """Brackets and quotes inside strings (escaped or not) never count; the scan equals the parsed depth."""
    text = json.dumps(value, ensure_ascii=ascii_only, indent=1 if spaced else None)
    assert json_depth(text, limit=1000) == depth_of(value)
    if depth_of(value) <= MAX_JSON_DEPTH:
        assert loads_limited(text) == value


@pytest.mark.parametrize("make", [nested_object, nested_array], ids=["object", "array"])
def test_the_limit_is_64_levels(make: Any) -> None:
    assert MAX_JSON_DEPTH == 64
    assert depth_of(loads_limited(make(64))) == 64
    for depth in (65, 500, 990, 100_000):
        with pytest.raises(JsonError, match="deeper than 64"):
            loads_limited(make(depth))


def test_a_hostile_depth_costs_next_to_nothing() -> None:
    """The scan stops after at most 65 passes; json.loads never sees the text."""
    started = time.monotonic()
    for text in ("[" * 1_000_000, nested_array(500_000), "[]" * 500_000, '["' + "[" * 1_000_000 + '"]'):
        with contextlib.suppress(JsonError):
            loads_limited(text)
    assert time.monotonic() - started < 5
