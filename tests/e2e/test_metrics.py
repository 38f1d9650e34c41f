"""Prometheus /metrics (loopback, per-daemon registry) and the same figures through GetStats."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from claw_sessiond_client import InvalidRequestError, Message
from tests.helpers.daemon import free_port


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain")
        text = r.read().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


@pytest.mark.smoke
def test_metrics_count_the_work_done(spawn_daemon, workspace: Path) -> None:
    port = free_port()
    d = spawn_daemon("--metrics", f"127.0.0.1:{port}")
    with d.client() as c:
        for i in range(5):
            c.append("m", [Message.user(f"q{i}")] + ([Message.assistant("a")] if i < 2 else []))
        c.record_usage("m", input_tokens=3)
        c.record_usage("gone", input_tokens=1)
        assert c.delete("gone") == 1
        with pytest.raises(InvalidRequestError):
            c.load("../bad", str(workspace))
        m = scrape(port)
        stats = c.stats()

    def v(name: str, **labels: str) -> float:
        return m[(f"claw_sessiond_{name}", tuple(sorted(labels.items())))]

    assert v("requests_total", method="Append", code="OK") == 5
    assert v("requests_total", method="RecordUsage", code="OK") == 2
    assert v("requests_total", method="Delete", code="OK") == 1
    assert v("requests_total", method="Load", code="INVALID_ARGUMENT") == 1
    assert v("request_duration_seconds_count", method="Append") == 5
    assert v("appends_total") == 5 and v("messages_written_total") == 7
    assert v("sessions_deleted_total") == 1 and v("write_failures_total") == 0 and v("repairs_total") == 0
    # 8 write requests (5 appends, 2 usages, 1 delete) went through group commits.
    assert v("commit_batch_size_sum") == 8
    assert v("commit_batch_size_count") == v("commits_total") == v("commit_duration_seconds_count", outcome="ok")
    assert 1 <= v("commits_total") <= 8
    assert v("sessions") == 1 and v("events") == 8  # 7 messages + 1 usage of "m"
    assert v("database_bytes") > 0 and v("schema_version") >= 1
    assert v("active_runs") == 0 and v("active_watchers") == 0

    # GetStats carries the same figures.
    assert stats["appends"] == 5 and stats["messages_written"] == 7 and stats["sessions_deleted"] == 1
    assert stats["commit_batch_requests"] == 8 and stats["commits"] == v("commits_total")
    counts = {(r["method"], r["code"]): r["count"] for r in stats["requests"]}
    assert counts[("Append", "OK")] == 5 and counts[("Load", "INVALID_ARGUMENT")] == 1
    assert stats["sessions"] == 1 and stats["events"] == 8

    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=10)
    assert info.value.code == 404
    info.value.close()


def test_metrics_address_must_be_loopback_and_free(spawn_daemon, workspace: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "claw_sessiond", "serve", "--workspace", str(workspace), "--metrics", "0.0.0.0:9"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "loopback" in r.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        d = spawn_daemon("--metrics", f"127.0.0.1:{port}", start=False)
        proc = d.spawn()
        assert proc.wait(30) == 1
    assert "cannot bind" in d.log()
    assert not d.socket_path.exists()  # it cleaned up after itself


def test_active_runs_gauge_follows_attach(spawn_daemon) -> None:
    import grpc

    from claw_sessiond_client.api.v1 import sessiond_pb2 as pb
    from claw_sessiond_client.api.v1 import sessiond_pb2_grpc as pb_grpc

    port = free_port()
    d = spawn_daemon("--metrics", f"127.0.0.1:{port}")
    with grpc.insecure_channel(d.address) as channel:
        stream = pb_grpc.SessionServiceStub(channel).Attach(pb.AttachRequest(session_id="r", pid=1, label="t"))
        assert next(stream).run_id
        assert scrape(port)[("claw_sessiond_active_runs", ())] == 1
        stream.cancel()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and scrape(port)[("claw_sessiond_active_runs", ())] != 0:
        time.sleep(0.05)
    assert scrape(port)[("claw_sessiond_active_runs", ())] == 0


def test_no_metrics_endpoint_by_default(client, daemon) -> None:
    client.append("x", Message.user("y"))
    assert client.stats()["requests"][0]["method"] == "Append"


def test_a_scrape_loop_gets_recent_figures_from_shared_renders(spawn_daemon) -> None:
    """Eight connections scraping as fast as they can: every reply is a valid exposition, an append shows up
    within the render lifetime, and the text is rendered once per RENDER_TTL_S at most, not per scrape (the
    daemon's own ``metrics_renders_total``); replies leave at most MAX_SCRAPES_PER_S a second."""
    from concurrent.futures import ThreadPoolExecutor

    from claw_sessiond.metrics import MAX_CONNECTIONS, MAX_SCRAPES_PER_S, RENDER_TTL_S

    port = free_port()
    d = spawn_daemon("--metrics", f"127.0.0.1:{port}")
    started = time.monotonic()

    def loop(n: int) -> list[dict[tuple[str, tuple[tuple[str, str], ...]], float]]:
        return [scrape(port) for _ in range(n)]

    with ThreadPoolExecutor(8) as pool, d.client() as c:
        scrapers = [pool.submit(loop, 30) for _ in range(8)]
        c.append("m", Message.user("during the scrape loop"))
        deadline = time.monotonic() + 10
        seen = 0.0
        while time.monotonic() < deadline and seen < 1:
            seen = scrape(port)[("claw_sessiond_appends_total", ())]
        assert seen == 1, "an append must show up in the scrapes within the render lifetime"
        replies = [m for f in scrapers for m in f.result(timeout=120)]
    last = scrape(port)
    elapsed = time.monotonic() - started  # after the last scrape, which may have rendered once more
    renders = last[("claw_sessiond_metrics_renders_total", ())]
    assert len(replies) == 240 and all(("claw_sessiond_uptime_seconds", ()) in m for m in replies)
    # One render per RENDER_TTL_S (the first one included), however many scrapes came meanwhile.
    assert 1 <= renders <= elapsed / RENDER_TTL_S + 2, f"{renders} renders for {len(replies)} scrapes in {elapsed:.1f}s"
    # Replies are paced over all connections: the loop got no more than the documented rate.
    assert len(replies) <= MAX_SCRAPES_PER_S * elapsed + MAX_CONNECTIONS, f"{len(replies)} replies in {elapsed:.1f}s"
    assert d.terminate() == 0
