"""``claw-sessiond copy``: a whole store SQLite → PostgreSQL → SQLite, verified, on a real server.

Sessions are written by a real daemon through the real client (entries with items, client ids,
metadata and usage, state, labels, tool policies, a repaired call, an edited tail), copied with the
real command, and the final workspace's daemon must export the same lines and hold the same shared
scope states as the first. A target that holds sessions or scope states is refused (nothing written)
unless ``--replace``; a wrong password is an
error naming the server, never the password.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from claw_sessiond_client import EntryUsage, Message, SessionNotFoundError, StateDelta, ToolCall, ToolPolicy
from tests.helpers.cli import claw
from tests.helpers.postgres import PASSWORD
from tests.helpers.postgres import SHARED as POSTGRES

pytestmark = pytest.mark.backend_neutral("picks its SQLite and PostgreSQL stores itself")


def _url(tmp_path: Path, name: str = "db") -> str:
    return POSTGRES.database_for(str(tmp_path / name))


def _exports(daemon: Any) -> dict[str, list[str]]:
    with daemon.client() as c:
        return {s.id: list(c.export(s.id)) for s in c.list_sessions()}


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


def _populate(client: Any) -> None:
    item = json.dumps({"type": "message", "id": "msg_1", "content": [{"text": "héllo"}]}).encode()
    client.create_session(
        "rich",
        state={"step": 1, "plan": ["a", "b"]},
        labels={"team": "infra", "ticket": "T-17"},
        tool_policy=ToolPolicy(repair="synthesize", allow_orphan_results=True),
    )
    client.append(
        "rich",
        [
            Message.system("be brief"),
            Message.user("hi", client_id="u-1", metadata='{"k": 1}', format="openai.responses", item=item),
            Message.assistant(
                "calling",
                [ToolCall("call_1", "bash", '{"cmd": "ls"}')],
                usage=EntryUsage(12, 3, cost_micros=50, currency="USD"),
            ),
        ],
    )
    client.update_session(
        "rich",
        state_deltas=[
            StateDelta({"step": 2, "plan": None}),
            StateDelta({"units": "metric", "n": 1}, scope="app:weather"),
            StateDelta({"lang": "fr"}, scope="user:weather/alice"),
        ],
        set_labels={"stage": "two"},
    )
    client.load("rich")  # repairs call_1 (no live run): a synthetic "interrupted" result
    client.append("rich", [Message.user("again"), Message.assistant("first answer")])
    client.edit_tail("rich", remove_last=1, replacements=[Message.assistant("second answer")])
    client.record_usage("rich", input_tokens=100, output_tokens=7)
    client.append(
        "dropper", Message.assistant("", [ToolCall("c9", "grep", "{}")]), tool_policy=ToolPolicy(repair="drop")
    )
    client.append("other", Message.other("adk.event", b"\x00\x01binary\xff"))
    for n in range(5):
        client.append(f"plain-{n}", [Message.user(f"q{n}"), Message.assistant(f"a{n}")])


#: The shared scopes ``_populate`` writes, and a scope it never writes.
SCOPES = ["app:weather", "user:weather/alice", "user:weather/bob", "app:never"]


def test_sqlite_to_postgres_and_back_gives_the_same_exports(tmp_path: Path, spawn_daemon: Any) -> None:
    first, last = tmp_path / "first", tmp_path / "last"
    first.mkdir()
    last.mkdir()
    daemon = spawn_daemon(workspace_path=first)
    with daemon.client() as c:
        _populate(c)
    before = _exports(daemon)
    assert len(before) == 8 and sum(len(v) for v in before.values()) > 20
    with daemon.client() as c:
        c.update_session("plain-3", state_deltas=[StateDelta({"n": 2}, scope="app:weather")])
        c.append("plain-4", Message.user("bob"), state_deltas=[StateDelta({"lang": "en"}, scope="user:weather/bob")])
        before = _exports(daemon)
        scopes = c.scope_states(SCOPES)
    assert scopes["app:weather"] == {"units": "metric", "n": 2} and scopes["app:never"] == {}, scopes
    assert daemon.terminate() == 0  # copy takes the workspace lock: the daemon must be stopped
    url = _url(tmp_path)

    there = claw("copy", "--from", str(first), "--to", url, "--json")
    assert there.returncode == 0, there.stderr
    doc = json.loads(there.stdout)
    events = sum(len(v) - 1 for v in before.values())
    assert doc["sessions"] == 8 and doc["events"] == events and doc["verified"] is True, doc
    assert doc["scopes"] == 3 and doc["target_scopes"] == 3 and doc["replaced_scopes"] == 0, doc
    assert "copy: 8/8 sessions" in there.stderr, there.stderr

    # The sessions are served from PostgreSQL, as they were.
    on_pg = spawn_daemon("--database", url, workspace_path=_folder(tmp_path / "pg-ws"))
    assert _exports(on_pg) == before
    with on_pg.client() as c:
        assert c.scope_states(SCOPES) == scopes
    assert on_pg.terminate() == 0

    back = claw("copy", "--from", url, "--to", str(last))
    assert back.returncode == 0, back.stderr
    assert "copied 8 sessions" in back.stdout and "and 3 scope states" in back.stdout, back.stdout
    assert "verified" in back.stdout, back.stdout
    again = spawn_daemon(workspace_path=last)
    assert _exports(again) == before
    with again.client() as c:
        rich = c.load("rich")
        assert [m.content for m in rich.messages][-2:] == ["again", "second answer"]
        assert rich.session.labels == {"team": "infra", "ticket": "T-17", "stage": "two"}
        assert c.scope_states(SCOPES) == scopes
        # the copied scope is the same shared state: a later delta merges into it
        c.update_session("rich", state_deltas=[StateDelta({"n": 3}, scope="app:weather")])
        assert c.scope_states(["app:weather"]) == {"app:weather": {"units": "metric", "n": 3}}


def test_a_target_holding_sessions_is_refused_unless_replace(tmp_path: Path, spawn_daemon: Any) -> None:
    source, url = tmp_path / "src", _url(tmp_path)
    source.mkdir()
    daemon = spawn_daemon(workspace_path=source)
    with daemon.client() as c:
        c.append("shared", [Message.user("from sqlite")])
        c.append("only-sqlite", [Message.user("x")], state_deltas=[StateDelta({"v": "sqlite"}, scope="app:both")])
    assert daemon.terminate() == 0
    # A target holding only scope states is not empty either.
    only_scopes = _url(tmp_path, "scopes-only")
    on_pg = spawn_daemon("--database", only_scopes, workspace_path=_folder(tmp_path / "pg-scopes"))
    with on_pg.client() as c:
        c.append("gone", [Message.user("x")], state_deltas=[StateDelta({"v": 1}, scope="app:pg")])
        c.delete("gone")
    assert on_pg.terminate() == 0
    refused = claw("copy", "--from", str(source), "--to", only_scopes)
    assert refused.returncode == 1 and "0 sessions and 1 scope state;" in refused.stderr, refused.stderr

    on_pg = spawn_daemon("--database", url, workspace_path=_folder(tmp_path / "pg-ws"))
    with on_pg.client() as c:
        c.append("shared", [Message.user("from postgres"), Message.assistant("older")])
        c.append("only-pg", [Message.user("kept")])
        c.update_session(
            "only-pg",
            state_deltas=[StateDelta({"v": "pg"}, scope="app:both"), StateDelta({"v": "pg"}, scope="app:only-pg")],
        )
        before = {sid: list(c.export(sid)) for sid in ("shared", "only-pg")}

    refused = claw("copy", "--from", str(source), "--to", url)
    assert refused.returncode == 1
    assert "holds 2 sessions and 2 scope states" in refused.stderr and "--replace" in refused.stderr, refused.stderr
    with on_pg.client() as c:
        assert {sid: list(c.export(sid)) for sid in before} == before, "a refused copy writes nothing"
        assert c.scope_states(["app:both"]) == {"app:both": {"v": "pg"}}
        with pytest.raises(SessionNotFoundError):
            list(c.export("only-sqlite"))

    replaced = claw("copy", "--from", str(source), "--to", url, "--replace", "--json")
    assert replaced.returncode == 0, replaced.stderr
    doc = json.loads(replaced.stdout)
    assert doc["replaced"] == ["shared"] and doc["target_sessions"] == 3, doc
    assert doc["scopes"] == 1 and doc["replaced_scopes"] == 1 and doc["target_scopes"] == 2, doc
    with on_pg.client() as c:
        assert [m.content for m in c.load("shared").messages] == ["from sqlite"]
        assert [m.content for m in c.load("only-pg").messages] == ["kept"]
        assert c.scope_states(["app:both", "app:only-pg"]) == {"app:both": {"v": "sqlite"}, "app:only-pg": {"v": "pg"}}


def test_a_wrong_password_names_the_server_never_the_password(tmp_path: Path, workspace: Path, daemon: Any) -> None:
    with daemon.client() as c:
        c.append("s", Message.user("x"))
    assert daemon.terminate() == 0
    name = _url(tmp_path).rsplit("/", 1)[1].split("?")[0]
    wrong = "wrong-Secret-42q"
    url = POSTGRES.server().tcp_url(name, password=wrong)
    done = claw("copy", "--from", str(workspace), "--to", url, "--json")
    assert done.returncode == 1
    out = done.stdout + done.stderr
    assert f"127.0.0.1:{POSTGRES.server().port}" in out and "password authentication failed" in out, out
    assert wrong not in out and PASSWORD not in out, out
    # The right password (in the URL: printed as ***) works.
    right = claw("copy", "--from", str(workspace), "--to", POSTGRES.server().tcp_url(name))
    assert right.returncode == 0, right.stderr
    assert PASSWORD not in right.stdout + right.stderr and ":***@" in right.stdout, right.stdout


def test_the_workspace_daemon_must_be_stopped_and_bad_places_are_usage_errors(
    tmp_path: Path, workspace: Path, daemon: Any
) -> None:
    with daemon.client() as c:
        c.append("s", Message.user("x"))
    busy = claw("copy", "--from", str(workspace), "--to", str(tmp_path / "copy.db"))
    assert busy.returncode == 1 and "stop the daemon" in busy.stderr, busy.stderr
    assert not (tmp_path / "copy.db").exists()
    assert claw("copy", "--from", str(tmp_path / "missing"), "--to", str(tmp_path / "x.db")).returncode == 2
    assert claw("copy", "--from", "mysql://u:pw@h/d", "--to", str(tmp_path / "x.db")).returncode == 2
