"""One event of one state has several targets and nothing tells them apart.

What: an event lists alternatives (`event: [{target: a, guard: g}, {target: b}]`) and either an
alternative without a guard comes before the last one, so the alternatives after it are never
tried, or two alternatives have the same guard.

Why: alternatives are tried in order and the first whose guard passes wins. An unguarded
alternative always passes, so anything after it is dead; two equal guards pick the first one
always. Either way the spec says something it does not do.

Example:

    error:
      - {target: failed}                     # ambiguous-transition: always taken ...
      - {target: retrying, guard: can_retry} # ... so this is never tried

Fix: put the guarded alternatives first and the unguarded fallback last, and give each
alternative its own guard.
"""

from statechart.diagnostics import Severity
from statechart.model import Transition
from statechart.rules._base import Check, Graph, Spec, problem

ID = "ambiguous-transition"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    for state in spec.states.values():
        by_event: dict[str, list[Transition]] = {}
        for t in state.transitions:
            by_event.setdefault(t.event, []).append(t)
        for alternatives in by_event.values():
            if len(alternatives) < 2:
                continue
            event = alternatives[0].shown
            guards_seen: dict[str, int] = {}
            for i, t in enumerate(alternatives):
                later = alternatives[i + 1:]
                if t.guard is None and later:
                    targets = ", ".join(f"`{x.target}`" for x in later)
                    yield problem(ID, SEVERITY, t.target_span,
                                  f"`{state.name}` on `{event}`: this alternative has no guard, "
                                  f"so the ones after it ({targets}) are never tried",
                                  "give it a guard, or move it last as the fallback")
                    break
                if t.guard is not None:
                    if t.guard in guards_seen:
                        yield problem(ID, SEVERITY, t.guard_span or t.target_span,
                                      f"`{state.name}` on `{event}`: guard `{t.guard}` is already "
                                      f"used by alternative {guards_seen[t.guard] + 1}, so this "
                                      "one is never taken",
                                      "use a different guard for each alternative")
                    guards_seen.setdefault(t.guard, i)
