"""A write's sequence, written once, run by a synchronous or an asynchronous driver.

Each write (and Load with its repair) is one generator function in ``storage/``: it asks the
pure rules what to do and names every read and write it needs as a call of the backend's
*port* (a few dozen named verbs, no decisions), prefixed by ``yield``::

    def record_usage(port: Port, job: UsageJob) -> Steps[UsageResult]:
        stored = yield port.stored_request(job.session_id, job.request_id)
        record = rules.replay_record(job.request_id, "usage", job.fingerprint, stored)
        ...

What a port call returns depends on its driver, and the generator never sees the difference:

- SQLite's port runs on the writer thread, inside the writer's transaction: ``port.stored_request(...)``
  is a coroutine whose statements answer at once, so :func:`run_sync` runs it to its end where it is
  yielded and sends its answer back (the reference backend's verbs are plain functions: the value
  yielded is the answer, sent straight back).
- PostgreSQL's port is asynchronous (asyncpg): ``port.stored_request(...)`` is a coroutine, so
  :func:`run_async` awaits it and sends its answer back, or throws its error in at the
  ``yield`` (a ``try``/``finally`` in the sequence behaves as it would with ``await``).

So the order of reads and writes, and every decision between them, is one piece of code for
both backends; a third backend implements only its port. A sequence yields nothing but port
calls, and ``yield from`` composes sequences (a sub-sequence's return value is the
``yield from``'s value).

Must never: touch a connection, a clock or a lock itself (the port and the caller do).
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import Any, TypeVar

__all__ = ["Steps", "run_async", "run_sync"]

T = TypeVar("T")

# A sequence: yields port calls (values for a synchronous port, awaitables for an asynchronous
# one), is sent their answers, and returns the write's result.
Steps = Generator[Any, Any, T]


def run_sync(steps: Steps[T]) -> T:
    """Run ``steps`` against a synchronous port: a yielded value is its call's answer, and a yielded coroutine
    (SQLite's verbs, written once with PostgreSQL's as ``async def``: ``storage/sql/``) is run to its end at once.

    A call that raises is thrown into the sequence at its ``yield``, as :func:`run_async` does.
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
        # ``__await__`` is what makes an awaitable; ``inspect.isawaitable`` would ask the ``Awaitable`` ABC of every
        # answer (about 1 us each, a few per write: measured 10% of an append's CPU in the SQLite transaction).
        if not hasattr(asked, "__await__"):
            answer = asked
            continue
        if not inspect.iscoroutine(asked):
            steps.close()
            raise TypeError("a synchronous driver was given an awaitable port call")
        try:
            asked.send(None)
        except StopIteration as done:
            answer = done.value
            continue
        except BaseException as exc:  # handed to the sequence, which re-raises what it does not handle
            error, answer = exc, None
            continue
        # The call waited: a port whose statements do not answer at once, driven synchronously (a defect).
        asked.close()
        steps.close()
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
