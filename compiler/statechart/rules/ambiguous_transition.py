"""One event of one state has several targets and nothing tells them apart.

What: an event lists alternatives (`event: [{target: a, guard: g}, {target: b}]`) and either an
alternative without a guard comes before the last one, so the alternatives after it are never
tried, or two alternatives have the same guard (and the same `in:` states, which are part of
the condition: an alternative with `in:` and no guard is not unguarded, unless it names only
its own state or ancestors, which are always active). An alternative that enters a state
with a `limit:` is not enabled once the limit is reached, so the ones after it are tried
then: it may be unguarded, or share its guard with a later one ("retry while it may, then
fail").

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

from statechart import spec_chart
from statechart.diagnostics import Severity
from statechart.model import Transition
from statechart.model_index import index
from statechart.rules._base import Check, Graph, Spec, problem

ID = "ambiguous-transition"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    limited = {s.name for s in spec.states.values() if s.limit}

    def may_be_limited(t: Transition) -> bool:
        return bool(limited) and any(n in limited for n in spec_chart.entry_set(spec, t))

    repeated = index(spec).repeated_events  # the only states with alternatives
    for state in spec.states.values():
        if state.name not in repeated:
            continue
        by_event: dict[str, list[Transition]] = {}
        for t in state.transitions:
            by_event.setdefault(t.event, []).append(t)
        for alternatives in by_event.values():
            if len(alternatives) < 2:
                continue
            event = alternatives[0].shown
            # An alternative's condition: its guard and its `in:` states (both checked).
            guards_seen: dict[tuple[str | None, frozenset[str]], int] = {}
            for i, t in enumerate(alternatives):
                later = alternatives[i + 1:]
                enabled = t.guard is None and (not t.in_states or spec.always_enabled(t))
                if enabled and later and not may_be_limited(t):
                    targets = ", ".join(f"`{x.target}`" for x in later)
                    yield problem(ID, SEVERITY, t.target_span,
                                  f"`{state.name}` on `{event}`: this alternative has no guard, "
                                  f"so the ones after it ({targets}) are never tried",
                                  "give it a guard, or move it last as the fallback")
                    break
                if not enabled:
                    condition = (t.guard, frozenset(t.in_states))
                    if condition in guards_seen and not may_be_limited(
                            alternatives[guards_seen[condition]]):
                        shown = t.condition_text.strip()
                        yield problem(ID, SEVERITY, t.guard_span or (t.in_spans or (
                                          t.target_span,))[0],
                                      f"`{state.name}` on `{event}`: condition `{shown}` is "
                                      f"already used by alternative "
                                      f"{guards_seen[condition] + 1}, so this one is never taken"
                                      if t.in_states else
                                      f"`{state.name}` on `{event}`: guard `{t.guard}` is already "
                                      f"used by alternative {guards_seen[condition] + 1}, so this "
                                      "one is never taken",
                                      "use a different guard for each alternative")
                    guards_seen[condition] = i
