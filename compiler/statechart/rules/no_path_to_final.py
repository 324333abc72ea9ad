"""A state from which the run can never finish.

What: from this state no sequence of transitions reaches a state where the run ends: a
top-level final state, or a final state of a region of a top-level parallel state whose every
region has one (the run ends when every region rests in its final state). Guards are assumed
to allow every transition, so this holds whatever they say. When the spec has no such state at
all, it is reported once, at `initial`.

Why: a group of states that only lead to each other (a cycle with no exit) is a livelock: the
run keeps moving but can never complete, fail or be cancelled.

Example:

    polling: {on: {tick: checking}}
    checking: {on: {tock: polling}}   # no-path-to-final: polling and checking loop forever

Fix: add a way out of the cycle (a timeout, a cancel, a give-up after retries) that leads to a
final state.
"""

from statechart import semantics
from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Spec, problem

ID = "no-path-to-final"
SEVERITY: Severity = "error"
PHASE = "graph"


def check(spec: Spec, graph: Graph) -> Check:
    if spec.initial not in spec.states:
        return
    finals = semantics.ending_states(spec)
    if not finals:
        yield problem(ID, SEVERITY, spec.span, "no top-level state is final: runs never finish",
                      "mark the states where a run ends with `final: true`")
        return
    finishing = graph.reaching(finals)
    reached = graph.reachable([spec.initial])
    for state in spec.states.values():
        if state.kind != "atomic" or state.name in finishing or state.name not in reached:
            continue
        if spec.is_trap(state.name):
            continue  # reported by trap-state
        yield problem(ID, SEVERITY, state.span,
                      f"no path leads from `{state.name}` to a final state",
                      "add a transition out of this part of the graph that leads to a final "
                      "state (" + ", ".join(f"`{f}`" for f in finals) + ")")
