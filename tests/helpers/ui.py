"""``claw-sessiond ui`` as a real subprocess, and plain HTTP requests to it.

:class:`UiProcess` starts the viewer for a workspace (or a daemon's socket), reads the one line with its
URL (bounded wait), and stops it by its pid (SIGTERM, then SIGKILL). :meth:`UiProcess.get` sends one GET
with the secret (``Authorization: Bearer``) unless told otherwise, through :mod:`http.client`, so the tests
see exactly what a browser would get: status, headers, body. :meth:`UiProcess.events` reads a live
stream's Server-Sent Events on a thread.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.daemon import DaemonProcess

#: The line the viewer prints first.
URL_LINE = re.compile(r"^claw-sessiond ui: (http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]{43}))$")


class Answer:
    """One HTTP answer: status, headers (lower-case names; the last value of each) and body."""

    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status
        self.headers = {k.lower(): v for k, v in headers}
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"Answer({self.status}, {self.body[:300]!r})"


class UiProcess:
    """One ``claw-sessiond ui`` subprocess."""

    def __init__(self, workspace: Path, *args: str, daemon: DaemonProcess | None = None) -> None:
        command = [sys.executable, "-m", "claw_sessiond", "ui", "--workspace", str(workspace)]
        if daemon is not None:
            command += ["--socket", str(daemon.socket_path)]
            env = daemon.env
        else:
            env = None
        self.proc = subprocess.Popen(
            [*command, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=workspace, env=env
        )
        self.url = self.token = ""
        self.port = 0
        self._stderr: str | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with self.proc.stdout:
            for line in self.proc.stdout:
                self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def start(self, timeout_s: float = 30.0) -> UiProcess:
        """Wait for the URL line; fail with the viewer's stderr if it does not come."""
        try:
            line = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            line = None
        found = URL_LINE.match(line or "")
        if found is None:
            self.stop()
            pytest.fail(f"no URL line from claw-sessiond ui (got {line!r}):\n{self.stderr()}")
        self.url, port, self.token = found.groups()
        self.port = int(port)
        return self

    def stderr(self) -> str:
        """What the viewer wrote on stderr (once it has stopped: :meth:`stop`)."""
        return "(still running)" if self._stderr is None else self._stderr

    def get(
        self,
        path: str,
        *,
        auth: bool = True,
        headers: dict[str, str] | None = None,
        timeout_s: float = 30.0,
        method: str = "GET",
        body: bytes = b"",
    ) -> Answer:
        """One request for ``path`` (a GET unless told; with the secret as a bearer token when ``auth``)."""
        sent = {"Host": f"127.0.0.1:{self.port}"}
        if auth:
            sent["Authorization"] = f"Bearer {self.token}"
        sent.update(headers or {})
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout_s)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            if body:
                sent["Content-Length"] = str(len(body))
            for name, value in sent.items():
                conn.putheader(name, value)
            conn.endheaders(body or None)
            reply = conn.getresponse()
            return Answer(reply.status, reply.getheaders(), reply.read())
        finally:
            conn.close()

    def get_json(self, path: str) -> Any:
        answer = self.get(path)
        assert answer.status == 200, answer
        return answer.json()

    def events(self, path: str) -> LiveStream:
        """Open a live stream (Server-Sent Events) of ``path``."""
        return LiveStream(self, path)

    def stop(self, timeout_s: float = 20.0) -> int:
        """SIGTERM by pid and wait (SIGKILL if it does not stop); the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(f"claw-sessiond ui did not stop within {timeout_s}s of SIGTERM") from None
        finally:
            if self._stderr is None and self.proc.stderr is not None:
                self._stderr = self.proc.stderr.read()
                self.proc.stderr.close()


class LiveStream:
    """A live stream's events (name, data), read on a thread as they come."""

    def __init__(self, ui: UiProcess, path: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", ui.port, timeout=60)
        self.conn.request("GET", path, headers={"Authorization": f"Bearer {ui.token}"})
        self.reply = self.conn.getresponse()
        self.status = self.reply.status
        self.headers = {k.lower(): v for k, v in self.reply.getheaders()}
        self.events: queue.Queue[tuple[str, Any] | None] = queue.Queue()
        if self.status == 200:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        name, data = "", ""
        try:
            for raw in self.reply:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data = line[6:]
                elif not line and name:
                    self.events.put((name, json.loads(data)))
                    name, data = "", ""
        except (OSError, ValueError, AttributeError, http.client.HTTPException):  # closed by the test (:meth:`close`)
            pass
        self.events.put(None)

    def next(self, wanted: str, timeout_s: float) -> tuple[Any, float]:
        """The next event named ``wanted`` (others skipped) and the seconds it took; fail after ``timeout_s``."""
        start = time.monotonic()
        end = start + timeout_s
        while True:
            try:
                event = self.events.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no {wanted!r} event within {timeout_s}s")
            assert event is not None, "the live stream ended"
            if event[0] == wanted:
                return event[1], time.monotonic() - start

    def close(self) -> None:
        """Close the connection at once, as a browser tab that goes does. The socket is shut down first: that ends
        the reading thread's blocked read, which holds the reply's file, so closing it does not wait for the
        server's next event (a ping, 15 s), and the server sees the connection go now, not then."""
        sock = self.conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # the server has closed it already
                sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()
