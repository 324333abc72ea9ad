"""A final state can be left.

What: a state marked `final: true` has transitions (`on:`), or one of its ancestors has, which
applies to it too: in a statechart a transition declared on a state applies to every state
nested in it.

Why: final means the run (or region) has ended; a completed or failed run that can still move
breaks every consumer that trusts the status. The inherited case is the one people miss:
XState and python-statemachine both let a nested final state be left through its parent.

Example:

    job:
      initial: working
      on: {cancel: cancelled}       # applies to everything inside `job` ...
      states:
        working: {on: {finish: done}}
        done: {final: true}         # terminal-exit: `done` can be left by `cancel`

Fix: move the final state out of the compound state, move the transition onto the non-final
children, or drop `final: true`.
"""

from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Spec, problem

ID = "terminal-exit"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    for state in spec.states.values():
        if not state.is_final:
            continue
        for t in state.transitions:
            yield problem(ID, SEVERITY, t.span,
                          f"final state `{state.name}` has a transition on `{t.shown}` "
                          f"to `{t.target}`",
                          "a final state ends the run; remove the transition or `final: true`")
        for ancestor in spec.ancestors(state.name):
            for t in spec.states[ancestor].transitions:
                yield problem(ID, SEVERITY, state.span,
                              f"final state `{state.name}` can be left by `{t.shown}` to "
                              f"`{t.target}`, inherited from `{ancestor}` "
                              f"(line {t.span.line})",
                              f"move `{state.name}` out of `{ancestor}`, or declare "
                              f"`{t.shown}` on the non-final states only")
