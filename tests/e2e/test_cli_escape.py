"""Stored content never drives the terminal: the real CLI against a real daemon holding hostile text.

The daemon stores whatever agents write, so transcripts can hold OSC 52
(clipboard write), OSC 0 (window title), CSI (hidden text, screen clear),
BEL, 8-bit C1 CSI (U+009B), DEL, carriage returns and bidi overrides; ids
and names can hold rich markup. Every human-readable output must show them
as visible escapes; ``--json`` must parse back to exactly what is stored.
Session ids refuse invisible format characters (Unicode Cf).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claw_sessiond_client import InvalidRequestError, Message, SessionClient, ToolCall
from tests.helpers.cli import after_command, in_workspace, on_pty
from tests.helpers.daemon import DaemonProcess

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # would put "rm -rf ~" in the clipboard
TITLE = "\x1b]0;pwned\x07"
HIDDEN = "\x1b[8mhidden\x1b[0m"
C1_CSI = "\x9b2J"
BIDI = "\u202eevil\u202c"
CONTENT = (
    f"clip{OSC52} title{TITLE} {HIDDEN} {C1_CSI} bell\x07 del\x7f cr\roverwrite {BIDI} zw\u200bsp "
    "[bold red]markup[/] [link=file:///etc/passwd]x[/link] :smile:\nsecond line\tafter tab"
)
SID = "ev[bold]il-id"  # markup in an id must print as typed
#: What must never reach stdout raw (stdout decoded as UTF-8).
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def cli(workspace: Path, *args: str, timeout_s: float = 60) -> subprocess.CompletedProcess[bytes]:
    # No folding: the fragments below are checked whole.
    return in_workspace(workspace, *args, timeout_s=timeout_s, text=False, env={"COLUMNS": "1000"})


def assert_terminal_safe(data: bytes, what: str) -> str:
    text = data.decode("utf-8")
    bad = FORBIDDEN.findall(text)
    assert not bad, f"{what} printed raw control/format characters {bad!r}:\n{text!r}"
    return text


def populate(client: SessionClient) -> None:
    client.append(
        SID,
        [
            Message.user(CONTENT),
            Message.assistant(
                f"calling {TITLE}", tool_calls=[ToolCall("call\x9b1", "bash", json.dumps({"cmd": f"echo {OSC52}"}))]
            ),
        ],
        workdir="/home/me/project",
    )
    client.append(SID, Message.tool("call\x9b1", f"result {HIDDEN}{C1_CSI}", name="bash"))
    client.record_event(SID, "error", {"message": f"tool said {OSC52}{BIDI}"})
    client.record_usage(SID, input_tokens=5, output_tokens=7, model=f"gpt{TITLE}")


@pytest.fixture
def hostile(spawn_daemon: Any) -> DaemonProcess:
    d: DaemonProcess = spawn_daemon()
    with d.client() as c:
        populate(c)
    return d


@pytest.mark.smoke
def test_human_output_escapes_and_json_is_exact(hostile: DaemonProcess) -> None:
    ws = hostile.workspace
    for args in (("ls",), ("show", SID), ("show", SID, "--repair"), ("stats",), ("doctor",)):
        proc = cli(ws, *args)
        assert proc.returncode == 0, proc.stderr
        out = assert_terminal_safe(proc.stdout, " ".join(args))
        assert_terminal_safe(proc.stderr, " ".join(args) + " (stderr)")
        if args[0] == "ls":
            assert SID in out  # markup printed as typed, not swallowed as a style
        if args[0] == "show":
            assert f"session {SID}" in out
            # The visible escapes, markup and emoji codes as typed, the layout newline kept.
            for shown in (
                "clip\\x1b]52;c;cm0gLXJmIH4K\\x07",
                "\\x1b[8mhidden\\x1b[0m",
                "\\x9b2J",
                "bell\\x07",
                "del\\x7f",
                "cr\\roverwrite",
                "\\u202eevil\\u202c",
                "zw\\u200bsp",
                "[bold red]markup[/]",
                "[link=file:///etc/passwd]x[/link]",
                ":smile:",
                "\n  second line",  # the layout newline kept (rich expands the tab to spaces)
                "after tab",
                "[call\\x9b1]",
                "← call\\x9b1 (bash)",
                "result \\x1b[8mhidden",
            ):
                assert shown in out, (shown, out)

    # --json: the bytes are terminal-safe too, and the parse is exactly what is stored.
    show = cli(ws, "show", SID, "--json")
    assert show.returncode == 0, show.stderr
    data = json.loads(assert_terminal_safe(show.stdout, "show --json"))
    assert data["session"]["id"] == SID
    assert data["messages"][0]["content"] == CONTENT
    assert data["messages"][1]["tool_calls"][0]["id"] == "call\x9b1"
    assert data["messages"][1]["tool_calls"][0]["arguments"] == {"cmd": f"echo {OSC52}"}
    assert data["messages"][2]["content"] == f"result {HIDDEN}{C1_CSI}"
    assert data["audit_events"][0]["payload"] == {"message": f"tool said {OSC52}{BIDI}"}
    ls = cli(ws, "ls", "--json")
    assert [s["id"] for s in json.loads(assert_terminal_safe(ls.stdout, "ls --json"))["sessions"]] == [SID]
    with hostile.client() as c:
        assert [m.content for m in c.load(SID, "/home/me/project").messages][:1] == [CONTENT]


def test_error_messages_and_summaries_echoing_input_are_escaped(hostile: DaemonProcess, tmp_path: Path) -> None:
    ws = hostile.workspace
    evil = f"x{TITLE}{C1_CSI}{BIDI}"
    for args in (
        ("ls", evil),  # argparse: "unrecognized arguments: ..."
        ("show", evil),
        ("delete", evil),
        ("export", evil),
        ("import", str(tmp_path / f"{evil}.jsonl")),
        ("migrate-legacy", str(tmp_path / evil)),
    ):
        proc = cli(ws, *args)
        assert proc.returncode != 0, args
        assert_terminal_safe(proc.stdout, f"{args[0]} stdout")
        err = assert_terminal_safe(proc.stderr, f"{args[0]} stderr")
        if args[0] not in ("ls", "show"):  # sent as a ListSessions filter, whose refusal names the field only
            assert "\\x1b]0;pwned\\x07" in err, err  # the input is named, visibly

    # migrate-legacy reports a file whose name holds escapes; import reports a session from a hostile file.
    folder = tmp_path / "legacy"
    folder.mkdir()
    (folder / f"{evil}.json").write_text(json.dumps({"session_id": "ok-id", "messages": [CONTENT]}))
    (folder / f"bad{TITLE}.json").write_text("{not json")
    for extra in ((), ("--json",)):
        proc = cli(ws, "migrate-legacy", str(folder), *extra)
        assert proc.returncode == 1, proc.stderr  # the broken file
        out = assert_terminal_safe(proc.stdout, "migrate-legacy")
        assert_terminal_safe(proc.stderr, "migrate-legacy stderr")
        if extra:
            assert {json.loads(line)["file"] for line in out.splitlines()} == {f"{evil}.json", f"bad{TITLE}.json"}
        else:
            assert "bad\\x1b]0;pwned\\x07.json" in out
    export = cli(ws, "export", "ok-id")
    assert export.returncode == 0
    target = tmp_path / f"dump{TITLE}.jsonl"
    target.write_bytes(export.stdout)
    for extra in ((), ("--json",)):
        proc = cli(ws, "import", str(target), *extra)
        assert proc.returncode == 1  # ok-id exists
        assert_terminal_safe(proc.stdout, "import")
        assert_terminal_safe(proc.stderr, "import stderr")


def test_on_a_real_terminal_only_the_cli_s_own_styles_are_escape_sequences(hostile: DaemonProcess) -> None:
    ws = hostile.workspace
    for args in (("show", SID), ("ls",), ("export", SID)):
        run = on_pty(
            *after_command("--workspace", ws, args),
            cwd=ws,
            # show pages on a terminal: cat keeps this test about escapes (tests/e2e/test_cli_paging.py runs less).
            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "200", "PAGER": "cat"},
            stdin="devnull",
            stderr="devnull",
        )
        assert run.code == 0
        raw = run.output.decode("utf-8")
        # rich's own styling is SGR (ESC [ ... m) and nothing else; remove it, then nothing may remain.
        plain = re.sub("\x1b\\[[0-9;]*m", "", raw).replace("\r\n", "\n")
        bad = FORBIDDEN.findall(plain)
        assert not bad, f"{args} on a terminal: {bad!r}\n{plain!r}"
        assert "\x1b]52" not in raw and "\x1b]0;" not in raw and "\x1b[8m" not in raw
        if args[0] == "export":  # JSON escapes on a terminal: the same value
            lines = [json.loads(line) for line in plain.splitlines() if line.strip()]
            assert lines[1]["payload"]["content"] == CONTENT


@pytest.mark.parametrize("sid", ["a\u202eb", "a\u200bb", "\ufeffa", "a\u2066b\u2069", "a\u00adb"])
def test_session_ids_refuse_invisible_format_characters(
    module_client: SessionClient, module_daemon: DaemonProcess, sid: str
) -> None:
    client, daemon = module_client, module_daemon
    with pytest.raises(InvalidRequestError) as err:
        client.append(sid, Message.user("hi"))
    assert err.value.reason == "INVALID_SESSION_ID"
    assert "invisible format character" in err.value.message
    with pytest.raises(InvalidRequestError):
        client.load(sid, "/w")
    assert sid not in [s.id for s in client.list_sessions()]  # nothing written
    proc = cli(daemon.workspace, "delete", sid)
    assert proc.returncode == 1 and b"invisible format character" in proc.stderr
    assert_terminal_safe(proc.stderr, "delete stderr")


# ---------------------------------------------------------------- the helper itself (pure)

_any_text = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("\x00\x07\t\n\r\x1b\x7f\x85\x9b\u00ad\u200b\u200d\u202e\u2028\u2066\ufeff[]\\é日🙂")),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(_any_text, st.booleans())
def test_visible_leaves_nothing_a_terminal_obeys(text: str, keep_layout: bool) -> None:
    from claw_sessiond.cli.termsafe import visible

    shown = visible(text, keep_layout=keep_layout)
    allowed = "\n\t" if keep_layout else ""
    assert not [ch for ch in shown if ch not in allowed and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")]
    if text.isprintable():
        assert shown == text  # ordinary text is untouched


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(_any_text | st.integers() | st.none(), lambda kids: st.lists(kids) | st.dictionaries(_any_text, kids))
)
def test_json_text_parses_back_exactly_and_is_terminal_safe(value: Any) -> None:
    from claw_sessiond.cli.termsafe import json_text

    for indent in (None, 2):
        text = json_text(value, indent=indent)
        assert json.loads(text) == value
        assert not [ch for ch in text if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")]
