"""ClawSession (claw_sessiond_client.contrib.openai_agents) against a real daemon, with real item shapes.

The SDK's own session tests run in ``test_contrib_openai_agents_sdk.py``; these are this
project's: items of every kind come back as the same JSON values (ints stay ints, key order
and all), stored as exactly the bytes the adapter wrote; the derived roles and tool calls; pop,
bounded reads, erasing clear, compaction's suffix replacement; and a person's approval that
waits across a restart of the daemon and of the client process.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from claw_sessiond_client import SessionClient, ToolPolicy
from claw_sessiond_client.contrib._names import HASHED_PREFIX, session_id_of
from tests.helpers.cli import on_daemon
from tests.helpers.daemon import DaemonProcess, run_python
from tests.helpers.lazy import LazyModule

if TYPE_CHECKING:
    from claw_sessiond_client.contrib.openai_agents import ClawSession

#: The adapter, imported by the first test that uses it (collection loads no ``agents``: tests/helpers/lazy.py).
adapter = LazyModule("claw_sessiond_client.contrib.openai_agents")

PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).decode()
PDF = "data:application/pdf;base64," + base64.b64encode(b"%PDF-1.7\n" + b"\x00\xff" * 300).decode()

#: One item of each kind an agent run stores, as the SDK hands them to a session.
ITEMS: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is in this picture and this file? ünïcode ✓ 🦀"},
    {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": PNG, "detail": "high"},
            {"type": "input_file", "file_data": PDF, "filename": "spec.pdf"},
        ],
    },
    {
        "type": "reasoning",
        "id": "rs_68af",
        "summary": [{"type": "summary_text", "text": "**Planning** the answer"}],
        "encrypted_content": "gAAAAABo" + "Zm9v" * 500 + "==",
        "status": None,
    },
    {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "claw", "sources": [{"type": "url", "url": "https://example.org"}]},
    },
    {
        "type": "code_interpreter_call",
        "id": "ci_1",
        "status": "completed",
        "code": "print(2**64)",
        "container_id": "cntr_1",
        "outputs": [{"type": "logs", "logs": "18446744073709551616\n"}],
    },
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_json",
        "name": "get_weather",
        "arguments": '{"city": "Paris", "days": 3}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_json", "output": "sunny, 21°C"},
    {
        "type": "function_call",
        "id": "fc_2",
        "call_id": "call_broken",
        "name": "get_weather",
        "arguments": '{"city": "Par',  # cut off by max_tokens: not JSON
        "status": "incomplete",
    },
    {
        "type": "function_call_output",
        "call_id": "call_broken",
        "output": [{"type": "input_text", "text": "bad arguments"}, {"type": "input_image", "image_url": PNG}],
    },
    {
        "type": "custom_tool_call",
        "id": "ctc_1",
        "call_id": "call_patch",
        "name": "apply_patch",
        "input": "*** Begin Patch\n*** Update File: a.py\n-x = 1\n+x = 2\n*** End Patch",
    },
    {"type": "custom_tool_call_output", "call_id": "call_patch", "output": "Done!"},
    {
        "type": "computer_call",
        "id": "cu_1",
        "call_id": "call_click",
        "action": {"type": "click", "button": "left", "x": 10, "y": 20},
        "pending_safety_checks": [],
        "status": "completed",
    },
    {
        "type": "computer_call_output",
        "call_id": "call_click",
        "output": {"type": "computer_screenshot", "image_url": PNG},
        "acknowledged_safety_checks": [],
    },
    {
        "type": "mcp_approval_request",
        "id": "mcpr_1",
        "server_label": "fs",
        "name": "delete",
        "arguments": '{"path": "/tmp/x"}',
    },
    {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
    {
        "type": "mcp_call",
        "id": "mcp_1",
        "server_label": "fs",
        "name": "delete",
        "arguments": '{"path": "/tmp/x"}',
        "output": "ok",
        "error": None,
    },
    {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": PNG[22:]},
    {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAABcompacted" + "x" * 2000},
    {"type": "item_reference", "id": "msg_0"},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": "A crab, and a spec.",
                "annotations": [{"type": "url_citation", "start_index": 0, "end_index": 6, "url": "https://e.org"}],
                "logprobs": [],
            },
            {"type": "refusal", "refusal": "No more."},
        ],
    },
    # numbers keep their type (an int never comes back as a float), order of keys is kept
    {"z": 1, "a": 1.0, "big": 2**60, "neg": -0.5, "exp": 1e300, "nested": {"b": [True, False, None]}},
    {"__enc__": 1, "v": 1, "kid": "k1", "payload": "gAAAAAB-encrypted-envelope"},
]

ROLES = [
    "system", "user", "user", "other", "other", "other", "assistant", "tool", "assistant", "tool",
    "assistant", "tool", "assistant", "tool", "other", "other", "other", "other", "other", "other",
    "assistant", "other", "other",
]  # fmt: skip


def _typed(value: Any) -> str:
    """JSON text that tells 1 from 1.0 (json.dumps does; == does not)."""
    return json.dumps(value, sort_keys=True)


def _session(daemon: DaemonProcess, sid: str, **kw: Any) -> ClawSession:
    return adapter.ClawSession(sid, address=daemon.address, autostart=False, **kw)


@pytest.mark.smoke
async def test_every_kind_of_item_comes_back_as_stored_byte_for_byte(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    daemon, client = module_daemon, module_client
    session = _session(daemon, sid)
    await session.add_items(ITEMS[:7])
    await session.add_items(ITEMS[7:])
    got = await session.get_items()
    assert [_typed(i) for i in got] == [_typed(i) for i in ITEMS]
    assert [list(i) for i in got] == [list(i) for i in ITEMS]  # key order too

    entries = client.load(sid, no_repair=True).messages
    assert [e.format for e in entries] == [adapter.FORMAT] * len(ITEMS)
    assert [e.item for e in entries] == [adapter.encode_item(i) for i in ITEMS]
    assert [e.role for e in entries] == ROLES
    # a second client process reads the same bytes
    out = run_python(
        "import sys, json\n"
        "from claw_sessiond_client import SessionClient\n"
        "with SessionClient(address=sys.argv[1], autostart=False) as c:\n"
        "    print(json.dumps([m.item.decode() for m in c.load(sys.argv[2], no_repair=True).messages]))\n",
        daemon.address,
        sid,
    )
    assert [s.encode() for s in json.loads(out)] == [adapter.encode_item(i) for i in ITEMS]
    session.close()


def test_roles_text_and_tool_calls_are_derived_from_the_item() -> None:
    call = adapter.entry_for_item(ITEMS[8], pending=True)
    assert call.role == "assistant" and call.tool_calls[0].id == "call_broken"
    assert call.tool_calls[0].arguments == '{"city": "Par' and call.tool_calls[0].pending
    custom = adapter.entry_for_item(ITEMS[10])
    assert custom.tool_calls[0].name == "apply_patch" and custom.tool_calls[0].arguments.startswith("*** Begin")
    click = adapter.entry_for_item(ITEMS[12])
    assert json.loads(click.tool_calls[0].arguments) == {"type": "click", "button": "left", "x": 10, "y": 20}
    assert adapter.entry_for_item(ITEMS[9]).content == "bad arguments"  # text parts only, never the image
    assert (
        adapter.entry_for_item(ITEMS[13]).content == ""
        and adapter.entry_for_item(ITEMS[13]).tool_call_id == "call_click"
    )
    assert adapter.entry_for_item(ITEMS[20]).content == "A crab, and a spec.\nNo more."
    assert adapter.entry_for_item({"role": "developer", "content": "x"}).role == "system"
    assert adapter.entry_for_item({"type": "function_call_output", "output": "no call id"}).role == "other"
    for bad in (["not", "a", "dict"], {"x": float("nan")}, {"x": {1, 2}}):
        with pytest.raises(TypeError):
            adapter.encode_item(bad)


async def test_bad_item_writes_nothing(module_daemon: DaemonProcess, module_client: SessionClient, sid: str) -> None:
    daemon, client = module_daemon, module_client
    session = _session(daemon, sid)
    with pytest.raises(TypeError):
        await session.add_items([{"role": "user", "content": "ok"}, {"n": float("inf")}])
    assert await session.get_items() == []
    assert client.load(sid, no_repair=True).messages == []


async def test_limits_pop_and_clear(module_daemon: DaemonProcess, module_client: SessionClient, sid: str) -> None:
    daemon, client = module_daemon, module_client
    items = [{"role": "user", "content": f"m{i}"} for i in range(12)]
    session = _session(daemon, sid, session_settings={"limit": 5})
    assert await session.pop_item() is None  # never written
    await session.add_items(items)
    assert await session.get_items() == items[-5:]  # session_settings.limit
    assert await session.get_items(3) == items[-3:]
    assert await session.get_items(0) == []
    assert await session.get_items(-1) == items
    assert await session.get_items(100) == items
    assert await session.pop_item() == items[-1]
    assert await session.pop_item() == items[-2]
    assert await session.get_items(-1) == items[:-2]
    # another object on the same session sees the same history
    assert await _session(daemon, sid).get_items() == items[:-2]
    await session.clear_session()
    assert await session.get_items(-1) == [] and await session.pop_item() is None
    exported = "\n".join(client.export(sid))
    assert "m3" not in exported  # erased, not only hidden
    await session.add_items(items[:1])
    assert await session.get_items() == items[:1]


async def test_a_call_waiting_for_its_output_is_pending_and_never_repaired(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    daemon, client = module_daemon, module_client
    session = _session(daemon, sid)
    call = {"type": "function_call", "call_id": "call_wait", "name": "deploy", "arguments": "{}"}
    await session.add_items([{"role": "user", "content": "deploy"}, call])
    loaded = client.load(sid)  # a Load that repairs, from another client
    assert loaded.repairs == [] and [c.tool_call_id for c in loaded.in_flight] == ["call_wait"]
    assert loaded.messages[-1].tool_calls[0].pending
    # even a session whose policy would synthesize an answer leaves it alone
    client.update_session(sid, tool_policy=ToolPolicy(repair="synthesize"))
    assert client.load(sid).repairs == []
    output = {"type": "function_call_output", "call_id": "call_wait", "output": "deployed"}
    await session.add_items([output])
    loaded = client.load(sid)
    assert loaded.in_flight == [] and loaded.messages[-1].tool_call_id == "call_wait"
    assert await session.get_items() == [{"role": "user", "content": "deploy"}, call, output]
    # pop removes a pending call like any item
    await session.add_items([{**call, "call_id": "call_again"}])
    assert (await session.pop_item())["call_id"] == "call_again"


async def test_a_pairing_the_daemon_refuses_keeps_the_item(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    daemon, client = module_daemon, module_client
    session = _session(daemon, sid)
    call = {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "1"}
    orphan = {"type": "function_call_output", "call_id": "call_unknown", "output": "?"}
    batch = [call, output, call, output, orphan]  # a reused call id, an answered call answered again
    await session.add_items(batch)
    assert await session.get_items() == batch
    roles = [m.role for m in client.load(sid, no_repair=True).messages]
    assert roles[:2] == ["assistant", "tool"] and roles[-1] == "tool"


async def test_compaction_snapshot_replaces_the_suffix_only_if_unchanged(
    module_daemon: DaemonProcess, sid: str
) -> None:
    daemon = module_daemon
    session = _session(daemon, sid)
    items = [{"role": "user", "content": f"m{i}"} for i in range(6)]
    await session.add_items(items)
    snapshot = await session._get_compaction_snapshot(3)
    assert snapshot is not None and snapshot.items == items[-3:] and not snapshot.complete
    compacted = [{"type": "compaction", "id": "cmp_9", "encrypted_content": "e"}]
    assert await snapshot.replace_suffix(1, compacted)
    assert await session.get_items() == items[:4] + compacted
    assert not await snapshot.replace_suffix(1, compacted)  # the session changed since the read

    stale = await session._get_compaction_snapshot(100)
    assert stale is not None and stale.complete
    await session.add_items([{"role": "user", "content": "late"}])
    assert not await stale.replace_suffix(0, compacted)
    assert (await session.get_items())[-1] == {"role": "user", "content": "late"}

    whole = await session._get_compaction_snapshot(100)
    assert whole is not None and await whole.replace_suffix(0, compacted)
    assert await session.get_items() == compacted


async def test_compaction_prunes_an_expired_prefix_in_the_same_edit(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    session = _session(daemon, sid)
    items = [
        {"old": True, "n": 1},
        {"old": True, "n": 2},
        {"role": "user", "content": "keep"},
        {"role": "user", "content": "x"},
    ]
    await session.add_items(items)
    snapshot = await session._get_compaction_snapshot(10, prune_prefix=lambda item: bool(item.get("old")))
    assert snapshot is not None and snapshot.complete
    assert await snapshot.replace_suffix(3, [{"role": "user", "content": "summary"}])
    assert await session.get_items() == [items[2], {"role": "user", "content": "summary"}]


async def test_atomic_replace_of_the_whole_history(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    session = _session(daemon, sid)
    assert await session._atomic_replace_items([{"role": "user", "content": "first"}])
    await session.add_items([{"role": "user", "content": f"m{i}"} for i in range(3)])
    assert await session._atomic_replace_items([{"type": "compaction", "id": "c", "encrypted_content": "e"}])
    assert await session.get_items() == [{"type": "compaction", "id": "c", "encrypted_content": "e"}]


async def test_each_turn_reads_what_sqlite_session_reads(
    module_daemon: DaemonProcess, sid: str, tmp_path: Path
) -> None:
    """Turn after turn (a few items added, then the whole history read, as the Runner does), with pops, items
    added through a second session object, a whole replacement and an erasing clear between: every read gives
    what ``SQLiteSession`` gives. The daemon answers a whole read from the items it kept from the last one and
    reads only what was written since (``storage/item_cache.py``; each kind of write:
    tests/storage/test_item_cache.py)."""
    from agents.memory import SQLiteSession

    ours, other = _session(module_daemon, sid), _session(module_daemon, sid)
    theirs = SQLiteSession(sid, str(tmp_path / "sdk.db"))
    seq = iter(range(10**6))

    async def turn(k: int, writer: ClawSession = ours) -> None:
        items: list[Any] = [{"role": "user", "content": f"m{next(seq)}"} for _ in range(k)]
        await writer.add_items(items)
        await theirs.add_items(items)
        assert await ours.get_items() == await theirs.get_items()

    for k in (3, 1, 4, 2):
        await turn(k)
    assert await ours.pop_item() == await theirs.pop_item()
    assert await ours.get_items() == await theirs.get_items()
    await turn(2, writer=other)
    await turn(3)
    replacement: list[Any] = [{"type": "compaction", "id": "c", "encrypted_content": "e"}]
    assert await ours._atomic_replace_items(replacement)
    await theirs.clear_session()
    await theirs.add_items(replacement)
    await turn(2)
    await other.clear_session()
    await theirs.clear_session()
    assert await ours.get_items() == [] == await theirs.get_items()
    await turn(3)
    assert len(await ours.get_items()) == 3


#: Two parallel tool calls, then their two outputs, as a Runner turn writes them.
PARALLEL: list[dict[str, Any]] = [
    {"role": "user", "content": "weather in Paris and Oslo?"},
    {"type": "function_call", "call_id": "call_paris", "name": "weather", "arguments": '{"city":"Paris"}'},
    {"type": "function_call", "call_id": "call_oslo", "name": "weather", "arguments": '{"city":"Oslo"}'},
    {"type": "function_call_output", "call_id": "call_paris", "output": "sunny"},
    {"type": "function_call_output", "call_id": "call_oslo", "output": "snow"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "sunny; snow"}]},
]


async def test_parallel_tool_calls_come_back_in_the_order_written(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    """As SQLiteSession: the items in the order added, read whole or bounded (the daemon's own Load
    places each output right after its call), and a compaction replaces exactly ``items[start:]``."""
    session = _session(module_daemon, sid)
    await session.add_items(PARALLEL[:1])
    await session.add_items(PARALLEL[1:3])  # the model's turn: two calls (pending until answered)
    await session.add_items(PARALLEL[3:])
    paired = [
        m.tool_call_id or (m.tool_calls[0].id if m.tool_calls else "")
        for m in module_client.load(sid, no_repair=True).messages
    ]
    assert paired[1:5] == ["call_paris", "call_paris", "call_oslo", "call_oslo"]  # the daemon's pairing order
    assert await session.get_items() == PARALLEL
    for n in range(1, len(PARALLEL) + 1):  # 3 and 4 cut between the calls and their outputs
        assert await session.get_items(n) == PARALLEL[-n:], n
    assert await session.pop_item() == PARALLEL[-1]
    assert await session.pop_item() == PARALLEL[-2]
    await session.add_items(PARALLEL[-2:])

    snapshot = await session._get_compaction_snapshot(len(PARALLEL))
    assert snapshot is not None and snapshot.items == PARALLEL
    summary = {"role": "user", "content": "summary"}
    assert await snapshot.replace_suffix(2, [summary])
    assert await session.get_items() == [*PARALLEL[:2], summary]
    session.close()


async def test_any_string_is_a_session_id(module_daemon: DaemonProcess, module_client: SessionClient) -> None:
    """SQLiteSession takes any string: so does ClawSession, each id its own daemon session, shown by the CLI."""
    token = uuid.uuid4().hex[:8]
    ids = [f"user/{token}", f"user%2F{token}", f"..{token}", f"tab\t{token}\n", f"{token}" + "é" * 200, f"ok-{token}"]
    sessions = [_session(module_daemon, i) for i in ids]
    for i, session in zip(ids, sessions, strict=True):
        await session.add_items([{"role": "user", "content": i}])
    for i, session in zip(ids, sessions, strict=True):
        assert await session.get_items() == [{"role": "user", "content": i}]
        assert (await _session(module_daemon, i).get_items()) == [{"role": "user", "content": i}]
        session.close()
    mapped = [s.store_id for s in sessions]
    assert len(set(mapped)) == len(ids)
    assert mapped[0] == f"user%2F{token}" and mapped[1] == f"user%252F{token}" and mapped[-1] == f"ok-{token}"
    assert mapped[4].startswith(HASHED_PREFIX)
    assert [session_id_of(m) for m in mapped] == [*ids[:4], None, ids[5]]
    listed = on_daemon(module_daemon, "ls", "--contains", token, "--json")
    assert listed.returncode == 0, listed.stderr
    assert {s["id"] for s in json.loads(listed.stdout)["sessions"]} == set(mapped) - {mapped[4]}  # the hash lacks it
    assert module_client.load(mapped[4], no_repair=True).messages[0].content == ids[4]
    shown = on_daemon(module_daemon, "show", mapped[0])
    assert shown.returncode == 0 and f"user/{token}" in shown.stdout, shown.stderr


def test_one_session_used_from_several_event_loops(module_daemon: DaemonProcess, sid: str) -> None:
    daemon = module_daemon
    session = _session(daemon, sid)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            asyncio.run(session.add_items([{"role": "user", "content": f"t{n}"}]))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    got = asyncio.run(session.get_items())
    assert sorted(i["content"] for i in got) == ["t0", "t1", "t2", "t3"]
    session.close()
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(session.get_items())


#: The agent processes send no traces (there is no OpenAI key here).
NO_TRACING = {"OPENAI_AGENTS_DISABLE_TRACING": "1"}

_AGENT = """
import asyncio, pathlib, sys
from agents import Agent, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call
from claw_sessiond_client.contrib.openai_agents import ClawSession

address, ran = sys.argv[1], pathlib.Path(sys.argv[2])

@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    with ran.open("a") as f:
        f.write(path + "\\n")
    return f"deleted {path}"

def agent(*steps):
    return Agent(name="janitor", model=ScriptedModel(list(steps)), tools=[delete_file])

session = ClawSession("hitl", address=address, autostart=False)
"""

_ASK = """
async def main():
    a = agent([function_call("delete_file", {"path": "/tmp/x"}, call_id="call_1")], [assistant_message("done")])
    result = await Runner.run(a, "delete /tmp/x", session=session)
    assert [i.raw_item.call_id for i in result.interruptions] == ["call_1"], result.interruptions
    await session.save_run_state(result.to_state())
asyncio.run(main())
"""

_APPROVE = """
async def main():
    a = agent([assistant_message("done")])
    state = await session.load_run_state(a)
    for item in state.get_interruptions():
        state.approve(item)
    result = await Runner.run(a, state, session=session)
    await session.discard_run_state()
    print(result.final_output)
asyncio.run(main())
"""


def test_an_approval_survives_a_restart_of_the_daemon_and_the_client(
    workspace: Path, spawn_daemon: Any, tmp_path: Path
) -> None:
    ran = tmp_path / "ran.txt"
    first = spawn_daemon()
    run_python(_AGENT + _ASK, first.address, str(ran), env=NO_TRACING)
    assert not ran.exists()  # waiting for a person
    first.terminate()

    second = spawn_daemon()
    with second.client() as c:
        loaded = c.load("hitl")  # a repairing Load after the restart, in another process
        assert loaded.repairs == [] and [x.tool_call_id for x in loaded.in_flight] == ["call_1"]
        assert loaded.messages[-1].tool_calls[0].pending
    assert run_python(_AGENT + _APPROVE, second.address, str(ran), env=NO_TRACING).strip() == "done"
    assert ran.read_text() == "/tmp/x\n"  # the tool ran once, after the approval

    with second.client() as c:
        loaded = c.load("hitl", no_repair=True)
    assert loaded.in_flight == [] and not any(m.synthetic for m in loaded.messages)
    items = [json.loads(m.item) for m in loaded.messages]
    assert [i.get("type", "message") for i in items] == ["message", "function_call", "function_call_output", "message"]
    assert items[2]["call_id"] == "call_1" and loaded.messages[2].tool_call_id == "call_1"
    assert "openai_agents.run_state" not in loaded.session.state


async def test_ten_thousand_items_are_one_atomic_append_and_one_more_is_refused_whole(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    """``add_items`` takes the 10,000 items ``SQLiteSession`` is handed in one transaction, in one
    append (one run of positions, nothing interleaved); a batch over the daemon's bound
    (``--max-batch-messages``) is refused whole and writes nothing."""
    from claw_sessiond_client import InvalidRequestError

    session = _session(module_daemon, sid)
    items: list[Any] = [{"role": "user", "content": f"m{i}"} for i in range(10_000)]
    await session.add_items(items)
    assert await session.get_items() == items
    positions = [m.position for m in module_client.load(sid, no_repair=True).messages]
    assert positions == list(range(positions[0], positions[0] + 10_000))
    with pytest.raises(InvalidRequestError, match="at most 10000"):
        await session.add_items([{"role": "user", "content": "x"}] * 10_001)
    assert module_client.load(sid, no_repair=True, last=1).session.last_position == positions[-1]
