"""The LangGraph checkpointer's layout (``contrib._langgraph_entries``): ids the daemon takes, never shared,
client ids whose prefixes select exactly one checkpoint's (or task's) writes, items that round-trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claw_sessiond.ids import check_session_id
from claw_sessiond_client.contrib import _langgraph_entries as E

names = st.text(max_size=300)


@given(names, names, names, names)
def test_session_ids_are_valid_and_two_namespaces_never_share_one(t1: str, n1: str, t2: str, n2: str) -> None:
    a, b = E.session_ids("lg", t1, n1), E.session_ids("lg", t2, n2)
    for sid in (*a, *b):
        check_session_id(sid)
        assert len(sid.encode()) <= 256
    assert len(set(a)) == 3
    if (t1, n1) != (t2, n2):
        assert not set(a) & set(b)
    else:
        assert a == b


@given(names, names, st.integers(-4, 10_000), names, names)
def test_a_write_prefix_selects_its_checkpoints_and_tasks_writes_alone(
    cp: str, task: str, idx: int, other_cp: str, other_task: str
) -> None:
    cid = E.write_client_id(cp, task, idx)
    assert 1 <= len(cid.encode()) <= 256
    assert cid.startswith(E.write_prefix(cp)) and cid.startswith(E.write_prefix(cp, task))
    if other_cp != cp:
        assert not cid.startswith(E.write_prefix(other_cp))
    if other_task != task:
        assert not cid.startswith(E.write_prefix(cp, other_task))


def test_a_special_write_gets_a_fresh_id_and_a_regular_one_the_same() -> None:
    assert E.write_client_id("c", "t", 0) == E.write_client_id("c", "t", 0) == "c/t/0"
    assert E.write_client_id("c", "t", -1) != E.write_client_id("c", "t", -1)
    assert E.write_client_id("c", "t", -1).startswith("c/t/-1/")


@given(st.binary(), st.binary(), st.text(), st.text(), st.one_of(st.none(), st.text(min_size=1)))
def test_items_round_trip(checkpoint: bytes, metadata: bytes, ctype: str, mtype: str, parent: str | None) -> None:
    item = E.encode_checkpoint((ctype, checkpoint), (mtype, metadata), parent)
    assert E.decode_checkpoint(item) == ((ctype, checkpoint), (mtype, metadata), parent, True)
    write = E.encode_write(ctype, mtype, "path", -3, ("msgpack", checkpoint))
    assert E.decode_write(write) == (ctype, mtype, "path", -3, ("msgpack", checkpoint))
    assert E.decode_blob(E.encode_blob(ctype, ("msgpack", metadata))) == (ctype, ("msgpack", metadata))
    assert E.decode_blob(E.encode_blob(ctype, None)) == (ctype, None)


def test_a_checkpoint_item_of_version_1_holds_its_channel_values() -> None:
    """An item written before channel values had their session (header v 1) says so: its checkpoint is whole."""
    old = b'{"v":1,"parent":"p","c":"json","m":"json","n":2}\n{}[]'
    assert E.decode_checkpoint(old) == (("json", b"{}"), ("json", b"[]"), "p", False)


@given(names, st.one_of(st.text(), st.integers()), names, st.one_of(st.text(), st.integers()))
def test_a_blob_client_id_names_one_channel_at_one_version(ch: str, ver: str | int, ch2: str, ver2: str | int) -> None:
    cid = E.blob_client_id(ch, ver)
    assert 1 <= len(cid.encode()) <= 256
    if (ch, str(ver)) != (ch2, str(ver2)):
        assert cid != E.blob_client_id(ch2, ver2)


def test_near_collisions_of_blob_client_ids_name_different_values() -> None:
    """A ``/`` inside a part is escaped, so it never shifts the channel/version split; a long part stored as its
    digest is never the id of a literal ``#<digest>`` part (an escape never holds ``#``)."""
    assert E.blob_client_id("a/b", "c") != E.blob_client_id("a", "b/c")
    assert E.blob_client_id("a/b", "c/d") != E.blob_client_id("a/b/c", "d")
    long = "x" * 200
    hashed = E.blob_client_id(long, "1")
    assert hashed.startswith("#")
    assert E.blob_client_id(hashed.split("/")[0], "1") != hashed
    assert E.blob_client_id("c", long) != E.blob_client_id("c", E.blob_client_id(long, "1").split("/")[0])
    assert E.blob_client_id("c", 7) == E.blob_client_id("c", "7")  # an int version is its decimal text


def test_labels_name_the_thread_and_refuse_what_a_label_cannot_hold() -> None:
    labels = E.labels("lg", "user/1", "child:1", E.KIND_CHECKPOINTS)
    assert E.thread_of(labels) == ("user/1", "child:1")
    assert E.thread_of(E.labels("lg", "50%\x00", "", E.KIND_WRITES)) == ("50%\x00", "")
    with pytest.raises(ValueError, match="at most 256 bytes"):
        E.check_names("a" * 257, "")
    with pytest.raises(TypeError):
        E.check_names(1, "")
    for bad in ("", "a/b", "a" * 65, "é"):
        with pytest.raises(ValueError, match="prefix"):
            E.check_prefix(bad)
