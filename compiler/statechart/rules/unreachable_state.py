"""A state can never become active.

What: no sequence of transitions from the spec's `initial` state enters this state (directly,
as a default child of a state that is entered, or as a region of a parallel state). Guards are
assumed to allow every transition, so an unreachable state is unreachable whatever they say.

Why: an unreachable state is dead code in the lifecycle, usually a forgotten transition or a
typo in a target. python-statemachine refuses such a class ("Disconnected states").

Example:

    created: {on: {start: running}}
    running: {on: {finish: done}}
    archived: {}           # unreachable-state: nothing leads to `archived`
    done: {final: true}

Fix: add the transition that should lead to the state, or remove the state.
"""

from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Spec, problem

ID = "unreachable-state"
SEVERITY: Severity = "error"
PHASE = "graph"


def check(spec: Spec, graph: Graph) -> Check:
    if spec.initial not in spec.states:
        return
    reached = graph.reachable([spec.initial])
    for state in spec.states.values():
        if state.name not in reached:
            # Report the outermost unreachable state only: its children follow from it.
            if state.parent is not None and state.parent not in reached:
                continue
            yield problem(ID, SEVERITY, state.span,
                          f"state `{state.name}` is unreachable from `{spec.initial}`",
                          f"add a transition that targets `{state.name}`, or remove it")
