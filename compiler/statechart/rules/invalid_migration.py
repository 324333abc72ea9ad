"""A migration cannot upgrade stored records.

What: an entry of `migrations:` is wrong: its `from_version` is not older than the spec's
`version`; it maps an old state or field to several new ones (a migration is a function); it
maps a state to a state or a field to a field that does not exist in this version; it renames a
state that still exists; it fills (`fill:`) a field that does not exist or has no `default`; or
two migrations start from the same version.

Why: the generated `from_json` applies these maps to every record stored under an older
version. A map that is not a function, or that points nowhere, would turn a stored run into one
this version of the machine cannot continue; it must fail at check time, not at load time.

Example:

    version: 2
    migrations:
      - from_version: 1
        states: {waiting: waiting_for_input}   # invalid-migration if `waiting_for_input`
                                               # is not a state of version 2

Fix: map each old name to exactly one state or field of this version, and raise `version`
above every `from_version`.
"""

from statechart.build_model import did_you_mean
from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Spec, problem

ID = "invalid-migration"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    fields = {f.name for f in spec.record}
    seen_versions: set[int] = set()
    for m in spec.migrations:
        if m.from_version >= spec.version:
            yield problem(ID, SEVERITY, m.span,
                          f"migration from version {m.from_version} is not older than this "
                          f"spec's version {spec.version}",
                          f"raise `version` to {m.from_version + 1} or more")
        if m.from_version in seen_versions:
            yield problem(ID, SEVERITY, m.span,
                          f"two migrations start from version {m.from_version}",
                          "merge them into one")
        seen_versions.add(m.from_version)
        for old, new, span in m.states:
            if new not in spec.states:
                yield problem(ID, SEVERITY, span,
                              f"migration maps state `{old}` to `{new}`, which is not a state of "
                              "this version", did_you_mean(new, spec.states, words=True))
            elif old in spec.states and old != new:
                yield problem(ID, SEVERITY, span,
                              f"migration renames `{old}`, which is still a state of this "
                              "version", "remove the entry, or the old state")
        for old_field, new_field, span in m.fields:
            if new_field is not None and new_field not in fields:
                yield problem(ID, SEVERITY, span,
                              f"migration maps field `{old_field}` to `{new_field}`, which is not "
                              "a record field of this version", did_you_mean(new_field, fields))
        for name, span in m.fill:
            field = spec.record_field(name)
            if field is None:
                yield problem(ID, SEVERITY, span,
                              f"migration fills `{name}`, which is not a record field of this "
                              "version", did_you_mean(name, fields))
            elif field.default is None:
                yield problem(ID, SEVERITY, span,
                              f"migration fills `{name}`, which has no `default`",
                              f"give `{name}` a `default:` (the value old records get)")
