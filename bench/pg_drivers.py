"""Choosing the PostgreSQL driver: asyncpg against psycopg 3 (async), on a throwaway server.

Run: ``.venv/bin/python -m bench.pg_drivers [--n 400]`` (needs the ``postgresql`` package; as root the
server runs as the ``postgres`` user). Measures, for each driver, on one connection over the Unix socket
with ``fsync=on`` and ``synchronous_commit=on``:

- a single-row INSERT and COMMIT (an explicit transaction), serial: p50 / p99 latency;
- a batch of 16 rows in one transaction (executemany), serial: p50 / p99 latency;
- the append shape the backend runs: BEGIN; lock the session row (SELECT ... FOR UPDATE); INSERT the
  event; UPDATE the session row; COMMIT: p50 / p99;
- a LISTEN/NOTIFY round trip between two connections (NOTIFY committed on one, received on the other).

The figures are recorded in ``docs/postgres.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.postgres import find_bin_dir, throwaway_postgres

_SETUP = (
    "CREATE TABLE s (sid text PRIMARY KEY, last bigint NOT NULL DEFAULT 0);"
    "CREATE TABLE e (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, sid text, pos bigint, payload text);"
    "INSERT INTO s(sid) VALUES ('a')"
)


def _summary(name: str, samples: list[float]) -> str:
    s = sorted(samples)
    p50 = statistics.median(s) * 1000
    p99 = s[min(len(s) - 1, int(len(s) * 0.99))] * 1000
    return f"{name:<34} p50 {p50:6.2f} ms   p99 {p99:6.2f} ms   ({len(s) / sum(s):6.0f}/s serial)"


async def _timed(n: int, step: Callable[[int], Awaitable[None]]) -> list[float]:
    out = []
    for i in range(n):
        began = time.perf_counter()
        await step(i)
        out.append(time.perf_counter() - began)
    return out


async def _asyncpg(url: str, n: int) -> list[str]:
    import asyncpg

    conn = await asyncpg.connect(url)
    listener = await asyncpg.connect(url)
    await conn.execute("SET synchronous_commit = on")
    await conn.execute(_SETUP)
    payload = "x" * 200

    async def single(i: int) -> None:
        async with conn.transaction():
            await conn.execute("INSERT INTO e(sid, pos, payload) VALUES ($1, $2, $3)", "a", i, payload)

    async def batch(i: int) -> None:
        async with conn.transaction():
            await conn.executemany(
                "INSERT INTO e(sid, pos, payload) VALUES ($1, $2, $3)", [("a", i * 16 + j, payload) for j in range(16)]
            )

    async def append(i: int) -> None:
        async with conn.transaction():
            last = await conn.fetchval("SELECT last FROM s WHERE sid = $1 FOR UPDATE", "a")
            await conn.execute("INSERT INTO e(sid, pos, payload) VALUES ($1, $2, $3)", "a", last + 1, payload)
            await conn.execute("UPDATE s SET last = $2 WHERE sid = $1", "a", last + 1)

    got: asyncio.Queue[float] = asyncio.Queue()
    await listener.add_listener("ch", lambda *_a: got.put_nowait(time.perf_counter()))

    async def notify(i: int) -> None:
        await conn.execute("SELECT pg_notify('ch', $1)", str(i))
        await got.get()

    out = ["asyncpg " + asyncpg.__version__]
    out.append(_summary("insert+commit (1 row)", await _timed(n, single)))
    out.append(_summary("batch of 16 rows, 1 commit", await _timed(n // 4, batch)))
    out.append(_summary("append (FOR UPDATE, insert, update)", await _timed(n, append)))
    out.append(_summary("LISTEN/NOTIFY round trip", await _timed(n, notify)))
    await conn.execute("DROP TABLE s, e")
    await conn.close()
    await listener.close()
    return out


async def _psycopg(url: str, n: int) -> list[str]:
    import psycopg

    conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    listener = await psycopg.AsyncConnection.connect(url, autocommit=True)
    await conn.execute("SET synchronous_commit = on")
    for statement in _SETUP.split(";"):
        await conn.execute(statement)
    payload = "x" * 200

    async def single(i: int) -> None:
        async with conn.transaction():
            await conn.execute("INSERT INTO e(sid, pos, payload) VALUES (%s, %s, %s)", ("a", i, payload))

    async def batch(i: int) -> None:
        async with conn.transaction(), conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO e(sid, pos, payload) VALUES (%s, %s, %s)", [("a", i * 16 + j, payload) for j in range(16)]
            )

    async def append(i: int) -> None:
        async with conn.transaction():
            cur = await conn.execute("SELECT last FROM s WHERE sid = %s FOR UPDATE", ("a",))
            row = await cur.fetchone()
            assert row is not None
            last = int(row[0])
            await conn.execute("INSERT INTO e(sid, pos, payload) VALUES (%s, %s, %s)", ("a", last + 1, payload))
            await conn.execute("UPDATE s SET last = %s WHERE sid = %s", (last + 1, "a"))

    await listener.execute("LISTEN ch")
    gen = listener.notifies()

    async def notify(i: int) -> None:
        await conn.execute("SELECT pg_notify('ch', %s)", (str(i),))
        await anext(gen)

    out = ["psycopg " + psycopg.__version__]
    out.append(_summary("insert+commit (1 row)", await _timed(n, single)))
    out.append(_summary("batch of 16 rows, 1 commit", await _timed(n // 4, batch)))
    out.append(_summary("append (FOR UPDATE, insert, update)", await _timed(n, append)))
    out.append(_summary("LISTEN/NOTIFY round trip", await _timed(n, notify)))
    await conn.execute("DROP TABLE s, e")
    await conn.close()
    await listener.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400, help="iterations per figure")
    args = parser.parse_args()
    bin_dir = find_bin_dir()
    if bin_dir is None:
        sys.exit("no /usr/lib/postgresql/*/bin/initdb: apt-get install postgresql")
    with throwaway_postgres(bin_dir) as server:
        for run in (_asyncpg, _psycopg, _asyncpg, _psycopg):  # twice each, interleaved: the machine is shared
            url = server.url()
            print("\n".join(asyncio.run(run(url, args.n))), flush=True)


if __name__ == "__main__":
    main()
