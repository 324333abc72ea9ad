"""A state from which the run can never finish.

What: from this state no sequence of transitions reaches a state where the run ends: a
top-level final state, or a final state of a region of a top-level parallel state whose every
region has one (the run ends when every region rests in its final state; a state inside
such a region must reach its own region's final state, or leave the parallel state towards an
end). Guards are assumed to allow every transition, so this holds whatever they say. When
the spec has no such state at all, it is reported once, at `initial`.

Why: a group of states that only lead to each other (a cycle with no exit) is a livelock: the
run keeps moving but can never complete, fail or be cancelled.

Example:

    polling: {on: {tick: checking}}
    checking: {on: {tock: polling}}   # no-path-to-final: polling and checking loop forever

Fix: add a way out of the cycle (a timeout, a cancel, a give-up after retries) that leads to a
final state.
"""

from statechart import spec_chart
from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Spec, problem

ID = "no-path-to-final"
SEVERITY: Severity = "error"
PHASE = "graph"


def check(spec: Spec, graph: Graph) -> Check:
    if spec.initial not in spec.states:
        return
    finals = spec_chart.ending_states(spec)
    if not finals:
        yield problem(ID, SEVERITY, spec.span, "no top-level state is final: runs never finish",
                      "mark the states where a run ends with `final: true`")
        return
    finishing = _finishing(spec, graph)
    reached = graph.reachable([spec.initial])
    for state in spec.states.values():
        if state.kind != "atomic" or state.name in finishing or state.name not in reached:
            continue
        if spec_chart.is_trap(spec, state.name):
            continue  # reported by trap-state
        yield problem(ID, SEVERITY, state.span,
                      f"no path leads from `{state.name}` to a final state",
                      "add a transition out of this part of the graph that leads to a final "
                      "state (" + ", ".join(f"`{f}`" for f in finals) + ")")


def _finishing(spec: Spec, graph: Graph) -> set[str]:
    """The states from which the run can end. For a top-level parallel state that ends the
    run, a state inside region R counts when it reaches a final state of R without leaving R
    (the graph's `(P, active) -> (R, entered)` edges would let it "finish" through another
    region, or by restarting its own), or leaves the parallel state towards a finishing state."""
    tops = [s.name for s in spec.top_level if s.is_final]
    finishing = graph.reaching(tops) if tops else set()
    for parallel, regions in spec_chart.ending_parallels(spec).items():
        inside = set(spec.subtree(parallel))
        within: set[str] = set()
        for region, finals in regions.items():
            within |= _reaching_within(spec, region, finals)
        starts_done = all(
            all(s in within or s in finishing for s in spec_chart.default_entry(spec, r)
                if not spec.states[s].children)
            for r in regions)
        if starts_done:  # entering the parallel state leads to the end
            finishing |= {s for s in graph.reaching([parallel]) if s not in inside}
        outside = [s for s in finishing if s not in inside]
        finishing |= within | (graph.reaching(outside) if outside else set())
    return finishing


def _reaching_within(spec: Spec, region: str, finals: list[str]) -> set[str]:
    """The states of `region` that reach one of `finals` by transitions that stay inside it
    (those that may fire while an atomic state of the region is active, as the graph's: a
    transition declared on a state applies to every state nested in it that does not hide
    it). Only the atomic states of the result count: they are where a run is."""
    inside = set(spec.subtree(region))
    chart = spec_chart.chart(spec)
    into: dict[str, set[str]] = {}
    for leaf in inside:
        if not chart.is_atomic(leaf):
            continue
        for t in spec_chart.may_fire(spec, leaf):
            if t.target not in inside:
                continue
            for target in spec_chart.entry_set(spec, t):
                if target in inside:
                    into.setdefault(target, set()).add(leaf)
    seen = set(finals)
    queue = list(finals)
    while queue:
        current = queue.pop()
        for source in into.get(current, ()):
            if source not in seen:
                seen.add(source)
                queue.append(source)
    return seen
