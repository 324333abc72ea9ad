"""A final state has transitions of its own.

What: a state marked `final: true` declares transitions (`on:`).

Why: a final state is where a run (or, nested, a compound state or a region) ends; it is
left only by what its ancestors do, never by a transition of its own. A top-level final state
ends the run: nothing leaves it. A nested one completes its parent, which raises the parent's
`done` transition (and, when every region of a parallel state is done, the parallel's);
transitions declared on an ancestor still apply to it, as in SCXML and XState.

Example:

    states:
      completed:
        final: true
        on: {reopen: running}   # terminal-exit: a final state has no transitions

Fix: remove the transition, or drop `final: true`; to go on after a nested final state, use
`done:` on its parent.
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
                          "a final state has no transitions of its own; remove the transition or "
                          "`final: true` (to go on after a nested final state, use `done:` "
                          "on its parent)")
