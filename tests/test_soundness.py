"""Soundness of `statechart check` against the machine `statechart build` makes (hypothesis).

`check` is a "may" analysis: guards are assumed to go either way, so whatever it proves must
hold on every run of the generated module, whatever the guards answer. For random specs that
pass `check` with no error, this test builds the module, walks it at random (guards answer at
random, seeded) and asserts at every step:

- every active state is one the checker's graph reaches from `initial`;
- every rule the checker accepted holds, with the meaning docs/rules.md gives it (below).

Rule meaning (rules/rule_violation.py's docstring): a state name means that state and its
subtree, `{tag: t}` every state tagged `t`;
- `never {from: A, to: B}`: no event handled while a state of A is active enters a state of B;
- `only {from: A, to: Bs}`: an event after which no state of A is active any more (A was
  active before it) enters a state of Bs (judged per event: when several regions move on one
  event, one region may leave A while another enters Bs);
- `unreachable {from: A, to: B}`: once a state of A has been active, no state of B is active
  (from that configuration on: the checker's graph counts states active alongside A, such as
  the other regions of a parallel state, as reachable from A).

"Enters" is SCXML's entry set, which python-statemachine implements: a transition exits every
active state below its domain (the nearest compound proper ancestor of its source that
contains its target; none: the whole configuration) and enters everything active below the
domain afterwards. That counts a state exited and re-entered (a self-loop, a transition into a
sibling region that leaves and re-enters the parallel state), which a before/after comparison
of configurations would miss.

One event may take several microsteps, each judged on its own: the event's (one history step
per region that moves), then each `done.state.X` the run takes by itself (one step each).
What a microstep enters comes from the runtime's `Chart.step` (a history transition enters
where its target was left); without history it is also recomputed here from the domain. The
configuration and `remembered` the microsteps lead to must be the run's.

The spec generator is test_property_check.valid_specs (nesting up to 3 levels, parallel
states, guarded alternatives), with transitions and tags added to compound and parallel states
and random rules of all three kinds, of which only those `check` accepts are kept; a second
property adds completion and history first (`_extend`: nested final states, `done:` on
compound and parallel states, top-level ones included, some guarded; history transitions,
shallow and deep, into compound and parallel states, from inside and outside; targetless
transitions, and internal ones from compound states into their descendants; eventless
transitions, `always:`, guarded or not, anywhere). Each step after the event's own (a
completion or an eventless one) is judged on its own, as the record's replay takes it; so
are the eventless steps a new run takes before its first event.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from codegen_support import (
    checked_text,
    event_kwargs,
    generate,
    import_source,
    method_name,
    parts,
)
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from statemachine.exceptions import TransitionNotAllowed
from test_property_check import valid_specs

from statechart import semantics
from statechart.graph import Graph
from statechart.linter import check_source
from statechart.model import Spec
from statechart.rules import rule_violation
from statechart_runtime.errors import MacrostepLoop
from statechart_runtime.semantics import Move

# Fixed examples (derandomize, so no example database); each one generates, checks and
# imports a module, which costs more than its walks.
SETTINGS = settings(max_examples=250, deadline=None, derandomize=True,
                    # No shrinking: every step re-imports a module, and a shrink ran past
                    # Hypothesis's 5-minute cap. COUNTER_EXAMPLES holds hand-minimized ones.
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])
WALKS, STEPS = 4, 40
SMOKE = 8  # examples of each property in the default run (the full runs are `slow`)


class PlainDumper(yaml.CSafeDumper):
    """test_property_check._PlainDumper on libyaml (the pure Python one dominated the run):
    strings written plain whenever YAML allows, as the spec loader (YAML 1.2 core) reads them."""

    yaml_implicit_resolvers: dict[str, list[object]] = {}


# -- the oracle ------------------------------------------------------------------------------

def selected(spec: Spec, selector: Any) -> set[str]:
    """The states a rule's `from` or `to` means, as the rule's YAML writes it."""
    if isinstance(selector, list):
        return set().union(*(selected(spec, s) for s in selector))
    if isinstance(selector, dict):
        # docs/rules.md: "`{tag: t}` means every state tagged `t` and everything nested in
        # it" (being in a child of a tagged state is being in the tagged state).
        return {sub for s in spec.states.values() if selector["tag"] in s.tags
                for sub in spec.subtree(s.name)}
    return set(spec.subtree(selector))


def domain(spec: Spec, source: str, target: str) -> str | None:
    """SCXML's domain of an external transition (python-statemachine's `.to()`): every active
    state below it is exited, every state below it active afterwards was entered."""
    target_line = set(spec.ancestors(target))
    for anc in spec.ancestors(source):
        if spec.states[anc].kind == "compound" and anc in target_line:
            return anc
    return None


@dataclass
class Rule:
    kind: str
    sources: set[str]
    targets: set[str]
    text: str


def rules_of(spec: Spec, text: str) -> list[Rule]:
    """The spec's rules with their meaning, read from the YAML (the model's selectors are
    what the checker reads; the oracle reads the spec as its author wrote it)."""
    out = []
    for item in yaml.load(text, Loader=yaml.CBaseLoader).get("rules", []):
        (kind, body), = ((k, v) for k, v in item.items() if k in ("never", "only",
                                                                 "unreachable"))
        shown = yaml.dump(body, Dumper=PlainDumper, default_flow_style=True).strip()
        out.append(Rule(kind, selected(spec, body["from"]), selected(spec, body["to"]),
                        f"{kind}: {shown}"))
    return out


class Walk:
    """One run of a generated module, checked against the spec after every event."""

    def __init__(self, spec: Spec, rules: list[Rule], module: Any,
                 coin: Callable[[], bool]) -> None:
        facade, _, _ = parts(module)
        guards = {t.guard for s in spec.states.values() for t in s.transitions if t.guard}
        # The checker assumes every guard may pass or fail, on every call.
        seeded = type(facade.__name__, (facade,), {g: lambda self: coin() for g in guards})
        base = facade.__name__
        # MacrostepLoop: a loop of eventless transitions the coins kept going (or one
        # `check`'s completion-loop cannot prove endless) is refused whole, as an event.
        self.refusals = (TransitionNotAllowed, getattr(module, base + "LimitExceeded"),
                         getattr(module, base + "MissingField"), MacrostepLoop)
        self.spec, self.module = spec, module
        self.reachable = Graph(spec).reachable([spec.initial])
        self.chart = semantics.chart(spec)
        self.rules = rules
        self.trail: list[str] = []
        self.seen = [False] * len(self.rules)  # unreachable: a state of `from` was active
        self.violations: list[str] = []
        initial = self.chart.initial_configuration()
        self._observe(set(), set(initial), set(), "(start)")
        for attempt in range(3):  # a start whose eventless loop the coins kept going
            try:
                self.run = seeded(run_id="soundness")
                break
            except MacrostepLoop:
                # Three times: a loop no coin stops, which `check` did not prove endless
                # (completion-loop reports the loops it can prove; the run's bound stops the
                # others): no run of the spec starts, so there is nothing to walk.
                if attempt == 2:
                    raise
        # The eventless transitions a new run takes before its first event.
        self._microsteps([[s] for s in self.run.record.history], initial, {}, "(start)")

    def configuration(self) -> set[str]:
        return {s.value for s in self.run.configuration}

    def send(self, event: str) -> bool:
        """Send `event`; False when the machine refuses it (then nothing changed). Each
        microstep it takes is checked: the event's own (one history step per region that
        moves), then each `done.state.X` the run takes by itself (one step each)."""
        run = self.run
        before, length = self.configuration(), len(run.record.history)
        remembered = self.remembered()
        try:
            getattr(run, method_name(self.module, event))(
                **event_kwargs(self.module, run, event))
        except self.refusals:
            assert (self.configuration(), len(run.record.history), self.remembered()) == (
                before, length, remembered), event
            return False
        steps = run.record.history[length:]
        assert steps, f"{event}: accepted, but no history entry"
        assert steps[0].event.value == event, (event, steps[0])
        microsteps = [[s for s in steps if s.event.value == event]]
        rest = steps[len(microsteps[0]):]
        assert all(s.event.value.startswith("done.state.") or s.event.value == "always"
                   for s in rest), (event, rest)
        # Each later step on its own, as the record's replay takes them (the transitions of
        # one eventless microstep conflict with none of each other).
        microsteps += [[s] for s in rest]
        self._microsteps(microsteps, self.chart.sort(before), remembered, event)
        return True

    def _microsteps(self, microsteps: list[list[Any]], configuration: tuple[str, ...],
                    remembered: dict[str, tuple[str, ...]], event: str) -> None:
        """Check each microstep (its history steps) from `configuration`."""
        for micro in microsteps:
            label = micro[0].event.value
            moves = [(s.source.value, s.target.value) for s in micro]
            # A step entered by history says so (alternatives may differ only in that), and
            # so does an internal or a targetless one.
            taken: list[Move] = [(*m, s.kind) if s.kind else m
                                 for m, s in zip(moves, micro, strict=True)]
            # A multi-target step records its first target; the spec has the others.
            taken = [(m[0], self.targets_of(label, m[0], m[1]), m[2])
                     if m[2:] == ("multi",) else m for m in taken]
            assert all(len(m) == 2 or self.has_kind(label, m[0], m[1], m[2])
                       for m in taken), taken
            configuration_after, entered, remembered = self.chart.step(
                configuration, taken, remembered)
            if all(len(m) == 2 for m in taken):
                # Without history, SCXML's entry set is every state below a domain that is
                # active afterwards: computed here without the runtime's Chart.
                doms = [domain(self.spec, *m) for m in moves]
                below = {x for x in configuration_after for d in doms
                         if d is None or d in self.spec.ancestors(x)}
                assert set(entered) == below, (moves, entered, below)
            self._observe(set(configuration), set(configuration_after), set(entered),
                          f"{label} ({', '.join(f'{a}->{b}' for a, b in moves)})")
            configuration = configuration_after
        assert set(configuration) == self.configuration(), (event, configuration, self.trail)
        assert remembered == self.remembered(), (event, remembered, self.trail)

    def has_kind(self, event: str, source: str, target: str, kind: str) -> bool:
        """Whether the spec has that history, internal, targetless or multi-target
        transition (the step's claim is checked)."""
        return any(t.event == event and t.move_target == target and t.move_kind == kind
                   for t in self.spec.states[source].transitions)

    def targets_of(self, event: str, source: str, first: str) -> str:
        """A multi-target transition's targets (as a move holds them), by its first."""
        return next(t.move_target for t in self.spec.states[source].transitions
                    if t.event == event and t.target == first and t.targets)

    def remembered(self) -> dict[str, tuple[str, ...]]:
        if not self.chart.remembers:
            return {}
        return {k: tuple(v) for k, v in self.run.record.remembered.items()}

    def _observe(self, before: set[str], after: set[str], entered: set[str],
                 what: str) -> None:
        self.trail.append(f"{what} => {sorted(after)}")
        where = " ; ".join(self.trail)
        outside = after - self.reachable
        if outside:
            self.violations.append(f"active but unreachable for check: {sorted(outside)}: "
                                   f"{where}")
        for i, rule in enumerate(self.rules):
            was_in = bool(before & rule.sources)
            broken = False
            if rule.kind == "never":
                broken = was_in and bool(entered & rule.targets)
            elif rule.kind == "only":
                broken = was_in and not after & rule.sources and not entered & rule.targets
            else:
                self.seen[i] = self.seen[i] or bool(after & rule.sources)
                broken = self.seen[i] and bool(after & rule.targets)
            if broken:
                self.violations.append(f"{rule.text} broken (entered {sorted(entered)}): "
                                       f"{where}")

    def enabled(self) -> tuple[list[str], list[str]]:
        """Events some active state (or an ancestor: it is active too) declares: those that
        may lead to a state that is not final, and those that can only end the run."""
        targets: dict[str, set[bool]] = {}
        for name in self.configuration():
            for t in self.spec.states[name].transitions:
                if t.trigger != "event":
                    continue  # the run raises `done.state.X` itself
                targets.setdefault(t.event, set()).add(self.spec.states[t.target].is_final)
        return (sorted(e for e, f in targets.items() if False in f),
                sorted(e for e, f in targets.items() if f == {True}))


def build(spec: Spec, folder: Path) -> Any:
    return import_source(generate(spec)[f"generated/{spec.name}.py"], folder, spec.name)


def random_walks(spec: Spec, text: str, folder: Path, seed: int) -> Iterator[str]:
    """Violations found by random walks. Events are mostly among those the configuration
    declares (so that most steps move), rarely one that can only end the run (so that walks
    last), sometimes any event (a refusal must change nothing)."""
    rng = random.Random(seed)
    module = build(spec, folder)
    rules = rules_of(spec, text)
    _, _, events = parts(module)
    every = [e.value for e in events if e.value not in module._SPEC.internal]  # sendable
    for _ in range(WALKS):
        try:
            walk = Walk(spec, rules, module, coin=lambda: rng.random() < 0.5)
        except MacrostepLoop:
            return
        for _ in range(STEPS):
            if walk.run.is_terminated or walk.violations:
                break
            lasting, ending = walk.enabled()
            roll = rng.random()
            choices = lasting if roll < 0.85 else ending if roll < 0.9 else every
            walk.send(rng.choice(choices or lasting or ending or every))
        yield from walk.violations[:1]


# -- random specs ----------------------------------------------------------------------------

def _states_of(tree: dict) -> Iterator[tuple[str, dict]]:
    stack = list(tree["states"].items())
    while stack:
        name, body = stack.pop()
        yield name, body
        if isinstance(body, dict):
            stack.extend((body.get("states") or {}).items())


def _selector(draw: st.DrawFn, spec: Spec, tags: list[str]) -> Any:
    one = st.sampled_from(sorted(spec.states))
    if tags:
        one = st.one_of(one, st.sampled_from(tags).map(lambda t: {"tag": t}))
    return draw(st.one_of(one, st.lists(one, min_size=1, max_size=3)))


def _names(spec: Spec, selector: Any) -> set[str]:
    """The states the checker reads a selector as (rule_violation._states): used only to aim
    candidate rules at ones it may accept; the oracle keeps its own meaning."""
    items = selector if isinstance(selector, list) else [selector]
    roots = {n for s in items for n in ([s] if isinstance(s, str) else
                                         [x.name for x in spec.states.values()
                                          if s["tag"] in x.tags])}
    return {sub for r in roots for sub in spec.subtree(r)}


@st.composite
def candidate_rule(draw: st.DrawFn, spec: Spec, tags: list[str]) -> dict:
    kind = draw(st.sampled_from(["never", "only", "unreachable"]))
    source = _selector(draw, spec, tags)
    target = _selector(draw, spec, tags)
    if draw(st.booleans()):
        # Random rules rarely pass `check`; aim half of them where the checker sees no
        # counter-example, so that the walks test what it proves.
        sources = _names(spec, source)
        if kind == "only":
            firing = rule_violation.firing_while(spec, sorted(sources))
            leaving = sorted({t.target for t, _ in firing if t.target not in sources})
            if leaving:
                target = leaving
        else:
            if kind == "never":
                firing = rule_violation.firing_while(spec, sorted(sources))
                hit = {t.target for t, _ in firing}
            else:
                hit = Graph(spec).reachable(sources)
            spared = sorted(set(spec.states) - hit - sources)
            if spared:
                target = draw(st.sampled_from(spared))
    return {kind: {"from": source, "to": target}}


def _dump(tree: dict) -> str:
    return yaml.dump(tree, Dumper=PlainDumper, default_flow_style=None, sort_keys=False,
                     width=100)


def _is_group(body: Any) -> bool:
    return isinstance(body, dict) and "states" in body


def _alternatives(body: dict) -> Iterator[dict]:
    """Every alternative of a state's `on:` as a mapping (a plain target is rewritten as
    `{target: T}` so that keys can be added to it)."""
    on = body.get("on") or {}
    for event, alts in on.items():
        if isinstance(alts, str):
            alts = on[event] = {"target": alts}
        yield from alts if isinstance(alts, list) else [alts]


def _leaves_under(body: dict) -> list[str]:
    return [n for n, b in _states_of(body) if not _is_group(b) and b.get("final") != "true"]


def _can_complete(body: dict) -> bool:
    """Whether a compound or parallel state may be done (a final child; every region done)."""
    children = body["states"]
    if body.get("parallel") == "true":
        return all(_is_group(b) and _can_complete(b) for b in children.values())
    return any(isinstance(b, dict) and b.get("final") == "true" for b in children.values())


def _extend(draw: st.DrawFn, tree: dict) -> None:
    """Completion and history on a valid_specs tree: final children in some compound states
    (and in every region of some parallel states, a leaf region becoming a compound one),
    `done:` on some states that may complete (guarded, listed), a new top-level parallel
    state that may complete, history on some transitions into compound and parallel states
    and new history transitions from anywhere (inside the target or outside it)."""
    taken = {name for name, _ in _states_of(tree)}
    counter = iter(range(1000))

    def fresh(stem: str) -> str:
        name = f"{stem}{next(counter)}"
        while name in taken:
            name = f"{stem}{next(counter)}"
        taken.add(name)
        return name

    events = sorted({e for _, b in _states_of(tree) if isinstance(b, dict)
                     for e in b.get("on", {})})
    finals = [n for n, b in tree["states"].items() if isinstance(b, dict)
              and b.get("final") == "true"]

    def add_final(body: dict) -> None:
        """A final child, and a transition to it from a leaf inside `body`."""
        leaves = _leaves_under(body)
        sources = {n: b for n, b in _states_of(body) if n in leaves}
        source = draw(st.sampled_from(sorted(sources)))
        final = fresh("fin")
        body["states"][final] = {"final": "true"}
        sources[source].setdefault("on", {})[free_event(sources[source])] = final

    def free_event(body: dict) -> str:
        """An event `body` does not handle yet (a new one when it handles them all)."""
        free = [e for e in events if e not in body.get("on", {})]
        if not free:
            events.append(fresh("ev"))
            return events[-1]
        return draw(st.sampled_from(free))

    def region(stem: str) -> dict:
        first, end = fresh(stem), fresh("fin")
        return {"initial": first, "states": {
            first: {"on": {draw(st.sampled_from(events)): end}}, end: {"final": "true"}}}

    if draw(st.integers(0, 2)) == 0:
        # A new top-level parallel state whose regions finish, entered from a leaf.
        leaves = [(n, b) for n, b in _states_of(tree) if not _is_group(b)
                  and b.get("final") != "true"]
        join = fresh("join")
        tree["states"][join] = {"parallel": "true", "states": {
            fresh("reg"): region("ra"), fresh("reg"): region("rb")},
            "on": {draw(st.sampled_from(events)): finals[0]}}
        _, body = draw(st.sampled_from(sorted(leaves, key=lambda x: x[0])))
        body.setdefault("on", {})[free_event(body)] = join
    groups = [(n, b) for n, b in _states_of(tree) if _is_group(b)]
    for _, body in groups:
        if draw(st.integers(0, 2)) == 0:
            continue
        if body.get("parallel") == "true":
            for child in list(body["states"].values()):
                if not _is_group(child):
                    child.update(region("in"))  # the leaf region becomes a compound one
                elif child.get("parallel") != "true":
                    add_final(child)
        else:
            add_final(body)
    groups = [(n, b) for n, b in _states_of(tree) if _is_group(b)]
    group_names = sorted(n for n, _ in groups)
    targets = sorted(n for n, _ in _states_of(tree))
    guards = ["done_ok", "done_other"]
    # A done target may be a final state (a cascade: its parent completes, and perhaps a
    # parallel state around it) when that completes only states before this one in `groups`:
    # a cycle would make the run raise completion events forever (check refuses an unguarded
    # one, completion-loop; a guarded one stops only when its guard refuses: not generated).
    rank = {n: i for i, (n, _) in enumerate(groups)}
    parent = {c: n for n, b in groups for c in b["states"]}
    finals_in = {c for _, b in groups for c, cb in b["states"].items()
                 if isinstance(cb, dict) and cb.get("final") == "true"}
    for name, body in groups:
        if not _can_complete(body) or draw(st.integers(0, 2)) == 0:
            continue
        allowed = [t for t in targets if t not in finals_in or (
            rank[parent[t]] < rank[name] and (parent[t] not in parent
                                              or rank[parent[parent[t]]] < rank[name]))]
        targets_here = st.sampled_from(allowed)
        shape = draw(st.integers(0, 2))
        target = draw(targets_here)
        body["done"] = target if shape == 0 else \
            {"target": target, "guard": draw(st.sampled_from(guards))} if shape == 1 else \
            [{"target": target, "guard": guards[0]}, {"target": draw(targets_here)}]
    for _, body in _states_of(tree):
        if isinstance(body, dict):
            for alt in _alternatives(body):
                if alt["target"] in group_names and draw(st.integers(0, 2)) == 0:
                    alt["history"] = draw(st.sampled_from(["shallow", "deep"]))
    for _ in range(draw(st.integers(0, 2)) if group_names else 0):
        leaves = sorted((n, b) for n, b in _states_of(tree) if not _is_group(b)
                        and b.get("final") != "true")
        target = draw(st.sampled_from(group_names))
        inside = sorted(_leaves_under(next(b for n, b in groups if n == target)))
        if inside and draw(st.booleans()):  # from inside the target, half the time
            leaves = [(n, b) for n, b in leaves if n in inside]
        _, body = draw(st.sampled_from(leaves))
        body.setdefault("on", {})[free_event(body)] = {
            "target": target, "history": draw(st.sampled_from(["shallow", "deep"]))}
    # History defaults (`history_default:`) on some groups: a state inside them (a child for
    # shallow history), one for both kinds or one per kind.
    for name, body in groups:
        inside = [n for n, _ in _states_of(body) if n != name]
        children = sorted(body["states"])
        if not inside or draw(st.integers(0, 2)) == 0:
            continue
        if draw(st.booleans()):
            body["history_default"] = draw(st.sampled_from(children))
        else:
            body["history_default"] = {"deep": draw(st.sampled_from(sorted(inside))),
                                       "shallow": draw(st.sampled_from(children))}
    # Targetless transitions (guarded or not, first of an event's alternatives or alone) and
    # internal ones, from a compound state into a state inside it.
    for _, body in _states_of(tree):
        if not isinstance(body, dict) or body.get("final") == "true":
            continue
        if draw(st.integers(0, 3)) == 0:
            alt = {"guard": draw(st.sampled_from(guards))} if draw(st.booleans()) else {}
            on = body.setdefault("on", {})
            event = free_event(body) if not on or draw(st.booleans()) else \
                draw(st.sampled_from(sorted(on)))
            kept = on.get(event)
            on[event] = [alt, *(kept if isinstance(kept, list) else [kept])] \
                if kept is not None and "guard" in alt else alt
        if _is_group(body) and body.get("parallel") != "true" and draw(st.integers(0, 2)) == 0:
            target = draw(st.sampled_from(sorted(n for n, _ in _states_of(body))))
            body.setdefault("on", {})[free_event(body)] = {"target": target, "internal": "true"}
    # Eventless transitions (`always:`): a target, or a guarded alternative and a fallback,
    # anywhere. An unguarded loop is refused by `check` (completion-loop); a guarded one ends
    # when a coin says no (or at the run's bound: MacrostepLoop, a refusal).
    for _, body in _states_of(tree):
        if not isinstance(body, dict) or body.get("final") == "true" \
                or draw(st.integers(0, 4)) != 0:
            continue
        shape = draw(st.integers(0, 2))
        target = draw(st.sampled_from(targets))
        body["always"] = target if shape == 0 else \
            {"target": target, "guard": draw(st.sampled_from(guards))} if shape == 1 else \
            [{"target": target, "guard": guards[1]}, {"target": draw(st.sampled_from(targets))}]
    # Multi-target transitions (`target: [x, y]`): a state in each of two or more regions of
    # a parallel state, from any state that is not final.
    parallels = [b for _, b in _states_of(tree) if isinstance(b, dict)
                 and b.get("parallel") == "true" and len(b.get("states") or {}) > 1]
    sources = sorted(((n, b) for n, b in _states_of(tree) if isinstance(b, dict)
                      and b.get("final") != "true"), key=lambda x: x[0])
    for _ in range(draw(st.integers(0, 2)) if parallels and sources else 0):
        regions = sorted(draw(st.sampled_from(parallels))["states"].items())
        picked = draw(st.lists(st.sampled_from(regions), min_size=2, max_size=len(regions),
                               unique_by=lambda r: r[0]))
        targets = [draw(st.sampled_from(sorted(n for n, _ in _states_of({"states": {r: b}}))))
                   for r, b in picked]
        _, body = draw(st.sampled_from(sources))
        body.setdefault("on", {})[free_event(body)] = {"target": targets}


@st.composite
def done_history_specs(draw: st.DrawFn) -> str:
    """A spec of valid_specs with completion and history (`_extend`) that passes `check`."""
    tree = yaml.load(draw(valid_specs()), Loader=yaml.CBaseLoader)
    _extend(draw, tree)
    tree.pop("rules", None)
    text = _dump(tree)
    assume(checked_text(text) is not None)
    return text


@st.composite
def checked_specs(draw: st.DrawFn, extended: bool = False) -> str:
    """A spec of valid_specs, with transitions (guarded alternatives too) and tags on some
    compound and parallel states, and the random rules `check` accepts (each alone, then
    together). `extended`: with completion and history too (see `_extend`)."""
    tree = yaml.load(draw(valid_specs()), Loader=yaml.CBaseLoader)
    if extended:
        _extend(draw, tree)
    all_states = [name for name, _ in _states_of(tree)]
    events = sorted({e for _, b in _states_of(tree) if isinstance(b, dict)
                     for e in b.get("on", {})})
    guards = sorted({a["guard"] for _, b in _states_of(tree) if isinstance(b, dict)
                     for alts in b.get("on", {}).values() if isinstance(alts, list)
                     for a in alts if "guard" in a})
    tags = sorted({t for _, b in _states_of(tree) if isinstance(b, dict)
                   for t in b.get("tags", [])})
    for _, body in _states_of(tree):
        if not isinstance(body, dict) or "states" not in body:
            continue
        if draw(st.booleans()) and events:
            targets = st.sampled_from(all_states)
            event = draw(st.sampled_from(events))
            if guards and draw(st.booleans()):
                body["on"] = {event: [{"target": draw(targets),
                                       "guard": draw(st.sampled_from(guards))},
                                      {"target": draw(targets)}]}
            else:
                body["on"] = {event: draw(targets)}
        if tags and draw(st.integers(0, 2)) == 0:
            body["tags"] = [draw(st.sampled_from(tags))]
    tree.pop("rules", None)
    text = _dump(tree)
    spec = checked_text(text)
    # valid_specs' specs pass `check` (test_property_check), and what is added here keeps
    # them valid: a transition only adds a way out, a tag only labels. Completion and history
    # may not (a done state with no way out, a top-level parallel state that ends the run
    # with a transition out of it).
    assert spec is not None or extended, text
    assume(spec is not None)
    assert spec is not None
    tags = sorted({t for s in spec.states.values() for t in s.tags})
    kept = []
    for _ in range(draw(st.integers(1, 8))):
        rule = draw(candidate_rule(spec, tags))
        if checked_text(_dump({**tree, "rules": [rule]})) is not None:
            kept.append(rule)
    assume(kept)
    text = _dump({**tree, "rules": kept})
    assert checked_text(text) is not None, text  # each rule is checked on its own
    return text


def _walks_hold(text: str, seed: int, folder: Path) -> None:
    spec = checked_text(text)
    assert spec is not None
    violations = list(dict.fromkeys(random_walks(spec, text, folder, seed)))
    assert not violations, text + "\n" + "\n".join(violations)


# The full runs are `slow` (`pytest -m slow`, a CI step of its own); the default run keeps a
# few examples of each (`_smoke`).
@pytest.mark.slow
@settings(SETTINGS, max_examples=100)
@given(text=checked_specs(extended=True), seed=st.integers(0, 2**16))
def test_checked_specs_with_done_and_history_hold_on_random_walks(text: str, seed: int,
                                                                   folder: Path) -> None:
    _walks_hold(text, seed, folder)


@settings(SETTINGS, max_examples=SMOKE)
@given(text=checked_specs(extended=True), seed=st.integers(0, 2**16))
def test_checked_specs_with_done_and_history_hold_on_random_walks_smoke(
        text: str, seed: int, folder: Path) -> None:
    _walks_hold(text, seed, folder)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("soundness")


@pytest.mark.slow
@SETTINGS
@given(text=checked_specs(), seed=st.integers(0, 2**16))
def test_checked_specs_hold_on_random_walks(text: str, seed: int, folder: Path) -> None:
    _walks_hold(text, seed, folder)


@settings(SETTINGS, max_examples=SMOKE)
@given(text=checked_specs(), seed=st.integers(0, 2**16))
def test_checked_specs_hold_on_random_walks_smoke(text: str, seed: int, folder: Path) -> None:
    _walks_hold(text, seed, folder)


# -- known counter-examples ------------------------------------------------------------------

PAR_NEVER = """\
statechart: par_never
version: 1
initial: x
states:
  x: {on: {go: a1}}
  p: {parallel: true, states: {ra: {initial: a1, states: {a1: {on: {finish: end}}}},
                               rb: {initial: b1, states: {b1: {on: {finish: end}}}}}}
  end: {final: true}
rules: [{never: {from: x, to: b1}}]
"""

PAR_REENTER = """\
statechart: par_reenter
version: 1
initial: p
states:
  p:
    parallel: true
    states:
      ra: {initial: a1, states: {a1: {on: {cross: b2, finish: end}}}}
      rb: {initial: b1, states: {b1: {on: {finish: end}}, b2: {on: {finish: end}}}}
      rc: {initial: c1, states: {c1: {on: {next: c2}}, c2: {on: {finish: end}}}}
  end: {final: true}
rules: [{never: {from: a1, to: c1}}]
"""

REGION_SELF_LOOP = """\
statechart: region_self_loop
version: 1
initial: p
states:
  p:
    parallel: true
    states:
      ra: {on: {again: ra, finish: end}}
      rb: {initial: b1, states: {b1: {on: {next: b2}}, b2: {on: {finish: end}}}}
  end: {final: true}
rules: [{never: {from: ra, to: b1}}]
"""

SIBLING = """\
statechart: par_sibling
version: 1
initial: p
states:
  p:
    parallel: true
    states:
      ra: {initial: a1, states: {a1: {on: {finish: end}}}}
      rb: {initial: b1, states: {b1: {on: {next: b2, abort: stopped}}, b2: {on: {finish: end}}}}
  end: {final: true}
  stopped: {final: true}
rules: [RULE]
"""

PAR_UNREACHABLE = """\
statechart: par_unreachable
version: 1
initial: x
states:
  x: {on: {go: b2}}
  p:
    parallel: true
    states:
      ra: {initial: a1, states: {a1: {on: {next: a2}}, a2: {on: {finish: end}}}}
      rb: {initial: b1, states: {b1: {on: {finish: end}}, b2: {on: {finish: end}}}}
  end: {final: true}
rules: [{unreachable: {from: a2, to: b2}}]
"""

TAG_ONLY = """\
statechart: tag_only
version: 1
initial: c
states:
  c:
    tags: [busy]
    initial: c1
    states:
      c1: {on: {next: c2}}
      c2: {on: {finish: end}}
  end: {final: true}
rules: [{only: {from: c1, to: {tag: busy}}}]
"""

ONLY_HISTORY = """\
statechart: only_history
version: 1
initial: c
states:
  c:
    initial: a
    states:
      a: {on: {next: b}}
      b: {on: {back: {target: c, history: shallow}, finish: end}}
  end: {final: true}
rules: [{only: {from: b, to: end}}]
"""

UNREACHABLE_HISTORY = """\
statechart: unreachable_history
version: 1
initial: x
states:
  x: {on: {go: b}}
  w:
    initial: a
    on: {pause: p}
    states:
      a: {on: {finish: end}}
      b: {on: {finish: end}}
  p: {on: {resume: {target: w, history: deep}}}
  end: {final: true}
rules: [{unreachable: {from: p, to: b}}]
"""

# (spec, events sent in order): `check` accepts each spec today (one rule each), and the
# events break its rule. Minimized by hand from what the property test finds.
COUNTER_EXAMPLES = {
    # A transition into one region of a parallel state from outside enters the other regions'
    # initial states too; `check` counts only the target's own line (the known bug).
    "parallel-entry-other-regions": (PAR_NEVER, ["go"]),
    # A transition inside a parallel state whose domain is outside it (here into a sibling
    # region) exits the parallel state and re-enters it: every region restarts from its
    # initial state. `check` stops at the parallel state, which is on the source's line.
    "parallel-cross-region-reenters": (PAR_REENTER, ["next", "cross"]),
    # The same through a self-loop on a region that is a leaf: its parent is parallel, so the
    # domain is above it and the other regions restart (b2 -> b1).
    "parallel-region-self-loop-reenters": (REGION_SELF_LOOP, ["next", "again"]),
    # A transition of another region fires while A is active ("no transition that can fire
    # while in A"): `check` only looks at transitions declared on A, inside it and above it.
    "sibling-region-never": (SIBLING.replace("RULE", "{never: {from: a1, to: b2}}"),
                             ["next"]),
    "sibling-region-only": (SIBLING.replace("RULE", "{only: {from: a1, to: end}}"),
                            ["abort"]),
    # b2 is entered directly from outside, so it is active beside a2 without being reachable
    # from a2 in the graph (whose parallel step re-enters other regions at their initial).
    "unreachable-coactive-region": (PAR_UNREACHABLE, ["go", "next"]),
    # docs/rules.md: `{tag: t}` means the states tagged t; `check` takes their subtrees, so it
    # counts c1 -> c2 as entering `busy` although only c is tagged.
    "tag-means-tagged-states": (TAG_ONLY, ["next"]),
    # A history transition from inside its target (domain: the target, which stays active)
    # enters where the target was left, here its default `a`: `check` counted the target's
    # whole subtree as entered, so b "stayed in A".
    "history-only-may-not-reenter": (ONLY_HISTORY, ["next", "back"]),
    # Deep history re-enters `b`, reached from outside before `p`: `check`'s graph went from
    # `p` to `w`'s default entry only.
    "history-unreachable-reenters": (UNREACHABLE_HISTORY, ["go", "pause", "resume"]),
}


@pytest.mark.parametrize("name", sorted(COUNTER_EXAMPLES))
def test_checked_rules_hold_on_known_counter_examples(name: str, folder: Path) -> None:
    text, events = COUNTER_EXAMPLES[name]
    result = check_source(f"{name}.yaml", text.encode("utf-8"))
    other = [d.message for d in result.errors if d.rule != "rule-violation"]
    assert not other, other  # the example itself must be a valid spec
    if result.errors:
        return  # the checker reports the rule: sound
    spec = result.spec
    assert spec is not None
    walk = Walk(spec, rules_of(spec, text), build(spec, folder), coin=lambda: True)
    for event in events:
        assert walk.send(event), f"{event} refused: {walk.trail}"
    assert not walk.violations, "\n".join(walk.violations)
