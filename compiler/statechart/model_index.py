"""What the rules, the graph and the chart ask of every transition, gathered in one walk per
model (`index(spec)`).

A 10,000-state spec has 50,000 alternatives, and a dozen rules each walked all of them to look
at a key most transitions do not have (`in:`, `clear:`, `internal`, several targets, history):
about 20-50 ms a walk, half of `check`'s time in the rules (docs/performance.md, issue 31).
Here one walk lists the few transitions each question is about, in document order, and the
names the transitions use, so that a rule can see at once that it has nothing to find and
look at the rest only then. A rule that reports walks what it walked before, so what it
reports and in which order does not change.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from statechart.model import Spec, Transition


@dataclass(frozen=True)
class TransitionIndex:
    """One model's transitions, by what the rules look for; every list in document order."""

    with_in: tuple[Transition, ...]  # an `in:` condition
    with_clears: tuple[Transition, ...]  # `clear:`
    multi_target: tuple[Transition, ...]  # `target: [a, b]`
    internal: tuple[Transition, ...]  # `internal: true`
    history: tuple[Transition, ...]  # `history: shallow|deep`
    by_trigger: dict[str, tuple[Transition, ...]]  # `done` and `always`
    targets: frozenset[str]  # every name a transition targets (`all_targets`)
    in_states: frozenset[str]  # every state an `in:` names
    written: frozenset[str]  # every field a `set:` or `clear:` names
    sets: frozenset[str]  # every field a `set:` (or `assign:`) names
    deadlines: frozenset[str]  # every record field a deadline timer reads
    raised: frozenset[str]  # the events the run raises itself (completion, eventless, timers)
    # The states that declare an event twice or more (alternatives, or an `on:` key another
    # trigger raises too): only there can one alternative hide another.
    repeated_events: frozenset[str]
    # The states with an `on:` key that is dotted or `*`: only there can a key take the event
    # of a key written after it.
    descriptor_keys: frozenset[str]


_indexes: dict[int, TransitionIndex] = {}


def index(spec: Spec) -> TransitionIndex:
    """The model's index, built once (dropped with the model)."""
    key = id(spec)
    found = _indexes.get(key)
    if found is None:
        found = _indexes[key] = _build(spec)
        weakref.finalize(spec, _indexes.pop, key, None)
    return found


def _build(spec: Spec) -> TransitionIndex:
    # One loop that reads each transition once: a pass over 50,000 transitions costs about
    # 15 ms in reads alone (they lie all over memory, between the YAML nodes), so the few
    # with a key most do not have are set aside and sorted out afterwards.
    rare: list[Transition] = []
    targets: set[str] = set()
    sets: set[str] = set()
    repeated: set[str] = set()
    descriptors: set[str] = set()
    for t in spec.transitions():
        if t.order:  # a second alternative of its event
            repeated.add(t.source)
        elif t.trigger == "event" and ("." in t.event or t.event == "*"):
            descriptors.add(t.source)
        targets.add(t.target)
        if t.sets:
            sets.update(t.sets)
        if t.targets or t.in_states or t.clears or t.kind != "external" \
                or t.trigger != "event" or t.history:
            rare.append(t)
    # Two first alternatives of one event on a state: an `on:` key and a trigger that raises
    # the same event (`on: {done.state.x: ...}` and `done:`); two `on:` keys are a mapping's,
    # never the same, so no state has a key written twice.
    for t in rare:
        if t.trigger != "event" and t.order == 0 and t.source not in repeated and any(
                u.event == t.event and u is not t for u in spec.states[t.source].transitions):
            repeated.add(t.source)
    multi_target = tuple([t for t in rare if t.targets])
    with_in = tuple([t for t in rare if t.in_states])
    with_clears = tuple([t for t in rare if t.clears])
    for t in multi_target:
        targets.update(t.targets)
    return TransitionIndex(
        with_in, with_clears, multi_target,
        tuple([t for t in rare if t.kind == "internal"]), tuple([t for t in rare if t.history]),
        {trigger: tuple([t for t in rare if t.trigger == trigger])
         for trigger in ("done", "always")},
        frozenset(targets), frozenset(name for t in with_in for name in t.in_states),
        frozenset(sets.union(*(t.clears for t in with_clears))), frozenset(sets),
        frozenset({t.deadline for t in rare if t.deadline is not None}),
        frozenset({t.event for t in rare if t.trigger != "event"}),
        frozenset(repeated), frozenset(descriptors))
