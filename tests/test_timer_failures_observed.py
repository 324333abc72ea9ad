"""Due timers that cannot be fired (a guard raises) are observed (docs/observability.md):
`store.fire_due`, `store.fire_next_due` and the worker's round tell a `TimersFailed`, the
metrics count it (`statechart_timer_failures_total`), and the tracing listener makes an
ERROR `timer` span with `error.type`, in the run's trace; synchronous and asynchronous
stores."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from store_support import gate_class
from test_metrics import samples, value

from statechart_runtime.listeners import TimersFailed
from statechart_runtime.metrics import PrometheusMetrics
from statechart_runtime.otel import TracingListener
from statechart_runtime.store import TimerFailed, open_async_store, open_store
from statechart_runtime.worker import Worker

PAST = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
LATER = PAST + dt.timedelta(minutes=1)


class Observed:
    """A store's listeners here: everything told, the metrics, the spans."""

    def __init__(self) -> None:
        self.told: list[Any] = []
        self.metrics = PrometheusMetrics(["gate"])
        self.spans = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.listeners = [self.told.append, self.metrics.listener, TracingListener(provider)]

    def failures(self) -> list[TimersFailed]:
        return [seen for seen in self.told if isinstance(seen, TimersFailed)]

    def check(self, count: int) -> None:
        """`count` failures of the run `broken`, each counted and an ERROR span in the
        run's trace, a child of its `create` span."""
        failed = self.failures()
        assert [(f.run_id, f.spec, f.reason, f.via) for f in failed] == [
            ("broken", "gate", "RuntimeError", "fire_due")] * count
        assert all(f.started <= f.ended for f in failed)
        assert value(samples(self.metrics.text()), "statechart_timer_failures_total",
                     spec="gate", reason="RuntimeError") == count
        spans = self.spans.get_finished_spans()
        [create] = [span for span in spans if span.name == "create gate"
                    and span.attributes["statechart.run.id"] == "broken"]
        errors = [span for span in spans if span.name == "timer gate"
                  and span.attributes["statechart.run.id"] == "broken"]
        assert len(errors) == count
        for span in errors:
            assert span.status.status_code is StatusCode.ERROR
            assert "the guard's service is down" in (span.status.description or "")
            assert span.attributes["error.type"] == "RuntimeError"
            assert span.context.trace_id == create.context.trace_id
            assert span.parent is not None
            assert span.parent.span_id == create.context.span_id
        self.metrics.close()


def test_fire_due_and_fire_next_due_tell_a_timer_that_failed(tmp_path: Path) -> None:
    gate = gate_class(tmp_path)
    seen = Observed()
    with open_store(tmp_path / "runs.db", listeners=seen.listeners) as store:
        store.create(gate(run_id="broken", clock=lambda: PAST))
        with pytest.raises(RuntimeError, match="the guard's service is down") as raised:
            store.fire_due(gate, "broken", LATER)
        assert seen.failures()[0].error is raised.value
        with pytest.raises(TimerFailed) as failed:
            store.fire_next_due(gate, LATER)
        told = seen.failures()[1]
        assert told.error is failed.value
        assert isinstance(told.error.__cause__, RuntimeError)
        # A run that is not there is not a timer's failure: nothing told.
        with pytest.raises(LookupError):
            store.fire_due(gate, "nobody", LATER)
        assert store.load(gate, "broken").status.value == "waiting"  # nothing saved
    seen.check(2)


def test_the_workers_round_tells_a_timer_that_failed(tmp_path: Path) -> None:
    gate = gate_class(tmp_path)
    seen = Observed()
    with open_store(tmp_path / "runs.db", listeners=seen.listeners) as store:
        store.create(gate(run_id="broken", clock=lambda: PAST))
        store.create(gate(run_id="fine", clock=lambda: PAST))
        with Worker(store, gate) as worker:
            assert worker.run_once() == 1  # `fine` fired, `broken` skipped
            assert worker.failed == 1
    seen.check(1)


def test_the_asynchronous_store_tells_a_timer_that_failed(tmp_path: Path) -> None:
    gate = gate_class(tmp_path)
    seen = Observed()

    async def main() -> None:
        async with open_async_store(f"sqlite:///{tmp_path / 'runs.db'}",
                                    listeners=seen.listeners) as store:
            await store.create(gate(run_id="broken", clock=lambda: PAST))
            with pytest.raises(RuntimeError):
                await store.fire_due(gate, "broken", LATER)
            with pytest.raises(TimerFailed):
                await store.fire_next_due(gate, LATER)

    asyncio.run(main())
    seen.check(2)
