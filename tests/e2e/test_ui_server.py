"""``claw-sessiond ui``'s server: a real daemon, the viewer as a real subprocess, plain HTTP against it.

The secret (refused without it, with a wrong one, under another Host name), the headers, every JSON
route's shape, the list's filters and paging, search, a repaired and a superseded call, the live stream
receiving another process's append, usage by model and day, lookup, both exports (the HTML one with
hostile strings), the bounds, and the offline view of a stopped store. Every process started here is
stopped by its pid.
"""

from __future__ import annotations

import html
import json
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from claw_sessiond.ui.api import LOOKUP_ENTRIES, LOOKUP_SESSION_ENTRIES
from claw_sessiond.ui.auth import CSP
from claw_sessiond.ui.export_html import HTML_CSP
from claw_sessiond.ui.live import MAX_STREAMS
from claw_sessiond_client import Message, SessionClient, ToolCall
from tests.helpers.daemon import DaemonProcess
from tests.helpers.process import wait_for
from tests.helpers.ui import URL_LINE, UiProcess

#: A sanity bound on the live stream's delay (the target is well under a second; the machine is shared).
LIVE_SANITY_S = 10.0

#: Strings that would run as script if a page rendered stored text as HTML.
HOSTILE = (
    "<script>alert('content')</script>",
    "<img src=x onerror=alert('img')>",
    "javascript:alert('url')",
    "<svg onload=alert('svg')><circle/></svg>",
    '"><iframe srcdoc="<script>alert(1)</script>">',
)


@pytest.fixture(scope="module")
def viewed(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DaemonProcess, UiProcess]]:
    """One daemon and one viewer of it for the module's tests (each works on sessions of its own)."""
    workspace = tmp_path_factory.mktemp("ui") / "ws"
    workspace.mkdir()
    daemon = DaemonProcess(workspace).start()
    try:
        ui = UiProcess(workspace, daemon=daemon)
        try:
            yield daemon, ui.start()
        finally:
            ui.stop()
    finally:
        daemon.stop()


@pytest.fixture
def daemon(viewed: tuple[DaemonProcess, UiProcess]) -> DaemonProcess:
    return viewed[0]


@pytest.fixture
def ui(viewed: tuple[DaemonProcess, UiProcess]) -> UiProcess:
    return viewed[1]


@pytest.fixture
def client(daemon: DaemonProcess) -> Iterator[SessionClient]:
    with daemon.client() as c:
        yield c


def _sid(prefix: str = "ui") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


# ---------------------------------------------------------------- the door


@pytest.mark.smoke
def test_the_secret_is_needed_and_the_host_must_be_ours(ui: UiProcess, daemon: DaemonProcess) -> None:
    for path in ("/", "/api/info", "/api/sessions", "/static/app.js", "/api/sessions/x/live", "/nowhere"):
        refused = ui.get(path, auth=False)
        assert refused.status == 403 and refused.headers["content-type"].startswith("text/plain"), (path, refused)
        assert refused.headers["content-security-policy"] == CSP
    assert ui.get("/api/info", auth=False, headers={"Authorization": "Bearer " + "x" * 43}).status == 403
    assert (
        ui.get(
            "/api/info",
            auth=False,
            headers={"Cookie": "claw_ui=" + ui.token[:-1] + ("B" if ui.token.endswith("A") else "A")},
        ).status
        == 403
    )
    assert ui.get("/?token=" + ui.token[::-1], auth=False).status == 403
    # The printed URL: a cookie for the secret, and a redirect that drops the token from the address.
    first = ui.get(f"/?token={ui.token}", auth=False)
    assert first.status == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"claw_ui={ui.token};")
    assert {"httponly", "samesite=strict", "path=/"} <= {p.strip().lower() for p in cookie.split(";")}
    assert ui.get("/api/info", auth=False, headers={"Cookie": f"claw_ui={ui.token}"}).status == 200
    # DNS rebinding: the right secret under another name is refused; localhost with our port is ours.
    for host in (f"evil.example:{ui.port}", "127.0.0.1", f"127.0.0.1:{ui.port + 1}", f"localhost.evil:{ui.port}"):
        assert ui.get("/api/info", headers={"Host": host}).status == 403, host
    assert ui.get("/api/info", headers={"Host": f"localhost:{ui.port}"}).status == 200
    assert ui.token not in daemon.log()  # the secret never leaves the viewer (it logs no request either)


@pytest.mark.smoke
def test_every_answer_carries_the_headers(ui: UiProcess) -> None:
    for path in ("/", "/api/info", "/api/sessions/nope", "/static/nothing.js"):
        answer = ui.get(path)
        assert answer.headers["content-security-policy"] == CSP, path
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert answer.headers["x-frame-options"] == "DENY"
        if path.startswith("/api/"):
            assert answer.headers["cache-control"] == "no-store"
            assert answer.headers["server-timing"].startswith("app;dur=")
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP


def test_the_request_bounds(ui: UiProcess) -> None:
    assert ui.get("/api/sessions?" + "x" * 9000).status in (400, 414)
    assert ui.get("/static/../../etc/passwd").status == 404
    assert ui.get("/static/.hidden").status == 404
    # Every route is a GET: another method is refused before any body is read (and without the secret: 403).
    posted = ui.get("/api/sessions", method="POST", body=b"x" * 4096)
    assert posted.status == 405 and set(posted.json()) == {"error"}
    assert ui.get("/api/sessions", method="POST", body=b"{}", auth=False).status == 403
    unknown = ui.get("/api/nothing-here")
    assert unknown.status == 404 and set(unknown.json()) == {"error"}
    assert ui.get("/api/sessions/never-stored/live").status == 404
    for path in (
        "/api/sessions?limit=0",
        "/api/sessions?limit=501",
        "/api/sessions?limit=x",
        "/api/sessions?page_token=garbage",
        "/api/sessions?label=novalue",
        "/api/sessions?updated_after=yesterday",
        "/api/sessions?has_repairs=maybe",
        "/api/sessions/x?limit=1001",
        "/api/sessions/x?before=5&after=1",
        "/api/search?q=",
        "/api/search?q=x&limit=201",
        "/api/usage?by=week",
        "/api/lookup",
        "/api/lookup?trace_id=a&client_id=b",
        f"/api/sessions/{quote('a/b', safe='')}",
    ):
        answer = ui.get(path)
        assert answer.status == 400, (path, answer)
        assert set(answer.json()) == {"error"} and "\n" not in answer.json()["error"]


# ---------------------------------------------------------------- the routes


@pytest.mark.smoke
@pytest.mark.both_backends("the viewer reads through the daemon: its answers on a daemon on PostgreSQL")
def test_every_route_has_its_shape(ui: UiProcess, client: SessionClient, backend: str) -> None:
    sid = _sid()
    client.append(
        sid,
        [
            Message.user("what is in the folder", client_id=f"{sid}-q"),
            Message.assistant(tool_calls=[ToolCall("c1", "bash", '{"cmd": "ls"}')]),
            Message.tool("c1", "README.md"),
            Message("assistant", format="x-raw", item=b"\xff\x00 binary"),
        ],
    )
    client.update_session(sid, set_labels={"team": "ui"})
    client.record_usage(sid, input_tokens=7, output_tokens=3, cost_micros=50, currency="USD", model="m-shape")

    info = ui.get_json("/api/info")
    assert info == {
        "workspace": info["workspace"],
        "backend": "postgresql" if backend == "postgres" else "sqlite",
        "daemon_running": True,
        "offline": False,
        "version": info["version"],
    }
    listed = ui.get_json(f"/api/sessions?id_contains={sid}")
    assert listed["total"] == 1 and listed["next_page_token"] == ""
    row = listed["sessions"][0]
    assert set(row) >= {"id", "message_count", "last_position", "labels", "created_at", "updated_at", "usage"}
    assert (row["id"], row["message_count"], row["labels"]) == (sid, 4, {"team": "ui"})
    assert row["usage"]["input_tokens"] == 7 and row["usage"]["currency"] == "USD"

    page = ui.get_json(f"/api/sessions/{sid}")
    assert set(page) == {
        "session", "entries", "events", "in_flight", "repairs", "first_position", "has_older", "has_newer",
        "events_complete",
    }  # fmt: skip
    assert page["session"]["id"] == sid and page["session"]["last_position"] == 4
    assert page["first_position"] == 1 and page["has_older"] is False and page["has_newer"] is False
    assert page["events"] == [] and page["events_complete"] is True  # usage and labels are not history events
    middle = ui.get_json(f"/api/sessions/{sid}?after=1&limit=2")
    assert [e["position"] for e in middle["entries"]] == [2, 3] and middle["has_older"] and middle["has_newer"]
    older = ui.get_json(f"/api/sessions/{sid}?before=4&limit=2")
    assert [e["position"] for e in older["entries"]] == [2, 3] and older["has_older"] and older["has_newer"]
    last = ui.get_json(f"/api/sessions/{sid}?limit=1")
    assert [e["position"] for e in last["entries"]] == [4] and last["has_older"] and not last["has_newer"]
    entries = page["entries"]
    assert [(e["position"], e["role"]) for e in entries] == [
        (1, "user"),
        (2, "assistant"),
        (3, "tool"),
        (4, "assistant"),
    ]
    assert entries[0]["client_id"] == f"{sid}-q" and entries[0]["trace_id"]
    assert entries[1]["tool_calls"] == [{"id": "c1", "name": "bash", "arguments": '{"cmd": "ls"}'}]
    assert entries[2]["tool_call_id"] == "c1" and entries[2]["synthetic"] is None and entries[2]["supersedes"] == 0
    assert entries[3]["item"] is None and entries[3]["item_b64"] and entries[3]["format"] == "x-raw"
    for e in entries:
        assert {"created_at", "content", "name", "metadata", "usage", "cancelled", "orphan"} <= set(e)

    found = ui.get_json(f"/api/search?q=folder&session_id={sid}")
    assert [(h["session_id"], h["position"], h["role"]) for h in found["hits"]] == [(sid, 1, "user")]
    usage = ui.get_json("/api/usage?by=model")
    assert {"key": "m-shape", "currency": "USD"}.items() <= next(
        r for r in usage["rows"] if r["key"] == "m-shape"
    ).items()
    looked = ui.get_json(f"/api/lookup?client_id={sid}-q&session_id={sid}")
    assert looked["matches"] == [{"session_id": sid, "position": 1}]
    assert ui.get(f"/api/sessions/{sid}-missing").status == 404


def test_the_list_pages_and_filters(ui: UiProcess, client: SessionClient, daemon: DaemonProcess) -> None:
    batch = uuid.uuid4().hex[:8]
    ids = [_sid(f"list{n}") for n in range(7)]
    for n, sid in enumerate(ids):
        client.create_session(sid, labels={"batch": batch, "parity": "odd" if n % 2 else "even"})
        client.append(sid, Message.user(f"message {n}"))
    # One with a call left open (no result yet), one whose call a repairing Load answered.
    client.append(ids[1], Message.assistant(tool_calls=[ToolCall("open", "bash", "{}")]))
    client.append(ids[2], Message.assistant(tool_calls=[ToolCall("gone", "bash", "{}")]))
    client.load(ids[2], str(daemon.workspace))
    client.append(ids[3], Message.user("the latest"))

    seen: list[str] = []
    token = ""
    for _ in range(10):  # 7 sessions in pages of 3: three pages
        page = ui.get_json(f"/api/sessions?label=batch={batch}&limit=3&page_token={quote(token)}")
        assert page["total"] == 7
        seen += [s["id"] for s in page["sessions"]]
        token = page["next_page_token"]
        if not token:
            break
    assert sorted(seen) == sorted(ids) and len(seen) == 7 and seen[0] == ids[3]  # newest first

    odd = ui.get_json(f"/api/sessions?label=batch={batch}&label=parity=odd")
    assert sorted(s["id"] for s in odd["sessions"]) == sorted(ids[1::2])
    assert [s["id"] for s in ui.get_json(f"/api/sessions?id_contains={ids[4]}")["sessions"]] == [ids[4]]

    with_open = ui.get_json(f"/api/sessions?label=batch={batch}&has_open_calls=1")
    assert [(s["id"], s["open_calls"]) for s in with_open["sessions"]] == [(ids[1], 1)] and with_open["total"] is None
    repaired = ui.get_json(f"/api/sessions?label=batch={batch}&has_repairs=1")
    assert [(s["id"], s["repairs"]) for s in repaired["sessions"]] == [(ids[2], 1)]

    # Times: the list is newest first; after/before the last update of ids[3] split it.
    rows = {s["id"]: s for s in ui.get_json(f"/api/sessions?label=batch={batch}")["sessions"]}
    cut = quote(rows[ids[3]]["updated_at"])
    after = ui.get_json(f"/api/sessions?label=batch={batch}&updated_after={cut}")
    assert [s["id"] for s in after["sessions"]] == [ids[3]]
    before = ui.get_json(f"/api/sessions?label=batch={batch}&updated_before={cut}")
    assert sorted(s["id"] for s in before["sessions"]) == sorted(set(ids) - {ids[3]})
    # A filtered list pages too (the viewer's token goes on scanning where the last page stopped).
    paged, token = [], ""
    for _ in range(10):
        page = ui.get_json(f"/api/sessions?label=batch={batch}&updated_before={cut}&limit=4&page_token={quote(token)}")
        paged += [s["id"] for s in page["sessions"]]
        token = page["next_page_token"]
        if not token:
            break
    assert sorted(paged) == sorted(set(ids) - {ids[3]}) and len(paged) == 6


def test_search_hits_come_split_for_highlighting(ui: UiProcess, client: SessionClient) -> None:
    sid = _sid()
    word = f"zebra{uuid.uuid4().hex[:6]}"
    client.append(sid, [Message.user(f"the {word} crossed <b>the</b> road"), Message.assistant("no match here")])
    hits = ui.get_json(f"/api/search?q={word}")["hits"]
    assert [(h["session_id"], h["position"], h["role"]) for h in hits] == [(sid, 1, "user")]
    parts = hits[0]["snippet"]
    assert [p["text"] for p in parts if p["hit"]] == [word]
    assert "".join(p["text"] for p in parts) == f"the {word} crossed <b>the</b> road"


OWNER = r"""
import json, os, sys
from claw_sessiond_client import Message, SessionClient, ToolCall
address, session = sys.argv[1], sys.argv[2]
client = SessionClient(address=address, autostart=False)
with client.attach(session, label="worker") as run:
    client.append(session, [
        Message.user("run two tools"),
        Message.assistant(tool_calls=[ToolCall("c1", "bash", '{"cmd": "ls"}'), ToolCall("c2", "bash", "{}")]),
    ], run_id=run.run_id)
    print(json.dumps({"run_id": run.run_id, "pid": os.getpid()}), flush=True)
    sys.stdin.readline()
"""


def test_a_repaired_and_a_superseded_call_are_marked(
    ui: UiProcess, client: SessionClient, daemon: DaemonProcess
) -> None:
    sid = _sid()
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, daemon.address, sid], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None
        started = json.loads(owner.stdout.readline())
        live = ui.get_json(f"/api/sessions/{sid}")
        in_flight = live["in_flight"]
        assert sorted(
            (f["call_id"], f["name"], f["run"]["pid"], f["run"]["run_id"], f["run"]["label"]) for f in in_flight
        ) == [
            ("c1", "bash", started["pid"], started["run_id"], "worker"),
            ("c2", "bash", started["pid"], started["run_id"], "worker"),
        ]
        assert live["session"]["open_calls"] == 2
        stream = ui.events(f"/api/sessions/{sid}/live?after=2")
        owned, _ = stream.next("run", LIVE_SANITY_S)  # the live view says who owns each call in flight
        assert sorted((f["call_id"], f["run"]["pid"], f["run"]["label"]) for f in owned["in_flight"]) == [
            ("c1", started["pid"], "worker"),
            ("c2", started["pid"], "worker"),
        ]
    finally:
        owner.send_signal(signal.SIGKILL)  # the client dies mid-call
        owner.communicate(timeout=10)
    try:
        freed, _ = stream.next("run", 30)  # its run ends: nothing in flight
        assert freed == {"in_flight": []}
        repaired = client.load(sid, str(daemon.workspace))
        assert sorted(r.tool_call_id for r in repaired.repairs) == ["c1", "c2"]
        first, _ = stream.next("entry", LIVE_SANITY_S)  # the repairs arrive live too
        assert first["role"] == "tool" and first["synthetic"]["reason"]
    finally:
        stream.close()
    client.append(sid, Message.tool("c2", "the tool did finish"))  # the real result, later
    page = ui.get_json(f"/api/sessions/{sid}")
    tools = {e["tool_call_id"]: e for e in page["entries"] if e["role"] == "tool"}
    c2_repair = next(r.position for r in repaired.repairs if r.tool_call_id == "c2")
    assert tools["c1"]["synthetic"] and tools["c1"]["synthetic"]["reason"] and tools["c1"]["supersedes"] == 0
    assert tools["c2"]["synthetic"] is None and tools["c2"]["supersedes"] == c2_repair
    assert tools["c2"]["content"] == "the tool did finish"
    assert [(r["tool_call_id"], r["position"]) for r in page["repairs"]] == [("c1", tools["c1"]["position"])]
    assert page["in_flight"] == [] and page["session"]["open_calls"] == 0


APPENDER = r"""
import sys
from claw_sessiond_client import Message, SessionClient
address, session = sys.argv[1], sys.argv[2]
with SessionClient(address=address, autostart=False) as client:
    client.list_sessions(session, 1)  # connected and trusted before the go
    print("ready", flush=True)
    text = sys.stdin.readline().strip()
    client.append(session, Message.user(text))
    print("appended", flush=True)
"""


def test_the_live_stream_shows_another_process_append(
    ui: UiProcess, client: SessionClient, daemon: DaemonProcess
) -> None:
    sid = _sid()
    client.append(sid, Message.user("before"))
    stream = ui.events(f"/api/sessions/{sid}/live?after=1")
    writer = subprocess.Popen(
        [sys.executable, "-c", APPENDER, daemon.address, sid], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert stream.status == 200 and stream.headers["content-type"].startswith("text/event-stream")
        assert stream.headers["content-security-policy"] == CSP and stream.headers["cache-control"] == "no-store"
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "ready"
        text = f"from another process {uuid.uuid4().hex[:6]} <script>x</script>"
        writer.stdin.write(text + "\n")
        writer.stdin.flush()
        entry, took = stream.next("entry", LIVE_SANITY_S)
        assert (entry["position"], entry["role"], entry["content"]) == (2, "user", text)
        print(f"live entry after {took * 1000:.0f} ms")
        assert took < LIVE_SANITY_S
        assert writer.stdout.readline().strip() == "appended"
    finally:
        stream.close()
        writer.kill()
        writer.communicate(timeout=10)


def test_live_streams_are_bounded(ui: UiProcess, client: SessionClient) -> None:
    sid = _sid()
    client.append(sid, Message.user("watched"))
    streams = [ui.events(f"/api/sessions/{sid}/live") for _ in range(MAX_STREAMS)]
    try:
        assert [s.status for s in streams] == [200] * MAX_STREAMS
        refused = ui.get(f"/api/sessions/{sid}/live")
        assert refused.status == 503 and "at most" in refused.json()["error"]
        streams.pop().close()  # one browser tab goes: its place comes free
        wait_for(lambda: _opens(ui, sid), 10, "a live stream's place to come free")
    finally:
        for s in streams:
            s.close()


def _opens(ui: UiProcess, sid: str) -> bool:
    stream = ui.events(f"/api/sessions/{sid}/live")
    stream.close()
    return stream.status == 200


def test_usage_by_model_and_by_day(ui: UiProcess, client: SessionClient) -> None:
    sid = _sid()
    model = f"model-{uuid.uuid4().hex[:6]}"
    client.append(sid, Message.user("count me"))
    client.record_usage(sid, input_tokens=10, output_tokens=4, cost_micros=300, currency="USD", model=model)
    client.record_usage(sid, input_tokens=5, output_tokens=1, cost_micros=200, currency="USD", model=model)
    by_model = ui.get_json("/api/usage?by=model")
    assert [
        (r["input_tokens"], r["output_tokens"], r["cost_micros"], r["currency"])
        for r in by_model["rows"]
        if r["key"] == model
    ] == [(15, 5, 500, "USD")]
    today = time.strftime("%Y-%m-%d", time.gmtime())
    by_day = ui.get_json("/api/usage?by=day")
    day = next(r for r in by_day["rows"] if r["key"] == today and r["currency"] == "USD")
    assert day["input_tokens"] >= 15 and day["cost_micros"] >= 500
    usd = next(t for t in by_day["totals"] if t["currency"] == "USD")
    assert usd["cost_micros"] == sum(r["cost_micros"] for r in by_day["rows"] if r["currency"] == "USD")
    assert ui.get_json("/api/usage?by=day&since=2999-01-01T00:00:00Z")["rows"] == []


def test_older_pages_are_the_last_n_before_a_position(ui: UiProcess, client: SessionClient) -> None:
    """``before=`` pages hold ``limit`` entries each across gaps a DeleteEntries and an EditTail leave (a read
    from a computed position would come back short there) and, together, the whole visible history."""
    sid = _sid()
    client.append(sid, [Message.user(f"m{n}") for n in range(30)])
    client.delete_entries(sid, from_position=5, to_position=14)  # ten gone from the middle
    client.edit_tail(sid, remove_last=2, replacements=Message.user("instead"))
    client.append(sid, [Message.user(f"late{n}") for n in range(5)])
    visible = [m.position for m in client.load(sid, no_repair=True).messages]
    pages = [ui.get_json(f"/api/sessions/{sid}?limit=4")]
    for _ in range(len(visible)):  # bounded: each page goes back at least one entry
        if not pages[-1]["has_older"]:
            break
        pages.append(ui.get_json(f"/api/sessions/{sid}?limit=4&before={pages[-1]['first_position']}"))
    seen = [e["position"] for page in reversed(pages) for e in page["entries"]]
    assert seen == visible
    assert [len(page["entries"]) for page in pages[:-1]] == [4] * (len(pages) - 1)
    assert not pages[-1]["has_older"] and all(page["has_older"] for page in pages[:-1])
    assert all(page["has_newer"] for page in pages[1:]) and not pages[0]["has_newer"]


def test_a_pages_history_lists_its_clears_and_edits(ui: UiProcess, client: SessionClient) -> None:
    """The log's clear, EditTail and DeleteEntries events appear in the page whose span holds them (read from
    Watch's replay over that span), each in exactly one page when paging back."""
    sid = _sid()
    client.append(sid, [Message.user(f"before {n}") for n in range(6)])
    cleared = client.clear(sid).position
    client.append(sid, [Message.user(f"after {n}", client_id=f"{sid}-{n}") for n in range(6)])
    edited = client.edit_tail(sid, remove_last=1, replacements=Message.user("instead"))
    deleted = client.delete_entries(sid, client_ids=[f"{sid}-2"])
    client.append(sid, [Message.user(f"late {n}") for n in range(4)])
    want = [
        (cleared, "clear", {"erased": False}),
        (edited.edit_position, "edit", {"removed_positions": [cleared + 6]}),
        (deleted.edit_position, "edit", {"removed_positions": [cleared + 3]}),
    ]

    page = ui.get_json(f"/api/sessions/{sid}")
    assert [(e["position"], e["type"], e["detail"]) for e in page["events"]] == want
    assert page["events_complete"] is True and page["entries"][0]["position"] == cleared + 1
    pages = [ui.get_json(f"/api/sessions/{sid}?limit=2")]
    for _ in range(20):  # bounded: 9 visible entries, 2 a page
        if not pages[-1]["has_older"]:
            break
        pages.append(ui.get_json(f"/api/sessions/{sid}?limit=2&before={pages[-1]['first_position']}"))
    assert not pages[-1]["has_older"] and all(p["events_complete"] for p in pages)
    shown = [(e["position"], e["type"], e["detail"]) for p in reversed(pages) for e in p["events"]]
    assert shown == want  # each once, in order
    newest = pages[0]
    assert all(e["position"] >= newest["first_position"] for e in newest["events"])
    forward = ui.get_json(f"/api/sessions/{sid}?after={cleared}&limit=3")
    assert [e["position"] for e in forward["events"]] == []  # its span ends at its last entry
    assert forward["has_newer"] and forward["entries"][-1]["position"] == cleared + 4  # +3 deleted


def test_lookup_by_client_id_reads_the_index(ui: UiProcess, client: SessionClient) -> None:
    """A client id is found however far back its entry is (through the daemon's index, not a scan of the last
    entries): here 1,200 entries follow it, more than the trace-id scan's bound per session."""
    sid = _sid()
    client.append(sid, Message.user("first", client_id=f"{sid}-first"))
    for start in range(0, LOOKUP_ENTRIES + 200, 400):
        client.append(sid, [Message.user(f"later {start + n}") for n in range(400)])
    found = ui.get_json(f"/api/lookup?client_id={sid}-first")
    assert found["matches"] == [{"session_id": sid, "position": 1}]
    assert found["through"] == "index" and found["scanned"] is None
    assert ui.get_json(f"/api/lookup?client_id={sid}-first&session_id={sid}")["matches"] == found["matches"]
    traced = ui.get_json(f"/api/lookup?trace_id=none-{sid}&session_id={sid}")
    assert traced["through"] == "scan" and traced["scanned"] == {
        "sessions": 1,
        "entries_per_session": LOOKUP_SESSION_ENTRIES,
    }


def test_lookup_by_trace_and_client_id(ui: UiProcess, client: SessionClient) -> None:
    sid = _sid()
    first = client.append(sid, [Message.user("a"), Message.assistant("b")])
    client.append(sid, Message.user("c", client_id=f"{sid}-c"))
    traced = ui.get_json(f"/api/lookup?trace_id={first.trace_id}")["matches"]
    assert traced == [{"session_id": sid, "position": 1}, {"session_id": sid, "position": 2}]
    by_client = ui.get_json(f"/api/lookup?client_id={sid}-c")["matches"]
    assert by_client == [{"session_id": sid, "position": 3}]
    assert ui.get_json(f"/api/lookup?client_id={sid}-nothing&session_id={sid}")["matches"] == []


def test_export_jsonl_is_the_daemons_export(ui: UiProcess, client: SessionClient) -> None:
    sid = _sid()
    client.append(sid, [Message.user("export me"), Message.assistant("done", tool_calls=[ToolCall("t", "x", "{}")])])
    client.append(sid, Message.tool("t", "ok"))
    answer = ui.get(f"/api/sessions/{sid}/export.jsonl")
    assert answer.status == 200 and answer.headers["content-disposition"] == f'attachment; filename="{sid}.jsonl"'
    assert answer.body.decode().splitlines() == list(client.export(sid))
    assert answer.headers["content-security-policy"] == CSP and answer.headers["x-content-type-options"] == "nosniff"
    assert ui.get(f"/api/sessions/{sid}-missing/export.jsonl").status == 404


def test_export_html_has_no_script_and_escapes_hostile_strings(ui: UiProcess, client: SessionClient) -> None:
    sid = _sid("<i onmouseover=alert(1)>")
    client.append(
        sid,
        [
            Message.user(HOSTILE[0]),
            Message.assistant(HOSTILE[1], tool_calls=[ToolCall("c<1>", HOSTILE[2], json.dumps({"a": HOSTILE[3]}))]),
            Message.tool("c<1>", HOSTILE[4], name=HOSTILE[2]),
        ],
    )
    client.update_session(sid, set_labels={"k": HOSTILE[3]})
    answer = ui.get(f"/api/sessions/{quote(sid, safe='')}/export.html")
    assert answer.status == 200 and answer.headers["content-type"].startswith("text/html")
    assert answer.headers["content-security-policy"] == HTML_CSP
    page = answer.body.decode()
    assert f'<meta http-equiv="Content-Security-Policy" content="{HTML_CSP}">' in page
    lowered = page.lower()
    for tag in ("<script", "<img", "<svg", "<iframe", "<i "):
        assert tag not in lowered, tag
    for text in (*HOSTILE, sid):
        assert html.escape(text, quote=True) in page or html.escape(json.dumps(text)[1:-1], quote=True) in page
    # The JSON API gives the same strings unchanged (the pages render them as text).
    entries = ui.get_json(f"/api/sessions/{quote(sid, safe='')}")["entries"]
    assert [e["content"] for e in entries] == [HOSTILE[0], HOSTILE[1], HOSTILE[4]]


# ---------------------------------------------------------------- offline


def _claw_files(workspace: Path) -> dict[str, tuple[int, int]]:
    """Each file of ``.claw/``: its mode and size; the lock file by its mode alone (whoever holds the lock,
    the offline view too, writes its own pid there, whose length differs from the daemon's pid's)."""
    folder = workspace / ".claw"
    return {
        p.name: (p.lstat().st_mode, -1 if p.name == "sessiond.lock" else p.lstat().st_size) for p in folder.iterdir()
    }


def test_offline_view_of_a_stopped_store(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    daemon = DaemonProcess(workspace).start()
    sid = _sid()
    try:
        with daemon.client() as c:
            c.append(sid, [Message.user("cleared before"), Message.user("edited out")])
            edit = c.edit_tail(sid, remove_last=1).edit_position
            clear = c.clear(sid).position
            c.append(
                sid, [Message.user("kept while stopped"), Message.assistant(tool_calls=[ToolCall("o", "x", "{}")])]
            )
            exported = list(c.export(sid))
    finally:
        daemon.stop()
    before = _claw_files(workspace)
    ui = UiProcess(workspace)
    try:
        ui.start()
        assert ui.get_json("/api/info")["offline"] is True
        assert [s["id"] for s in ui.get_json("/api/sessions")["sessions"]] == [sid]
        page = ui.get_json(f"/api/sessions/{sid}")
        assert [e["content"] for e in page["entries"]] == ["kept while stopped", ""]
        assert [(e["position"], e["type"]) for e in page["events"]] == [(edit, "edit"), (clear, "clear")]
        assert page["events"][0]["detail"] == {"removed_positions": [2]} and page["events_complete"] is True
        assert page["session"]["open_calls"] == 1  # not repaired: the viewer writes nothing
        assert ui.get_json("/api/search?q=stopped")["hits"][0]["session_id"] == sid
        assert ui.get(f"/api/sessions/{sid}/export.jsonl").body.decode().splitlines() == exported
        refused = ui.get(f"/api/sessions/{sid}/live")
        assert refused.status == 502 and "daemon" in refused.json()["error"]
        assert _claw_files(workspace) == before  # nothing of .claw/ changed
        # The lock is held only while a request reads: a daemon can start meanwhile; the viewer then says so.
        again = DaemonProcess(workspace).start()
        try:
            busy = ui.get("/api/sessions")
            assert busy.status == 502 and "\n" not in busy.json()["error"]
        finally:
            again.stop()
    finally:
        code = ui.stop()
    assert code == 0
    said = ui.stderr()
    assert "read-only view" in said and ui.token not in said


def test_no_store_is_one_line_and_exit_1(tmp_path: Path) -> None:
    ui = UiProcess(tmp_path)
    try:
        code = ui.proc.wait(30)
    finally:
        ui.stop()
    said = ui.stderr()
    assert code == 1 and "does not exist" in said and "Traceback" not in said
    assert not (tmp_path / ".claw").exists()


def test_the_port_taken_is_one_line(ui: UiProcess, daemon: DaemonProcess) -> None:
    other = UiProcess(daemon.workspace, "--port", str(ui.port), daemon=daemon)
    try:
        code = other.proc.wait(30)
    finally:
        other.stop()
    said = other.stderr()
    assert code == 1 and f"127.0.0.1:{ui.port}" in said and "Traceback" not in said


def _ui_of(daemon: DaemonProcess, flag: str, **env: str) -> subprocess.Popen[str]:
    """``claw-sessiond ui FLAG`` on ``daemon``'s socket, its output piped (stop it by its pid: SIGTERM)."""
    return subprocess.Popen(
        [sys.executable, "-m", "claw_sessiond", "ui", flag, "--socket", str(daemon.socket_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=daemon.workspace,
        env={**daemon.env, **env},
    )


def test_json_gives_the_url_as_one_document(ui: UiProcess, daemon: DaemonProcess) -> None:
    other = _ui_of(daemon, "--json")
    try:
        assert other.stdout is not None
        document = json.loads(other.stdout.readline())
        assert list(document) == ["format", "url"] and document["format"] == 1
        assert URL_LINE.match(f"claw-sessiond ui: {document['url']}")
    finally:
        other.send_signal(signal.SIGTERM)
        _out, err = other.communicate(timeout=20)
    assert other.returncode == 0 and "Traceback" not in err


def test_open_hands_the_printed_url_to_the_browser(daemon: DaemonProcess, tmp_path: Path) -> None:
    """``--open`` gives the browser the URL it prints, secret included (``$BROWSER`` names the browser, as
    Python's ``webbrowser`` reads it: here a script that writes down what it was given)."""
    seen = tmp_path / "opened"
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {seen}\n')
    browser.chmod(0o700)
    other = _ui_of(daemon, "--open", BROWSER=str(browser))
    try:
        assert other.stdout is not None
        line = other.stdout.readline().strip()
        assert URL_LINE.match(line), line
        wait_for(lambda: seen.exists() and bool(seen.read_text()), 20, "the browser to be handed the URL")
        assert seen.read_text() == line.removeprefix("claw-sessiond ui: ")
    finally:
        other.send_signal(signal.SIGTERM)
        _out, err = other.communicate(timeout=20)
    assert other.returncode == 0 and "Traceback" not in err
