"""Traces of a run across processes (the `otel` extra): the run is created and answered in
one process, its timer fired by a worker in another, days later by its clock: every span is
in the run's one trace, a child of its `create` span. And the runtime imports, and a store
runs, without OpenTelemetry installed."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from store_support import import_path

from statechart_runtime.otel import TracingListener
from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]
PAST = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)

# The other process: a worker with its own tracer provider fires the run's due timer.
WORKER = """
import json, sys
sys.path.insert(0, "generated")
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from agent_run import AgentRun
from statechart_runtime.otel import TracingListener
from statechart_runtime.store import open_store
from statechart_runtime.worker import Worker

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
store = open_store(sys.argv[1], listeners=[TracingListener(provider)])
with Worker(store, AgentRun) as worker:
    assert worker.run_once() == 1
print(json.dumps([[s.name, s.context.trace_id, s.parent.span_id if s.parent else None,
                   dict(s.attributes)] for s in exporter.get_finished_spans()]))
"""


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


def test_a_run_stepped_in_two_processes_is_one_trace(ar: ModuleType, tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    db = tmp_path / "runs.db"
    store = open_store(db, listeners=[TracingListener(provider)])
    run = ar.AgentRun(run_id="r1", clock=lambda: PAST)
    store.create(run)
    for event, values in [("triage", {}), ("start", {}),
                          ("interrupt", {"interruptReason": "approval"}),
                          ("await_approval", {"approvalId": "a",
                                              "approvalDeadline": PAST + dt.timedelta(days=2)})]:
        store.fire(ar.AgentRun, "r1", event, at=PAST, **values)
    store.close()
    here = exporter.get_finished_spans()
    created = here[0]
    assert created.name == "create agent_run"
    assert [s.name for s in here[1:]] == ["send agent_run"] * 4
    out = subprocess.run([sys.executable, "-c", WORKER, str(db)], capture_output=True,
                         text=True, cwd=ROOT, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    [(name, trace_id, parent, attributes)] = json.loads(out.stdout)
    assert name == "timer agent_run"
    assert trace_id == created.context.trace_id  # the run's one trace
    assert parent == created.context.span_id
    assert attributes["statechart.timer.state"] == "waiting_for_approval"
    assert attributes["statechart.target"] == "timed_out"
    assert attributes["statechart.via"] == "fire_due"


def test_the_runtime_runs_without_opentelemetry(tmp_path: Path) -> None:
    """Blocked, opentelemetry and prometheus_client cannot be imported: the store, its
    listeners, the worker and the console's modules load and run all the same."""
    code = f"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {{"opentelemetry", "prometheus_client"}}:
            raise ModuleNotFoundError(name + " is blocked")
sys.meta_path.insert(0, Block())
sys.path.insert(0, "generated")
from agent_run import AgentRun
from statechart_runtime.store import open_store
import statechart_runtime.worker, statechart_runtime.console, statechart_runtime.listeners
seen = []
store = open_store({str(tmp_path / 'runs.db')!r}, listeners=[seen.append])
store.create(AgentRun(run_id="x"))
store.fire(AgentRun, "x", "triage")
assert [type(s).__name__ for s in seen] == ["RunCreated", "StepTaken"], seen
try:
    import statechart_runtime.otel
except ModuleNotFoundError as exc:
    print("otel:", exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert "otel: opentelemetry" in out.stdout
