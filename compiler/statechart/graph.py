"""Graph algorithms over a spec's states. Iterative throughout: no recursion limit applies.

Each state appears twice in the graph, because there are two ways of being active:
- *entered* `(S, ENTERED)`: a transition (or a default entry) entered S, so S's default
  children are entered too: `(C, ENTERED) -> (initial(C), ENTERED)` for a compound state,
  `(P, ENTERED) -> (R, ENTERED)` for every region R of a parallel state;
- *active* `(S, ACTIVE)`: S is active because a state inside it is. Its transitions apply
  (statechart semantics: a transition declared on a state applies to all its descendants),
  but nothing is entered: being in `a.x` does not make `a`'s initial sibling `a.y` reachable.
  A parallel state is the exception: its other regions are active too, so
  `(P, ACTIVE) -> (R, ENTERED)`.
Both kinds have `(S, *) -> (parent(S), ACTIVE)` and `(S, *) -> (T, ENTERED)` for each
transition of S to T (labelled with the transition).

Guards are not evaluated: a guarded transition is assumed possible. This makes every result a
"may" answer: reachable means reachable if the guards allow. The public methods speak of
states by name; the modes stay inside this module.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from statechart.model import Spec, Transition

ENTERED, ACTIVE = 0, 1
Node = tuple[str, int]


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
        self.out: dict[Node, list[tuple[Node, Transition | None]]] = {}
        self.into: dict[Node, list[Node]] = {(n, m): [] for n in states for m in (0, 1)}
        for state in states.values():
            shared: list[tuple[Node, Transition | None]] = [
                ((t.target, ENTERED), t) for t in state.transitions if t.target in states]
            if state.parent is not None:
                shared.append(((state.parent, ACTIVE), None))
            defaults: list[tuple[Node, Transition | None]] = []
            if state.kind == "compound" and state.children:
                # Without a valid `initial` (reported by missing-initial / unknown-state), assume
                # the first child, so that one mistake does not cascade into unreachable states.
                default = state.initial if state.initial in state.children \
                    else state.children[0]
                defaults.append(((default, ENTERED), None))
            elif state.kind == "parallel":
                defaults.extend(((child, ENTERED), None) for child in state.children)
            self.out[(state.name, ENTERED)] = shared + defaults
            active_edges = shared + (defaults if state.kind == "parallel" else [])
            self.out[(state.name, ACTIVE)] = active_edges
            for mode, edges in ((ENTERED, shared + defaults), (ACTIVE, active_edges)):
                for target, _ in edges:
                    self.into[target].append((state.name, mode))

    def _search(self, starts: Iterable[str]) -> dict[Node, tuple[Node, Transition | None] | None]:
        """Breadth-first from the `starts`, entered; each node with the edge that reached it."""
        seen: dict[Node, tuple[Node, Transition | None] | None] = {}
        queue: deque[Node] = deque()
        for s in starts:
            if (s, ENTERED) in self.out and (s, ENTERED) not in seen:
                seen[(s, ENTERED)] = None
                queue.append((s, ENTERED))
        while queue:
            current = queue.popleft()
            for target, transition in self.out[current]:
                if target not in seen:
                    seen[target] = (current, transition)
                    queue.append(target)
        return seen

    def reachable(self, starts: Iterable[str]) -> set[str]:
        """Every state that can become active from `starts` (entered there)."""
        return {name for name, _ in self._search(starts)}

    def reaching(self, goals: Iterable[str]) -> set[str]:
        """Every state from which some state of `goals` can become active (goals included)."""
        seen = {(g, m) for g in goals for m in (ENTERED, ACTIVE) if (g, m) in self.into}
        queue = deque(seen)
        while queue:
            current = queue.popleft()
            for source in self.into[current]:
                if source not in seen:
                    seen.add(source)
                    queue.append(source)
        # A state counts when being in it (entered) leads there.
        return {name for name, mode in seen if mode == ENTERED}

    def shortest_path(self, starts: Iterable[str], goals: set[str]) -> list[Step] | None:
        """The shortest path from any start to any goal, or None when there is none."""
        found = self._search(starts)
        best = next((node for node in found if node[0] in goals), None)  # BFS: first is nearest
        if best is None:
            return None
        steps: list[Step] = []
        edge = found[best]
        node = best
        while edge is not None:
            previous, transition = edge
            steps.append(Step(previous[0], transition, node[0]))
            node, edge = previous, found[previous]
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
