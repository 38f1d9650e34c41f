"""The daemon's instructions per 1,000-entry unary Append, under callgrind: the load-proof ``--batch`` row.

``python -m bench.batch_callgrind [--against CHECKOUT ...] [--appends N]`` runs each daemon (this
checkout's, then each ``--against`` checkout's, from its source with this interpreter, as
``bench/run --batch --against`` does) under ``valgrind --tool=callgrind`` with instrumentation off,
sends two warm-up Appends, switches it on (``callgrind_control -i on``), sends
``--appends`` (5) unary Appends of 1,000 entries of each kind of ``bench/batch.py`` (``user``:
``Message.user`` of 100 bytes; ``items``: the same texts as Responses items through the OpenAI
adapter's ``entries_for_items``), switches it off, and prints the daemon's instructions (every
thread) per Append. Each kind gets a daemon of its own on SQLite.

Instruction counts do not move with the machine's load (CPU times do: on a shared machine
``bench/run --batch`` needs many alternated rounds to tell 5 % apart), so this is the row that tells
whether an Append regressed. What it overstates: a valgrind'ed OpenSSL finds no SHA instructions,
so SHA-256 counts several times what it costs a real CPU. Needs ``valgrind`` on PATH; a run takes
about a minute per daemon.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.batch import KINDS, batch_entries
from bench.procs import ROOT, BenchError

__all__ = ["count", "main"]

SIZE = {"entries": 1000, "payload": 100}


def count(checkout: Path, kind: str, appends: int, out: Path) -> float:
    """Daemon instructions per Append of ``kind`` (millions), ``checkout``'s daemon under callgrind
    (``out``: callgrind's output file, a name of its own per daemon)."""
    from claw_sessiond_client.paths import default_socket_path

    with tempfile.TemporaryDirectory(prefix="claw-bench-cg-") as tmp:
        workspace = Path(tmp)
        env = {**os.environ, "PYTHONPATH": f"{checkout / 'daemon'}{os.pathsep}{checkout / 'clients' / 'python'}"}
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        proc = subprocess.Popen(
            [*cmd, sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(workspace)],
            cwd=tmp,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        socket = default_socket_path(workspace, os.environ.get("XDG_RUNTIME_DIR"))
        try:
            client = _connect(f"unix:{socket}", socket, proc)
            with client:
                for i in range(2):
                    client.append(f"warm-{i}", batch_entries(kind, f"warm{i}", SIZE))
                _instrument(proc.pid, "on")
                for i in range(appends):
                    client.append(f"{kind}-{i}", batch_entries(kind, f"r{i}", SIZE))
                _instrument(proc.pid, "off")
        finally:
            proc.terminate()
            proc.wait(300)
    return _totals(out) / appends / 1e6


def _connect(address: str, socket: Path, proc: subprocess.Popen[bytes]) -> Any:
    """A client once the daemon answers an Append (a daemon under valgrind takes seconds to start)."""
    from claw_sessiond_client import SessionClient

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"the daemon under callgrind exited with {proc.returncode}")
        if socket.exists():
            client = SessionClient(address=address, autostart=False, timeout_s=300, stream_appends=False)
            try:
                client.append("probe", batch_entries("user", "probe", {"entries": 1, "payload": 10}))
                return client
            except Exception:  # not serving yet: try again
                client.close()
        time.sleep(0.2)
    raise BenchError("the daemon under callgrind did not answer within 300 s")


def _instrument(pid: int, state: str) -> None:
    subprocess.run(
        ["callgrind_control", "-i", state, str(pid)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _totals(out: Path) -> int:
    """Instructions of every part callgrind wrote for one daemon (``out`` and ``out.<n>`` per thread dump)."""
    total = 0
    for part in sorted(out.parent.glob(out.name + "*")):
        for line in part.read_text(errors="replace").splitlines():
            if line.startswith("totals:"):
                total += int(line.split()[1])
                break
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.batch_callgrind", description=__doc__.splitlines()[0])
    parser.add_argument("--against", action="append", default=[], help="another checkout's daemon (repeatable)")
    parser.add_argument("--appends", type=int, default=5, help="Appends counted per daemon and kind (5)")
    args = parser.parse_args(argv)
    checkouts = [ROOT, *(Path(a).resolve() for a in args.against)]
    print(f"load average before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    with tempfile.TemporaryDirectory(prefix="claw-bench-cg-out-") as out:
        for n, checkout in enumerate(checkouts):
            figures = "  ".join(
                f"{kind} {count(checkout, kind, args.appends, Path(out) / f'{n}-{kind}.out'):8.2f} M" for kind in KINDS
            )
            print(f"{checkout!s:40}  {figures}  per 1,000-entry Append", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
