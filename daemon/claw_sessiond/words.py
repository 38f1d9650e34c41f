"""How a count reads in a message a person sees: ``1 session``, ``2 sessions``.

One rule for every message that counts things, the CLI's and the daemon's own (``store_copy``'s
errors among them).
"""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, noun: str, plural: str = "") -> str:
    """``1 session``, ``2 sessions`` (``plural`` when adding "s" is wrong)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
