"""Spans of runs through a store (the `otel` extra; part of the conformance suite: every
backend, both APIs), exported by the OpenTelemetry SDK's in-memory exporter: one span per
event taken or refused, after the commit; the run's trace context kept with the run, so that
every later step joins its trace; a caller's own span is the parent then, linked to the
run's; timers and work link to the span of the step that armed or enqueued them, also when
another process (here: another listener, its own memory empty) fires or claims them; a step
whose write failed is never exported; without a tracing listener, nothing is kept."""

from __future__ import annotations

import datetime as dt
import time
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode
from store_support import Backend, Clock, gate_class, import_path, job_class

from statechart_runtime.errors import StoreError
from statechart_runtime.otel import TracingListener
from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import open_store

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)
# `waiting` times out after 30 s; `again` leaves it and enters it again (its timer armed
# again, by that step).
LAMP = """\
statechart: lamp
version: 1
initial: idle
states:
  idle: {on: {go: waiting}}
  waiting:
    on: {again: waiting}
    after: {30s: expired}
  expired: {final: true}
"""


def lamp_class(folder: Any) -> type[Any]:
    spec = checked_text(LAMP)
    assert spec is not None
    path = folder / "lamp_tracing_test.py"
    path.write_bytes(generate(spec)["generated/lamp.py"])
    return import_path(path, "lamp_tracing_test").Lamp  # type: ignore[no-any-return]


# `waiting` times out at its `dueAt`; `postpone` sets it again from a state inside
# `waiting` to another (its timer armed again by that step, `waiting` not entered again);
# `poke` is targetless: nothing entered, no timer armed again.
DUE = """\
statechart: due
version: 1
initial: idle
record:
  dueAt: {type: datetime}
  note: {type: string}
states:
  idle: {on: {go: {target: waiting, set: [dueAt]}}}
  waiting:
    initial: asked
    on: {poke: {set: [note]}}
    after: {dueAt: expired}
    states:
      asked: {on: {postpone: {target: reminded, set: [dueAt]}}}
      reminded: {on: {postpone: {target: asked, set: [dueAt]}}}
  expired: {final: true}
"""
# `inner` times out after 30 s; `reset` leaves `outer` and enters it again, and `inner` with
# it (its timer armed again, by that step), though no transition targets `inner`.
NEST = """\
statechart: nest
version: 1
initial: outer
states:
  outer:
    initial: inner
    on: {reset: outer}
    states:
      inner:
        after: {30s: late}
      late: {on: {stop: done}}
  done: {final: true}
"""


def spec_class(folder: Any, text: str, name: str, attr: str) -> type[Any]:
    spec = checked_text(text)
    assert spec is not None
    path = folder / f"{name}_tracing_test.py"
    path.write_bytes(generate(spec)[f"generated/{name}.py"])
    return getattr(import_path(path, f"{name}_tracing_test"), attr)  # type: ignore[no-any-return]


def links(span: Any) -> list[tuple[int, dict[str, Any]]]:
    return [(link.context.span_id, dict(link.attributes or {})) for link in span.links]


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
    assert links(timer) == [
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


def test_a_timer_links_to_the_step_that_entered_its_state_last_in_another_process(
        backend: Backend, tmp_path: Any,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    lamp = lamp_class(tmp_path)
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    store.create(lamp(run_id="l1", clock=clock))
    store.fire(lamp, "l1", "go")
    clock.advance(10 * SECOND)
    store.fire(lamp, "l1", "again")  # the timer armed again: due 30 s from now
    store.close()
    entered_again = exporter.get_finished_spans()[-1]
    assert (entered_again.attributes or {})["statechart.event"] == "again"
    # Another listener (another process's: it remembers no span) fires the timer.
    exporter.clear()
    elsewhere = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    clock.advance(30 * SECOND)
    assert elsewhere.fire_due(lamp, "l1").applied
    [timer] = exporter.get_finished_spans()
    assert timer.name == "timer lamp"
    assert links(timer) == [
        (entered_again.context.span_id, {"statechart.link": "armed"})]


def test_work_links_to_the_step_that_enqueued_it_in_another_process(
        backend: Backend, tmp_path: Any,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    job = job_class(tmp_path)
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    store.create(job(run_id="j1", clock=clock))
    store.fire(job, "j1", "start")
    store.fire(job, "j1", "redo")  # `working` entered again: a new item, enqueued by redo
    store.close()
    redo = exporter.get_finished_spans()[-1]
    assert (redo.attributes or {})["statechart.event"] == "redo"
    exporter.clear()
    elsewhere = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    claim = elsewhere.claim_work(job, owner="w")
    assert claim is not None and claim.key == "j1/working/1"
    elsewhere.complete_work(job, claim, "done", output=1)
    by_name = {s.name: s for s in exporter.get_finished_spans()}
    assert sorted(by_name) == ["work job", "work_attempt job"]
    for span in by_name.values():
        assert links(span) == [(redo.context.span_id, {"statechart.link": "enqueued"})], span.name
        assert span.context.trace_id == redo.context.trace_id


def test_a_step_whose_write_failed_is_never_exported(
        ticket: ModuleType, backend: Backend, tmp_path: Any,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    lamp = lamp_class(tmp_path)
    store = open_store(backend.url, listeners=[TracingListener(provider)])
    store.create(lamp(run_id="l1"))
    # The history's INSERT fails inside the fire's transaction: its span, started before
    # the write (`go` enters `waiting`, whose timer links back to it), is never ended.
    if backend.name == "sqlite":
        backend.execute("CREATE TRIGGER refuse BEFORE INSERT ON history "
                        "BEGIN SELECT RAISE(ABORT, 'refused by a test'); END")
    else:
        backend.execute("CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                        "RAISE EXCEPTION 'refused by a test'; END $$ LANGUAGE plpgsql")
        backend.execute("CREATE TRIGGER refuse BEFORE INSERT ON history "
                        "FOR EACH ROW EXECUTE FUNCTION refuse()")
    with pytest.raises(StoreError):
        store.fire(lamp, "l1", "go")
    backend.execute("DROP TRIGGER refuse" + ("" if backend.name == "sqlite" else " ON history"))
    store.fire(lamp, "l1", "go")
    assert [(s.name, (s.attributes or {}).get("statechart.event"))
            for s in exporter.get_finished_spans()] == [("create lamp", None), ("send lamp", "go")]
    # The state's row holds the context of the span exported, not of the one lost.
    [(kept,)] = backend.rows("SELECT trace_context FROM run_states WHERE run_id = 'l1'")
    span_id = exporter.get_finished_spans()[-1].context.span_id
    assert f"-{span_id:016x}-" in kept
    # A spec with no timer and no work keeps no step's context: nothing links back to it.
    store.create(ticket.Ticket(run_id="t1"))
    store.fire(ticket.Ticket, "t1", "approve", note="ok")
    assert backend.rows("SELECT trace_context FROM run_states WHERE run_id = 't1'") == [
        (None,)]
    assert exporter.get_finished_spans()[-1].name == "send ticket"


def test_without_a_tracing_listener_nothing_is_kept(
        backend: Backend, tmp_path: Any) -> None:
    job = job_class(tmp_path)
    seen: list[Any] = []
    store = open_store(backend.url, listeners=[seen.append])  # a listener, not a tracing one
    store.create(job(run_id="j1"))
    store.fire(job, "j1", "start")
    claim = store.claim_work(job, owner="w")
    assert claim is not None and claim.origin_context is None
    assert backend.rows("SELECT trace_context FROM runs") == [(None,)]
    assert backend.rows("SELECT trace_context FROM run_states") == [(None,)]
    assert backend.rows("SELECT trace_context FROM work_items") == [(None,)]
    assert all(getattr(s, "origin_context", None) is None for s in seen)
    assert all(getattr(s, "step_context", None) is None for s in seen)


def test_a_deadline_set_again_links_to_the_step_that_set_it(
        backend: Backend, tmp_path: Any,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    due = spec_class(tmp_path, DUE, "due", "Due")
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    store.create(due(run_id="d1", clock=clock))
    store.fire(due, "d1", "go", dueAt=T0 + 30 * SECOND)
    store.fire(due, "d1", "postpone", dueAt=T0 + 60 * SECOND)  # armed again: not entered
    store.fire(due, "d1", "poke", note="still there")  # targetless: armed nothing
    store.close()
    postponed, poked = exporter.get_finished_spans()[-2:]
    assert (postponed.attributes or {})["statechart.event"] == "postpone"
    assert (poked.attributes or {})["statechart.event"] == "poke"
    exporter.clear()
    elsewhere = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    clock.advance(61 * SECOND)
    assert elsewhere.fire_due(due, "d1").applied
    [timer] = exporter.get_finished_spans()
    assert links(timer) == [(postponed.context.span_id, {"statechart.link": "armed"})]


def test_a_state_entered_again_with_its_parent_links_to_that_step(
        backend: Backend, tmp_path: Any,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    nest = spec_class(tmp_path, NEST, "nest", "Nest")
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    store.create(nest(run_id="n1", clock=clock))
    clock.advance(10 * SECOND)
    store.fire(nest, "n1", "reset")  # outer and inner exited and entered again
    store.close()
    reset = exporter.get_finished_spans()[-1]
    assert (reset.attributes or {})["statechart.event"] == "reset"
    exporter.clear()
    elsewhere = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    clock.advance(30 * SECOND)
    assert elsewhere.fire_due(nest, "n1").applied
    [timer] = exporter.get_finished_spans()
    assert links(timer) == [(reset.context.span_id, {"statechart.link": "armed"})]


def test_a_loaded_run_stepped_in_memory_links_as_the_stores_fire_does(
        backend: Backend, tmp_path: Any,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    lamp = lamp_class(tmp_path)
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    store.create(lamp(run_id="l1", clock=clock))
    store.fire(lamp, "l1", "go")
    store.close()
    go = exporter.get_finished_spans()[-1]
    exporter.clear()
    # Another process loads it, enters `waiting` again in memory and saves it: that step's
    # context is kept with the state, and with the run's mark for its next save.
    elsewhere = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    run = elsewhere.load(lamp, "l1", clock=clock)
    clock.advance(10 * SECOND)
    run.send("again")
    elsewhere.save(run)
    [again] = exporter.get_finished_spans()
    assert (again.attributes or {})["statechart.via"] == "save"
    assert again.context.trace_id == go.context.trace_id
    exporter.clear()
    # A third saves the timer fired in memory (nothing of the steps in its memory): linked to
    # the step that armed it, as the store's fire_due links.
    third = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    clock.advance(30 * SECOND)
    assert run.fire_due() == ["after.delay1.waiting"]
    third.save(run)
    [timer] = exporter.get_finished_spans()
    assert timer.name == "timer lamp"
    assert links(timer) == [(again.context.span_id, {"statechart.link": "armed"})]
    # A run loaded and timed out in memory, saved: linked to the stored step.
    store = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    store.create(lamp(run_id="l2", clock=clock))
    store.fire(lamp, "l2", "go")
    go = exporter.get_finished_spans()[-1]
    exporter.clear()
    fourth = open_store(backend.url, clock=clock, listeners=[TracingListener(provider)])
    loaded = fourth.load(lamp, "l2", clock=clock)
    clock.advance(31 * SECOND)
    loaded.fire_due()
    fourth.save(loaded)
    [timer] = exporter.get_finished_spans()
    assert links(timer) == [(go.context.span_id, {"statechart.link": "armed"})]


def _made(exporter: InMemorySpanExporter) -> list[tuple[Any, ...]]:
    """The spans exported but for their own ids (a batch's are made by another listener)."""
    return [(s.name, dict(s.attributes or {}), s.start_time, s.end_time, s.context.trace_id,
             None if s.parent is None else s.parent.span_id,
             links(s),
             s.status.status_code) for s in exporter.get_finished_spans()]


def test_spans_made_in_batches_are_the_spans_made_at_once(
        ticket: ModuleType, backend: Backend, tmp_path: Any,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    batched_exporter = InMemorySpanExporter()
    batched_provider = TracerProvider()
    batched_provider.add_span_processor(SimpleSpanProcessor(batched_exporter))
    # Both told the same observations; the first gives the runs' and the steps' contexts.
    batched = TracingListener(batched_provider, batch=3, max_delay=60)
    lamp = lamp_class(tmp_path)
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock,
                       listeners=[TracingListener(provider), batched])
    store.create(ticket.Ticket(run_id="t1"))
    store.fire(ticket.Ticket, "t1", "approve", note="ok")
    assert batched_exporter.get_finished_spans() == ()  # waiting for a batch of three
    with pytest.raises(EventNotAccepted):
        store.fire(ticket.Ticket, "t1", "approve", note="again")
    with provider.get_tracer("a web service").start_as_current_span("POST /reopen"):
        store.fire(ticket.Ticket, "t1", "reopen", note="no")  # the third: a batch made
    assert len(batched_exporter.get_finished_spans()) == 3
    store.create(lamp(run_id="l1", clock=clock))
    store.fire(lamp, "l1", "go")  # started before the write by the first: not kept
    clock.advance(31 * SECOND)
    store.fire_due(lamp, "l1")  # kept, with the link to the step that armed it
    batched.flush()
    made = [one for one in _made(exporter) if not one[0].startswith(("create", "POST"))]
    assert len(made) == 5
    assert _made(batched_exporter) == made


def test_spans_kept_for_a_batch_are_made_after_max_delay(
        ticket: ModuleType, backend: Backend,
        spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    store = open_store(backend.url, listeners=[
        TracingListener(provider, batch=100, max_delay=0.05)])
    store.create(ticket.Ticket(run_id="t1"))
    store.fire(ticket.Ticket, "t1", "approve", note="ok")
    deadline = time.monotonic() + 10
    while len(exporter.get_finished_spans()) < 2:
        assert time.monotonic() < deadline, "the waiting span was never made"
        time.sleep(0.02)
    assert [s.name for s in exporter.get_finished_spans()] == ["create ticket", "send ticket"]
    with pytest.raises(ValueError, match="batch must be 0 or more"):
        TracingListener(provider, batch=-1)
    with pytest.raises(ValueError, match="max_delay"):
        TracingListener(provider, max_delay=0)
