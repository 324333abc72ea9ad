"""A transition or state names a record field the spec does not declare.

What: a name in a transition's `set:` or `clear:`, a state's `requires:` or `clear:`, or a
deadline timer's key (`after: {approvalDeadline: expired}`), is not a field of `record:`.

Why: the generated event method takes `set` fields as keyword arguments and the run record
stores them; an undeclared field has no type and no place in the persisted record.

Example:

    record: {interruptReason: {type: string}}
    states:
      running:
        on:
          interrupt: {target: interrupted, set: [interuptReason]}  # unknown-field

Fix: correct the name, or declare the field under `record:`.
"""

from statechart.build_model import did_you_mean
from statechart.diagnostics import Severity
from statechart.model_index import index
from statechart.rules._base import Check, Graph, Spec, problem

ID = "unknown-field"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    declared = {f.name for f in spec.record}

    def hint(name: str) -> str:
        return did_you_mean(name, declared) or \
            f"declare it under `record:`: `{name}: {{type: string}}`"

    # Whether some transition names a field that is not declared: else their walk is skipped.
    named = index(spec)
    undeclared = not (named.written <= declared and named.deadlines <= declared)
    for state in spec.states.values():
        for key, name, span in state.name_spans:
            if key == "requires" and name not in declared:
                yield problem(ID, SEVERITY, span,
                              f"state `{state.name}` requires `{name}`, which is not a record "
                              "field",
                              hint(name))
            elif key == "clear" and name not in declared:
                yield problem(ID, SEVERITY, span,
                              f"state `{state.name}` clears `{name}`, which is not a record field",
                              hint(name))
        for t in state.transitions if undeclared else ():
            for name, span in zip(t.clears, t.clear_spans, strict=True):
                if name not in declared:
                    yield problem(ID, SEVERITY, span,
                                  f"`{state.name}` on `{t.event}` clears `{name}`, which is not "
                                  "a record field", hint(name))
            if t.deadline is not None and t.order == 0 and t.deadline not in declared:
                yield problem(ID, SEVERITY, t.span,
                              f"`after` key `{t.deadline}` of state `{state.name}` is neither a "
                              "delay nor a record field",
                              did_you_mean(t.deadline, declared) or "write a delay such as "
                              f"`15m`, or declare `{t.deadline}: {{type: datetime}}`")
            for name, span in zip(t.sets, t.set_spans, strict=True):
                if name not in declared:
                    yield problem(ID, SEVERITY, span,
                                  f"`{state.name}` on `{t.event}` sets `{name}`, which is not a "
                                  "record field", hint(name))
