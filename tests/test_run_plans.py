"""Planned steps (statechart_runtime.chart.plans, `Run._take_planned`) against the kernel.

A run that steps without a machine or actions takes an event by its plan where one holds;
every other event goes through `kernel.select` / `kernel.step` / `kernel.commit`. Here two
runs of the same generated class walk the same random events with the same values and clock:
one as generated, one whose planned path is turned off (`Kernel`, the reference); after each
event both must have raised the same error (or none) and hold equal records; with actions on
every state and transition (some raising), both must have called the same ones in order. The specs: the
project's, bench/agent_run_v1.yaml, and every fourth of the XState conformance traces' specs
(parallel regions, history, `in:`, eventless transitions, timers, limits, `requires:`...).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import (
    checked_spec,
    generate,
    import_source,
    method_name,
    parts,
    sample,
    traced_spec,
)
from conformance_traces import trace_files

from statechart_runtime.chart import plans
from statechart_runtime.psm.machine import direct_calls
from statechart_runtime.run import spec_of

ROOT = Path(__file__).resolve().parent.parent
PROJECT_SPECS = [ROOT / "specs" / "agent_run.yaml", ROOT / "specs" / "support_run.yaml",
                 ROOT / "bench" / "agent_run_v1.yaml"]
TRACED = [spec for _, _, part in trace_files() for spec in part][::4]
START = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


def _module(spec: Any, folder: Path) -> ModuleType:
    return import_source(generate(spec)[f"generated/{spec.name}.py"], folder, spec.name)


def _kernel_class(facade: type) -> type:
    """The facade with no planned path: every event selected and stepped by the kernel."""

    class Kernel(facade):  # type: ignore[misc, valid-type]
        def _take_planned(self, event: str, checked: Any, at: dt.datetime) -> bool:
            return False

    return Kernel


def _with_actions(facade: type, actions: list[str]) -> type:
    """The facade with the spec's actions (`actions`: their names), each noting its name in
    `self.calls`; every seventh call raises (the step is then taken back whole)."""

    def action(name: str) -> Any:
        def act(self: Any) -> None:
            self.calls.append(name)
            if len(self.calls) % 7 == 0:
                raise RuntimeError(f"{name} failed")
        return act

    return type(f"Acting{facade.__name__}", (facade,), {name: action(name) for name in actions})


def _outcome(run: Any, method: str, kwargs: dict[str, Any]) -> str | None:
    try:
        getattr(run, method)(**kwargs)
    except Exception as exc:  # the same refusal, by type and message, on both sides
        return f"{type(exc).__name__}: {exc}"
    return None


def _told(seen: list[Any]) -> list[dict[str, Any]]:
    """What listeners were told, without what differs between two runs of the same steps:
    the calls' times and the refusals' exception objects (their type and message kept)."""
    found = [{f.name: getattr(one, f.name) for f in dataclasses.fields(one)} for one in seen]
    for fields in found:
        fields["started"] = fields["ended"] = None
        if "error" in fields:
            fields["error"] = f"{type(fields['error']).__name__}: {fields['error']}"
    seen.clear()
    return found


def _walk(module: ModuleType, steps: int, seed: int, actions: list[str] = (),
          listened: bool = False) -> int:
    """Random events (a value left out now and then, time moving on where no timer is
    armed) sent to a planned run and to a kernel run, of the class with the spec's
    `actions` if any (`listened`: both runs watched by a listener, which must be told the
    same); returns how many had a plan."""
    facade, _, events = parts(module)
    if actions:
        machine = getattr(module, facade.__name__ + "Machine")
        facade = _with_actions(facade, list(actions))
        assert direct_calls(facade, machine) is not None  # its runs step without a machine
    rng = random.Random(seed)
    now = [START]

    def clock() -> dt.datetime:
        return now[0]

    planned = _outcome_of_new(facade, clock)
    reference = _outcome_of_new(_kernel_class(facade), clock)
    if planned is None or reference is None:
        assert planned is reference  # an initial entry action raised on both sides
        return 0
    assert planned.record == reference.record
    planned_seen: list[Any] = []
    reference_seen: list[Any] = []
    if listened:
        planned.listen(planned_seen.append)
        reference.listen(reference_seen.append)
    spec = spec_of(facade)
    choices = [e.value for e in events if e.value not in spec.internal]
    taken_by_plan = 0
    for _ in range(steps):
        if planned.is_terminated:
            break
        event = rng.choice(choices)
        method = method_name(module, event)
        annotations = getattr(facade, method).__annotations__
        kwargs = {name: None if rng.random() < 0.15 else sample(module, ann)
                  for name, ann in annotations.items() if name != "return"}
        if not spec.timers:  # (with timers, which no plan takes: a loop of timer steps)
            now[0] += dt.timedelta(seconds=rng.choice((0, 1, 90, 4000)))
        before = tuple(s.value for s in planned.configuration)
        if plans.plan(spec, before, event) is not None:
            taken_by_plan += 1
        got = _outcome(planned, method, kwargs)
        expected = _outcome(reference, method, kwargs)
        assert got == expected, (event, before)
        assert planned.record == reference.record, (event, before)
        assert planned.configuration == reference.configuration
        if actions:
            assert planned.calls == reference.calls, (event, before)
        assert _told(planned_seen) == _told(reference_seen), (event, before)
    return taken_by_plan


def _outcome_of_new(facade: type, clock: Any) -> Any:
    """A new run of `facade` (with a list of its own for the actions' calls), or None when
    one of its initial entry actions raised."""
    run = facade.__new__(facade)
    run.calls = []
    try:
        run.__init__(run_id="w", clock=clock)
    except RuntimeError:
        return None
    return run


@pytest.mark.parametrize("path", PROJECT_SPECS, ids=lambda p: p.stem)
def test_planned_steps_match_the_kernel_on_the_project_specs(path: Path,
                                                             tmp_path: Path) -> None:
    module = _module(checked_spec(path), tmp_path)
    taken = sum(_walk(module, 80, seed) for seed in range(6))
    # Plans were taken, unless the spec has none (timers or remembered history).
    assert taken > 0 or not plans.plannable(spec_of(parts(module)[0]))


def test_planned_steps_match_the_kernel_on_the_traced_specs(tmp_path: Path) -> None:
    planned = 0
    for index, trace in enumerate(TRACED):
        spec = traced_spec(trace["yaml"], f"{trace['name']}.yaml")
        assert spec is not None, trace["name"]
        planned += _walk(_module(spec, tmp_path), 40, index)
    assert planned > 100


def test_planned_steps_call_the_actions_on_the_traced_specs(tmp_path: Path) -> None:
    planned = 0
    for index, trace in enumerate(TRACED[::3]):
        spec = traced_spec(trace["yaml"], f"{trace['name']}.yaml")
        assert spec is not None, trace["name"]
        planned += _walk(_module(spec, tmp_path), 40, index, trace["actions"])
    assert planned > 30


def test_planned_steps_tell_listeners_what_the_kernel_does(tmp_path: Path) -> None:
    # A watched run (a listener, or a store's tracing) takes its plans too: its macrosteps
    # recorded as the kernel's path records them.
    planned = 0
    for index, trace in enumerate(TRACED[::2]):
        spec = traced_spec(trace["yaml"], f"{trace['name']}.yaml")
        assert spec is not None, trace["name"]
        planned += _walk(_module(spec, tmp_path), 40, index,
                         trace["actions"] if index % 2 else (), listened=True)
    assert planned > 50


def test_a_plan_is_made_only_where_nothing_of_the_run_can_change_it(tmp_path: Path) -> None:
    facade = parts(_module(checked_spec(ROOT / "bench" / "agent_run_v1.yaml"), tmp_path))[0]
    spec = spec_of(facade)
    triage = plans.plan(spec, ("created",), "triage")
    assert triage is not None and triage.configuration == ("triaging",)
    # A field the caller must give, and a state that requires it after the step.
    interrupt = plans.plan(spec, ("running", "reasoning"), "interrupt")
    assert interrupt is not None and interrupt.needs == {"interruptReason"}
    assert ("interrupted", "interruptReason") in interrupt.required
    # `error` asks the guard can_retry, and looks at `retrying`, which has a limit.
    assert plans.plan(spec, ("running", "reasoning"), "error") is None
    assert plans.plan(spec, ("created",), "no_such_event") is None
