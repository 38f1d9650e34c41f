"""The proto as the contract: buf's lint, the breaking-change check against the last release,
and the vendored google/rpc protos that any code generator needs beside it.

buf comes from npm (``scripts/buf``, installed by ``scripts/setup-tests``, which the README's
test command runs). Without it the buf tests skip, and with ``CLAW_FULL=1`` a skip fails the run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTOS = ROOT / "protos"
OURS = "claw/sessiond/v1/sessiond.proto"
BUF = ROOT / "scripts" / "buf" / "node_modules" / ".bin" / "buf"
#: The commit of release 0.1.0 (CHANGELOG.md): the proto only grows from there.
RELEASE_0_1_0 = "2b7257f"


def _buf(*args: str) -> subprocess.CompletedProcess[str]:
    if not BUF.exists():
        pytest.skip("buf is not installed: run scripts/setup-tests")
    return subprocess.run([str(BUF), *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_buf_lint_passes_with_every_element_commented() -> None:
    out = _buf("lint", "protos")
    assert out.returncode == 0, out.stdout + out.stderr


def test_buf_lint_finds_an_uncommented_field(tmp_path: Path) -> None:
    """The lint is real: the same configuration refuses a field without its comment."""
    copy = tmp_path / "protos"
    subprocess.run(["cp", "-r", str(PROTOS), str(copy)], check=True)
    proto = copy / OURS
    text = proto.read_text()
    proto.write_text(text.replace("message GetStatsRequest {}", "message GetStatsRequest {\n  int64 x = 1;\n}"))
    out = _buf("lint", str(copy))
    assert out.returncode != 0 and 'Field "x"' in out.stdout


def _released(tmp_path: Path) -> Path:
    shown = subprocess.run(
        ["git", "show", f"{RELEASE_0_1_0}:protos/{OURS}"], capture_output=True, text=True, cwd=ROOT, timeout=30
    )
    if shown.returncode != 0:
        pytest.fail(f"the release commit {RELEASE_0_1_0} is not in this clone (shallow?): {shown.stderr.strip()}")
    target = tmp_path / "released" / OURS
    target.parent.mkdir(parents=True)
    target.write_text(shown.stdout)
    return tmp_path / "released"


def test_no_breaking_change_since_the_last_release(tmp_path: Path) -> None:
    out = _buf("breaking", "protos", "--against", str(_released(tmp_path)))
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_breaking_check_catches_a_renumbered_field(tmp_path: Path) -> None:
    released = _released(tmp_path)
    copy = tmp_path / "protos"
    subprocess.run(["cp", "-r", str(PROTOS), str(copy)], check=True)
    proto = copy / OURS
    proto.write_text(proto.read_text().replace("  string trace_id = 9;\n", "  string trace_id = 99;\n", 1))
    out = _buf("breaking", str(copy), "--against", str(released))
    assert out.returncode != 0 and "trace_id" in out.stdout


def test_the_vendored_google_rpc_protos_are_the_published_ones() -> None:
    """protos/google/rpc/*.proto are unchanged copies of googleapis' files (shipped in googleapis-common-protos)."""
    import google.rpc

    published = Path(google.rpc.__path__[0])
    for name in ("status.proto", "error_details.proto", "code.proto"):
        assert (PROTOS / "google" / "rpc" / name).read_bytes() == (published / name).read_bytes(), name


def test_any_codegen_gets_every_type_from_protos_alone(tmp_path: Path) -> None:
    """protoc with only protos/ (and protobuf's own well-known types) compiles the contract and the error types."""
    from grpc_tools import protoc

    well_known = Path(protoc.__file__).parent / "_proto"
    out = tmp_path / "out"
    out.mkdir()
    args = [
        "protoc",
        f"-I{PROTOS}",
        f"-I{well_known}",
        f"--descriptor_set_out={out / 'set.bin'}",
        OURS,
        "google/rpc/status.proto",
        "google/rpc/error_details.proto",
        "google/rpc/code.proto",
    ]
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from grpc_tools import protoc; sys.exit(protoc.main(sys.argv[1:]))", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "set.bin").stat().st_size > 0


def test_the_proto_names_a_package_for_each_customary_language() -> None:
    text = (PROTOS / OURS).read_text()
    for option in ("go_package", "java_package", "csharp_namespace", "php_namespace", "ruby_package"):
        assert f"option {option} = " in text, option
