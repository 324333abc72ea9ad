"""What the rules ask of every transition, gathered in one walk per model (`index(spec)`).

A 10,000-state spec has 50,000 alternatives, and a dozen rules each walked all of them to look
at a key most transitions do not have (`in:`, `clear:`, `internal`, several targets): about
20-50 ms a rule, half of `check`'s time in the rules (docs/performance.md, issue 31). Here
one walk lists the few transitions each rule is about, in document order, and the names the
transitions use, so that a rule can see at once that it has nothing to find and look at the
rest only then. A rule that reports walks what it walked before, so what it reports and in
which order does not change.
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
    by_trigger: dict[str, tuple[Transition, ...]]  # `done` and `always`
    targets: frozenset[str]  # every name a transition targets (`all_targets`)
    in_states: frozenset[str]  # every state an `in:` names
    written: frozenset[str]  # every field a `set:` or `clear:` names
    sets: frozenset[str]  # every field a `set:` (or `assign:`) names
    deadlines: frozenset[str]  # every record field a deadline timer reads
    # The states that declare an event twice or more (alternatives, or an `on:` key another
    # trigger raises too): only there can one alternative hide another.
    repeated_events: frozenset[str]
    # The states with an `on:` key that is dotted, `*` or written twice (first alternatives):
    # only there can a key take the event of a key written after it.
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
    with_in: list[Transition] = []
    with_clears: list[Transition] = []
    multi_target: list[Transition] = []
    internal: list[Transition] = []
    by_trigger: dict[str, list[Transition]] = {"done": [], "always": []}
    targets: set[str] = set()
    in_states: set[str] = set()
    sets: set[str] = set()
    clears: set[str] = set()
    deadlines: set[str] = set()
    repeated: list[str] = []
    descriptors: list[str] = []
    for state in spec.states.values():
        transitions = state.transitions
        if not transitions:
            continue
        events = set()
        keys = set()
        for t in transitions:
            event = t.event
            events.add(event)
            if t.trigger == "event" and t.order == 0:
                if "." in event or event == "*" or event in keys:
                    descriptors.append(state.name)
                keys.add(event)
            targets.add(t.target)
            if t.targets:
                multi_target.append(t)
                targets.update(t.targets)
            if t.in_states:
                with_in.append(t)
                in_states.update(t.in_states)
            if t.sets:
                sets.update(t.sets)
            if t.clears:
                with_clears.append(t)
                clears.update(t.clears)
            if t.kind == "internal":
                internal.append(t)
            if t.trigger != "event":
                if t.trigger in by_trigger:
                    by_trigger[t.trigger].append(t)
                elif t.deadline is not None:
                    deadlines.add(t.deadline)
        if len(events) < len(transitions):
            repeated.append(state.name)
    return TransitionIndex(
        tuple(with_in), tuple(with_clears), tuple(multi_target), tuple(internal),
        {k: tuple(v) for k, v in by_trigger.items()}, frozenset(targets),
        frozenset(in_states), frozenset(sets | clears), frozenset(sets),
        frozenset(deadlines), frozenset(repeated), frozenset(descriptors))
