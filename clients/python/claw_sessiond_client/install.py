"""How claw-sessiond is installed: the one rule every install command the code prints follows.

Neither distribution, ``claw-sessiond`` (the daemon and its command) nor
``claw-sessiond-client`` (this package), is published on a package index, so
installing either by its bare name finds nothing. Both install from a checkout
of the repository (run in its top folder: the client is ``./clients/python``,
the daemon ``.``) or from the repository's git URL, written :data:`REPO` (the
URL the repository is cloned from; the client is its ``clients/python``
subdirectory).

The daemon depends on the client by name, at the same version: a command that
installs the daemon names the client's source too, and pip takes the named
dependency from it. A framework adapter (an extra of the client) is installed
with the daemon, because its client starts the workspace's daemon when none
answers (auto-start runs ``python -m claw_sessiond`` in the same environment).

README.md's Install section, docs/adapters.md and these hints show the same
commands; tests/e2e/test_install_lines.py runs every one of them in a clean
virtualenv, and tests/unit/test_install_lines.py checks that no other code
spells an install command itself.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CLIENT_DIR", "REPO", "checkout_command", "git_command", "install_hint", "missing_framework"]

#: The placeholder for the repository's git URL in every git form (``git+<repo>``).
REPO: Final = "<repo>"
#: The client's folder in a checkout, and its subdirectory in the repository.
CLIENT_DIR: Final = "clients/python"


def _extras(extra: str | None) -> str:
    return f"[{extra}]" if extra else ""


def _quoted(arg: str) -> str:
    """An argument as a shell reads it: quoted when it holds brackets, spaces or ``<>``."""
    return f"'{arg}'" if any(c in arg for c in "[] <>#") else arg


def checkout_command(*, client_extra: str | None = None, daemon_extra: str | None = None) -> str:
    """The command that installs the client (with ``client_extra``) and the daemon (with ``daemon_extra``) from a
    checkout, run in its top folder."""
    client = _quoted(f"./{CLIENT_DIR}{_extras(client_extra)}")
    daemon = _quoted(f".{_extras(daemon_extra)}")
    return f"pip install {client} {daemon}"


def git_command(*, client_extra: str | None = None, daemon_extra: str | None = None) -> str:
    """The same installs from the repository's git URL (:data:`REPO`)."""
    client = f"claw-sessiond-client{_extras(client_extra)} @ git+{REPO}#subdirectory={CLIENT_DIR}"
    daemon = f"claw-sessiond{_extras(daemon_extra)} @ git+{REPO}"
    return f"pip install {_quoted(client)} {_quoted(daemon)}"


def install_hint(*, client_extra: str | None = None, daemon_extra: str | None = None) -> str:
    """Both commands, as an error message says them: the daemon and the client, with the extras named.

    Every hint installs the daemon: the one that names a framework's extra too,
    since the adapter's client auto-starts a daemon; the one that names the
    daemon's ``postgres`` extra, since the daemon needs the driver.
    """
    checkout = checkout_command(client_extra=client_extra, daemon_extra=daemon_extra)
    git = git_command(client_extra=client_extra, daemon_extra=daemon_extra)
    return f"{checkout} (in a checkout of claw-sessiond), or {git} ({REPO}: its git URL)"


def missing_framework(adapter: str, framework: str, *, client_extra: str) -> ImportError:
    """The error of an adapter imported without its framework: ``adapter`` (the module) needs ``framework``, and
    the install command of its extra ``client_extra`` (with the daemon, as every adapter's)."""
    return ImportError(f"{adapter} needs {framework}: {install_hint(client_extra=client_extra)}")
