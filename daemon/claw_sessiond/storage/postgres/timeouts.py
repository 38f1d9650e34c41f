"""The time bounds of this daemon's PostgreSQL connections, in one place, most of them derived from the lease.

A daemon that stops in the middle of a write transaction (SIGSTOP, a stall, a vanished host) must
not hold the session's row lock for longer than a fraction of its lease, and must not commit the
write once its lease is gone (fencing, ``runs.py``). Every connection the daemon opens therefore
carries (as ``server_settings``, so the server enforces them even while the daemon is stopped):

- ``idle_in_transaction_session_timeout`` = lease / :data:`_IDLE_SHARE`, at most
  :data:`_IDLE_MAX_MS` (:func:`idle_in_transaction_ms`; below ``lock_timeout``, so a write waiting
  for a stopped daemon's row lock outlasts that daemon's transaction): the server ends the
  session of a transaction left idle that long, rolling it back and releasing its locks; the
  daemon's COMMIT then fails (UNAVAILABLE, nothing written, nothing acknowledged);
- ``statement_timeout`` (:data:`STATEMENT_TIMEOUT_MS`) and ``lock_timeout``
  (:data:`LOCK_TIMEOUT_MS`): no statement runs or waits for a lock without bound;
- TCP keepalives (:data:`KEEPALIVE_SETTINGS`): the server notices a vanished host within about
  :data:`KEEPALIVE_BOUND_S` seconds, not the kernel's two hours.

At start the daemon reads every setting back (``pooling.check_settings``): a connection pooler
between the daemon and the server may reset session settings, and the fence relies on them.

The fence checked as the last statement before COMMIT (:func:`fence_margin_ms`) asks for more of
the lease than the idle timeout: a daemon paused between that check and its COMMIT either commits
while its lease still holds, or finds its session ended.
"""

from __future__ import annotations

from typing import Final

from ...config import DEFAULT_PG_LOCK_TIMEOUT_MS, DEFAULT_PG_STATEMENT_TIMEOUT_MS

__all__ = [
    "KEEPALIVE_BOUND_S",
    "KEEPALIVE_SETTINGS",
    "LOCK_TIMEOUT_MS",
    "STATEMENT_TIMEOUT_MS",
    "fence_margin_ms",
    "idle_in_transaction_ms",
    "session_timeouts",
]

#: Default ``statement_timeout`` (``--pg-statement-timeout-ms``): the longest one statement may run.
STATEMENT_TIMEOUT_MS: Final = DEFAULT_PG_STATEMENT_TIMEOUT_MS
#: Default ``lock_timeout`` (``--pg-lock-timeout-ms``): the longest a statement waits for a row lock.
LOCK_TIMEOUT_MS: Final = DEFAULT_PG_LOCK_TIMEOUT_MS
#: The idle-in-transaction timeout is the lease divided by this, and at most _IDLE_MAX_MS.
_IDLE_SHARE: Final = 4
_IDLE_MAX_MS: Final = 5_000
#: The fence also keeps this share of the lease (divided by it) for the COMMIT itself and clock steps.
_COMMIT_SHARE: Final = 10
#: Server-side TCP keepalives of every connection: first probe after 5 s idle, then every 2 s, 3 probes.
KEEPALIVE_SETTINGS: Final = {"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2", "tcp_keepalives_count": "3"}
#: Seconds after which the server drops the connection of a host that vanished (5 + 2 x 3).
KEEPALIVE_BOUND_S: Final = 11


def idle_in_transaction_ms(lease_s: float) -> int:
    """``idle_in_transaction_session_timeout`` for a daemon with lease ``lease_s``: a quarter of it, 100 ms to 5 s."""
    return max(100, min(_IDLE_MAX_MS, round(lease_s * 1000 / _IDLE_SHARE)))


def fence_margin_ms(lease_s: float) -> int:
    """How much of its lease a run's daemon must still hold when a write for the run checks it (in the write's
    transaction, again just before COMMIT): the idle timeout plus a tenth of the lease."""
    return idle_in_transaction_ms(lease_s) + round(lease_s * 1000 / _COMMIT_SHARE)


def session_timeouts(
    lease_s: float, *, statement_timeout_ms: int = STATEMENT_TIMEOUT_MS, lock_timeout_ms: int = LOCK_TIMEOUT_MS
) -> dict[str, str]:
    """The settings that bound every connection of a daemon with lease ``lease_s`` (module docstring); a
    ``statement_timeout_ms`` of 0 leaves ``statement_timeout`` to the server or role."""
    return {
        "idle_in_transaction_session_timeout": str(idle_in_transaction_ms(lease_s)),
        **({"statement_timeout": str(statement_timeout_ms)} if statement_timeout_ms else {}),
        "lock_timeout": str(lock_timeout_ms),
        **KEEPALIVE_SETTINGS,
    }
