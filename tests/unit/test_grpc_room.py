"""Only the RPC room (``claw_sessiond/rpc/``) imports grpc: the rule the layout rests on, checked on the source."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "daemon" / "claw_sessiond"
GRPC_ROOTS = ("grpc", "grpc_status", "grpc_health", "grpc_reflection", "google.rpc")


def _is_grpc(module: str) -> bool:
    return any(module == root or module.startswith(root + ".") for root in GRPC_ROOTS)


def _grpc_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [f"{path.name}:{node.lineno} {name}" for name in names if _is_grpc(name)]
    return found


def test_grpc_is_imported_only_under_rpc() -> None:
    outside = [p for p in PACKAGE.rglob("*.py") if "rpc" not in p.relative_to(PACKAGE).parts]
    assert len(outside) > 10, "the package was not found"
    offenders = [hit for p in outside for hit in _grpc_imports(p)]
    assert offenders == []


def test_the_rpc_room_does_import_grpc() -> None:
    # Guards the check above against looking at the wrong names: the edge must show up.
    assert any(" grpc" in hit for hit in _grpc_imports(PACKAGE / "rpc" / "edge.py"))
