"""The Prometheus side of :mod:`claw_sessiond.metrics`: one daemon's registry, its metrics and their text.

Built only by a daemon that serves ``/metrics`` (``--metrics``): prometheus-client,
and the HTTP and e-mail modules it imports, are about a tenth of a daemon's start,
and the rest of the daemon keeps its counts without them. One
:class:`Exposition` per :class:`~claw_sessiond.metrics.Metrics`, with its own
``CollectorRegistry`` (never the process-global one, so two daemons in one
process, as in tests, do not mix). prometheus-client's metrics are thread-safe:
the writer thread observes commits here. Must never import grpc nor speak SQL.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .metrics import RENDER_TTL_S
from .storage import pending_erasures

if TYPE_CHECKING:
    from .metrics import Metrics

__all__ = ["PREFIX", "Exposition"]

PREFIX: Final = "claw_sessiond_"
_BATCH_BUCKETS: Final = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
_LATENCY_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_STORE_COUNTERS: Final = (
    ("appends", "Appends committed since start."),
    ("messages_written", "Messages written since start."),
    ("repairs", "Interrupted tool calls repaired since start."),
    ("write_failures", "Write transactions that failed since start."),
    ("commits", "Group commits since start."),
    ("sessions_deleted", "Sessions erased (Delete or retention) since start."),
    ("retention_deleted", "Sessions erased by the retention policy since start."),
    ("requests_pruned", "Idempotency records pruned (older than the retry window) since start."),
)
_COUNTER_NAMES: Final = {"retention_deleted": "retention_sessions_deleted", "requests_pruned": "request_records_pruned"}


class _Figures(Collector):
    """Counters kept by the store and gauges read at scrape time (see :meth:`Metrics.refresh`)."""

    def __init__(self, metrics: Metrics) -> None:
        self._m = metrics

    def collect(self) -> Iterator[Metric]:
        counters = self._m.store.counters
        for name, text in _STORE_COUNTERS:
            metric_name = _COUNTER_NAMES.get(name, name)
            yield CounterMetricFamily(PREFIX + metric_name, text, value=getattr(counters, name, 0))
        yield CounterMetricFamily(
            PREFIX + "metrics_renders",
            f"Renders of this text since start (scrapes within {RENDER_TTL_S:g} s share one).",
            value=self._m.renders,
        )
        gauges = {
            **{k: (float(v), f"{k.replace('_', ' ').capitalize()} (database).") for k, v in self._m.figures.items()},
            "active_watchers": (float(self._m.active_watchers()), "Open Watch streams."),
            "active_runs": (float(self._m.active_runs()), "Open Attach runs."),
            "erasure_pending_sessions": (
                float(pending_erasures(self._m.store)),
                "Erased sessions whose bytes may still be in the database files (checkpoint waiting for readers).",
            ),
            "uptime_seconds": (time.monotonic() - self._m.started, "Seconds since the daemon started."),
        }
        for name, (value, text) in gauges.items():
            yield GaugeMetricFamily(PREFIX + name, text, value=value)


class Exposition:
    """The registry of one daemon's :class:`~claw_sessiond.metrics.Metrics` and the text ``/metrics`` serves.

    Args:
        metrics: the daemon's figures (the store's counters and gauges are read from it at scrape time).
        store_info: (backend, database) for the ``store_info`` gauge; ("", ""): none.
    """

    #: The ``Content-Type`` of :meth:`text`.
    content_type: Final = CONTENT_TYPE_LATEST

    def __init__(self, metrics: Metrics, store_info: tuple[str, str]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            PREFIX + "requests", "RPCs finished, by method and status code.", ["method", "code"], registry=self.registry
        )
        self.request_seconds = Histogram(
            PREFIX + "request_duration_seconds",
            "RPC duration in seconds, by method.",
            ["method"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.commit_batch = Histogram(
            PREFIX + "commit_batch_size",
            "Requests per group-commit transaction.",
            buckets=_BATCH_BUCKETS,
            registry=self.registry,
        )
        self.commit_seconds = Histogram(
            PREFIX + "commit_duration_seconds",
            "Group-commit transaction time in seconds (BEGIN to COMMIT), by outcome.",
            ["outcome"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        # Each label set's child, looked up once (``labels()`` takes a lock and builds a key per call).
        self._request_children: dict[tuple[str, str], tuple[Any, Any]] = {}
        self.registry.register(_Figures(metrics))
        if store_info[0]:
            # An info gauge (always 1): which store this daemon serves, never a password.
            Gauge(
                PREFIX + "store_info",
                "The store this daemon serves: backend (sqlite, postgresql), database (file or host:port/database).",
                ["backend", "database"],
                registry=self.registry,
            ).labels(*store_info).set(1)

    def observe_rpc(self, key: tuple[str, str], seconds: float) -> None:
        """One finished RPC: ``key`` is (method, code)."""
        children = self._request_children.get(key)
        if children is None:
            method, code = key
            children = self._request_children[key] = (
                self.requests.labels(method, code),
                self.request_seconds.labels(method),
            )
        children[0].inc()
        children[1].observe(seconds)

    def observe_commit(self, batch_size: int, seconds: float, ok: bool) -> None:
        """One group commit (on the writer thread)."""
        self.commit_batch.observe(batch_size)
        self.commit_seconds.labels("ok" if ok else "failed").observe(seconds)

    def text(self) -> bytes:
        """The Prometheus text exposition of everything registered."""
        return generate_latest(self.registry)
