"""Every generated path is one the generated class takes (`statechart paths`, item 3 of its
issue): for every spec under `specs/` and `tests/` that `check` accepts (rule cases, golden
and render specs), every spec of the XState conformance traces (delay timers, completion,
history, parallel states) and random specs (the soundness generator's, with timers and limits
added), the paths of each cover (`transitions`, `states`, `guards`) are followed by the
generated class (`testing.follow`: the transitions taken, the timers fired, the configuration
and status after every step must be the path's), and they take exactly what the result
says is covered: everything else is listed as unreachable, never as a path that fails.

A state a path reaches must be one `check`'s graph reaches too (its graph assumes guards,
limits and required fields allow everything, so it may reach more).

The default run takes a sample (every twelfth spec of the traces, with fewer configurations
explored, and a few random specs); `slow` takes every third spec of the traces, each cover, and
the whole random set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from codegen_support import checked_text, traced_spec
from conformance_traces import trace_files
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from test_property_check import valid_specs
from test_soundness import PlainDumper, _extend, _states_of

from statechart import semantics
from statechart.codegen.in_memory import run_class
from statechart.graph import Graph
from statechart.linter import check_file
from statechart.model import Spec
from statechart_runtime import testing
from statechart_runtime.errors import MacrostepLoop
from statechart_runtime.explore import Space

ROOT = Path(__file__).resolve().parent.parent
SPEC_FILES = sorted(p for p in [*ROOT.glob("specs/*.yaml"), *ROOT.glob("tests/**/*.yaml")]
                    if "hostile" not in p.parts)

HISTORY = ("shallow", "deep")  # the kinds of a step that entered its target by history


def _conformance_specs() -> list[tuple[str, str]]:
    return [(spec["name"], spec["yaml"]) for _, _, specs in trace_files() for spec in specs]


CONFORMANCE = _conformance_specs()


def paths_hold(spec: Spec, covers: tuple[testing.Cover, ...] = testing.COVERS,
               limit: int = testing.MAX_CONFIGURATIONS) -> dict[str, int]:
    """Follow every path of every cover; returns, per cover, how many items are covered.
    With `limit` configurations explored at most, what is not reached is listed as such."""
    run = run_class(spec)
    reachable = Graph(spec).reachable([spec.initial])
    chart = semantics.chart(spec)
    counts = {}
    for cover in covers:
        found = testing.paths(run, cover, max_configurations=limit)
        assert found.complete or found.configurations == limit
        taken: set[testing.Item] = set()
        by_default: set[str] = set()
        answers: set[tuple[str, bool]] = set()
        # A new run's, with or without paths (and what its constructor's eventless steps
        # took: Space.opening)
        space = Space(run)
        start = space.start()
        opening, entered = space.opening
        states = {*semantics.initial_configuration(spec), *start.configuration, *entered}
        taken |= {testing.Item("transition", source, event, position, target)
                  for source, event, target, _, position in opening}
        for path in found.paths:
            testing.follow(run, path)  # PathMismatch says which step and what differs
            assert path.steps
            for step in path.steps:
                taken |= {testing.Item("transition", t.source, t.event, t.alternative,
                                       t.target) for t in step.transitions}
                states |= set(step.configuration)
                # what a step enters and leaves in the same step (a final state its
                # parent's `done:` leaves at once) is in no configuration: its entry set
                states |= {name for t in step.transitions for name in (
                    () if t.kind == "targetless" else (t.target,) if t.kind in HISTORY
                    else chart.entry_set(t.source, run._sc_spec.alternatives.on[  # its targets
                        (t.source, t.event)][t.alternative].target) if t.kind == "multi"
                    else chart.entry_set(t.source, t.target))}
                # A history transition into a state that remembers nothing yet enters its
                # default (`history_default:`, else its initial states): not told apart here
                by_default |= {name for t in step.transitions if t.kind in HISTORY
                               for name in chart.history_effect(t.source, t.target, t.kind,
                                                                None)[1]}
                answers |= set(step.guards.items())
        assert states <= reachable, (spec.name, states - reachable)
        covered = set(found.items) - set(found.unreachable)
        if cover == "transitions" and not found.complete:
            # Stopped at `limit`: a path may take what the exploration did not reach, which
            # is then listed as not reached (`unreachable`), never claimed and not taken.
            assert covered <= taken, (spec.name, covered - taken)
            assert taken - covered <= set(found.unreachable), (spec.name, taken - covered)
            counts["events"] = found.events
        elif cover == "transitions":
            assert taken == covered, (spec.name, taken ^ covered)
            counts["events"] = found.events
        elif cover == "states":
            claimed = {i.state for i in covered}
            assert states <= claimed, (spec.name, states - claimed)
            assert claimed - states <= by_default, (spec.name, claimed - states)
        else:
            assert {(str(i.guard), bool(i.answer)) for i in covered} <= answers
        counts[cover] = len(covered)
    return counts


# -- specs in files --------------------------------------------------------------------------

def _checked(path: Path) -> Spec | None:
    result = check_file(path)
    return None if result.errors or result.spec is None else result.spec


BUILDING = [p for p in SPEC_FILES if _checked(p) is not None]


def test_the_spec_files_are_there() -> None:
    names = {p.parent.name for p in BUILDING}
    assert {"specs", "ok", "timers", "parallel", "render_cases"} <= names, names
    assert len(BUILDING) >= 20 and len(CONFORMANCE) >= 300


@pytest.mark.parametrize("path", BUILDING, ids=lambda p: str(p.relative_to(ROOT)))
def test_paths_of_every_spec_file_hold(path: Path) -> None:
    spec = _checked(path)
    assert spec is not None
    paths_hold(spec)


def test_the_agent_run_is_covered_entirely() -> None:
    spec = _checked(ROOT / "specs" / "agent_run.yaml")
    assert spec is not None
    counts = paths_hold(spec)
    assert counts == {"transitions": 30, "states": 15, "guards": 4, "events": counts["events"]}
    # each transition taken once at least, and not many more steps than that (the goal of
    # the issue: at most three times as many)
    assert 30 <= counts["events"] <= 3 * 30


# -- the conformance specs -------------------------------------------------------------------

# Some of these specs have tens of thousands of configurations (parallel regions, deep
# history, timers), and a spec explored to 2,000 configurations takes up to 20 s: the `slow`
# run takes every third spec of each family, each cover, up to 400 configurations (about a
# second each; CI's time budget); the default run every twelfth, transitions only, up to 150.
SLOW_SAMPLE = CONFORMANCE[1::3]


@pytest.mark.slow
@pytest.mark.parametrize("name, text", SLOW_SAMPLE, ids=[n for n, _ in SLOW_SAMPLE])
def test_paths_of_every_conformance_spec_hold(name: str, text: str) -> None:
    spec = traced_spec(text, f"{name}.yaml")
    assert spec is not None, name
    paths_hold(spec, limit=400)


@pytest.mark.parametrize("name, text", CONFORMANCE[::12], ids=[n for n, _ in CONFORMANCE[::12]])
def test_paths_of_every_conformance_spec_hold_sample(name: str, text: str) -> None:
    spec = traced_spec(text, f"{name}.yaml")
    assert spec is not None, name
    paths_hold(spec, ("transitions",), limit=150)


# -- random specs ----------------------------------------------------------------------------

@st.composite
def random_specs(draw: st.DrawFn) -> str:
    """The soundness generator's specs (test_property_check.valid_specs, with completion and
    history from test_soundness._extend), with delay timers (some guarded, some of equal
    delays, so that two come due together) and limits on some states."""
    tree = yaml.load(draw(valid_specs()), Loader=yaml.CBaseLoader)
    if draw(st.booleans()):
        _extend(draw, tree)
    names = sorted(name for name, _ in _states_of(tree))
    for _, body in sorted(_states_of(tree), key=lambda x: x[0]):
        if not isinstance(body, dict) or body.get("final") == "true":
            continue
        if draw(st.integers(0, 3)) == 0:
            delay = draw(st.sampled_from(["30m", "1h", "2h"]))
            target = draw(st.sampled_from(names))
            body["after"] = {delay: target} if draw(st.booleans()) else {
                delay: [{"target": target, "guard": "timer_ok"},
                        {"target": draw(st.sampled_from(names))}]}
        if "states" not in body and draw(st.integers(0, 5)) == 0:
            body["limit"] = str(draw(st.integers(1, 2)))
    tree.pop("rules", None)
    text = yaml.dump(tree, Dumper=PlainDumper, default_flow_style=None, sort_keys=False,
                     width=100)
    assume(checked_text(text) is not None)
    return text


RANDOM = settings(max_examples=200, deadline=None, derandomize=True,
                  phases=[Phase.explicit, Phase.generate],
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                         HealthCheck.data_too_large])


def _random_spec_holds(text: str, limit: int) -> None:
    spec = checked_text(text)
    assert spec is not None
    try:
        paths_hold(spec, limit=limit)
    except MacrostepLoop:
        # A new run loops through eventless transitions when every guard says yes, as paths
        # start (`statechart paths` says so): no path to follow.
        assume(False)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- spec:\n{text}") from None


# 40 specs at 300 configurations: the generator's specs now hold eventless transitions,
# history defaults and multi-target transitions, and 200 at 2,000 took ten minutes of CI.
@pytest.mark.slow
@settings(RANDOM, max_examples=40)
@given(random_specs())
def test_paths_of_random_specs_hold(text: str) -> None:
    _random_spec_holds(text, 300)


@settings(RANDOM, max_examples=8)
@given(random_specs())
def test_paths_of_random_specs_hold_smoke(text: str) -> None:
    _random_spec_holds(text, 300)


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_paths_of_a_generated_50_state_spec_hold(nested: bool) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from genspec import generate

    spec = checked_text(generate(50, nested))
    assert spec is not None
    counts = paths_hold(spec)
    assert counts["states"] == len(spec.states)
    assert counts["events"] <= 3 * counts["transitions"]


# -- the hypothesis strategy -----------------------------------------------------------------

AGENT_RUN = run_class(_checked(ROOT / "specs" / "agent_run.yaml"))  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(testing.event_sequences(AGENT_RUN, max_steps=15))
def test_event_sequences_are_runs_the_class_takes(path: testing.Path) -> None:
    run = testing.follow(AGENT_RUN, path)
    assert len(run.record.history) >= len([s for s in path.steps if not s.refused])
    strings = [v for s in path.steps for v in s.values.values() if isinstance(v, str)]
    assert all(isinstance(v, str) for v in strings)


def test_event_sequences_draw_values_and_reach_the_ends() -> None:
    """Across examples the strategy reaches every final state and draws other values than
    the placeholders (a sequence that only ever took the first event would pass the test
    above)."""
    seen: set[str] = set()
    values: set[Any] = set()

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(testing.event_sequences(AGENT_RUN, max_steps=15))
    def collect(path: testing.Path) -> None:
        if path.steps:
            seen.update(path.steps[-1].configuration)
        values.update(v for s in path.steps for v in s.values.values() if isinstance(v, str))

    collect()
    assert {"completed", "failed", "cancelled", "timed_out"} <= seen, seen
    assert values - {f"<{f}>" for f in ("cancelReason", "failureType", "retryReason",
                                       "approvalId", "approvedBy", "humanInput",
                                       "toolCallId")}
