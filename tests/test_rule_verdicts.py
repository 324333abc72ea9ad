"""`check`'s verdicts on `never` and `only` rules against what runs do (hypothesis).

For random small specs (test_property_check.valid_specs: nesting, parallel states, guarded
alternatives, limits; with transitions on compound and parallel states for events their
children handle too, targetless alternatives, guarded or not, that take an event before an
ancestor's, and `on:` keys that are descriptors of other events: `E` before `E.x`, `"*"`),
each with one random `never` or `only` rule:

- *no false positive*: every counter-example `check` gives is a run. It is replayed on the
  spec's generated class through the runtime's explorer (`statechart_runtime.explore.Space`,
  the step kernel a live run uses), each step's guards answering as that step needs: every
  transition of the path is taken in turn, and the last one breaks the rule;
- *no false negative*: when a run breaks the rule, `check` says it is broken. The runs are
  explored exhaustively from a new run (every event, every guard answered both ways) up to
  `CONFIGURATIONS` configurations.

A transition breaks the rule as docs/rules.md says, judged on the step that takes it, with
the configuration before that step: `never {from: A, to: B}`, a state of A was active and
it enters a state of B; `only {from: A, to: Bs}`, it exits an active state of A and enters
no state of A nor of Bs. What it exits and enters is the runtime's `Chart.move`.

The specs have no completion, eventless or timer transitions: every step a caller takes is
one microstep (the one its event takes), which is what this judges. `RUNS` counts what the
properties saw (printed by `-s`; the report of issue 28 quotes a run).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from test_property_check import valid_specs
from test_soundness import _dump, _is_group, _states_of, candidate_rule

from statechart import spec_chart
from statechart.codegen.in_memory import run_class
from statechart.graph import Graph
from statechart.linter import check_source
from statechart.model import Spec, Transition
from statechart.rules import rule_violation
from statechart_runtime.explore import Move, Snapshot, Space

CONFIGURATIONS = 1_500  # explored per spec; beyond, the "no false negative" side is undecided
SETTINGS = settings(deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])
RUNS: Counter[str] = Counter()


# -- specs -----------------------------------------------------------------------------------

@st.composite
def shadowing_specs(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A spec of valid_specs with shadowing added (see the module docstring) and one rule,
    that `check` finds no error in but perhaps the rule's; (its text, the rule)."""
    tree = yaml.load(draw(valid_specs()), Loader=yaml.CBaseLoader)
    tree.pop("rules", None)
    bodies = [(n, b) for n, b in _states_of(tree) if isinstance(b, dict)]
    events = sorted({e for _, b in bodies for e in b.get("on", {})})
    names = sorted(n for n, _ in _states_of(tree))
    guards = ["shadow_a", "shadow_b"]
    # Half the specs without limits, half without parallel states: where `check`'s graph
    # is exact but for the guards (see `_verdicts_hold`).
    plain_limits, plain_groups = draw(st.booleans()), draw(st.booleans())
    for _, body in bodies:
        if plain_limits:
            body.pop("limit", None)
        if plain_groups and body.get("parallel") == "true":
            del body["parallel"]
            body["initial"] = next(iter(body["states"]))
    for _, body in bodies:
        if body.get("final") == "true":
            continue
        on = body.setdefault("on", {})
        if _is_group(body) and draw(st.booleans()):
            # the group handles an event its children may handle too (or every event)
            key = draw(st.sampled_from([*events, "*"])) if draw(st.integers(0, 4)) else "*"
            if key not in on:
                on[key] = draw(st.sampled_from(names))
        elif not _is_group(body) and draw(st.integers(0, 2)) == 0:
            # the leaf takes an event first: targetless, guarded or not
            event = draw(st.sampled_from(events))
            alt: dict[str, Any] = {"guard": draw(st.sampled_from(guards))} \
                if draw(st.booleans()) else {}
            kept = on.get(event)
            on[event] = [alt, kept] if kept is not None and alt else alt
            if draw(st.integers(0, 2)) == 0:
                # a descriptor: `event` takes `event.sub`, which a leaf handles too
                on[f"{event}.sub"] = draw(st.sampled_from(names))
                on[f"{event}.sub"], on[event] = on.pop(f"{event}.sub"), on.pop(event)
        if "*" in on:  # `*` last: it takes every event (descriptor-order)
            on["*"] = on.pop("*")
        if not on:
            body.pop("on")
    text = _dump(tree)
    result = check_source("spec.yaml", text.encode("utf-8"))
    assume(not result.errors and result.spec is not None)
    spec = result.spec
    tags = sorted({t for s in spec.states.values() for t in s.tags})
    rule = draw(candidate_rule(spec, tags).filter(lambda r: "unreachable" not in r))
    return _dump({**tree, "rules": [rule]}), rule


# -- the runs --------------------------------------------------------------------------------

class Runs:
    """The runs of a spec's generated class, as the explorer steps them."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.space = Space(run_class(spec))
        self.chart = spec_chart.chart(spec)

    def moves(self, snap: Snapshot) -> Iterator[tuple[Move, Snapshot]]:
        for move, after in self.space.moves(snap):
            # one microstep per step: the specs have no completion, eventless or timers
            assert all(m[1] == move.event for m in move.micro), move
            yield move, after

    def breaks(self, kind: str, sources: set[str], targets: set[str], snap: Snapshot,
               micro: tuple[str, str, str, str | None, int]) -> bool:
        """Whether the transition `micro` of the step from `snap` breaks the rule."""
        source, event, target, move_kind, position = micro
        if move_kind == "multi":  # a step names its first target; the table, all of them
            target = self.space.spec.alternatives.on[(source, event)][position].target
        before = snap.configuration
        exited, entered = self.chart.move(
            before, (source, target) if move_kind is None else (source, target, move_kind),
            dict(snap.remembered))
        active = sources.intersection(before)
        if kind == "never":
            return bool(active) and not targets.isdisjoint(entered)
        return bool(active.intersection(exited)) and sources.isdisjoint(entered) \
            and targets.isdisjoint(entered)

    def search(self, kind: str, sources: set[str], targets: set[str]) -> bool | None:
        """Whether some run breaks the rule: True, False, or None when the exploration
        stopped at `CONFIGURATIONS` without finding one."""
        start = self.space.start()
        seen = {self.space.key(start)}
        queue = [start]
        for snap in queue:
            for move, after in self.moves(snap):
                if any(self.breaks(kind, sources, targets, snap, m) for m in move.micro):
                    return True
                key = self.space.key(after)
                if key not in seen:
                    if len(seen) >= CONFIGURATIONS:
                        return None
                    seen.add(key)
                    queue.append(after)
        return False

    def replay(self, path: list[Transition], kind: str, sources: set[str],
               targets: set[str]) -> bool:
        """Whether a run takes the transitions of `path` in turn (one step each, any guard
        answers) and the last one breaks the rule (depth first over the steps that take
        the next transition)."""
        pending = [(self.space.start(), 0)]
        while pending:
            snap, done = pending.pop()
            t = path[done]
            for move, after in self.moves(snap):
                taken = [m for m in move.micro if _is(t, m)]
                if not taken:
                    continue
                if done + 1 < len(path):
                    pending.append((after, done + 1))
                elif self.breaks(kind, sources, targets, snap, taken[0]):
                    return True
        return False


def _is(t: Transition, micro: tuple[str, str, str, str | None, int]) -> bool:
    """Whether the explorer's microstep `micro` takes the spec's alternative `t`."""
    source, event, target, kind, _ = micro
    return source == t.source and target == t.target and kind == t.move_kind \
        and t.trigger == "event" and spec_chart.matches(t.event, event)


# -- the properties --------------------------------------------------------------------------

def _verdicts_hold(text: str, rule_text: dict[str, Any]) -> None:
    result = check_source("spec.yaml", text.encode("utf-8"))
    spec = result.spec
    assert spec is not None
    others = [d.message for d in result.errors if d.rule != "rule-violation"]
    assert not others, others
    (rule,) = spec.rules
    kind = rule.kind
    sources = set(rule_violation.states(spec, rule.sources))
    targets = set(rule_violation.states(spec, rule.targets))
    runs = Runs(spec)
    broken = rule_violation.violations(spec, Graph(spec), rule)
    assert bool(broken) == any(d.rule == "rule-violation" for d in result.errors)
    RUNS["specs"] += 1
    RUNS[f"check: {kind} {'broken' if broken else 'holds'}"] += 1
    # The graph's approximations (graph.py): the regions of a parallel state move on their
    # own (a transition of one may be preempted by another region's in the same step, or its
    # state left meanwhile), and a limit may or may not refuse an alternative. Without them,
    # a counter-example is a run (its guards answered as each step needs).
    features = [name for name, present in (
        ("parallel regions", any(s.kind == "parallel" for s in spec.states.values())),
        ("limits", any(s.limit for s in spec.states.values()))) if present]
    exact = not features
    why = " and ".join(features)
    for _, steps in broken:
        path = [s.transition for s in steps if s.transition is not None]
        RUNS["counter-examples"] += 1
        if runs.replay(path, kind, sources, targets):
            RUNS["counter-examples replayed: a run breaks the rule"] += 1
            RUNS[f"counter-examples replayed (spec with {why or 'neither'})"] += 1
            continue
        assert not exact, (
            f"{text}\ncheck's counter-example is not a run breaking the rule: "
            + " ".join(f"{p.source} -{p.shown}-> {p.shown_target}" for p in path))
        RUNS[f"counter-examples not a run (spec with {why})"] += 1
    found = runs.search(kind, sources, targets)
    RUNS[f"exploration: a run breaks the rule: {found}"] += 1
    if found:
        assert broken, f"{text}\na run breaks the rule, `check` says it holds"
    elif found is False and broken:
        # every run explored: `check` says broken, no run breaks it (an approximation)
        assert not exact, f"{text}\n`check` says broken, no run breaks the rule"
        RUNS[f"check broken, no run breaks it (spec with {why})"] += 1


@settings(SETTINGS, max_examples=25)
@given(case=shadowing_specs())
def test_rule_verdicts_are_what_runs_do(case: tuple[str, dict[str, Any]]) -> None:
    _verdicts_hold(*case)


@pytest.mark.slow
@settings(SETTINGS, max_examples=400)
@given(case=shadowing_specs())
def test_rule_verdicts_are_what_runs_do_long(case: tuple[str, dict[str, Any]]) -> None:
    _verdicts_hold(*case)


def teardown_module() -> None:
    if RUNS:
        print("\nrule verdicts against runs:", dict(sorted(RUNS.items())))
