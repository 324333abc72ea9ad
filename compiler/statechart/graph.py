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
Both kinds have `(S, *) -> (parent(S), ACTIVE)`. Transitions are selected from atomic states
(as a run selects them): an atomic S has `(S, *) -> (T, ENTERED)` for each transition to T
that may fire while S is active (`spec_chart.may_fire`: S's own and its ancestors', those no
alternative before them hides: a descendant's transition shadows its ancestor's, an
unguarded alternative the ones after it), labelled with the transition; a compound or
parallel state's transitions are edges of the atomic states under it that do not shadow
them.

Guards are not evaluated: a guarded transition is assumed possible, and so is the one a
refusal leads to. This makes every result a "may" answer: reachable means reachable if the
guards allow. Other approximations, all on the "may" side: the regions of a parallel state
move independently (a transition of one region may in fact be preempted by another's in the
same step, or its state left by another region's transition meanwhile); history may enter any
state a run can reach under its target; limits, required fields, and the completion and
eventless steps a run takes at once are not modelled. The public methods speak of states by
name; the modes stay inside this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from statechart import spec_chart
from statechart.model import Spec, Transition
from statechart.model_index import index as transition_index

ENTERED, ACTIVE = 0, 1


@dataclass(frozen=True)
class Step:
    """One edge of a path: a transition, or None for a structural move (parent, child)."""

    source: str
    transition: Transition | None
    target: str


class Graph:
    """Nodes are integers, `2 * index + mode`, and adjacency lists are plain lists: on large
    specs, dicts keyed by (name, mode) tuples made the searches grow faster than the spec."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        states = spec.states
        self.names = list(states)
        index = {name: i for i, name in enumerate(self.names)}
        chart = spec_chart.chart(spec)
        # A history transition whose target remembers nothing enters the history's default
        # (`history_default:`, with its ancestors up to the target) when it has one.
        history_defaults = chart.history_defaults

        def entered_by(t: Transition) -> int:
            first = history_defaults.get((t.target, t.history)) if t.history else None
            return 2 * index[first or t.target] + ENTERED

        self.out: list[list[tuple[int, Transition | None]]] = [[] for _ in range(2 * len(index))]
        self.into: list[list[int]] = [[] for _ in range(2 * len(index))]
        for i, state in enumerate(states.values()):
            fired = spec_chart.may_fire(spec, state.name) if chart.is_atomic(state.name) else ()
            shared: list[tuple[int, Transition | None]] = [
                (entered_by(t) if t.history else 2 * index[t.target] + ENTERED, t)
                for t in fired
                if t.target in index and t.kind != "targetless"]  # that one enters nothing
            # A multi-target transition enters its other targets too. (The graph also has
            # the other regions' default entries as possible next to each: a "may" answer.)
            shared += [(2 * index[x] + ENTERED, t) for t in fired if t.targets
                       for x in t.targets[1:] if x in index]
            if state.parent is not None:
                shared.append((2 * index[state.parent] + ACTIVE, None))
            defaults: list[tuple[int, Transition | None]] = []
            # Default entry as the semantics defines it (a compound state without a valid
            # `initial` enters its first child, so one mistake does not cascade).
            if state.kind == "compound" and chart.children[state.name]:
                defaults.append((2 * index[chart.initial[state.name]] + ENTERED, None))
            elif state.kind == "parallel":
                defaults.extend((2 * index[c] + ENTERED, None)
                                for c in chart.children[state.name])
            entered_edges = shared + defaults
            active_edges = entered_edges if state.kind == "parallel" else shared
            self.out[2 * i + ENTERED] = entered_edges
            self.out[2 * i + ACTIVE] = active_edges
            for node, edges in ((2 * i + ENTERED, entered_edges), (2 * i + ACTIVE, active_edges)):
                for target, _ in edges:
                    self.into[target].append(node)
        self._index = index
        # `reachable` per tuple of starts: unreachable-state, no-path-to-final and the rules
        # ask from `initial` (a search of the whole graph each).
        self._reached: dict[tuple[str, ...], frozenset[str]] = {}
        self._add_history_edges()
        self._reached.clear()  # found before the history edges

    def _add_history_edges(self) -> None:
        """A history transition to T enters T by default (the edge above) or where T was
        left: shallow, a child of T by its default entry; deep, the atomic states under T
        that were active (their ancestors follow as active). Only states a run can reach are
        ever remembered, and the graph without these edges already reaches every state a run
        can be in (each was first entered otherwise), so they go to those states only: they
        matter for paths from somewhere else than `initial` (`unreachable` rules)."""
        spec = self.spec
        history = [t for t in transition_index(spec).history if t.target in self._index]
        if not history or spec.initial not in self._index:
            return
        reached = self.reachable([spec.initial])
        chart = spec_chart.chart(spec)
        firing: dict[int, list[int]] = {}  # a history transition -> the atomic states it fires in
        for i, name in enumerate(self.names):
            if chart.is_atomic(name):
                for t in spec_chart.may_fire(spec, name):
                    if t.history:
                        firing.setdefault(id(t), []).append(i)
        for t in history:
            inside = spec.subtree(t.target)[1:]
            kept = [x for x in inside if x in reached and (
                spec.states[x].parent == t.target if t.history == "shallow"
                else not spec.states[x].children)]
            for i in firing.get(id(t), ()):
                nodes = [2 * i + ENTERED, 2 * i + ACTIVE]
                if self.out[nodes[0]] is self.out[nodes[1]]:
                    nodes.pop()  # one list for both
                for x in kept:
                    target = 2 * self._index[x] + ENTERED
                    for node in nodes:
                        self.out[node].append((target, t))
                        self.into[target].append(node)

    def _search(self, starts: Iterable[str]) -> tuple[list[int], list[int],
                                                      list[Transition | None]]:
        """Breadth-first from the `starts`, entered: the nodes in the order reached, and for
        each node the node and transition it was reached by (-1: not reached, -2: a start)."""
        previous = [-1] * len(self.out)
        via: list[Transition | None] = [None] * len(self.out)
        order: list[int] = []
        for s in starts:
            node = 2 * self._index[s] + ENTERED if s in self._index else -1
            if node >= 0 and previous[node] == -1:
                previous[node] = -2
                order.append(node)
        head = 0
        while head < len(order):
            current = order[head]
            head += 1
            for target, transition in self.out[current]:
                if previous[target] == -1:
                    previous[target] = current
                    via[target] = transition
                    order.append(target)
        return order, previous, via

    def reachable(self, starts: Iterable[str]) -> set[str]:
        """Every state that can become active from `starts` (entered there)."""
        key = tuple(starts)
        found = self._reached.get(key)
        if found is None:
            names = self.names
            found = self._reached[key] = frozenset(
                [names[node >> 1] for node in self._search(key)[0]])
        return set(found)

    def reaching(self, goals: Iterable[str]) -> set[str]:
        """Every state from which some state of `goals` can become active (goals included)."""
        seen = bytearray(len(self.into))
        queue = [2 * self._index[g] + m for g in goals if g in self._index
                 for m in (ENTERED, ACTIVE)]
        for node in queue:
            seen[node] = 1
        head = 0
        while head < len(queue):
            current = queue[head]
            head += 1
            for source in self.into[current]:
                if not seen[source]:
                    seen[source] = 1
                    queue.append(source)
        # A state counts when being in it (entered) leads there.
        return {self.names[i] for i in range(len(self.names)) if seen[2 * i + ENTERED]}

    def shortest_path(self, starts: Iterable[str], goals: set[str]) -> list[Step] | None:
        """The shortest path from any start to any goal, or None when there is none."""
        order, previous, via = self._search(starts)
        names = self.names
        best = next((node for node in order if names[node >> 1] in goals), None)
        if best is None:
            return None  # BFS order: the first goal reached is the nearest
        steps: list[Step] = []
        node = best
        while previous[node] >= 0:
            source, transition = names[previous[node] >> 1], via[node]
            if transition is not None and transition.source != source:
                # Inherited from an ancestor: shown from where it is declared, reached by a
                # structural move up.
                steps.append(Step(transition.source, transition, names[node >> 1]))
                steps.append(Step(source, None, transition.source))
            else:
                steps.append(Step(source, transition, names[node >> 1]))
            node = previous[node]
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
            parts.append(f"-{t.shown}-> {t.shown_target if t.targets else t.target}")
            if t.history and step.target != t.target:
                parts.append(f"(history: {step.target})")  # where the target was left
        current = step.target
    return " ".join(parts)
