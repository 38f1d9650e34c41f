"""The LangChain adapter (claw_sessiond_client.contrib.langchain) against a real daemon.

Every message type and field comes back equal (a curated set and generated ones); what the
daemon indexes beside the item (roles, text, tool calls, answers, client ids, usage); ids that
LangChain repeats; the tool policy (no repair, orphans, id-less calls); the asyncio methods on
several event loops; clear; messages JSON cannot carry; a several-MiB image.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claw_sessiond_client import AsyncSessionClient, ClientClosedError, Message, SessionClient, ToolCall
from tests.helpers.daemon import DaemonProcess
from tests.helpers.lazy import LazyModule
from tests.helpers.tiers import scale

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

# LangChain and the adapter, imported by the first test that uses them (collection loads no framework:
# tests/helpers/lazy.py).
messages = LazyModule("langchain_core.messages")
tools = LazyModule("langchain_core.messages.tool")
lc = LazyModule("claw_sessiond_client.contrib.langchain")

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256))).decode()
USAGE = {
    "input_tokens": 120,
    "output_tokens": 30,
    "total_tokens": 150,
    "input_token_details": {"cache_read": 100, "cache_creation": 7, "audio": 0},
    "output_token_details": {"reasoning": 12, "audio": 0},
}


@pytest.fixture(scope="module")
def shared_daemon(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """One daemon for the module (the generated examples each use a fresh session)."""
    ws = tmp_path_factory.mktemp("lc") / "ws"
    ws.mkdir()
    d = DaemonProcess(ws).start()
    yield d
    d.stop()


@pytest.fixture
def sync(shared_daemon: DaemonProcess) -> Iterator[SessionClient]:
    c = shared_daemon.client()
    yield c
    c.close()


def _sid() -> str:
    return f"lc-{uuid.uuid4().hex}"


def _entries(client: SessionClient, sid: str) -> list[Message]:
    """The session's visible entries in position order (the order they were appended)."""
    return sorted(client.load(sid, no_repair=True).messages, key=lambda e: e.position)


def _item(m: BaseMessage) -> bytes:
    """The documented item: compact JSON of message_to_dict, UTF-8."""
    return json.dumps(messages.message_to_dict(m), ensure_ascii=False, separators=(",", ":")).encode()


def every_kind() -> list[BaseMessage]:
    """One of each message type, every field set, in a conversation that pairs its calls."""
    return [
        messages.SystemMessage("You are terse.", id="sys-1", name="rules", additional_kwargs={"k": [1, 2.5, None]}),
        messages.HumanMessage(
            [
                {"type": "text", "text": "What is in these?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "high"}},
                {"type": "image", "base64": PNG, "mime_type": "image/png", "id": "img-1"},
                {"type": "image", "url": "https://example.invalid/a.png"},
                {"type": "file", "base64": PNG, "mime_type": "application/pdf", "extras": {"name": "a.pdf"}},
            ],
            id="h-1",
            name="ada",
            response_metadata={"note": "n"},
        ),
        messages.AIMessage(
            [
                {"type": "thinking", "thinking": "Look closely.", "signature": "c2lnbmF0dXJl=="},
                {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
                {"type": "reasoning", "reasoning": "v1 reasoning", "extras": {"signature": "sig-v1"}, "id": "rs_1"},
                {"type": "text", "text": "Two images.", "citations": [{"type": "char_location", "cited_text": "x"}]},
                {"type": "tool_use", "id": "toolu_1", "name": "zoom", "input": {"factor": 2}},
            ],
            id="run-ai-1",
            name="claude",
            additional_kwargs={"refusal": None, "nested": {"big": 2**60, "f": 1.5}},
            response_metadata={"model_name": "claude-x", "model_provider": "anthropic", "stop_reason": "tool_use"},
            usage_metadata=USAGE,
            tool_calls=[
                tools.tool_call(name="zoom", args={"factor": 2}, id="toolu_1"),
                tools.tool_call(name="crop", args={"box": [0, 0, 1, 1]}, id=None),
            ],
            invalid_tool_calls=[
                tools.invalid_tool_call(name="rotate", args="{degrees: 90", id="bad-1", error="not JSON")
            ],
        ),
        messages.ToolMessage(
            "zoomed", tool_call_id="toolu_1", id="t-1", name="zoom", status="success", artifact={"px": [1, 2]}
        ),
        messages.ToolMessage("no such angle", tool_call_id="bad-1", status="error", artifact=[None, "x"]),
        messages.FunctionMessage("42", name="legacy_fn", id="f-1"),
        messages.ChatMessage("hi from a role", role="critic", id="c-1"),
        messages.ChatMessage("a user by name", role="user"),
        messages.HumanMessageChunk("chunk h", id="hc-1"),
        messages.SystemMessageChunk("chunk s"),
        messages.AIMessageChunk(
            [{"type": "text", "text": "par", "index": 0}],
            id="run-ai-2",
            tool_call_chunks=[tools.tool_call_chunk(name="search", args='{"q": "x', id="call_9", index=0)],
            usage_metadata=USAGE,
            chunk_position="last",
        ),
        messages.ToolMessageChunk("chunk t", tool_call_id="call_9", artifact={"a": 1}, status="error"),
        messages.FunctionMessageChunk("fc", name="legacy_fn"),
        messages.ChatMessageChunk("cc", role="assistant"),
        messages.RemoveMessage(id="h-1"),
        messages.AIMessage(
            "",
            id="run-ai-3",
            additional_kwargs={
                "tool_calls": [{"id": "call_oa", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
            },
        ),
    ]


@pytest.mark.smoke
@pytest.mark.both_backends("LangChain's round trip through the adapter, on each backend's daemon")
def test_every_message_type_and_field_comes_back_equal_and_byte_identical(sync: SessionClient) -> None:
    sid = _sid()
    sent = every_kind()
    history = lc.ClawChatMessageHistory(sid, sync)
    history.add_messages(sent[:5])
    for m in sent[5:]:
        history.add_message(m)
    got = history.messages
    assert [type(m) for m in got] == [type(m) for m in sent]
    assert got == sent
    entries = _entries(sync, sid)
    assert [(e.format, e.item) for e in entries] == [("langchain", _item(m)) for m in sent]
    # A second object on the same session sees the same history (nothing is kept in memory).
    assert lc.ClawChatMessageHistory(sid, sync).messages == sent


def test_the_daemon_indexes_roles_text_calls_answers_ids_and_usage(sync: SessionClient) -> None:
    sid = _sid()
    sent = every_kind()
    lc.ClawChatMessageHistory(sid, sync).add_messages(sent)
    entries = _entries(sync, sid)
    roles = [e.role for e in entries]
    first = ["system", "user", "assistant", "tool", "tool", "other", "other", "user", "user", "system"]
    assert roles == [*first, "assistant", "tool", "other", "assistant", "other", "assistant"]
    assert [e.client_id for e in entries[:4]] == ["sys-1", "h-1", "run-ai-1", "t-1"]
    assert entries[1].content == "What is in these?"  # text blocks only: no image data in the index
    assert entries[2].content == "Two images."
    assert [(c.id, c.name, c.arguments, c.arguments_not_json) for c in entries[2].tool_calls] == [
        ("toolu_1", "zoom", '{"factor":2}', False),
        ("", "crop", '{"box":[0,0,1,1]}', False),  # id-less: stored, never paired
        ("bad-1", "rotate", "{degrees: 90", True),  # an invalid call keeps its raw text
    ]
    assert (entries[3].tool_call_id, entries[4].tool_call_id) == ("toolu_1", "bad-1")
    assert entries[10].tool_calls == (ToolCall("call_9", "search", '{"q":"x"}'),)
    assert entries[11].tool_call_id == "call_9"
    assert entries[15].tool_calls == (ToolCall("call_oa", "f", "{}"),)  # from OpenAI-style additional_kwargs
    usage = entries[2].usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        120,
        30,
        100,
        7,
    )
    assert usage.model == "claude-x"
    session = sync.load(sid, no_repair=True).session
    assert (session.usage.input_tokens, session.usage.output_tokens) == (240, 60)


def test_open_calls_stay_open_and_orphan_results_are_kept(sync: SessionClient) -> None:
    sid = _sid()
    history = lc.ClawChatMessageHistory(sid, sync)
    asked = messages.AIMessage("", tool_calls=[tools.tool_call(name="approve_me", args={}, id="call_wait")])
    orphan = messages.ToolMessage("late result", tool_call_id="call_never_seen")
    history.add_messages([messages.HumanMessage("go"), asked, orphan])
    # A repairing Load by another client writes no synthetic result for the open call (repair off).
    loaded = sync.load(sid)
    assert loaded.repairs == []
    assert [e.role for e in loaded.messages] == ["user", "assistant", "tool"]
    assert loaded.messages[2].orphan
    assert history.messages == [messages.HumanMessage("go"), asked, orphan]
    # The real answer comes later and pairs with the call.
    answer = messages.ToolMessage("approved", tool_call_id="call_wait")
    history.add_message(answer)
    assert history.messages[-1] == answer
    assert _entries(sync, sid)[-1].tool_call_id == "call_wait"


def test_repeated_ids_are_kept_in_the_items_and_indexed_once(sync: SessionClient) -> None:
    sid = _sid()
    history = lc.ClawChatMessageHistory(sid, sync)
    a = messages.AIMessage("first", id="same", tool_calls=[tools.tool_call(name="f", args={"n": 1}, id="call_1")])
    b = messages.AIMessage("again", id="same", tool_calls=[tools.tool_call(name="f", args={"n": 2}, id="call_1")])
    r1 = messages.ToolMessage("r1", tool_call_id="call_1", id="same")
    r2 = messages.ToolMessage("r2", tool_call_id="call_1")
    long_id = messages.HumanMessage("long", id="i" * 300)  # longer than the daemon's 256-byte ids: not indexed
    history.add_messages([a, b, r1])  # repeated within one batch
    history.add_messages([a, r2, long_id])  # and against the stored history (refused, derived again)
    assert history.messages == [a, b, r1, a, r2, long_id]
    entries = _entries(sync, sid)
    assert [e.client_id for e in entries] == ["same", "", "", "", "", ""]
    assert [c.id for e in entries for c in e.tool_calls] == ["call_1", "", ""]
    assert [(e.role, e.tool_call_id) for e in entries if e.role in ("tool", "other")] == [
        ("tool", "call_1"),
        ("other", ""),
    ]


def test_writers_racing_with_the_same_ids_lose_no_message(shared_daemon: DaemonProcess) -> None:
    sid = _sid()
    writers, rounds = 3, scale(4, 15)

    def write(w: int) -> None:
        with shared_daemon.client() as client:
            history = lc.ClawChatMessageHistory(sid, client)
            for r in range(rounds):
                ask = messages.AIMessage(
                    f"{w}/{r}", id="shared", tool_calls=[tools.tool_call(name="f", args={}, id="call_shared")]
                )
                history.add_messages(
                    [ask, messages.ToolMessage(f"{w}/{r}", tool_call_id="call_shared", id=f"t-{w}-{r}")]
                )

    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(write, range(writers)))
    with shared_daemon.client() as client:
        got = lc.ClawChatMessageHistory(sid, client).messages
        entries = _entries(client, sid)
    assert len(got) == 2 * writers * rounds
    assert sorted(m.content for m in got) == sorted(
        f"{w}/{r}" for w in range(writers) for r in range(rounds) for _ in "ab"
    )
    assert [e.client_id for e in entries].count("shared") == 1
    assert [c.id for e in entries for c in e.tool_calls].count("call_shared") == 1
    assert [e.tool_call_id for e in entries if e.role == "tool"] == ["call_shared"]


def test_a_message_json_cannot_carry_is_refused_before_anything_is_written(sync: SessionClient) -> None:
    sid = _sid()
    history = lc.ClawChatMessageHistory(sid, sync)
    bad = messages.ToolMessage("bytes", tool_call_id="c", artifact=b"\x00raw")
    with pytest.raises(TypeError, match=r"messages\[1\] \(tool\).*not JSON"):
        history.add_messages([messages.HumanMessage("fine"), bad])
    with pytest.raises(TypeError, match="not a LangChain message"):
        history.add_messages(["text"])  # type: ignore[list-item]
    assert not sync.load(sid, no_repair=True).session.stored


def test_clear_erases_or_keeps_the_log(sync: SessionClient) -> None:
    sid = _sid()
    history = lc.ClawChatMessageHistory(sid, sync)
    history.add_messages([messages.HumanMessage("secret"), messages.AIMessage("noted")])
    history.clear()
    assert history.messages == []
    assert not any("secret" in line for line in sync.export(sid))
    history.add_message(messages.HumanMessage("again"))
    assert history.messages == [messages.HumanMessage("again")]
    keeping = lc.ClawChatMessageHistory(sid, sync, erase_on_clear=False)
    keeping.clear()
    assert keeping.messages == []
    assert any("again" in line for line in sync.export(sid))


def test_messages_appended_by_other_clients(sync: SessionClient) -> None:
    sid = _sid()
    sync.append(
        sid,
        [
            Message.user("plain"),
            Message.assistant("", [ToolCall("call_p", "f", '{"x":1}')]),
            Message.tool("call_p", "done"),
            Message.other("openai.responses", b'{"type":"reasoning","id":"rs_1"}'),
        ],
    )
    got = lc.ClawChatMessageHistory(sid, sync).messages
    assert got == [
        messages.HumanMessage("plain"),
        messages.AIMessage("", tool_calls=[tools.tool_call(name="f", args={"x": 1}, id="call_p")]),
        messages.ToolMessage("done", tool_call_id="call_p"),
    ]


def test_any_string_is_a_history_id(sync: SessionClient) -> None:
    """LangChain's other stores take any string as a session id: so does this one, each id its own
    daemon session (an id the daemon takes is its own; another is escaped, reversibly)."""
    token = uuid.uuid4().hex[:8]
    ids = [f"user/{token}", f"user%2F{token}", "..", f"ctl\x01{token}", f" {token} ", "x" * 300 + token, f"lc-{token}"]
    for i in ids:
        lc.ClawChatMessageHistory(i, sync).add_messages([messages.HumanMessage(i)])
    for i in ids:
        history = lc.ClawChatMessageHistory(i, sync)
        assert history.messages == [messages.HumanMessage(i)]
        assert asyncio.run(history.aget_messages()) == [messages.HumanMessage(i)]
        assert sync.load(history.store_id, no_repair=True).messages[0].content == i
    mapped = [lc.ClawChatMessageHistory(i, sync).store_id for i in ids]
    assert len(set(mapped)) == len(ids)
    assert mapped[0] == f"user%2F{token}" and mapped[2] == "%2E%2E" and mapped[-1] == f"lc-{token}"
    lc.ClawChatMessageHistory("..", sync).clear()
    with pytest.raises(TypeError):
        lc.ClawChatMessageHistory(7, sync)  # type: ignore[arg-type]


def test_large_batches_are_sent_in_several_appends(sync: SessionClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("claw_sessiond_client.contrib.langchain.MAX_BATCH_MESSAGES", 4)  # the module itself
    sid = _sid()
    sent = [messages.HumanMessage(f"m{i}", id=f"id-{i}") for i in range(10)]
    lc.ClawChatMessageHistory(sid, sync).add_messages(sent)
    assert lc.ClawChatMessageHistory(sid, sync).messages == sent
    assert sync.load(sid, no_repair=True).session.last_position == 10


def test_a_several_mib_image_round_trips(sync: SessionClient) -> None:
    sid = _sid()
    data = base64.b64encode(os.urandom(6 * 1024 * 1024)).decode()  # 8 MiB of base64
    big = messages.HumanMessage(
        [
            {"type": "text", "text": "describe"},
            {"type": "image", "base64": data, "mime_type": "image/jpeg"},
            {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data[: 1024 * 1024]}"}},
        ],
        id="big-1",
    )
    history = lc.ClawChatMessageHistory(sid, sync)
    history.add_messages([big, messages.AIMessage("a photo", id="after")])
    assert history.messages == [big, messages.AIMessage("a photo", id="after")]
    entries = _entries(sync, sid)
    assert entries[0].item == _item(big)
    assert entries[0].content == "describe"


def test_long_text_and_arguments_are_indexed_in_part_and_kept_whole(sync: SessionClient) -> None:
    sid = _sid()
    long_text = "word " * 400_000  # 2 MB of text
    controls = "\x01" * 300_000  # 300 KB that the daemon's JSON writes as 1.8 MB of escapes
    big_args = {"blob": "y" * 400_000}
    sent = [
        messages.HumanMessage(long_text),
        messages.SystemMessage(controls),
        messages.AIMessage(
            "",
            tool_calls=[
                tools.tool_call(name="small", args={"a": 1}, id="c1"),
                tools.tool_call(name="big", args=big_args, id="c2"),
            ],
        ),
    ]
    history = lc.ClawChatMessageHistory(sid, sync)
    history.add_messages(sent)
    assert history.messages == sent
    entries = _entries(sync, sid)
    assert long_text.startswith(entries[0].content) and 400_000 < len(entries[0].content) <= lc.MAX_DERIVED_TEXT_BYTES
    assert controls.startswith(entries[1].content) and len(entries[1].content) <= lc.MAX_DERIVED_TEXT_BYTES // 6
    assert [(c.id, c.name, c.arguments) for c in entries[2].tool_calls] == [
        ("c1", "small", '{"a":1}'),
        ("c2", "big", ""),
    ]


def test_async_methods_on_several_event_loops(sync: SessionClient, shared_daemon: DaemonProcess) -> None:
    sid = _sid()
    history = lc.ClawChatMessageHistory(sid, sync)
    sent = every_kind()

    async def first() -> list[BaseMessage]:
        await history.aadd_messages(sent[:3])
        return await history.aget_messages()

    async def second() -> list[BaseMessage]:
        await history.aadd_messages(sent[3:])
        got = await history.aget_messages()
        await history.aclear()
        assert await history.aget_messages() == []
        await history.aclose()
        return got

    assert asyncio.run(first()) == sent[:3]  # each asyncio.run is a new loop: the adapter makes a client for it
    assert asyncio.run(second()) == sent
    assert history.messages == []

    async def given_client() -> list[BaseMessage]:
        async with AsyncSessionClient(address=shared_daemon.address, autostart=False) as aclient:
            own = lc.ClawChatMessageHistory(sid, async_client=aclient)
            await own.aadd_messages(sent[:2])
            got = await own.aget_messages()
            assert own.messages == got  # the sync side is made from the asyncio client's address
            own.close()
            return got

    assert asyncio.run(given_client()) == sent[:2]


def test_a_history_made_from_an_address_owns_and_closes_its_client(shared_daemon: DaemonProcess) -> None:
    with lc.ClawChatMessageHistory(_sid(), address=shared_daemon.address) as history:
        history.add_message(messages.HumanMessage("hi"))
        assert history.messages == [messages.HumanMessage("hi")]
    with pytest.raises(ClientClosedError):
        history.messages  # noqa: B018


# -- generated messages


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text()
    return st.recursive(
        scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3), max_leaves=8
    )


_ids = st.none() | st.sampled_from(["dup-a", "dup-b"]) | st.text(min_size=1, max_size=12)
_call_ids = st.none() | st.sampled_from(["call_a", "call_b", ""]) | st.text(max_size=10)
_names = st.none() | st.text(max_size=10)
_b64 = st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode())
_blocks = st.one_of(
    st.text(max_size=20),
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=20)),
    st.builds(lambda d: {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{d}"}}, _b64),
    st.builds(lambda d, i: {"type": "image", "base64": d, "mime_type": "image/png", "id": i}, _b64, st.text()),
    st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, st.text(), _b64),
    st.builds(lambda t, s: {"type": "reasoning", "reasoning": t, "extras": {"signature": s}}, st.text(), _b64),
    st.dictionaries(st.text(max_size=6), _json_values(), max_size=3),
)
_content = st.text(max_size=40) | st.lists(_blocks, max_size=4)
_dicts = st.dictionaries(st.text(max_size=8), _json_values(), max_size=3)
_tokens = st.integers(0, 10**6)
_usage = st.none() | st.builds(
    lambda i, o, r, w: {
        "input_tokens": i,
        "output_tokens": o,
        "total_tokens": i + o,
        "input_token_details": {"cache_read": r, "cache_creation": w},
    },
    _tokens,
    _tokens,
    _tokens,
    _tokens,
)
_tool_calls = st.lists(
    st.builds(lambda n, a, i: tools.tool_call(name=n, args=a, id=i), st.text(max_size=8), _dicts, _call_ids), max_size=3
)
_invalid_calls = st.lists(
    st.builds(
        lambda n, a, i, e: tools.invalid_tool_call(name=n, args=a, id=i, error=e),
        _names,
        st.none() | st.text(max_size=10),
        _call_ids,
        st.none() | st.text(max_size=10),
    ),
    max_size=2,
)
_common = {"id": _ids, "name": _names, "additional_kwargs": _dicts, "response_metadata": _dicts}
# Deferred: building these strategies reads LangChain's message classes, which collection must not import.
_messages = st.deferred(
    lambda: st.one_of(
        st.builds(messages.HumanMessage, content=_content, **_common),
        st.builds(messages.SystemMessage, content=_content, **_common),
        st.builds(
            messages.AIMessage,
            content=_content,
            tool_calls=_tool_calls,
            invalid_tool_calls=_invalid_calls,
            usage_metadata=_usage,
            **_common,
        ),
        st.builds(
            messages.ToolMessage,
            content=_content,
            tool_call_id=_call_ids.map(lambda i: i or ""),
            status=st.sampled_from(["success", "error"]),
            artifact=_json_values(),
            **_common,
        ),
        st.builds(messages.FunctionMessage, content=_content, name=st.text(max_size=8), id=_ids),
        st.builds(
            messages.ChatMessage,
            content=_content,
            role=st.sampled_from(["user", "assistant", "system", "tool", "critic"]),
        ),
        st.builds(
            messages.AIMessageChunk,
            content=_content,
            id=_ids,
            tool_call_chunks=st.lists(
                st.builds(
                    lambda n, a, i, x: tools.tool_call_chunk(name=n, args=a, id=i, index=x),
                    _names,
                    st.none() | st.text(max_size=10),
                    _call_ids,
                    st.none() | st.integers(0, 3),
                ),
                max_size=2,
            ),
            usage_metadata=_usage,
            chunk_position=st.none() | st.just("last"),
        ),
        st.builds(messages.HumanMessageChunk, content=_content, id=_ids),
        st.builds(
            messages.ToolMessageChunk, content=_content, tool_call_id=st.text(max_size=8), artifact=_json_values()
        ),
    )
)


@settings(
    max_examples=scale(60, 400),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(batches=st.lists(st.lists(_messages, min_size=1, max_size=4), min_size=1, max_size=3))
def test_generated_messages_round_trip(sync: SessionClient, batches: list[list[BaseMessage]]) -> None:
    history = lc.ClawChatMessageHistory(_sid(), sync)
    for batch in batches:
        history.add_messages(batch)
    sent = [m for batch in batches for m in batch]
    got = history.messages
    assert [type(m) for m in got] == [type(m) for m in sent]
    assert got == sent


@pytest.mark.pin_check
def test_the_extra_pins_the_version_the_tests_run() -> None:
    import tomllib
    from importlib.metadata import version

    from tests.helpers.daemon import ROOT

    client = tomllib.loads((ROOT / "clients" / "python" / "pyproject.toml").read_text())
    top = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pin = f"langchain-core=={version('langchain-core')}"
    assert client["project"]["optional-dependencies"]["langchain"] == [pin]
    assert pin in top["project"]["optional-dependencies"]["test"]
