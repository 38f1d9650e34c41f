"""Usage that reconciles: exact integer totals after many small costs, per model and pricing version."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest

from claw_sessiond_client import ModelUsage, PreconditionError, Reason, SessionClient, Usage
from tests.helpers.tiers import scale

# Costs in micros: 0.1 and 0.2 USD (whose float sum is not 0.3), a third of a USD, and 1-micro crumbs.
COSTS = (100_000, 200_000, 333_333, 1, 7)
MODELS = (("gpt-4.1", "2026-01"), ("gpt-4.1", "2026-06"), ("claude-x", "2026-06"))


def test_totals_are_exact_after_many_small_costs(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    ws = workspace
    d = spawn_daemon()
    n = scale(300, 3000)
    expected: dict[tuple[str, str], Counter[str]] = {m: Counter() for m in MODELS}
    plan = []
    for i in range(n):
        model = MODELS[i % len(MODELS)]
        item = {
            "input_tokens": 1 + i % 5,
            "output_tokens": i % 3,
            "cache_read_tokens": i % 2,
            "cache_write_tokens": 1 if i % 7 == 0 else 0,
            "cost_micros": COSTS[i % len(COSTS)],
        }
        expected[model].update(item)
        plan.append((model, item, f"req-{i}"))
    errors: list[BaseException] = []

    def worker(part: list[tuple[tuple[str, str], dict[str, int], str]]) -> None:
        try:
            with d.client() as c:
                for (model, version), item, request_id in part:
                    c.record_usage(
                        "bill", currency="USD", model=model, pricing_version=version, request_id=request_id, **item
                    )
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(plan[k::3],)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and not any(t.is_alive() for t in threads)

    def usage(counts: Counter[str]) -> Usage:
        return Usage(
            counts["input_tokens"],
            counts["output_tokens"],
            counts["cache_read_tokens"],
            counts["cache_write_tokens"],
            counts["cost_micros"],
            "USD",
        )

    total: Counter[str] = Counter()
    for counts in expected.values():
        total.update(counts)
    with d.client() as c:
        # a retry with a used request id adds nothing
        (model, version), item, request_id = plan[0]
        c.record_usage("bill", currency="USD", model=model, pricing_version=version, request_id=request_id, **item)
        report = c.usage("bill")
        assert report.total == usage(total)
        assert sorted(report.by_model, key=lambda m: (m.model, m.pricing_version)) == sorted(
            (ModelUsage(m, v, usage(expected[(m, v)])) for m, v in MODELS), key=lambda m: (m.model, m.pricing_version)
        )
        assert c.load("bill", str(ws)).session.usage == usage(total)
        # the per-model rows add up to the session total
        assert sum(m.usage.cost_micros for m in report.by_model) == report.total.cost_micros
        # the log reconciles too: summing the exported usage events gives the same figure
        evs = [json.loads(x) for x in list(c.export("bill"))[1:]]
        assert len(evs) == n and all(e["type"] == "usage" for e in evs)
        assert sum(e["payload"]["cost_micros"] for e in evs) == total["cost_micros"]
        # another currency is refused and changes nothing
        with pytest.raises(PreconditionError) as info:
            c.record_usage("bill", cost_micros=1, currency="EUR", model="gpt-4.1")
        assert info.value.reason == Reason.CURRENCY_MISMATCH
        assert c.usage("bill").total == usage(total)
        lines = list(c.export("bill"))
    # the totals survive a restart, and an import elsewhere rebuilds the same breakdown
    assert d.terminate() == 0
    d2 = spawn_daemon(workspace_path=ws)
    other = tmp_path / "other"
    other.mkdir()
    d3 = spawn_daemon(workspace_path=other)
    with d2.client() as c2, d3.client() as c3:
        assert c2.usage("bill") == report
        c3.import_lines(lines)
        imported = c3.usage("bill")
        assert imported.total == report.total
        assert sorted(imported.by_model, key=repr) == sorted(report.by_model, key=repr)


@pytest.mark.smoke
def test_usage_of_unknown_session_is_not_found(client: SessionClient) -> None:
    from claw_sessiond_client import SessionNotFoundError

    with pytest.raises(SessionNotFoundError):
        client.usage("never-stored")
