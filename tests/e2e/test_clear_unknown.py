"""Clear of a session that is not stored does the same from every client: it creates it, empty.

The rule (docs/PROTOCOL.md) is the daemon's: Clear, like Load and Append, stores the session if it
is not stored yet. The CLI and the Python client are checked against one daemon, side by side.
"""

from __future__ import annotations

import json

import pytest

from claw_sessiond_client import Message, SessionClient
from tests.helpers.cli import claw
from tests.helpers.daemon import DaemonProcess


@pytest.mark.smoke
def test_clear_of_an_unknown_id_creates_it_empty_from_the_cli_and_the_client(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    ws = str(module_daemon.workspace)
    by_client, by_cli, by_cli_json = f"{sid}-client", f"{sid}-cli", f"{sid}-json"
    cleared = module_client.clear(by_client)
    assert cleared.position > 0

    text = claw("clear", by_cli, "--workspace", ws)
    assert text.returncode == 0, text.stderr
    assert text.stdout == f"cleared {by_cli}: it was not stored; it is now, empty (claw-sessiond delete removes it)\n"
    doc = claw("clear", by_cli_json, "--workspace", ws, "--json")
    assert doc.returncode == 0, doc.stderr
    data = json.loads(doc.stdout)
    assert data["created"] is True and data["messages_cleared"] == 0 and data["position"] > 0

    listed = {s.id: s for s in module_client.list_sessions(sid)}
    assert set(listed) == {by_client, by_cli, by_cli_json}
    for name in listed:
        looked = module_client.load(name, no_repair=True)
        assert looked.session.stored and looked.messages == [] and listed[name].message_count == 0, name

    # a stored session is cleared as before, and clearing it again from either side agrees
    module_client.append(by_cli, Message.user("hello"))
    again = claw("clear", by_cli, "--workspace", ws)
    assert again.stdout.startswith(f"cleared {by_cli}: 1 message out of its history"), again.stdout
    assert module_client.load(by_cli, no_repair=True).messages == []
