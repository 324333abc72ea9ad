"""Spans of runs through a store (the `otel` extra; part of the conformance suite: every
backend, both APIs), exported by the OpenTelemetry SDK's in-memory exporter: one span per
event taken or refused, after the commit; the run's trace context kept with the run, so that
every later step joins its trace; a caller's own span is the parent then, linked to the
run's; timers and work link to the span of the step that armed or enqueued them."""

from __future__ import annotations

import datetime as dt
from types import ModuleType
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode
from store_support import Backend, Clock, gate_class, job_class

from statechart_runtime.otel import TracingListener
from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import open_store

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)


@pytest.fixture
def spans() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_each_event_is_a_span_of_the_runs_trace(
        ticket: ModuleType, backend: Backend,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    store = open_store(backend.url, listeners=[TracingListener(provider)])
    store.create(ticket.Ticket(run_id="t1"))
    store.fire(ticket.Ticket, "t1", "approve", note="ok")
    with pytest.raises(EventNotAccepted):
        store.fire(ticket.Ticket, "t1", "approve", note="again")
    created, step, refused = exporter.get_finished_spans()
    assert [s.name for s in (created, step, refused)] == [
        "create ticket", "send ticket", "send ticket"]
    run_trace = created.context.trace_id
    assert {s.context.trace_id for s in (step, refused)} == {run_trace}
    assert step.parent is not None and step.parent.span_id == created.context.span_id
    assert dict(step.attributes or {}) == {
        "statechart.run.id": "t1", "statechart.spec.name": "ticket",
        "statechart.spec.version": 1, "statechart.event": "approve",
        "statechart.source": "open", "statechart.target": "approved",
        "statechart.configuration": ("approved",), "statechart.status": "approved",
        "statechart.via": "fire", "statechart.revision": 2}
    assert refused.status.status_code == StatusCode.ERROR
    assert (refused.attributes or {})["error.type"] == "EventNotAccepted"
    assert step.start_time is not None and step.end_time is not None
    assert step.start_time <= step.end_time
    # A store with no tracing listener keeps no context: its runs' spans are not joined.
    assert store.stored_runs()[0].run_id == "t1"


def test_a_callers_span_is_the_parent_linked_to_the_runs(
        ticket: ModuleType, backend: Backend,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    store = open_store(backend.url, listeners=[TracingListener(provider)])
    store.create(ticket.Ticket(run_id="t1"))
    tracer = provider.get_tracer("a web service")
    with tracer.start_as_current_span("POST /tickets/t1/approve") as request:
        store.fire(ticket.Ticket, "t1", "approve", note="ok")
    created, step, _ = exporter.get_finished_spans()
    assert step.parent is not None and step.parent.span_id == request.get_span_context().span_id
    assert [link.context.span_id for link in step.links] == [created.context.span_id]


def test_timers_and_work_link_to_what_armed_them(
        backend: Backend, tmp_path: Any,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    gate = gate_class(tmp_path)
    job = job_class(tmp_path)
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    store.create(gate(run_id="g1", clock=clock))  # `waiting` (and its timer) from the start
    store.create(job(run_id="j1", clock=clock))
    store.fire(job, "j1", "start")  # enters `working`: enqueues the item
    clock.advance(31 * SECOND)
    store.fire_due(gate, "g1")
    claim = store.claim_work(job, owner="w")
    store.complete_work(job, claim, "done", output=1)
    by_name = {s.name: s for s in exporter.get_finished_spans()}
    timer = by_name["timer gate"]
    assert [(link.context.span_id, dict(link.attributes or {})) for link in timer.links] == [
        (by_name["create gate"].context.span_id, {"statechart.link": "armed"})]
    assert (timer.attributes or {})["statechart.timer.state"] == "waiting"
    work = by_name["work job"]
    assert [link.context.span_id for link in work.links] == [
        by_name["send job"].context.span_id]
    assert (work.attributes or {})["statechart.work.key"] == "j1/working/0"
    assert work.context.trace_id == by_name["create job"].context.trace_id


def test_a_work_attempt_is_a_span_from_its_claim_to_its_end(
        backend: Backend, tmp_path: Any,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    job = job_class(tmp_path)
    clock = Clock(T0)
    listener = TracingListener(provider, genai_operations={"do_it": "execute_tool"})
    store = open_store(backend.url, clock=clock, listeners=[listener])
    for run_id in ("j1", "j2"):
        store.create(job(run_id=run_id, clock=clock))
        store.fire(job, run_id, "start")
    first = store.claim_work(job, owner="w")
    second = store.claim_work(job, owner="w")
    store.fail_work(job, first, "the tool said 503")
    store.complete_work(job, second, "done", output=1)
    by_run = {(s.attributes or {})["statechart.run.id"]: s
              for s in exporter.get_finished_spans() if s.name == "execute_tool do_it"}
    failed, done = by_run[first.run_id], by_run[second.run_id]
    assert dict(failed.attributes or {}) == {
        "statechart.run.id": first.run_id, "statechart.spec.name": "job",
        "statechart.work.key": first.key, "statechart.work.attempt": 1,
        "statechart.work.owner": "w", "statechart.work.result": "retry",
        "statechart.work.handler": "do_it", "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "do_it", "error.type": "WorkFailed"}
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.status.description == "the tool said 503"
    assert (done.attributes or {})["statechart.work.result"] == "completed"
    assert done.status.status_code == StatusCode.UNSET
    # From the claim to the outcome: the outcome's own span lies within it.
    outcome = next(s for s in exporter.get_finished_spans() if s.name == "work job")
    assert done.start_time is not None and outcome.start_time is not None
    assert done.start_time <= outcome.start_time
    send = {(s.attributes or {})["statechart.run.id"]: s for s in exporter.get_finished_spans()
            if s.name == "send job"}
    assert [link.context.span_id for link in done.links] == [
        send[second.run_id].context.span_id]
