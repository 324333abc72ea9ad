"""A multi-target transition's targets cannot be active together.

What: a transition with a list of targets (`target: [a2, b2]`) where two of them are in the
same region (one inside the other, or in sibling branches of a compound state) or not under
one parallel state; or one that also enters by `history` or is `internal: true`; or two
alternatives of one event on one state whose targets start with the same state but differ.

Why: a multi-target transition enters given states of several regions of one parallel state at
once (SCXML `target="a2 b2"`): the states entered must be a configuration a run can be in, in
which a compound state has exactly one active child. Two targets in one region would make two
of its children active; SCXML calls such a document non-conformant, and engines differ on what
they do with it. History and `internal` take one target here. A step of the run record names
the transition's first target (the replay takes the others from the spec), so two alternatives
that start with the same target could not be told apart in a stored history.

Example:

    idle:
      on:
        start: {target: [a2, b1]}      # invalid-multi-target: a2 and b1 are both in region ra
    work:
      parallel: true
      states:
        ra: {initial: a1, states: {a1: {}, a2: {}, b1: {}}}
        rb: {initial: c1, states: {c1: {}, c2: {}}}

Fix: name one state per region of one parallel state (`target: [a2, c2]`); for history or
`internal`, use one target; list the targets of such alternatives in another order.
"""

from statechart import spec_chart
from statechart.diagnostics import Severity
from statechart.model_index import index
from statechart.rules._base import Check, Graph, Spec, problem

ID = "invalid-multi-target"
SEVERITY: Severity = "error"
PHASE = "model"


def _apart(spec: Spec, a: str, b: str) -> str | None:
    """Why `a` and `b` cannot be active together as targets, or None when they can (their
    nearest common ancestor is a parallel state)."""
    if a in spec.ancestors(b) or b in spec.ancestors(a):
        return "one is inside the other"
    line = spec.ancestors(b)
    common = next((x for x in spec.ancestors(a) if x in line), None)
    if common is None:
        return "they are not inside one parallel state"
    if spec.states[common].kind != "parallel":
        return f"both are in `{common}`, which has one active child"
    return None


def check(spec: Spec, graph: Graph) -> Check:
    # Per state: the targets of the first alternative of an event with each first target.
    first_targets: dict[tuple[str, str, str], tuple[str, ...]] = {}
    for t in index(spec).multi_target:  # in document order
        if not spec_chart.known(spec, t):
            continue
        where = f"`{t.source}` on `{t.shown}`"
        if t.history or t.kind == "internal":
            yield problem(ID, SEVERITY, t.target_span,
                          f"{where} has several targets and "
                          + ("enters by history" if t.history else "is internal"),
                          "give it one target, or drop "
                          + ("`history`" if t.history else "`internal: true`"))
            continue
        found = next(((a, b, why) for i, a in enumerate(t.targets)
                      for b in t.targets[i + 1:] if (why := _apart(spec, a, b))), None)
        if found is not None:
            a, b, why = found
            yield problem(ID, SEVERITY, t.target_spans[t.targets.index(b)],
                          f"{where}: targets `{a}` and `{b}` cannot be active together "
                          f"({why})",
                          "name states of different regions of one parallel state, one "
                          "per region")
            continue
        key = (t.source, t.event, t.target)
        if key in first_targets and first_targets[key] != t.targets:
            yield problem(ID, SEVERITY, t.target_span,
                          f"{where}: two alternatives have targets that start with "
                          f"`{t.target}`; a step of the run record names only the first",
                          "list this alternative's targets in another order")
        first_targets.setdefault(key, t.targets)
