"""Targetless transitions (no `target`) and internal ones (`internal: true`), end to end: what a
run does (docs/semantics.md), the record and its integrity check, a run store, the record's
JSON Schema, `diff`, overlays and the pictures."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source, validator

from statechart.diff import diff_specs
from statechart.linter import check_file
from statechart.render import docs
from statechart.render.dot import dot_source
from statechart.render.mermaid import mermaid_source
from statechart_runtime.store import open_store

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)

AGENT = """\
statechart: agent
version: 1
initial: running
record:
  percent: {type: integer}
  node: {type: string}
states:
  running:
    initial: reasoning
    entry: [start_running]
    exit: [stop_running]
    on:
      progress: {set: [percent]}
      call_tool: {target: tool_call, internal: true}
      restart: reasoning
      stop: done
    after:
      1h: timed_out
    states:
      reasoning:
        entry: [start_reasoning]
        exit: [stop_reasoning]
        on:
          node_changed: [{set: [node], guard: tracked}, {target: tool_call}]
      tool_call:
        after:
          10m:
            - {guard: keep_waiting}
            - {target: reasoning}
        on: {back: reasoning}
  timed_out: {final: true}
  done: {final: true}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Any]:
    spec = checked_text(AGENT)
    assert spec is not None
    out = generate(spec)
    module = import_source(out["generated/agent.py"], tmp_path_factory.mktemp("kinds"), "agent")
    return module, validator(out["generated/agent.schema.json"])


def run_of(module: ModuleType, *, tracked: bool = True, keep_waiting: bool = True) -> Any:
    class Agent(module.Agent):  # type: ignore[misc, name-defined]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.log: list[str] = []
            super().__init__(*args, **kwargs)

        def tracked(self) -> bool:
            return tracked

        def keep_waiting(self) -> bool:
            return keep_waiting

    for action in ("start_running", "stop_running", "start_reasoning", "stop_reasoning"):
        setattr(Agent, action, lambda self, name=action: self.log.append(name))
    return Agent(run_id="r", clock=lambda: T0)


def names(run: Any) -> list[str]:
    return [s.value for s in run.configuration]


def test_a_targetless_transition_changes_data_not_state(built: tuple[ModuleType, Any]) -> None:
    module, schema = built
    run = run_of(module)
    run.call_tool()
    run.log.clear()
    run.send_at(T0 + dt.timedelta(minutes=30), "progress", percent=40)
    assert names(run) == ["running", "tool_call"]  # it did not forget what it was doing
    assert run.record.percent == 40 and run.log == []  # no exit or entry action ran
    step = run.record.history[-1]
    assert (step.source.value, step.target.value, step.kind) == ("running", "running",
                                                                 "targetless")
    data = run.record.to_dict()
    assert data["history"][-1] == {"event": "progress", "source": "running",
                                   "target": "running", "at": "2030-01-01T00:30:00+00:00",
                                   "values": {"percent": 40}, "kind": "targetless"}
    schema.validate(data)
    assert module.AgentRecord.from_dict(data).percent == 40  # the check replays it
    # The state's timer was armed at entry and keeps running: still due at 1h, not 1h30.
    assert [t.due for t in run.timers if t.state.value == "running"] == [
        T0 + dt.timedelta(hours=1)]
    assert run.fire_due(T0 + dt.timedelta(hours=1)) == ["after.delay1.running"]
    assert names(run) == ["timed_out"]


def test_a_guarded_targetless_alternative_falls_through(built: tuple[ModuleType, Any]) -> None:
    module, _ = built
    run = run_of(module, tracked=False)
    run.log.clear()
    run.node_changed(node="n1")  # `tracked` says no: the run goes on to tool_call
    assert run.log == ["stop_reasoning"] and run.record.node is None
    assert names(run) == ["running", "tool_call"]
    tracked = run_of(module)
    tracked.log.clear()
    tracked.node_changed(node="n1")
    assert tracked.log == [] and tracked.record.node == "n1"
    assert tracked.record.history[-1].kind == "targetless"


def test_a_targetless_timer_fires_once(built: tuple[ModuleType, Any]) -> None:
    module, _ = built
    run = run_of(module)
    run.call_tool()
    # The 10m timer's targetless alternative is taken: the timer has fired and is not armed
    # again (the state was not re-entered), so nothing fires at 20m.
    assert run.fire_due(T0 + dt.timedelta(minutes=25)) == ["after.delay1.tool_call"]
    assert names(run) == ["running", "tool_call"]
    assert [t.event.value for t in run.timers] == ["after.delay1.running"]
    module.AgentRecord.from_json(run.record.to_json())  # the replay agrees
    waiting = run_of(module, keep_waiting=False)
    waiting.call_tool()
    assert waiting.fire_due(T0 + dt.timedelta(minutes=10)) == ["after.delay1.tool_call"]
    assert names(waiting) == ["running", "reasoning"]


def test_an_internal_transition_keeps_its_source(built: tuple[ModuleType, Any]) -> None:
    module, schema = built
    run = run_of(module)
    run.log.clear()
    run.send_at(T0 + dt.timedelta(minutes=30), "call_tool")
    assert names(run) == ["running", "tool_call"]
    assert run.log == ["stop_reasoning"]  # `running` was neither exited nor entered
    assert run.record.history[-1].kind == "internal"
    assert [t.due for t in run.timers if t.state.value == "running"] == [
        T0 + dt.timedelta(hours=1)]  # its timer keeps running
    data = run.record.to_dict()
    assert data["history"][-1]["kind"] == "internal"
    schema.validate(data)
    module.AgentRecord.from_dict(data)
    # `restart` is external: it exits and re-enters `running`, whose timer starts again.
    run.send_at(T0 + dt.timedelta(minutes=40), "restart")
    assert run.log[1:] == ["stop_running", "start_running", "start_reasoning"]
    assert [t.due for t in run.timers if t.state.value == "running"] == [
        T0 + dt.timedelta(minutes=100)]


@pytest.mark.parametrize(("change", "where", "message"), [
    ({"kind": "internal"}, "history[1].kind", "is taken as a targetless transition, not as "
     "an internal one"),
    ({"kind": None}, "history[1].kind", "is taken as a targetless transition, not as an "
     "external one"),
    ({"kind": "sideways"}, "history[1].kind", "expected `internal`, `targetless` or `multi`"),
    ({"history": "deep"}, "history[1]", "expected an object"),
])
def test_the_check_refuses_a_step_of_another_kind(built: tuple[ModuleType, Any],
                                                  change: dict[str, Any], where: str,
                                                  message: str | None) -> None:
    module, _ = built
    run = run_of(module)
    run.call_tool()
    run.progress(percent=5)
    data = run.record.to_dict()
    step = data["history"][1]
    for key, value in change.items():
        if value is None:
            step.pop(key, None)
        else:
            step[key] = value
    with pytest.raises(module.AgentInvalidRecord, match=message) as refused:
        module.AgentRecord.from_dict(data)
    assert refused.value.field == where


def test_a_store_keeps_the_step_kinds(built: tuple[ModuleType, Any], tmp_path: Path) -> None:
    module, _ = built
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    run = run_of(module)
    store.create(run)
    loaded = store.load(type(run), run.record.runId)
    loaded.call_tool()
    loaded.progress(percent=7)
    store.save(loaded)
    again = store.load(type(run), run.record.runId)
    assert [s.kind for s in again.record.history] == ["internal", "targetless"]
    assert again.record.to_json() == loaded.record.to_json()


FLAT = """\
statechart: flat
version: 1
initial: open
record:
  note: {type: string}
states:
  open:
    on:
      note: {set: [note]}
      close: closed
  closed: {final: true}
"""


def test_a_flat_spec_takes_a_targetless_transition(tmp_path: Path) -> None:
    spec = checked_text(FLAT)
    assert spec is not None
    module = import_source(generate(spec)["generated/flat.py"], tmp_path, "flat")
    run = module.Flat(run_id="f")
    run.note(note="hi")
    assert run.record.status.value == "open" and run.record.note == "hi"
    assert module.FlatRecord.from_json(run.record.to_json()).note == "hi"


def test_diff_reports_a_transition_that_changed_kind() -> None:
    old = checked_text(AGENT)
    new = checked_text(AGENT.replace("progress: {set: [percent]}",
                                     "progress: {target: running, set: [percent]}")
                       .replace("call_tool: {target: tool_call, internal: true}",
                                "call_tool: tool_call"))
    assert old is not None and new is not None
    found = {c.kind: c for c in diff_specs(old, new)}
    kind = found["transition-kind-changed"]
    assert kind.for_runs  # stored runs that took it no longer replay
    changes = [c.message for c in diff_specs(old, new) if c.kind == "transition-kind-changed"]
    assert changes == [
        "`running` on `progress` is now external (to `running`) (was targetless (exits and "
        "enters nothing))",
        "`running` on `call_tool` is now external (to `tool_call`) (was internal (to "
        "`tool_call` without exiting its source))"]


def test_an_overlay_makes_a_transition_targetless(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(AGENT)
    overlay = tmp_path / "team.yaml"
    overlay.write_text("statechart: team\nextends: agent\nstates:\n  running:\n    on:\n"
                       "      restart: {set: [node]}\n")
    result = check_file(overlay)
    assert not result.errors and result.spec is not None
    (restart,) = [t for t in result.spec.transitions() if t.event == "restart"]
    assert restart.targetless and restart.target == "running"
    overlay.write_text(overlay.read_text().replace("{set: [node]}",
                                                   "{target: done, internal: true}"))
    assert [(d.rule, d.span.line) for d in check_file(overlay).errors] == [
        ("invalid-internal", 6)]


def test_pictures_and_pages_say_which_kind() -> None:
    spec = checked_text(AGENT)
    assert spec is not None
    dot = dot_source(spec)
    assert "progress (targetless)" in dot and "call_tool (internal)" in dot
    assert "progress (targetless)" in mermaid_source(spec)
    page = docs.outputs(spec)["docs/specs/agent.md"].decode()
    assert "| `progress` (targetless) | `running` | `running` |" in page
    assert "| `call_tool` (internal) | `running` | `tool_call` |" in page
