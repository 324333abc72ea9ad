"""A state with nested states does not say which one is entered first.

What: a compound state (one with `states` that is not `parallel`) has no `initial` key.

Why: entering the state must activate exactly one child. python-statemachine silently picks the
first child in document order, so reordering the YAML would change behaviour.

Example:

    running:               # missing-initial
      states:
        reasoning: {...}
        tool_call: {...}

Fix: add `initial: reasoning` (or mark the state `parallel: true` if all children run at once).
"""

from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Spec, problem

ID = "missing-initial"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    for state in spec.states.values():
        if state.kind == "compound" and state.initial is None and state.initial_span is None \
                and state.children:
            yield problem(ID, SEVERITY, state.span,
                          f"compound state `{state.name}` has no `initial` child",
                          f"add `initial: {state.children[0]}` to `{state.name}`")
