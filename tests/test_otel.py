"""Traces of runs across processes (the `otel` extra), on each store backend: runs created
and stepped in one process, a timer fired and a work item claimed and completed by a worker
in another, days later by their clock: every span is in its run's one trace, a child of its
`create` span, and the timer's and the work's spans link to the spans, in the first
process, of the steps that armed and enqueued them. And the runtime imports, and a store
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
from store_support import Backend, import_path

from statechart_runtime.otel import TracingListener
from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]
PAST = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)

# The other process: a worker with its own tracer provider fires the run's due timer, then
# claims the other run's work item and applies its outcome.
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
claim = store.claim_work(AgentRun, owner="b")
assert claim.run_id == "r2", claim
store.complete_work(AgentRun, claim, "complete")
print(json.dumps([[s.name, s.context.trace_id, s.parent.span_id if s.parent else None,
                   dict(s.attributes),
                   [[link.context.span_id, dict(link.attributes)] for link in s.links]]
                  for s in exporter.get_finished_spans()]))
"""


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


def test_runs_stepped_in_two_processes_are_one_trace_each_linked_to_what_armed_them(
        ar: ModuleType, backend: Backend) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    store = open_store(backend.url, listeners=[TracingListener(provider)])
    # r1 waits for an approval, its deadline armed by `await_approval`; r2's `start`
    # enqueues the work item of `running.reasoning` (entered by default: not its target).
    store.create(ar.AgentRun(run_id="r1", clock=lambda: PAST))
    for event, values in [("triage", {}), ("start", {}),
                          ("interrupt", {"interruptReason": "approval"}),
                          ("await_approval", {"approvalId": "a",
                                              "approvalDeadline": PAST + dt.timedelta(days=2)})]:
        store.fire(ar.AgentRun, "r1", event, at=PAST, **values)
    store.create(ar.AgentRun(run_id="r2", clock=lambda: PAST))
    for event in ("triage", "start"):
        store.fire(ar.AgentRun, "r2", event, at=PAST)
    store.close()
    here = exporter.get_finished_spans()
    assert [s.name for s in here] == ["create agent_run"] + ["send agent_run"] * 4 + [
        "create agent_run"] + ["send agent_run"] * 2
    created, armed, enqueued = here[0], here[4], here[7]
    assert (armed.attributes or {})["statechart.event"] == "await_approval"
    assert (enqueued.attributes or {})["statechart.event"] == "start"
    out = subprocess.run([sys.executable, "-c", WORKER, backend.url], capture_output=True,
                         text=True, cwd=ROOT, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    there = {name: (trace_id, parent, attributes, links)
             for name, trace_id, parent, attributes, links in json.loads(out.stdout)}
    assert sorted(there) == ["timer agent_run", "work agent_run", "work_attempt agent_run"]
    trace_id, parent, attributes, links = there["timer agent_run"]
    assert trace_id == created.context.trace_id  # the run's one trace
    assert parent == created.context.span_id
    assert attributes["statechart.timer.state"] == "waiting_for_approval"
    assert attributes["statechart.target"] == "timed_out"
    assert attributes["statechart.via"] == "fire_due"
    # Linked to the step that armed its timer, a span of the other process.
    assert links == [[armed.context.span_id, {"statechart.link": "armed"}]]
    for name in ("work agent_run", "work_attempt agent_run"):
        trace_id, parent, attributes, links = there[name]
        assert trace_id == enqueued.context.trace_id
        assert attributes["statechart.work.key"].startswith("r2/reasoning/")
        assert links == [[enqueued.context.span_id, {"statechart.link": "enqueued"}]], name


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
