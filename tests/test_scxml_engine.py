"""Exported SCXML run in an engine that is not ours: python-statemachine's SCXML reader
(`statemachine.io.load`), its own interpreter, without our runtime.

Every spec of specs/ and every conformance spec is exported and loaded there; the conformance
traces recorded from XState are replayed through the loaded machine (guards answering as
recorded, on a model object; each action is a `<log label>`, which the engine prints, so the
printed lines are the actions in order), comparing the configuration (as a set), the actions
and whether the run ended, wherever the library's known departures from SCXML
(docs/semantics.md, "Which engine does what") allow:

- **timers**: the engine's delayed `<send>` waits on the wall clock inside `send`, so a
  sequence stops before its first clock advance and before a step that enters a state with a
  timer (a sequence starting in one is skipped);
- **top-level final / parallel end**: the engine runs no exit action when the run ends, and
  does not call a finished top-level parallel state terminated: those exit actions are left
  out of the step's expected actions, and `ended` is compared for a top-level final only;
- **conflicts between regions**: the engine walks active states in the order they were
  entered: a step where two or more active states of a parallel configuration handle the
  event may select otherwise, and the rest of the sequence is not compared;
- **order across regions**: the reader takes a state's `<state>` children first, then its
  `<final>`s, then its `<parallel>`s; the library numbers a region's states wrongly when they
  are written before its initial one, and exits a parallel state's atomic states before the
  regions that hold them: in a spec with a parallel state, a step whose actions differ from
  the trace's only in their order (the same configuration, the same actions) is counted, and
  the sequence goes on.

Anything else is a divergence and fails. `docs/scxml.md` has the figures of the full run
(`python tests/test_scxml_engine.py` prints them).
"""

from __future__ import annotations

import contextlib
import io
import types
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from codegen_support import checked_spec, checked_text, traced_spec
from conformance_traces import trace_files
from statemachine.io import load

from statechart.model import Spec
from statechart.scxml.export import scxml_text

ROOT = Path(__file__).resolve().parent.parent


def _traces() -> list[dict[str, Any]]:
    return [spec for _, _, specs in trace_files() for spec in specs]


TRACED = _traces()


def loaded(spec: Spec) -> Any:
    """The machine class python-statemachine makes of the exported document."""
    return load(scxml_text(spec, ["exported for python-statemachine"]), format="scxml")


@pytest.mark.parametrize("path", sorted((ROOT / "specs").glob("*.yaml")),
                         ids=lambda p: p.stem)
def test_the_repositorys_specs_load_and_run(path: Path) -> None:
    machine = loaded(checked_spec(path))(model=types.SimpleNamespace(can_retry=True))
    assert sorted(machine.configuration_values) == ["created"]
    for event in ("triage", "start", "call_tool", "interrupt", "resume", "proceed"):
        machine.send(event)
    # `proceed` enters `running` by its deep history: back in the tool call.
    assert sorted(machine.configuration_values) == ["running", "tool_call"]


def _ending_exits(spec: Spec, configuration: list[str]) -> list[str]:
    """The exit actions XState runs when a run ends (deepest first), which this engine does
    not."""
    order = list(spec.states)
    ordered = sorted(configuration, key=order.index, reverse=True)
    return [a for s in ordered for a in spec.states[s].exit]


def _conflicting(spec: Spec, configuration: set[str], event: str) -> bool:
    handlers = {s for s in configuration for t in spec.states[s].transitions if t.event == event}
    return len(handlers) > 1 and any(spec.states[s].kind == "parallel" for s in configuration)


def _reordered(spec: Spec) -> bool:
    """Whether the engine may order exits and entries across regions otherwise than SCXML:
    in a spec with a parallel state (its reader takes a state's `<state>` children first,
    then its `<final>`s, then its `<parallel>`s; the library numbers a region's states wrongly
    when they are written before its initial one, and exits a parallel state's atomic states
    before the regions that hold them)."""
    return any(s.kind == "parallel" for s in spec.states.values())


def _act(machine_class: type, guards: dict[str, bool], event: str | None,
         machine: Any = None) -> tuple[Any, list[str]]:
    """Create the machine (event None) or send it `event`; the actions it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        if machine is None:
            machine = machine_class(model=types.SimpleNamespace(**guards))
        else:
            machine.send(event)
    return machine, printed.getvalue().split()


def replay(trace: dict[str, Any]) -> Counter[str]:
    """What happened to each sequence of the trace (see the module's docstring), and a
    `divergence: ...` entry for each step the departures do not explain."""
    spec = traced_spec(trace["yaml"], f"{trace['name']}.yaml")
    assert spec is not None
    machine_class = loaded(spec)
    timed = {t.source for t in spec.timers()}
    renumbered = _reordered(spec)
    out: Counter[str] = Counter()
    for index, sequence in enumerate(trace["sequences"]):
        where = f"{trace['name']} seq {index}"
        out["steps in the traces"] += len(sequence["steps"])
        if timed & set(trace["initial"][1]):
            out["skipped: starts in a state with a timer"] += 1
            continue
        machine, actions = _act(machine_class, trace["guards"], None)
        config = sorted(machine.configuration_values)
        if config != sorted(trace["initial"][1]):
            out[f"divergence: {where} initial: {config} != {trace['initial'][1]}"] += 1
            continue
        if actions != trace["initial"][2]:
            if not (renumbered and sorted(actions) == sorted(trace["initial"][2])):
                out[f"divergence: {where} initial actions {actions}"] += 1
                continue
            out["steps in another order across regions"] += 1
        outcome = "replayed whole"
        for j, (event, step) in enumerate(zip(sequence["events"], sequence["steps"],
                                              strict=False)):
            if isinstance(event, int):
                outcome = "replayed up to a clock advance"
                break
            if timed & set(step[1]):
                outcome = "replayed up to a state with a timer"
                break
            before = set(machine.configuration_values)
            machine, actions = _act(machine_class, trace["guards"], event, machine)
            expected_actions = list(step[2])
            ends = bool(step[3])
            if ends:
                tail = _ending_exits(spec, step[1])
                if tail and expected_actions[-len(tail):] == tail:
                    del expected_actions[-len(tail):]
            config = sorted(machine.configuration_values)
            top = [s for s in step[1] if spec.states[s].parent is None]
            top_final = ends and top and spec.states[top[0]].kind == "final"
            agree = config == sorted(step[1]) and (
                not top_final or bool(machine.is_terminated))
            out["steps compared"] += 1
            if agree and actions == expected_actions:
                continue
            if _conflicting(spec, before, event):
                outcome = "stopped: regions conflicting on the event"
                break
            if agree and renumbered and sorted(actions) == sorted(expected_actions):
                out["steps in another order across regions"] += 1
                continue
            out[f"divergence: {where} step {j} `{event}`: {config} {actions} != "
                f"{sorted(step[1])} {expected_actions}"] += 1
            outcome = "diverged"
            break
        out[outcome] += 1
    return out


def _divergences(counts: Counter[str]) -> list[str]:
    return [k for k in counts if k.startswith("divergence")]


# Every thirtieth traced spec in the default run (this engine takes several milliseconds per
# event), every one with `pytest -m slow`.
@pytest.mark.parametrize("trace", [
    t if i % 30 == 0 else pytest.param(t, marks=pytest.mark.slow)
    for i, t in enumerate(TRACED)], ids=[t["name"] for t in TRACED])
def test_exported_conformance_specs_replay_their_traces(trace: dict[str, Any]) -> None:
    counts = replay(trace)
    assert not _divergences(counts), "\n".join(_divergences(counts)) + "\n" + trace["yaml"]


def figures() -> None:
    """The figures of docs/scxml.md (`python tests/test_scxml_engine.py`): how many sequences
    and steps of the traces this engine replays. Not a test: the slow run replays every spec
    already (`test_exported_conformance_specs_replay_their_traces`), and twice would double
    CI's slowest part."""
    total: Counter[str] = Counter()
    for trace in TRACED:
        total += replay(trace)
    print(f"{len(TRACED)} specs loaded; sequences and steps:")
    for key, count in sorted(total.items()):
        print(f"  {count:6d}  {key}")


EVENTLESS = """\
statechart: triage
version: 1
initial: new
states:
  new:
    on: {triage: triaged}
  triaged:
    always:
      - {target: urgent, guard: is_urgent, actions: [page_on_call]}
      - {target: normal, guard: ready, in: [triaged]}
      - target: waiting
  urgent: {on: {close: closed}}
  normal: {on: {close: closed}}
  waiting:
    always: {target: normal, guard: ready}
    on: {close: closed}
  closed: {final: true}
"""


@pytest.mark.parametrize("guards,configuration,actions", [
    ({"is_urgent": True, "ready": True}, ["urgent"], ["page_on_call"]),
    ({"is_urgent": False, "ready": True}, ["normal"], []),
    ({"is_urgent": False, "ready": False}, ["waiting"], []),
])
def test_eventless_transitions_run_in_the_engine(guards: dict[str, bool],
                                                 configuration: list[str],
                                                 actions: list[str]) -> None:
    """`always:` exported as `<transition>`s without `event`: the engine takes the first
    enabled one right after the event's step, in document order."""
    spec = checked_text(EVENTLESS, "triage.yaml")
    assert spec is not None
    machine, _ = _act(loaded(spec), guards, None)
    machine, printed = _act(type(machine), guards, "triage", machine)
    assert (sorted(machine.configuration_values), printed) == (configuration, actions)


if __name__ == "__main__":
    figures()
