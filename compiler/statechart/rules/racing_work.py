"""Two work items can never both finish: whichever ends first ends the other.

What: two states with `work:` that can be active at the same time (one inside the other, or
in different regions of a parallel state), where every outcome of each one's work leaves the
other's state.

Why: leaving a state ends its work item. Here the first outcome applied always leaves the
other state, so the other item is ended while its handler runs: its result is refused, and
whatever it did outside the run (a payment, an email) is done for nothing. When this is what
you want (race two providers, keep the first answer), the warning says so out loud.

Example:

    states:
      lookup:
        parallel: true
        states:
          fast: {initial: asking_a, states: {asking_a: {work: {handler: ask_a, timeout: 5s,
                 outcomes: [answer_a]}}}}
          slow: {initial: asking_b, states: {asking_b: {work: {handler: ask_b, timeout: 5s,
                 outcomes: [answer_b]}}}}
        on: {answer_a: done, answer_b: done}   # racing-work: each answer ends the other

Fix: let an outcome stay inside its own region (a final state of the region, with `done:` on
the parallel state once both are in), or keep one item's work and drop the other's.
"""

from itertools import combinations

from statechart import semantics
from statechart.diagnostics import Severity
from statechart.model import Work
from statechart.rules._base import Check, Graph, Spec, problem

ID = "racing-work"
SEVERITY: Severity = "warning"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    work = [w for w in spec.work() if not spec.states[w.state].is_final]
    for first, second in combinations(work, 2):
        if second.state not in semantics.co_active(spec, [first.state]):
            continue
        if _ends(spec, first, second.state) and _ends(spec, second, first.state):
            yield problem(ID, SEVERITY, second.span,
                          f"the work of `{first.state}` and of `{second.state}` can never both "
                          f"finish: every outcome of each leaves the other's state",
                          "leaving a state ends its item, so the slower handler's result is "
                          "always refused; let an outcome stay inside its own region, or keep "
                          "one of the two")


def _ends(spec: Spec, work: Work, other: str) -> bool:
    """Whether every transition an outcome of `work` can take leaves `other` (and there is
    one): while both are active, the outcome always ends `other`'s item."""
    taken = [t for event in work.outcomes for t in semantics.may_take(spec, work.state, event)]
    return bool(taken) and all(semantics.exits(spec, t, other) for t in taken)
