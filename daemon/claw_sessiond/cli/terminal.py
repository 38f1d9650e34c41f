"""The terminal the CLI prints to: its width, the pager, and yes/no questions.

Owns the decisions that depend on whether a person is looking: the width
(the terminal's, 80 when stdout is not a terminal), whether output goes
through a pager (only when stdout is a terminal, never with ``--no-pager``
or ``--json``), and confirmation prompts (only when stdin and stderr are
terminals). It never sees stored content unescaped: callers pass text that
:func:`claw_sessiond.cli.termsafe.visible` already made safe, so the pager runs
with ``-R`` (pass the CLI's own colours) and nothing stored can drive it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
from typing import Final

__all__ = ["DEFAULT_PAGER", "DEFAULT_WIDTH", "colour", "confirm", "page", "width"]

DEFAULT_WIDTH: Final = 80
#: -F: quit if the text fits on one screen; -R: pass colour (SGR) sequences; -X: leave the text on screen.
DEFAULT_PAGER: Final = "less -FRX"


def width() -> int:
    """Columns to fit: ``$COLUMNS`` if set, else the terminal's when stdout is one, else 80."""
    return max(20, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def colour() -> bool:
    """Whether to print styles (bold, colours): stdout is a terminal, ``NO_COLOR`` is unset or empty
    (no-color.org) and ``TERM`` is not ``dumb``. Without them the text is plain, not even bold."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def page(text: str, *, enabled: bool) -> None:
    """Write ``text`` to stdout, through ``$PAGER`` (default ``less -FRX``) when ``enabled`` and stdout is a tty.

    A pager that cannot start falls back to plain output; ``PAGER=cat`` or an empty ``PAGER`` turns it off.
    """
    command = os.environ.get("PAGER", DEFAULT_PAGER)
    if not (enabled and sys.stdout.isatty() and command.strip() and command.strip() != "cat"):
        sys.stdout.write(text)
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")  # the same behaviour when PAGER=less is set without options
    try:
        proc = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, env=env, text=True, encoding="utf-8")
    except (OSError, ValueError):
        sys.stdout.write(text)
        return
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError):  # the reader quit the pager early (q)
        proc.stdin.write(text)
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.close()
    proc.wait()


def confirm(question: str) -> bool | None:
    """Ask ``question [y/N]`` on the terminal; None when there is no terminal to ask on."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return False
    return answer.strip().lower() in ("y", "yes")
