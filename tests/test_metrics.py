"""Metrics of runs (the `otel` extra; docs/observability.md): counted by a listener, gauges
read from the store, exposed as Prometheus text at the console's `/metrics`, parsed here by
prometheus-client's own parser; no label carries a run id."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from console_support import client, console_app, seed
from prometheus_client.parser import text_string_to_metric_families
from store_support import Clock, job_class

from statechart_runtime.metrics import PrometheusMetrics
from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import open_store

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)
RUN_IDS = {"approve-later", "approve-soon", "approve-overdue", "needs-input", "busy-1",
           "busy-2", "gone", "deploy-1", "r1", "r2"}


def samples(text: bytes | str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of the exposition: (name, labels) -> value; no label value a run id."""
    found = {}
    for family in text_string_to_metric_families(
            text.decode() if isinstance(text, bytes) else text):
        for sample in family.samples:
            assert not set(sample.labels.values()) & RUN_IDS, sample
            # The instrumentation scope's labels (OpenTelemetry's Prometheus reader adds them).
            labels = {k: v for k, v in sample.labels.items() if not k.startswith("otel_scope_")}
            found[(sample.name, frozenset(labels.items()))] = sample.value
    return found


def value(found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str,
          **labels: str) -> float:
    return found[(name, frozenset(labels.items()))]


def test_the_console_serves_the_metrics_of_its_runs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        seed(store)
    with client(console_app(url, metrics=True)) as api:
        assert api.post("/api/runs/approve-soon/events/approve",
                        json={"approvedBy": "ops"}).status_code == 200
        assert api.post("/api/runs/busy-1/events/approve",
                        json={"approvedBy": "ops"}).status_code == 409
        page = api.get("/metrics")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/plain")
        assert client(console_app(url, metrics=True), user=None).get(
            "/metrics").status_code == 401
    found = samples(page.text)
    assert value(found, "statechart_transitions_total", spec="agent_run", event="approve",
                 source="waiting_for_approval", target="resumed") == 1
    assert value(found, "statechart_refusals_total", spec="agent_run", event="approve",
                 reason="EventNotAccepted") == 1
    assert value(found, "statechart_answers_total", spec="agent_run", event="approve") == 1
    assert value(found, "statechart_fire_duration_seconds_count", spec="agent_run",
                 via="fire", outcome="taken") == 1
    # From the store: runs by status (after the answer), the overdue approval.
    assert value(found, "statechart_runs", spec="agent_run", status="waiting") == 3
    assert value(found, "statechart_runs", spec="agent_run", status="resumed") == 1
    assert value(found, "statechart_runs", spec="deploy", status="rollout") == 1
    assert value(found, "statechart_timers_overdue", spec="agent_run") == 1
    # How long approve-soon waited for its approval: seeded just before.
    waited = value(found, "statechart_state_duration_seconds_sum", spec="agent_run",
                   state="waiting_for_approval")
    assert 0 <= waited < 60


def test_work_queue_lease_expiries_and_timer_lateness(tmp_path: Path) -> None:
    job = job_class(tmp_path)
    clock = Clock(T0)
    metrics = PrometheusMetrics(["job"])
    store = open_store(tmp_path / "runs.db", clock=clock, listeners=[metrics.listener])
    for run_id in ("r1", "r2"):
        store.create(job(run_id=run_id, clock=clock))
        store.fire(job, run_id, "start")
    claim = store.claim_work(job, owner="paused")
    metrics.gauges.refresh(store)
    found = samples(metrics.text())
    assert value(found, "statechart_work_queue", spec="job", handler="do_it",
                 status="pending") == 1
    assert value(found, "statechart_work_queue", spec="job", handler="do_it",
                 status="claimed") == 1
    clock.advance(11 * SECOND)  # past the lease
    other = store.claim_work(job, owner="alive")  # r2's, pending since before
    again = store.claim_work(job, owner="alive")  # r1's, its lease expired
    assert (other.run_id, again.run_id) == ("r2", "r1")
    with pytest.raises(Exception, match="superseded"):
        store.complete_work(job, claim, "done", output=1)
    store.complete_work(job, again, "done", output=1)
    store.fail_work(job, other, "the service said 503")
    with pytest.raises(EventNotAccepted):
        store.fire(job, "r1", "start")
    metrics.gauges.refresh(store)
    found = samples(metrics.text())
    assert value(found, "statechart_work_claims_total", spec="job", handler="do_it",
                 expired="true") == 1
    assert value(found, "statechart_work_claims_total", spec="job", handler="do_it",
                 expired="false") == 2
    assert value(found, "statechart_work_leases_lost_total", spec="job",
                 call="complete_work") == 1
    assert value(found, "statechart_work_ends_total", spec="job", handler="do_it",
                 result="completed") == 1
    assert value(found, "statechart_work_ends_total", spec="job", handler="do_it",
                 result="retry") == 1
    assert value(found, "statechart_work_queue", spec="job", handler="do_it",
                 status="pending") == 1
    assert ("statechart_work_queue", frozenset({("spec", "job"), ("handler", "do_it"),
                                                ("status", "claimed")})) not in found
    assert value(found, "statechart_refusals_total", spec="job", event="start",
                 reason="EventNotAccepted") == 1
    assert value(found, "statechart_runs", spec="job", status="finished") == 1
    metrics.close()


def test_timer_lateness_is_measured(tmp_path: Path) -> None:
    from store_support import gate_class

    gate = gate_class(tmp_path)
    metrics = PrometheusMetrics(["gate"])
    store = open_store(tmp_path / "runs.db", listeners=[metrics.listener])
    store.create(gate(run_id="g1", clock=lambda: dt.datetime.now(dt.UTC) - 90 * SECOND))
    assert store.fire_due(gate, "g1").applied
    found: dict[Any, float] = samples(metrics.text())
    late = value(found, "statechart_timer_lateness_seconds_sum", spec="gate", state="waiting")
    assert 55 < late < 120  # due 30 s after a creation 90 s ago
    metrics.close()
