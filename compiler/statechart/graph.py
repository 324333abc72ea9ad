"""Graph algorithms over a spec's states. Iterative throughout: no recursion limit applies.

The graph has one node per state and an edge wherever being in one state can make another
active:
- `S -> T` for each transition of S to T (labelled with the transition);
- `S -> parent(S)`: while S is active its parent is too, so the parent's transitions apply
  (statechart semantics: a transition declared on a state applies to all its descendants);
- `C -> initial(C)` for a compound state, and `P -> R` for every region R of a parallel state:
  entering a state enters its default children.
Guards are not evaluated: a guarded transition is assumed possible. This makes every result a
"may" answer: reachable means reachable if the guards allow.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from statechart.model import Spec, Transition


@dataclass(frozen=True)
class Step:
    """One edge of a path: a transition, or None for a structural move (parent, child)."""

    source: str
    transition: Transition | None
    target: str


class Graph:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        states = spec.states
        self.out: dict[str, list[tuple[str, Transition | None]]] = {n: [] for n in states}
        self.into: dict[str, list[str]] = {n: [] for n in states}
        for state in states.values():
            edges = self.out[state.name]
            for t in state.transitions:
                if t.target in states:
                    edges.append((t.target, t))
            if state.parent is not None:
                edges.append((state.parent, None))
            if state.kind == "compound" and state.children:
                # Without a valid `initial` (reported by missing-initial / unknown-state), assume
                # the first child, so that one mistake does not cascade into unreachable states.
                default = state.initial if state.initial in state.children \
                    else state.children[0]
                edges.append((default, None))
            elif state.kind == "parallel":
                edges.extend((child, None) for child in state.children)
            for target, _ in edges:
                self.into[target].append(state.name)

    def reachable(self, starts: Iterable[str]) -> dict[str, Step | None]:
        """Every state reachable from `starts`, each with the step that first reached it."""
        seen: dict[str, Step | None] = {}
        queue: deque[str] = deque()
        for s in starts:
            if s in self.out and s not in seen:
                seen[s] = None
                queue.append(s)
        while queue:
            current = queue.popleft()
            for target, transition in self.out[current]:
                if target not in seen:
                    seen[target] = Step(current, transition, target)
                    queue.append(target)
        return seen

    def reaching(self, goals: Iterable[str]) -> set[str]:
        """Every state from which some state of `goals` is reachable (goals included)."""
        seen = {g for g in goals if g in self.into}
        queue = deque(seen)
        while queue:
            current = queue.popleft()
            for source in self.into[current]:
                if source not in seen:
                    seen.add(source)
                    queue.append(source)
        return seen

    def shortest_path(self, starts: Iterable[str], goals: set[str]) -> list[Step] | None:
        """The shortest path from any start to any goal, or None when there is none."""
        found = self.reachable(starts)
        best = next((g for g in found if g in goals), None)  # BFS order: first is nearest
        if best is None:
            return None
        return path_to(found, best)


def path_to(found: dict[str, Step | None], goal: str) -> list[Step]:
    steps: list[Step] = []
    step = found[goal]
    while step is not None:
        steps.append(step)
        step = found[step.source]
    steps.reverse()
    return steps


def format_path(start: str, steps: list[Step]) -> str:
    """`created -triage-> triaging -start-> running`: structural moves are folded away, and a
    transition inherited from a parent shows where it is declared: `reasoning (running) -x-> y`.
    """
    parts = [start]
    current = start
    for step in steps:
        t = step.transition
        if t is not None:
            if current != t.source:
                parts.append(f"({t.source})")
            parts.append(f"-{t.event}-> {t.target}")
        current = step.target
    return " ".join(parts)


def entered_states(spec: Spec, transition: Transition) -> list[str]:
    """The states a transition enters: the target, its ancestors that were not already
    active, and its default descendants."""
    target = transition.target
    if target not in spec.states:
        return []
    source_line = set(spec.ancestors(transition.source)) | {transition.source}
    entered = []
    for name in [target, *spec.ancestors(target)]:
        if name in source_line and name != target:
            break
        entered.append(name)
    stack = [target]
    while stack:
        state = spec.states[stack.pop()]
        if state.kind == "compound" and state.initial in spec.states:
            entered.append(state.initial)
            stack.append(state.initial)
        elif state.kind == "parallel":
            entered.extend(state.children)
            stack.extend(state.children)
    return entered


def available_transitions(spec: Spec, names: Iterable[str]) -> list[Transition]:
    """Transitions that can fire while any of `names` is active: those declared on the
    states themselves, their descendants and their ancestors."""
    declared_on: dict[str, None] = {}
    for name in names:
        for sub in spec.subtree(name):
            declared_on.setdefault(sub, None)
        for anc in spec.ancestors(name):
            declared_on.setdefault(anc, None)
    return [t for s in declared_on for t in spec.states[s].transitions]
