"""How a command fails: exit codes, the message for people, and the JSON error document.

Every failure ends in :func:`report_error`: ``claw-sessiond: error: MESSAGE``
(and ``Try: HINT``) on stderr, terminal-safe, and with ``--json`` also
``{"format": 1, "error": {"message", "reason", "code"}}`` on stdout
(:func:`print_json_error`). ``reason`` is the daemon's (``SESSION_NOT_FOUND``
...) or the CLI's own (``USAGE``, ``DAEMON_UNAVAILABLE``, ``NOT_STORED``,
``CONFIRMATION_REQUIRED``, ``CHECK_FAILED`` ...); ``code`` is the exit code.
An error of the client library becomes one through :func:`fail_client`.

Exit codes: 0 ok, 1 failure (daemon unreachable, storage broken, lock held,
not found), 2 usage or configuration error, 3 no daemon running for the named
workspace (``status --workspace W``, ``stop``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Final

from claw_sessiond_client import DaemonUnavailableError, InvalidRequestError, SessiondError

from .output import print_json
from .termsafe import visible

__all__ = [
    "EXIT_FAILURE",
    "EXIT_NOT_RUNNING",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "declined",
    "error_json",
    "fail_client",
    "print_error",
    "print_json_error",
    "report_error",
]

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2
EXIT_NOT_RUNNING: Final = 3


class UsageError(Exception):
    """A bad option value found after parsing (a time, a limit): exit 2, reason ``USAGE``."""


def error_json(message: str, *, reason: str, code: int) -> dict[str, Any]:
    """The ``"error"`` of a ``--json`` document: ``{"message", "reason", "code"}``."""
    return {"message": message, "reason": reason, "code": code}


def print_json_error(message: str, *, reason: str, code: int) -> None:
    """The ``--json`` form of a failure: ``{"format": 1, "error": {"message", "reason", "code"}}`` on stdout."""
    print_json({"error": error_json(message, reason=reason, code=code)})


def print_error(message: str, hint: str = "", *, escape: bool = True) -> None:
    """The lines for people: ``claw-sessiond: error: MESSAGE`` and ``Try: HINT`` on stderr.

    ``escape=False`` is for ``status`` and ``stop``, which print the registry's paths as recorded.
    """
    shown = visible if escape else str
    print(shown(f"claw-sessiond: error: {message}"), file=sys.stderr)
    if hint:
        print(shown(f"Try: {hint}"), file=sys.stderr)


def report_error(
    args: argparse.Namespace, message: str, *, hint: str = "", reason: str = "FAILED", code: int = EXIT_FAILURE
) -> int:
    """Say why a command failed: always on stderr for people, and as a JSON document on stdout with ``--json``.

    Returns:
        ``code``, the exit code.
    """
    print_error(message, hint)
    if getattr(args, "json", False):
        print_json_error(message, reason=reason, code=code)
    return code


def declined(args: argparse.Namespace, message: str, payload: dict[str, Any]) -> int:
    """A question answered no: ``message`` on stdout (with ``--json``, ``payload`` and ``"declined": true``);
    nothing was done, as asked, so no "error:" and exit 0."""
    if getattr(args, "json", False):
        print_json({**payload, "declined": True})
    else:
        print(visible(message))
    return EXIT_OK


def fail_client(
    args: argparse.Namespace,
    exc: SessiondError,
    *,
    prefix: str = "",
    unavailable: str = "",
    invalid_code: int = EXIT_FAILURE,
) -> int:
    """End a command on an error of the client library (the daemon's reason, or ``DAEMON_UNAVAILABLE``).

    Args:
        prefix: put before the error's message (``"nothing imported: "``).
        unavailable: what to say when no daemon answers, suggesting ``serve`` or ``doctor``; without it
            the client's own message (after ``prefix``), suggesting ``serve``.
        invalid_code: the exit code of a request the daemon refused as invalid (2 for commands whose
            arguments go to the daemon as they were typed, such as a search query).
    """
    if isinstance(exc, DaemonUnavailableError):
        serve = f"claw-sessiond serve --workspace {args.workspace}"
        if unavailable:
            return report_error(
                args, unavailable, hint=f"{serve}  (or: claw-sessiond doctor)", reason="DAEMON_UNAVAILABLE"
            )
        return report_error(args, prefix + exc.message, hint=serve, reason="DAEMON_UNAVAILABLE")
    code = invalid_code if isinstance(exc, InvalidRequestError) else EXIT_FAILURE
    return report_error(args, prefix + exc.message, reason=str(exc.reason), code=code)
