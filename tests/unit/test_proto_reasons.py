"""The proto names every reason the daemon sends, and every run-end cause, and nothing else.

A client written from the proto alone must know each reason it can receive
(its code, and whether the same request may be sent again) and each
``cause`` of UNKNOWN_RUN. The lists in the proto's header comments (REASONS,
RUN ENDS) are compared with the code: ``errors.SENT_REASONS`` (every
``Reason`` but the client-only ones) and ``RunEnd``. The daemon's sources are
read too: every ``Reason.X`` or ``reason="X"`` they name is a sent reason,
and every ``SomeError(..., reason=Reason.X)`` they raise has the row (X, the
code the error edge gives that class). docs/api.md's error table and
docs/PROTOCOL.md's cause table must agree with them as well. Adding a reason
or a cause to the code without the proto fails here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from claw_sessiond import errors
from claw_sessiond.errors import CLIENT_ONLY_REASONS, SENT_REASONS, Reason, SessiondError
from claw_sessiond.rpc.edge import status_for
from claw_sessiond.storage.base import RunEnd

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "protos" / "claw" / "sessiond" / "v1" / "sessiond.proto"
DAEMON = ROOT / "daemon" / "claw_sessiond"
#: The command-line client lives in the daemon's package but raises client-side reasons (UNTRUSTED_PEER).
CLIENT_SIDE = DAEMON / "cli"
_ROW = re.compile(r"^//   ([A-Z][A-Z_]+) +([A-Z][A-Z_]+) +\S")
_CAUSE = re.compile(r"^//   ([a-z][a-z_]+) +\S")


def _block(text: str, title: str) -> Iterator[str]:
    """The comment lines of the header block that starts with ``// TITLE:``, up to its first blank comment."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"// {title}:"))
    for line in lines[start + 1 :]:
        if line.strip() in ("//", "") or not line.startswith("//"):
            return
        yield line


def proto_reasons(text: str) -> set[tuple[str, str]]:
    """(reason, code) of every row of the proto's REASONS table."""
    rows = {(m[1], m[2]) for line in _block(text, "REASONS") if (m := _ROW.match(line))}
    return {(r, c) for r, c in rows if r != "REASON"}  # the heading row


def proto_causes(text: str) -> set[str]:
    """Every cause of the proto's RUN ENDS list."""
    return {m[1] for line in _block(text, "RUN ENDS") if (m := _CAUSE.match(line))}


def differences(text: str) -> tuple[set[str], set[str]]:
    """(reasons the daemon sends that the proto does not name, reasons the proto names that no code sends)."""
    named = {r for r, _c in proto_reasons(text)}
    sent = {str(r) for r in SENT_REASONS}
    return sent - named, named - sent


def _daemon_sources() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(DAEMON.rglob("*.py")):
        if CLIENT_SIDE not in path.parents:
            yield path, ast.parse(path.read_text(), str(path))


def _reason_of(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Reason":
        return node.attr
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
        return _reason_of(node.args[0])
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def test_every_reason_the_daemon_sends_is_in_the_proto_and_nothing_else() -> None:
    missing, extra = differences(PROTO.read_text())
    assert not missing, f"reasons the daemon sends that sessiond.proto's REASONS table does not name: {sorted(missing)}"
    assert not extra, f"reasons in sessiond.proto's REASONS table that the code does not have: {sorted(extra)}"


def test_the_check_fails_for_a_reason_left_out_or_made_up() -> None:
    text = PROTO.read_text()
    row = next(line for line in text.splitlines() if line.startswith("//   WATCH_LAGGED "))
    assert differences(text.replace(row + "\n", "")) == ({"WATCH_LAGGED"}, set())
    made_up = text.replace(row, row + "\n//   NO_SUCH_REASON              ABORTED              final")
    assert differences(made_up) == (set(), {"NO_SUCH_REASON"})


def test_the_proto_codes_are_grpc_codes_and_each_class_s_reason_has_its_row() -> None:
    rows = proto_reasons(PROTO.read_text())
    assert {c for _r, c in rows} <= {c.name for c in grpc.StatusCode}
    classes = {
        name: cls
        for name, cls in vars(errors).items()
        if isinstance(cls, type) and issubclass(cls, SessiondError) and cls is not SessiondError
    }
    for cls in classes.values():
        pair = (str(cls.default_reason), status_for(cls("x")).name)
        assert pair in rows, f"{cls.__name__}: no row {pair} in the proto's REASONS table"
    # Every raise site: the reason it names, with the code the error edge gives its class.
    seen = 0
    for path, tree in _daemon_sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in classes:
                reason = next((_reason_of(k.value) for k in node.keywords if k.arg == "reason"), None)
                cls = classes[node.func.id]
                pair = (reason or str(cls.default_reason), status_for(cls("x")).name)
                assert pair in rows, f"{path.relative_to(ROOT)}:{node.lineno}: {pair} is not a row of REASONS"
                seen += 1
    assert seen > 50  # the walk found the raise sites


def test_the_daemon_names_no_reason_outside_the_sent_ones() -> None:
    for path, tree in _daemon_sources():
        if path == DAEMON / "errors.py":  # where the client-only ones are set apart
            continue
        for node in ast.walk(tree):
            name = None
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Reason":
                name = node.attr
            elif isinstance(node, ast.keyword) and node.arg == "reason":
                name = _reason_of(node.value)
            if name is not None and name.isupper():
                assert name in {str(r) for r in SENT_REASONS}, f"{path.relative_to(ROOT)}: sends {name}"
    assert set(Reason) > CLIENT_ONLY_REASONS


def test_every_run_end_cause_is_in_the_proto_and_in_protocol_md() -> None:
    causes = {str(c) for c in RunEnd}
    assert proto_causes(PROTO.read_text()) == causes
    table = (ROOT / "docs" / "PROTOCOL.md").read_text()
    assert set(re.findall(r"^\| `([a-z_]+)` \|", table, re.M)) >= causes
    attach = PROTO.read_text().split("message AttachRequest")[0].rsplit("\n\n", 1)[1]
    assert all(c in attach for c in causes), "AttachRequest's comment lists every cause"


@pytest.mark.parametrize("reason", sorted(str(r) for r in SENT_REASONS))
def test_docs_api_md_names_each_sent_reason_in_its_error_table(reason: str) -> None:
    table = (ROOT / "docs" / "api.md").read_text()
    assert re.search(rf"^\|.*\| {reason}( |\b).*\|", table, re.M), f"docs/api.md's error table has no row for {reason}"
