"""A record field that nothing sets or requires.

What: a field declared under `record:` appears in no transition's `set:`, no state's
`requires:` and no timer's deadline key, and is not `context: true`.

Why: the generated record carries it, but no event can ever give it a value through the
machine; it is usually left over from an earlier version or misspelled where it is used. A
field the application sets itself is run context: mark it `context: true` (it is then used
by definition: the run's constructor and `update` take it). A warning; `--strict` makes it
fail CI.

Example:

    record:
      failureType: {type: string}   # unused-field: no `set: [failureType]` anywhere

Fix: add the field to the `set:` of the events that provide it, mark it `context: true` when
the application sets it, or remove it.
"""

from statechart.diagnostics import Severity
from statechart.model_index import index
from statechart.rules._base import Check, Graph, Spec, problem

ID = "unused-field"
SEVERITY: Severity = "warning"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    used = {name for s in spec.states.values() for name in s.requires}
    used.update(index(spec).sets)
    used.update(index(spec).deadlines)  # a timer reads it
    for field in spec.record:
        if field.name not in used and not field.context:
            yield problem(ID, SEVERITY, field.span,
                          f"record field `{field.name}` is never set by an event or required by "
                          "a state", f"add `set: [{field.name}]` to the events that provide it, or "
                          "`context: true` when the application sets it")
