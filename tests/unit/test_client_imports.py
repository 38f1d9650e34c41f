"""The daemon uses only the client package's public names.

The daemon (``daemon/claw_sessiond``) shares the client's vocabulary: the error
tree, the result types, the ``.claw/`` paths, the endpoint file, the ``--tcp``
files. It takes each from a public module of ``claw_sessiond_client``, by a
name that module lists in ``__all__`` (or any name of a generated module, which
has none): never a private module (``_finds``, ``_tls``) or a private name, so
the client may change its insides without breaking the daemon, and what both
sides need is documented where a client's user reads it.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DAEMON = ROOT / "daemon" / "claw_sessiond"
CLIENT = "claw_sessiond_client"


def _public_names(module: str) -> set[str] | None:
    """The names ``module`` lists in ``__all__``; None when it lists none (a generated module: all public)."""
    listed = getattr(importlib.import_module(module), "__all__", None)
    return None if listed is None else set(listed)


def _is_module(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def private_uses(text: str) -> list[str]:
    """Each import in ``text`` of a private client module or name (line: what)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == CLIENT and any(p.startswith("_") for p in parts[1:]):
                    found.append(f"{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            parts = node.module.split(".")
            if parts[0] != CLIENT:
                continue
            if any(p.startswith("_") for p in parts[1:]):
                found.append(f"{node.lineno}: from {node.module} import ...")
                continue
            public = _public_names(node.module)
            for alias in node.names:
                name = alias.name
                if name.startswith("_") or (
                    public is not None and name not in public and not _is_module(f"{node.module}.{name}")
                ):
                    found.append(f"{node.lineno}: from {node.module} import {name} (not in its __all__)")
    return found


def test_daemon_modules_import_only_public_client_names() -> None:
    offenders = []
    for path in sorted(DAEMON.rglob("*.py")):
        for use in private_uses(path.read_text(encoding="utf-8")):
            offenders.append(f"{path.relative_to(ROOT)}:{use}")
    assert not offenders, "the daemon imports private names of the client (export them, or move the code):\n" + (
        "\n".join(offenders)
    )


def test_each_form_of_a_private_import_is_caught() -> None:
    caught = private_uses(
        "import claw_sessiond_client._finds\n"
        "from claw_sessiond_client._tls import SERVER_NAME\n"
        "from claw_sessiond_client import _liveness\n"
        "from claw_sessiond_client.paths import CLAW_DIR, hashlib\n"
        "from claw_sessiond_client import Message, errors\n"
        "from claw_sessiond_client.api.v1 import sessiond_pb2\n"
        "from claw_sessiond_client.api.v1.sessiond_pb2 import AppendRequest\n"
    )
    assert [c.split(":")[0] for c in caught] == ["1", "2", "3", "4"], caught
    assert "hashlib (not in its __all__)" in caught[-1]
