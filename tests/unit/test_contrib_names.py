"""The adapters' mapping of a framework's session id to a daemon session id (``contrib._names``).

Checked against the daemon's own rule (``claw_sessiond.ids.check_session_id``): every mapped id
is one the daemon takes, an id the daemon takes (without ``%``) is its own mapping, the mapping
reverses, and two different ids never share a daemon id.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from claw_sessiond.errors import InvalidRequestError
from claw_sessiond.ids import check_session_id
from claw_sessiond_client.contrib._names import HASHED_PREFIX, escape, session_id_of, store_id, unescape

#: Ids the daemon refuses, or that look like a mapped id, or sit at a limit.
HOSTILE = [
    "",
    ".",
    "..",
    "../etc/passwd",
    "user/123",
    "a\\b",
    " lead",
    "trail ",
    "\x00",
    "tab\there",
    "line\nbreak",
    "\x7f\x85",
    "bidi\u202eevil",
    "zero\u200bwidth",
    "\ud800lone",
    "%",
    "%25",
    "a%2Fb",
    "%2E%2E",
    HASHED_PREFIX + "0" * 64,
    "a" * 256,
    "a" * 257,
    "é" * 128,
    "é" * 129,
    "/" * 86,
    "/" * 85,
    "日本語/テスト",
]
#: Ids the daemon takes as they are: their own daemon id (sessions stored before the mapping keep working).
KEPT = ["support-42", "chat-1", "a.b", "with space", "café ☕", "adk~a~b~c", "x" * 256, "user:1", "~"]

#: Any text, lone surrogates and control characters included, short and long.
NAMES = st.text(st.characters(codec=None, categories=None), max_size=300)


def _takes(daemon_id: str) -> bool:
    """The daemon takes it: its rule, and text the wire carries (a lone surrogate is no UTF-8, so no
    request can hold it; the daemon's rule alone, which counts its bytes with ``surrogatepass``,
    would pass it)."""
    try:
        daemon_id.encode("utf-8")
        check_session_id(daemon_id)
    except (InvalidRequestError, UnicodeEncodeError):
        return False
    return True


@pytest.mark.parametrize("name", HOSTILE + KEPT)
def test_every_mapped_id_is_a_daemon_id_and_maps_back(name: str) -> None:
    mapped = store_id(name)
    assert _takes(mapped), (name, mapped)
    if mapped.startswith(HASHED_PREFIX):
        assert len(escape(name).encode()) > 256 and session_id_of(mapped) is None
    else:
        assert session_id_of(mapped) == name


@pytest.mark.parametrize("name", KEPT)
def test_an_id_the_daemon_takes_is_its_own_mapping(name: str) -> None:
    assert store_id(name) == name


def test_readable_forms() -> None:
    assert store_id("user/123") == "user%2F123"
    assert store_id("..") == "%2E%2E"
    assert store_id("") == "%"
    assert store_id("a%2Fb") == "a%252Fb"  # an id holding % is escaped: it never meets the escape of "a/b"
    assert store_id("x" * 300) == store_id("x" * 300) and store_id("x" * 300).startswith(HASHED_PREFIX)
    with pytest.raises(TypeError):
        store_id(123)  # type: ignore[arg-type]


def test_no_two_listed_ids_share_a_daemon_id() -> None:
    names = HOSTILE + KEPT
    assert len({store_id(n) for n in names}) == len(set(names))


@given(NAMES, NAMES)
@example("\ud800", "%ED%A0%80")  # a lone surrogate, and its escaped form as an id of its own
def test_any_ids_map_to_daemon_ids_distinct_per_id(a: str, b: str) -> None:
    for name in (a, b):
        mapped = store_id(name)
        assert _takes(mapped)
        if _takes(name) and "%" not in name:
            assert mapped == name
        if not mapped.startswith(HASHED_PREFIX):
            assert session_id_of(mapped) == name
            assert "%" not in mapped or unescape(escape(name)) == name
    assert (store_id(a) == store_id(b)) == (a == b)
