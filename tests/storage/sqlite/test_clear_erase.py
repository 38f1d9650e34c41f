"""Clear with erase in SQLite: the erased history's bytes leave ``sessions.db`` and its WAL, usage stays.

As for Delete (test_delete.py): ``secure_delete`` zeroes the freed pages, FTS5 'optimize' rewrites
the search index without the erased words, and the checkpoint after the commit empties the WAL.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from claw_sessiond_client import Message, SessionClient, ToolCall
from tests.helpers.cli import claw
from tests.helpers.daemon import DaemonProcess
from tests.helpers.figures import record
from tests.helpers.sqlite_file import file_bytes

pytestmark = pytest.mark.processes  # starts daemons or CLI processes: the full tier (tests/helpers/tiers.py)


def test_an_erasing_clear_takes_the_history_out_of_the_files_and_keeps_usage(
    daemon: DaemonProcess, client: SessionClient, workspace: Path
) -> None:
    marker = f"SECRET-{uuid.uuid4().hex}"
    call = ToolCall("c1", "bash", json.dumps({"cmd": f"echo {marker}"}))
    client.append("victim", [Message.user(f"my key is {marker}"), Message.assistant(marker, [call])])
    client.append("victim", Message.tool("c1", f"{marker}\n" * 100))  # long enough for an overflow page
    client.edit_tail("victim", remove_last=1, replacements=[Message.tool("c1", f"again {marker}")])
    client.record_usage("victim", input_tokens=120, output_tokens=30, cost_micros=5, currency="USD", model="m")
    client.append("keep", Message.user(f"unrelated, kept {uuid.uuid4().hex}"))
    assert marker.encode() in file_bytes(workspace)

    done = client.clear("victim", erase=True)
    assert (done.events_erased, done.erasure_pending, done.replayed) == (5, False, False)
    assert marker.encode() not in file_bytes(workspace), "the erased text is still in sessions.db or its WAL"
    assert b"unrelated, kept" in file_bytes(workspace), "control: kept content must be findable"
    loaded = client.load("victim")
    assert loaded.messages == [] and loaded.session.last_position == done.position == 6
    assert (loaded.session.usage.input_tokens, loaded.session.usage.cost_micros) == (120, 5)
    assert client.usage("victim").by_model[0].usage.output_tokens == 30
    assert client.search(marker, include_cleared=True).hits == []
    # A retry replays; the session goes on at the next position.
    again = client.clear("victim", erase=True, request_id="retry-me")
    assert not again.replayed and again.events_erased == 1  # the clear before it
    assert client.clear("victim", erase=True, request_id="retry-me").replayed
    assert client.append("victim", Message.user("fresh start")).first_position == 8
    assert daemon.terminate() == 0
    assert marker.encode() not in file_bytes(workspace)
    record("erase", canary_absent_after_erasing_clear=1)


def test_the_cli_clears_with_erase(daemon: DaemonProcess, client: SessionClient, workspace: Path) -> None:
    marker = f"CLI-SECRET-{uuid.uuid4().hex}"
    client.append("s", [Message.user(marker), Message.user("two")])
    client.record_usage("s", input_tokens=9)
    r = claw("clear", "s", "--erase", "--socket", str(daemon.socket_path), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["messages_cleared"], out["events_erased"], out["position"]) == (2, 2, 3)
    assert "erasure_pending" not in out
    assert marker.encode() not in file_bytes(workspace)
    assert client.load("s").session.usage.input_tokens == 9
    r = claw("clear", "s", "--erase", "--socket", str(daemon.socket_path))
    assert r.returncode == 0, r.stderr
    assert "erased" in r.stdout
