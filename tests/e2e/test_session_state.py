"""Session state, labels, create, fork and update against a real daemon, its clients and its CLI.

Every rule of docs/plans/issue-14-design.md "State, labels, create, fork": a bad request gets
INVALID_ARGUMENT (or NOT_FOUND, ALREADY_EXISTS, ABORTED) naming the field and writes nothing; an
exclusive create has one winner; a fork copies byte for byte and records its lineage; an Append's
state deltas commit with its messages or not at all; a shared scope is one state for every session.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import grpc
import pytest

from claw_sessiond_client import (
    AlreadyExistsError,
    AsyncSessionClient,
    InvalidRequestError,
    Message,
    SequenceConflictError,
    SessionClient,
    SessionNotFoundError,
    StateDelta,
    ToolCall,
    ToolCallStateError,
    ToolPolicy,
)
from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc
from tests.helpers.cli import in_workspace, in_workspace_json
from tests.helpers.daemon import DaemonProcess
from tests.helpers.inspect import stored

C = grpc.StatusCode


def raw(daemon: DaemonProcess, method: str, request: Any) -> tuple[C, str]:
    """Call an RPC with the bare stub (no client-side checks); (status code, details)."""
    with grpc.insecure_channel(daemon.address) as channel:
        call = getattr(pb_grpc.SessionServiceStub(channel), method)
        try:
            reply = call(request, timeout=10)
            if method == "Load":
                list(reply)
        except grpc.RpcError as exc:
            return exc.code(), exc.details() or ""  # type: ignore[attr-defined]
    return C.OK, ""


BAD_REQUESTS: list[tuple[str, Any, C, str]] = [
    ("CreateSession", pb.CreateSessionRequest(session_id="n", state="[1]"), C.INVALID_ARGUMENT, "state:"),
    ("CreateSession", pb.CreateSessionRequest(session_id="n", state="{"), C.INVALID_ARGUMENT, "state:"),
    (
        "CreateSession",
        pb.CreateSessionRequest(session_id="n", state=json.dumps({"a": "x" * (1 << 20)})),
        C.INVALID_ARGUMENT,
        "state:",
    ),
    ("CreateSession", pb.CreateSessionRequest(session_id="n", labels={"a b": "v"}), C.INVALID_ARGUMENT, "labels["),
    ("CreateSession", pb.CreateSessionRequest(session_id="n", labels={"k": "v" * 257}), C.INVALID_ARGUMENT, "labels["),
    (
        "CreateSession",
        pb.CreateSessionRequest(session_id="n", labels={f"k{i}": "v" for i in range(33)}),
        C.INVALID_ARGUMENT,
        "labels:",
    ),
    (
        "CreateSession",
        pb.CreateSessionRequest(session_id="n", tool_policy=pb.ToolPolicy(repair=9)),  # type: ignore[arg-type]
        C.INVALID_ARGUMENT,
        "tool_policy.repair",
    ),
    ("CreateSession", pb.CreateSessionRequest(session_id="seeded"), C.ALREADY_EXISTS, "already exists"),
    ("CreateSession", pb.CreateSessionRequest(session_id="../x"), C.INVALID_ARGUMENT, "session id"),
    (
        "UpdateSession",
        pb.UpdateSessionRequest(session_id="missing", state_deltas=[pb.StateDelta(delta="{}")]),
        C.NOT_FOUND,
        "not stored",
    ),
    (
        "UpdateSession",
        pb.UpdateSessionRequest(
            session_id="seeded", state_deltas=[pb.StateDelta(delta="{}"), pb.StateDelta(delta="1")]
        ),
        C.INVALID_ARGUMENT,
        "state_deltas[1].delta",
    ),
    (
        "UpdateSession",
        pb.UpdateSessionRequest(session_id="seeded", state_deltas=[pb.StateDelta(scope="a\x01", delta="{}")]),
        C.INVALID_ARGUMENT,
        "state_deltas[0].scope",
    ),
    (
        "UpdateSession",
        pb.UpdateSessionRequest(session_id="seeded", set_labels={"ok": "1"}, remove_labels=["ok"]),
        C.INVALID_ARGUMENT,
        "remove_labels",
    ),
    (
        "UpdateSession",
        pb.UpdateSessionRequest(
            session_id="seeded", state_deltas=[pb.StateDelta(delta="{}")], expected_last_position=9
        ),
        C.ABORTED,
        "expected last position 9",
    ),
    (
        "UpdateSession",
        pb.UpdateSessionRequest(session_id="seeded", state_deltas=[pb.StateDelta(delta="{}")] * 101),
        C.INVALID_ARGUMENT,
        "state_deltas:",
    ),
    ("ForkSession", pb.ForkSessionRequest(source_session_id="missing", session_id="f"), C.NOT_FOUND, "missing"),
    ("ForkSession", pb.ForkSessionRequest(source_session_id="seeded", session_id="seeded"), C.ALREADY_EXISTS, ""),
    (
        "ForkSession",
        pb.ForkSessionRequest(source_session_id="seeded", session_id="f", up_to_position=99),
        C.INVALID_ARGUMENT,
        "up_to_position",
    ),
    (
        "ForkSession",
        pb.ForkSessionRequest(source_session_id="", session_id="f"),
        C.INVALID_ARGUMENT,
        "source_session_id",
    ),
    ("GetScopeStates", pb.GetScopeStatesRequest(), C.INVALID_ARGUMENT, "scopes:"),
    ("GetScopeStates", pb.GetScopeStatesRequest(scopes=["ok", ""]), C.INVALID_ARGUMENT, "scopes[1]"),
    ("GetScopeStates", pb.GetScopeStatesRequest(scopes=["s"] * 101), C.INVALID_ARGUMENT, "scopes:"),
    ("ListSessions", pb.ListSessionsRequest(labels={"": "x"}), C.INVALID_ARGUMENT, "labels["),
    ("Load", pb.LoadRequest(session_id="seeded", workdir="/w", scopes=["x" * 257]), C.INVALID_ARGUMENT, "scopes[0]"),
    (
        "Append",
        pb.AppendRequest(
            session_id="seeded",
            messages=[pb.Message(role=pb.ROLE_USER, content="x")],
            state_deltas=[pb.StateDelta(delta='{"a": NaN}')],
        ),
        C.INVALID_ARGUMENT,
        "state_deltas[0].delta",
    ),
]


@pytest.mark.smoke
def test_bad_requests_get_a_clear_error_naming_the_field_and_write_nothing(daemon: DaemonProcess) -> None:
    # A daemon of its own: BAD_REQUESTS name their sessions ("seeded", ...) once, for every run of this test.
    with daemon.client() as c:
        c.create_session("seeded", state={"a": 1}, labels={"app": "x"})
        c.append("seeded", Message.user("hi"))
    store = stored(daemon)
    before = store.snapshot()
    for method, request, code, words in BAD_REQUESTS:
        got, details = raw(daemon, method, request)
        assert (got, words in details) == (code, True), f"{method} {request}: {got.name} {details!r}"
        assert store.snapshot() == before, f"{method}: refused but the database changed"
    with daemon.client() as c:
        assert c.load("seeded", "/w").session.state == {"a": 1}


def test_client_arguments_of_the_wrong_type_are_refused_before_sending(module_client: SessionClient, sid: str) -> None:
    client = module_client
    for call, words in (
        (lambda: client.create_session(sid, state=[1]), "state"),  # type: ignore[arg-type]
        (lambda: client.create_session(sid, labels={"k": 1}), "labels['k']"),  # type: ignore[dict-item]
        (lambda: client.create_session(sid, tool_policy="drop"), "tool_policy"),  # type: ignore[arg-type]
        (lambda: client.update_session(sid, state_deltas=[{"a": 1}]), "state_deltas[0]"),  # type: ignore[list-item]
        (lambda: client.update_session(sid, remove_labels="app"), "remove_labels"),
        (lambda: client.append(sid, Message.user("x"), state_deltas=StateDelta({})), "state_deltas"),  # type: ignore[arg-type]
        (lambda: client.scope_states(f"app:{sid}"), "scopes"),
        (lambda: client.load(sid, "/w", scopes=f"app:{sid}"), "scopes"),
    ):
        with pytest.raises(TypeError, match=words.replace("[", r"\[")):
            call()
    with pytest.raises(InvalidRequestError):
        client.create_session(sid, tool_policy=ToolPolicy(repair="sometimes"))
    assert sid not in [s.id for s in client.list_sessions()]


def _race_to_create(daemon: DaemonProcess, sid: str, contenders: int) -> list[str]:
    """``contenders`` clients create ``sid`` at once (a barrier starts them); each says ``won:N`` or ``lost``."""
    barrier = threading.Barrier(contenders)
    outcomes: list[str] = []
    lock = threading.Lock()

    def create(n: int) -> None:
        with daemon.client() as c:
            c.stats()  # connected before the start line
            barrier.wait(timeout=20)
            try:
                c.create_session(sid, state={"winner": n})
                outcome = f"won:{n}"
            except AlreadyExistsError as exc:
                assert exc.reason == "SESSION_EXISTS"
                outcome = "lost"
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=create, args=(n,)) for n in range(contenders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return outcomes


@pytest.mark.both_backends("an exclusive create's race is settled by PostgreSQL's constraints")
def test_an_exclusive_create_race_has_exactly_one_winner(module_daemon: DaemonProcess, sid: str) -> None:
    contenders = 6
    for round_ in range(5):
        raced = f"{sid}-race-{round_}"
        outcomes = _race_to_create(module_daemon, raced, contenders)
        winners = [o for o in outcomes if o.startswith("won")]
        assert len(outcomes) == contenders and len(winners) == 1, outcomes
        with module_daemon.client() as c:
            assert c.load(raced, "/w").session.state == {"winner": int(winners[0].split(":")[1])}
        assert [e.type for e in stored(module_daemon).events(raced)] == ["session_settings", "state"]


def test_a_create_retried_with_its_request_id_replays(module_client: SessionClient, sid: str) -> None:
    client = module_client
    first = client.create_session(sid, state={"a": 1}, labels={"app": "x"}, request_id="create-1")
    again = client.create_session(sid, state={"a": 1}, labels={"app": "x"}, request_id="create-1")
    assert again == first
    with pytest.raises(AlreadyExistsError):
        client.create_session(sid, state={"a": 1}, labels={"app": "x"})


@pytest.mark.smoke
def test_a_fork_copies_entries_byte_for_byte_and_records_its_lineage(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client = module_client
    src, dst, branch = f"{sid}-src", f"{sid}-dst", sid  # of this test alone: the daemon is the module's
    odd = 'tab\there, nul-free "quotes" \\ back, é, 😀, \u2028'
    args = '{"b": 1,   "a": [1.50, "x"]}'  # spacing and key order as given
    policy = ToolPolicy("synthesize", allow_orphan_results=True)
    client.create_session(src, state={"k": [1, {"z": None}]}, labels={"app": "w"}, tool_policy=policy)
    client.append(
        src,
        [
            Message.system("be brief"),
            Message.user(odd),
            Message.assistant("calling", [ToolCall("c1", "bash", args), ToolCall("c2", "read", "{}")]),
            Message.tool("c1", "out", name="bash"),
        ],
    )
    client.load(src, "/w")  # repairs c2 (synthetic)
    client.append(src, Message.user("after the fork point"))
    forked = client.fork_session(src, dst, up_to_position=5, labels={"app": "w", "branch": branch}, request_id="f-1")
    assert forked.entries_copied == 5 and not forked.replayed
    s = forked.session
    assert (s.forked_from, s.forked_at_position, s.last_position, s.message_count) == (src, 5, 5, 5)
    assert s.state == {"k": [1, {"z": None}]} and s.labels == {"app": "w", "branch": branch}
    assert s.tool_policy == policy and s.incarnation and s.usage.input_tokens == 0

    def entries(session: str) -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in client.export(session)][1:]
        return [e for e in lines if e["position"] is not None]

    src_entries, dst_entries = entries(src), entries(dst)
    keep = ("type", "ts", "trace_id", "schema_version", "payload")
    assert [{k: e[k] for k in keep} for e in dst_entries] == [{k: e[k] for k in keep} for e in src_entries[:5]]
    assert [e["position"] for e in dst_entries] == [1, 2, 3, 4, 5]
    assert dst_entries[4]["type"] == "repair"
    raw_src = {e.position: e.payload for e in stored(module_daemon).events(src) if e.position}
    raw_dst = {e.position: e.payload for e in stored(module_daemon).events(dst) if e.position}
    assert [raw_dst[p] for p in range(1, 6)] == [raw_src[p] for p in range(1, 6)]
    loaded = client.load(dst, "/w")
    assert [m.content for m in loaded.messages][:2] == ["be brief", odd]
    assert loaded.messages[2].tool_calls[0].arguments == args and loaded.repairs == []
    assert [x.id for x in client.list_sessions(labels={"branch": branch})] == [dst]
    again = client.fork_session(src, dst, up_to_position=5, labels={"app": "w", "branch": branch}, request_id="f-1")
    assert again.replayed and again.entries_copied == 5 and again.session.forked_from == src
    with pytest.raises(AlreadyExistsError):  # another request: the id is taken
        client.fork_session(src, dst, up_to_position=5)


def test_state_deltas_are_atomic_with_their_append(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client, scope = module_client, f"app:{sid}"  # a scope of this test alone: the daemon is the module's
    first = client.append(sid, Message.user("one"), state_deltas=[StateDelta({"turn": 1}), StateDelta({"n": 1}, scope)])
    assert client.load(sid, "/w", scopes=[scope]).scope_states == {scope: {"n": 1}}
    store = stored(module_daemon)
    before = store.snapshot()
    refused: list[Any] = [
        lambda: client.append(
            sid, Message.user("two"), expected_last_position=7, state_deltas=[StateDelta({"turn": 2})]
        ),
        lambda: client.append(sid, Message.tool("nope", "r"), state_deltas=[StateDelta({"turn": 2}, scope)]),
        lambda: client.append(
            sid, Message.user("two"), state_deltas=[StateDelta({"turn": 2}), StateDelta({"big": "x" * (1 << 20)})]
        ),
    ]
    for attempt, error in zip(refused, (SequenceConflictError, ToolCallStateError, InvalidRequestError), strict=True):
        with pytest.raises(error):
            attempt()
        assert store.snapshot() == before
    loaded = client.load(sid, "/w", scopes=[scope])
    assert loaded.session.state == {"turn": 1} and loaded.scope_states == {scope: {"n": 1}}
    assert loaded.session.last_position == first.last_position == 1


async def test_append_stream_carries_state_deltas(module_daemon: DaemonProcess, sid: str) -> None:
    async with AsyncSessionClient(address=module_daemon.address, autostart=False) as c:
        async with c.append_stream() as stream:
            results = await asyncio.gather(
                *(stream.append(sid, Message.user(f"m{i}"), state_deltas=[StateDelta({f"k{i}": i})]) for i in range(8))
            )
        assert [r.first_position for r in results] == list(range(1, 9))
        assert (await c.load(sid, "/w")).session.state == {f"k{i}": i for i in range(8)}


def test_a_scope_is_shared_by_two_sessions_and_two_processes(module_daemon: DaemonProcess, sid: str) -> None:
    user, app = f"user:{sid}/alice", f"app:{sid}"  # scopes of this test alone: the daemon is the module's
    with module_daemon.client() as a, module_daemon.client() as b:
        a.create_session(f"{sid}-a", labels={"app": sid, "user": "alice"})
        b.append(f"{sid}-b", Message.user("x"), state_deltas=[StateDelta({"theme": "dark"}, user)])
        a.update_session(f"{sid}-a", state_deltas=[StateDelta({"lang": "fr"}, user), StateDelta({"own": 1})])
        expected = {"theme": "dark", "lang": "fr"}
        assert a.scope_states([user, app]) == {user: expected, app: {}}
        assert b.load(f"{sid}-b", "/w", scopes=[user]).scope_states == {user: expected}
        assert a.load(f"{sid}-a", "/w").session.state == {"own": 1} and b.load(f"{sid}-b", "/w").session.state == {}


@pytest.mark.smoke
def test_update_session_changes_state_labels_and_policy_with_cas(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client = module_client
    with pytest.raises(SessionNotFoundError):
        client.update_session(f"{sid}-nobody", set_labels={"a": "b"})
    client.create_session(sid, state={"a": 1, "b": 2}, labels={"app": "w", "user": "u"})
    client.append(sid, Message.user("x"))
    with pytest.raises(SequenceConflictError):
        client.update_session(sid, state_deltas=[StateDelta({"a": 9})], expected_last_position=5)
    s = client.update_session(
        sid,
        state_deltas=[StateDelta({"a": None, "c": {"d": [1]}})],
        set_labels={"tier": "gold"},
        remove_labels=["user"],
        tool_policy=ToolPolicy("drop", allow_orphan_results=True),
        expected_last_position=1,
        request_id="u-1",
    )
    assert s.state == {"b": 2, "c": {"d": [1]}} and s.labels == {"app": "w", "tier": "gold"}
    assert s.tool_policy == ToolPolicy("drop", True, False)
    loaded = client.load(sid, "/w").session
    assert (loaded.state, loaded.labels, loaded.tool_policy) == (s.state, s.labels, s.tool_policy)
    replay = client.update_session(
        sid,
        state_deltas=[StateDelta({"a": None, "c": {"d": [1]}})],
        set_labels={"tier": "gold"},
        remove_labels=["user"],
        tool_policy=ToolPolicy("drop", allow_orphan_results=True),
        expected_last_position=1,
        request_id="u-1",
    )
    assert replay.state == s.state
    assert [e.type for e in stored(module_daemon).events(sid)].count("state") == 2  # the create's and the update's


def test_list_sessions_by_labels_pages_and_counts(module_client: SessionClient, sid: str) -> None:
    client = module_client
    app, other = sid, f"{sid}-z"  # label values of this test alone: the daemon is the module's
    for i in range(7):
        client.create_session(f"{sid}-s{i}", labels={"app": app, "user": "alice" if i < 5 else "bob"})
    client.create_session(f"{sid}-other", labels={"app": other, "user": "alice"})
    page = client.list_sessions_page(limit=2, labels={"app": app, "user": "alice"})
    ids = [s.id for s in page.sessions]
    while page.next_page_token:
        page = client.list_sessions_page(limit=2, page_token=page.next_page_token, labels={"app": app, "user": "alice"})
        ids += [s.id for s in page.sessions]
    assert sorted(ids) == [f"{sid}-s{i}" for i in range(5)] and len(ids) == 5 and page.total == 5
    assert {s.id: s.labels for s in client.list_sessions(labels={"app": app, "user": "bob"})} == {
        f"{sid}-s5": {"app": app, "user": "bob"},
        f"{sid}-s6": {"app": app, "user": "bob"},
    }
    assert all(s.created_at is not None for s in client.list_sessions())


def test_delete_removes_the_session_s_labels(module_client: SessionClient, sid: str) -> None:
    client = module_client
    client.create_session(sid, labels={"app": sid}, state={"a": 1})
    client.delete(sid)
    assert client.list_sessions(labels={"app": sid}) == []
    assert client.create_session(sid).labels == {}


def test_export_then_import_reproduces_state_labels_policy_and_lineage(spawn_daemon: Any, tmp_path: Path) -> None:
    # Two daemons of its own: the import must land in a store that has never held these sessions.
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one, two = spawn_daemon(workspace_path=tmp_path / "one"), spawn_daemon(workspace_path=tmp_path / "two")
    with one.client() as a, two.client() as b:
        a.create_session("src", state={"x": 1}, labels={"app": "w"}, tool_policy=ToolPolicy("off", False, True))
        a.append("src", [Message.user("q"), Message.assistant("a")], state_deltas=[StateDelta({"y": [2]})])
        a.update_session("src", state_deltas=[StateDelta({"x": None})], set_labels={"user": "u"})
        a.fork_session("src", "dst", up_to_position=1)
        for sid in ("src", "dst"):
            b.import_lines(list(a.export(sid)))
            assert list(b.export(sid)) == list(a.export(sid))
            sa, sb = a.load(sid, "/w").session, b.load(sid, "/w").session
            keep = ("state", "labels", "tool_policy", "forked_from", "forked_at_position", "last_position")
            assert [getattr(sb, k) for k in keep] == [getattr(sa, k) for k in keep]
        assert b.load("dst", "/w").session.forked_from == "src"


def test_async_client_parity(module_daemon: DaemonProcess, sid: str) -> None:
    a, b, scope = f"{sid}-a", f"{sid}-b", f"app:{sid}"  # of this test alone: the daemon is the module's

    async def run() -> None:
        async with AsyncSessionClient(address=module_daemon.address, autostart=False) as c:
            made = await c.create_session(a, state={"v": 1}, labels={"app": sid})
            assert made.state == {"v": 1}
            await c.append(a, Message.user("x"), state_deltas=[StateDelta({"n": 1}, scope)])
            s = await c.update_session(a, state_deltas=[StateDelta({"v": 2})], set_labels={"k": "1"})
            assert s.state == {"v": 2} and s.labels == {"app": sid, "k": "1"}
            forked = await c.fork_session(a, b)
            assert forked.entries_copied == 1 and forked.session.forked_from == a
            assert await c.scope_states([scope]) == {scope: {"n": 1}}
            assert [x.id for x in await c.list_sessions(labels={"app": sid, "k": "1"})] == [b, a]
            with pytest.raises(AlreadyExistsError):
                await c.create_session(b)
            assert (await c.load(b, "/w", scopes=[scope])).scope_states == {scope: {"n": 1}}

    asyncio.run(run())


def test_cli_lists_by_label_and_shows_state_and_labels(daemon: DaemonProcess, workspace: Path) -> None:
    # A daemon of its own: the test stops it to check the read-only view, and `ls` lists the whole store.
    with daemon.client() as c:
        c.create_session("labelled", state={"mood": "calm"}, labels={"app": "w", "user": "alice"})
        c.append("labelled", Message.user("hello"))
        c.append("plain", Message.user("hi"))
        c.fork_session("labelled", "fork")
    proc = in_workspace(workspace, "ls", "--label", "user=alice", "--label", "app=w")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["ID", "MESSAGES", "TOKENS", "COST", "UPDATED", "LABELS"]
    assert sorted(line.split()[0] for line in lines[1:]) == ["fork", "labelled"]
    assert all("app=w user=alice" in line for line in lines[1:])
    assert "LABELS" not in in_workspace(workspace, "ls", "--contains", "plain").stdout
    data = in_workspace_json(workspace, "ls", "--label", "app=w")
    assert {s["id"]: s["labels"] for s in data["sessions"]} == {
        "fork": {"app": "w", "user": "alice"},
        "labelled": {"app": "w", "user": "alice"},
    }
    bad = in_workspace(workspace, "ls", "--label", "novalue")
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr
    refused = in_workspace(workspace, "ls", "--label", "bad key=v")
    assert refused.returncode == 1 and "labels[" in refused.stderr
    shown = in_workspace(workspace, "show", "fork", "--no-pager").stdout
    assert "labels app=w user=alice" in shown and "forked from labelled at position 1" in shown
    assert 'state {"mood": "calm"}' in shown
    doc = in_workspace_json(workspace, "show", "fork")
    assert doc["session"]["state"] == {"mood": "calm"} and doc["session"]["forked_from"] == "labelled"
    assert daemon.terminate() == 0  # the read-only view (no daemon) filters and shows the same
    offline = in_workspace(workspace, "ls", "--label", "user=alice")
    assert offline.returncode == 0 and "read-only view" in offline.stderr
    assert sorted(line.split()[0] for line in offline.stdout.splitlines()[1:]) == ["fork", "labelled"]
    assert 'state {"mood": "calm"}' in in_workspace(workspace, "show", "fork", "--no-pager").stdout


def test_a_fork_copies_items_byte_for_byte_and_a_bounded_load_shows_the_settings(
    module_client: SessionClient, sid: str
) -> None:
    client = module_client
    src, dst, scope = f"{sid}-src", f"{sid}-dst", f"app:{sid}"  # of this test alone: the daemon is the module's
    reasoning = bytes(range(256)) + b'{"encrypted_content": "\x00\xff"}'
    client.create_session(src, state={"k": 1}, labels={"app": sid})
    client.append(
        src,
        [
            Message.user("q", format="openai.responses", item=b'{"role":"user","content":"q"}', client_id="m1"),
            Message.other("openai.responses", reasoning, client_id="rs1"),
            Message.assistant("a", format="openai.responses", item=b'{"type":"message"}', client_id="m2"),
        ],
    )
    forked = client.fork_session(src, dst, up_to_position=2)
    assert forked.entries_copied == 2
    got = client.load(dst, "/w").messages
    assert [(m.role, m.format, m.item, m.client_id) for m in got] == [
        ("user", "openai.responses", b'{"role":"user","content":"q"}', "m1"),
        ("other", "openai.responses", reasoning, "rs1"),
    ]
    client.append(dst, Message.user("again", client_id="m2"))  # m2 was not copied: free in the fork
    window = client.load(dst, "/w", last=1, scopes=[scope])
    assert [m.client_id for m in window.messages] == ["m2"] and not window.complete
    assert window.session.state == {"k": 1} and window.session.forked_from == src
    assert window.scope_states == {scope: {}}


def test_the_session_policy_set_by_create_and_update_rules_its_loads(module_client: SessionClient, sid: str) -> None:
    client = module_client
    client.create_session(sid, tool_policy=ToolPolicy("off"))
    client.append(sid, Message.assistant(tool_calls=[ToolCall("c1", "bash", "{}")]))
    left = client.load(sid, "/w")
    assert left.repairs == [] and left.session.tool_policy == ToolPolicy("off")
    client.update_session(sid, tool_policy=ToolPolicy("synthesize"))
    assert [r.tool_call_id for r in client.load(sid, "/w").repairs] == ["c1"]
