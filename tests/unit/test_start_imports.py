"""What a start-up imports: the CLI and the client package load only what the command or name needs.

Every test process, daemon and CLI run imports ``claw_sessiond_client``, and the suite runs the CLI
thousands of times, so an import at the top of a module is paid on every start. These guards check
*which* modules a fresh process holds (:mod:`tests.helpers.imports`), never how long it took:

- ``claw-sessiond --help`` imports every command's module (for its help line) and nothing that only
  running a command needs: no grpc, no protobuf, no asyncio, no storage code, no database driver;
- a command that talks to the daemon loads grpc but not the storage code (that is the read-only
  view's, when no daemon answers);
- ``import claw_sessiond_client`` loads the package alone; a public name loads its own module (an
  error class: no grpc; a client class: grpc).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import claw_sessiond_client
from tests.helpers.imports import imported_by, imported_by_cli, loaded_under

#: What only running a command may load: the RPC stack, the event loop, the storage code, the drivers.
RUNNING: tuple[str, ...] = (
    "grpc",
    "google.protobuf",
    "asyncio",
    "claw_sessiond.storage",
    "claw_sessiond.daemon",
    "sqlite3",
    "aiosqlite",
    "asyncpg",
    "claw_sessiond_client.sync",
    "claw_sessiond_client.aio",
)
#: The storage code and the database drivers (the daemon's, and the read-only view's).
STORAGE: tuple[str, ...] = ("claw_sessiond.storage", "sqlite3", "aiosqlite", "asyncpg")
INIT = Path(claw_sessiond_client.__file__)


def test_the_help_of_the_whole_cli_loads_no_rpc_no_event_loop_and_no_storage() -> None:
    modules = imported_by_cli("--help")
    assert "claw_sessiond.cli.backup" in modules  # every command's module was imported (its help line)
    assert loaded_under(modules, RUNNING) == []


def test_a_command_that_asks_the_daemon_loads_grpc_but_not_the_storage_code(tmp_path: Path) -> None:
    """``ls --no-offline`` with no daemon: it tries the socket (grpc) and fails, exit 1."""
    modules = imported_by_cli("ls", "--no-offline", "--workspace", str(tmp_path), cwd=tmp_path)
    assert "grpc" in modules and "claw_sessiond_client.sync" in modules
    assert loaded_under(modules, (*STORAGE, "claw_sessiond_client.aio")) == []


def test_importing_the_client_package_loads_the_package_alone() -> None:
    modules = imported_by("import claw_sessiond_client")
    assert loaded_under(modules, ("claw_sessiond_client", "grpc", "google", "asyncio")) == ["claw_sessiond_client"]


def test_a_public_name_loads_its_own_module_only() -> None:
    errors = imported_by("from claw_sessiond_client import Reason, SessiondError, find_workspace")
    assert loaded_under(errors, ("grpc", "google.protobuf", "asyncio")) == []
    client = imported_by("from claw_sessiond_client import SessionClient")
    assert {"grpc", "google.protobuf", "claw_sessiond_client.sync"} <= client
    assert "claw_sessiond_client.aio" not in client


def _type_checking_names() -> dict[str, str]:
    """Each name the package's ``if TYPE_CHECKING:`` block imports, with its module (``._types``)."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test).endswith("TYPE_CHECKING"))
    return {
        alias.name: "." * node.level + (node.module or "")
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_the_lazy_names_the_type_checkers_names_and_all_agree() -> None:
    """The package says its names three times (``__all__``, the TYPE_CHECKING imports, the table of
    :func:`claw_sessiond_client.__getattr__`): all three hold the same names, and each resolves to the
    object its module defines."""
    seen = _type_checking_names()
    homes = claw_sessiond_client._HOMES
    assert sorted(seen) == sorted(homes) == claw_sessiond_client.__all__
    assert seen == homes
    for name, home in homes.items():
        module = importlib.import_module(home, "claw_sessiond_client")
        assert getattr(claw_sessiond_client, name) is getattr(module, name), name


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        claw_sessiond_client.NoSuchName  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "claw_sessiond_client" in str(exc) and "NoSuchName" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")
