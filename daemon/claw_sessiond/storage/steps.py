"""A write's sequence, written once, run by a synchronous or an asynchronous driver.

Each write (and Load with its repair) is one generator function in ``storage/``: it asks the
pure rules what to do and names every read and write it needs as a call of the backend's
*port* (a few dozen named verbs, no decisions), prefixed by ``yield``::

    def record_usage(port: Port, job: UsageJob) -> Steps[UsageResult]:
        stored = yield port.stored_request(job.session_id, job.request_id)
        record = rules.replay_record(job.request_id, "usage", job.fingerprint, stored)
        ...

What a port call returns depends on its driver, and the generator never sees the difference:

- PostgreSQL's port is asynchronous (asyncpg): ``port.stored_request(...)`` is a coroutine, so
  :func:`run_async` awaits it and sends its answer back, or throws its error in at the
  ``yield`` (a ``try``/``finally`` in the sequence behaves as it would with ``await``).
- SQLite's port runs on the writer thread, inside the writer's transaction: its verbs are the same
  coroutines (``storage/sql/``) over a connection whose statements answer at once, so
  :func:`run_sync` runs :func:`run_async`'s loop to its end in one step; the reference backend's
  verbs are plain functions, whose yielded value is the answer, sent straight back.

So the order of reads and writes, and every decision between them, is one piece of code for
both backends; a third backend implements only its port. A sequence yields nothing but port
calls, and ``yield from`` composes sequences (a sub-sequence's return value is the
``yield from``'s value).

Must never: touch a connection, a clock or a lock itself (the port and the caller do).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, TypeVar

__all__ = ["Steps", "run_async", "run_sync"]

T = TypeVar("T")

# A sequence: yields port calls (values for a synchronous port, awaitables for an asynchronous
# one), is sent their answers, and returns the write's result.
Steps = Generator[Any, Any, T]


def run_sync(steps: Steps[T]) -> T:
    """Run ``steps`` against a synchronous port: a yielded value is its call's answer, and a yielded coroutine
    (SQLite's verbs, written once with PostgreSQL's as ``async def``: ``storage/sql/``) must finish at once.

    It is :func:`run_async`'s loop, run to its end in one step: every call is awaited inside that one
    coroutine (no exception per call), and a call's error is thrown in at its ``yield`` alike.

    Raises:
        TypeError: a port call waited (an asynchronous port driven synchronously: a defect).
    """
    driven = run_async(steps)
    try:
        driven.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    driven.close()
    raise TypeError("a synchronous driver was given a port call that waits")


async def run_async(steps: Steps[T]) -> T:
    """Run ``steps`` against an asynchronous port: await each yielded call and send its answer back.

    A call that raises is thrown into the sequence at its ``yield``, where it propagates as it
    would from an ``await`` (the sequence's ``try``/``except``/``finally`` see it).
    """
    answer: Any = None
    error: BaseException | None = None
    while True:
        try:
            if error is None:
                asked = steps.send(answer)
            else:
                failed, error = error, None
                asked = steps.throw(failed)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        try:
            answer = await asked if hasattr(asked, "__await__") else asked
        except BaseException as exc:  # handed to the sequence, which re-raises what it does not handle
            error = exc
            answer = None
