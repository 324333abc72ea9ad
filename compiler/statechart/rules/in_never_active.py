"""A transition's `in:` state can never be active while its source is.

What: an `in:` state of a transition that is neither the source, one of its ancestors or
descendants, nor in another region of a parallel state that contains both (the states two
active states can be: one inside the other, or in orthogonal regions).

Why: `in:` enables a transition only while the named state is active (SCXML `In()`), asked
when the source is active. A state in a sibling branch of a compound state is exited whenever
the source is entered, so the condition is always false: the transition is never taken, and
every check that counts it as a way out of its source (traps, paths to a final state) is
misled.

Example:

    review:
      parallel: true
      states:
        approval:
          initial: pending
          states:
            pending:
              on:
                approve: {target: approved, in: rejected}   # in-never-active: a sibling
            approved: {final: true}
            rejected: {final: true}
        budget:
          initial: within_budget
          states:
            within_budget: {}
            over_budget: {}

Fix: name a state of another region (`in: within_budget`), or drop `in:`.
"""

from statechart.diagnostics import Severity
from statechart.model_index import index
from statechart.rules._base import Check, Graph, Spec, problem

ID = "in-never-active"
SEVERITY: Severity = "error"
PHASE = "model"


def can_be_active_together(spec: Spec, a: str, b: str) -> bool:
    """Whether states `a` and `b` can be active at once: one contains the other, or their
    nearest common ancestor is a parallel state."""
    up_a = [a, *spec.ancestors(a)]
    up_b = [b, *spec.ancestors(b)]
    if a in up_b or b in up_a:
        return True
    common = next((s for s in up_a if s in up_b), None)
    return common is not None and spec.states[common].kind == "parallel"


def check(spec: Spec, graph: Graph) -> Check:
    for t in index(spec).with_in:
        for name, span in zip(t.in_states, t.in_spans, strict=True):
            if name not in spec.states or can_be_active_together(spec, t.source, name):
                continue  # an unknown name is `unknown-state`'s
            yield problem(ID, SEVERITY, span,
                          f"`{t.source}` on `{t.shown}` needs `{name}` active (`in:`), "
                          f"which is never active while `{t.source}` is: the transition "
                          "is never taken",
                          "name a state of another region of a parallel state that "
                          f"contains `{t.source}`, or drop it from `in:`")
