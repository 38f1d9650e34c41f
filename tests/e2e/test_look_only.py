"""A look-only Load (``no_repair``) needs no workdir: the daemon's rule, met through the Python client
and through grpcurl on the socket; a Load that may repair still needs one.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from claw_sessiond_client import Message, SessionClient, ToolCall
from tests.helpers.cli import grpcurl_path
from tests.helpers.daemon import DaemonProcess, run_python

STORED = "/home/me/project"


def grpcurl(daemon: DaemonProcess, body: dict[str, object]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            grpcurl_path(),
            "-plaintext",
            "-unix",
            "-d",
            json.dumps(body),
            str(daemon.socket_path),
            "claw.sessiond.v1.SessionService/Load",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.smoke
def test_a_look_only_load_needs_no_workdir(
    module_daemon: DaemonProcess, module_client: SessionClient, sid: str
) -> None:
    module_client.append(
        sid,
        [Message.user("hi"), Message.assistant(tool_calls=[ToolCall("c1", "bash", "{}")])],
        workdir=STORED,
    )
    looked = module_client.load(sid, no_repair=True)  # no workdir given: none is sent
    assert looked.session.workdir == STORED  # the stored one, not this process's folder
    assert [m.role for m in looked.messages] == ["user", "assistant"] and looked.repairs == []

    # from a folder that no longer exists: looking works, repairing needs a workdir
    code = (
        "import os, sys, tempfile\n"
        "from claw_sessiond_client import InvalidRequestError, SessionClient\n"
        "gone = tempfile.mkdtemp(); os.chdir(gone); os.rmdir(gone)\n"
        "with SessionClient(address=sys.argv[1], autostart=False) as c:\n"
        "    print(c.load(sys.argv[2], repair=False).session.workdir)\n"
        "    try:\n"
        "        c.load(sys.argv[2])\n"
        "    except InvalidRequestError as exc:\n"
        "        print(exc.reason)\n"
    )
    out = run_python(code, module_daemon.address, sid).split()
    assert out == [STORED, "INVALID_WORKDIR"]


def test_grpcurl_looks_without_a_workdir(module_daemon: DaemonProcess, module_client: SessionClient, sid: str) -> None:
    module_client.append(sid, Message.user("hi"), workdir=STORED)
    looked = grpcurl(module_daemon, {"session_id": sid, "no_repair": True})
    assert looked.returncode == 0, looked.stderr
    assert json.loads(looked.stdout)["session"]["workdir"] == STORED
    refused = grpcurl(module_daemon, {"session_id": sid})
    assert refused.returncode != 0
    assert "InvalidArgument" in refused.stderr and "workdir is required" in refused.stderr, refused.stderr
    assert module_client.load(sid, no_repair=True).session.workdir == STORED  # nothing written either way
