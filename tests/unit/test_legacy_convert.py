"""Conversion of the seed harnesses' JSON session files (``legacy.convert``), without a daemon.

Real fixture files (tests/fixtures/legacy): the Go harness's snake_case and default field names,
the Python port, broken files refused with a reason, and the time formats.
"""

from __future__ import annotations

import json

import pytest

from claw_sessiond import legacy
from claw_sessiond.export import parse_session
from tests.helpers.data import LEGACY_FILES

NOW = "2026-12-01T00:00:00.000000Z"


def convert(name: str) -> legacy.LegacySession:
    path = LEGACY_FILES / name
    return legacy.convert(path.read_bytes(), fallback_id=path.stem, fallback_time=NOW)


def test_go_snake_case_file_converts_to_valid_export_lines() -> None:
    s = convert("go_snake_case.json")
    assert (s.kind, s.session_id, s.messages) == ("go", "terminal_default", 5)
    parsed = parse_session(s.lines)  # the daemon's own validator accepts it
    h = parsed.header
    assert (h.workdir, h.created_at, h.updated_at) == (
        "/home/dev/project",
        "2026-08-23T02:00:00.123456Z",
        "2026-08-23T02:05:30.500000Z",
    )
    types = [e.type for e in parsed.events]
    assert types == ["system_message", "user_message", "assistant_message", "tool_result", "assistant_message", "usage"]
    tool = json.loads(parsed.events[3].payload)
    assert tool == {"role": "tool", "content": "a.txt\nb.txt", "tool_call_id": "call-1"}
    call = json.loads(parsed.events[2].payload)["tool_calls"][0]
    assert call["name"] == "bash" and json.loads(call["arguments"]) == {"cmd": "ls -la", "timeout": 30}
    usage = json.loads(parsed.events[-1].payload)
    assert (usage["input_tokens"], usage["output_tokens"]) == (280, 24)
    assert len({e.trace_id for e in parsed.events}) == 1 and parsed.events[0].trace_id.startswith("legacy-")
    assert convert("go_snake_case.json").lines == s.lines  # deterministic


def test_go_default_field_names_and_python_port() -> None:
    s = convert("go_default_names.json")
    assert (s.kind, s.session_id, s.messages) == ("go", "go-crashed", 3)
    parsed = parse_session(s.lines)
    assert parsed.header.updated_at == "2026-08-20T08:01:00.000000Z"
    calls = json.loads(parsed.events[1].payload)["tool_calls"]
    assert [c["id"] for c in calls] == ["call-1", "call-2"]
    assert json.loads(calls[1]["arguments"]) == {"path": "b.txt", "content": "y"}
    p = convert("0f3c2a9e8b7d4c1a.json")
    assert (p.kind, p.session_id, p.messages) == ("python-port", "0f3c2a9e8b7d4c1a", 2)
    parsed = parse_session(p.lines)
    assert parsed.header.created_at == parsed.header.updated_at == NOW
    assert [json.loads(e.payload).get("content") for e in parsed.events[:2]] == [
        "summarise the repo",
        "now list the tests",
    ]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("broken_truncated.json", "not valid JSON"),
        ("broken_empty.json", "empty file"),
        ("broken_wrong_types.json", "must be a string"),
        ("broken_path_id.json", "unusable session id"),
        ("broken_not_object.json", "must be a JSON object"),
    ],
)
def test_broken_files_are_refused_with_a_reason(name: str, why: str) -> None:
    with pytest.raises(legacy.LegacyError, match=why):
        convert(name)


def test_times() -> None:
    assert legacy.normalise_time("2026-01-02T03:04:05Z", "t") == "2026-01-02T03:04:05.000000Z"
    assert legacy.normalise_time("0001-01-01T00:00:00Z", "t") is None
    with pytest.raises(legacy.LegacyError):
        legacy.normalise_time("2026-01-02 03:04", "t")
    with pytest.raises(legacy.LegacyError):
        legacy.normalise_time(12, "t")
