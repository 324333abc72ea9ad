"""A name cannot be represented in generated code.

What: the spec's name, a state, event, guard, action, tag, record field or enum value name is
not a plain ASCII identifier (a letter, then letters, digits or `_`; at most 64 characters), a
record field or a state's `counter:` is named like a built-in key of every run record
(`status`, `history`, ...) or like another field or counter, or one name is used for different
things (a state and an event with one name, a guard named like an event). An event may be
dotted (`error.tool.timeout`, an SCXML event descriptor) or `*`: each part an identifier, the
first not `done` or `after`; its Python name has `_` for the dots (`error_tool_timeout`), and
must not be another name of the spec (`error_tool`).

Why: names become attributes, methods, enum members and JSON keys. Non-ASCII names can
normalise to other names in Python (`ﬁnal` is `final`, `ᴺone` is `None`), so two spec names
could become one attribute; a field named `status` would be a second `status` key in the
record's JSON; a state, an event, a guard and an action share the machine's namespace. Other
names are fine, even those that clash in Python (`class`, `send`, `on_hold`, `error_handling`,
`state`, `record`): the generated code gives them Python names of their own (`state_class`,
`event_on_hold`, ...; see docs/generated-code.md, "Names") and keeps the spec's name
everywhere else.

Example:

    states:
      ﬁnal: {}            # invalid-name: contains non-ASCII characters
      in review: {}       # invalid-name: is not an identifier

Fix: use the name the hint derives from yours (`final`, `in_review`). The spec's own name must
be lower snake_case (it names the generated module), and not `index` (the docs page of every
spec, `docs/specs/index.md`, has that name).
"""

from statechart import names
from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Span, Spec, problem

ID = "invalid-name"
SEVERITY: Severity = "error"
PHASE = "model"


def _bad(what: str, name: str, reason: str, span: Span) -> Check:
    yield problem(ID, SEVERITY, span, f"{what} `{name}` {reason}",
                  f"rename it, for example to `{names.suggestion(name)}`")


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def check(spec: Spec, graph: Graph) -> Check:
    if spec.name and spec.name_span is not None and not names.SPEC_NAME.match(spec.name):
        yield problem(ID, SEVERITY, spec.name_span,
                      f"spec name `{spec.name}` must be lower snake_case ASCII "
                      "(it names the generated module)",
                      "for example `statechart: agent_run`")
    elif spec.name in names.RESERVED_SPEC_NAMES and spec.name_span is not None:
        yield problem(ID, SEVERITY, spec.name_span,
                      f"spec name `{spec.name}` is reserved: docs/specs/{spec.name}.md is the "
                      "page that lists every spec",
                      f"choose another name, for example `statechart: {spec.name}_run`")
    role: dict[str, str] = {}  # name -> what it first was (state, event, guard, action)
    dotted: dict[str, str] = {}  # a dotted event's Python name -> the event

    def claim(name: str, what: str, span: Span) -> Check:
        first = role.setdefault(name, what)
        if first != what:
            yield problem(ID, SEVERITY, span,
                          f"{what} `{name}` has the name of {_article(first)} {first}",
                          "a state, an event and a guard or action share one namespace in the "
                          "generated class; rename one of them")

    def member(what: str, name: str, span: Span) -> Check:
        """An action's or a guard's name, where it is written."""
        if (what, name) in clean:
            return
        reason = names.member_problem(name)
        if reason:
            yield from _bad(what, name, reason, span)
        elif role.setdefault(name, what) == what:
            clean.add((what, name))
        yield from claim(name, what, span)

    for state in spec.states.values():
        reason = names.member_problem(state.name)
        if reason:
            yield from _bad("state", state.name, reason, state.span)
        role.setdefault(state.name, "state")
    # A name met again after a first time that found nothing has nothing to report: its
    # checks are pure, and what it claimed stays its own (50,000 alternatives of a few names).
    clean: set[tuple[str, str]] = set()
    for state in spec.states.values():
        for t in state.transitions:
            if t.order == 0 and t.trigger == "event" and t.event != "*" \
                    and ("event", t.event) not in clean:  # not `done.state.x`
                reason = names.event_problem(t.event)
                if reason:
                    yield from _bad("event", t.event, reason, t.span)
                    continue
                flat = names.event_python_name(t.event)
                other = dotted.get(flat)
                if other == t.event:
                    continue  # the same dotted event, on another state
                if flat in role and (flat != t.event or other is not None):
                    # a dotted event's Python name is another name of the spec
                    what = f"event `{other}`" if other is not None else \
                        f"{_article(role[flat])} {role[flat]}"
                    yield problem(ID, SEVERITY, t.span,
                                  f"event `{t.event}` " + (f"becomes the Python name `{flat}`, "
                                                           if flat != t.event else "is ")
                                  + f"the Python name of {what}"
                                  if other is not None and flat == t.event else
                                  f"event `{t.event}` becomes the Python name `{flat}`, the "
                                  f"name of {what}",
                                  "rename one of them: the generated class has a method or "
                                  "attribute for each")
                    continue
                if flat != t.event:
                    dotted[flat] = t.event
                if role.setdefault(flat, "event") == "event":
                    clean.add(("event", t.event))
                else:
                    yield from claim(flat, "event", t.span)
            for name, span in zip(t.actions, t.action_spans, strict=True) if t.actions else ():
                yield from member("action", name, span)
            if t.guard is not None and ("guard", t.guard) not in clean:
                yield from member("guard", t.guard, t.guard_span or t.span)
        for key, name, span in state.name_spans:
            if key in ("entry", "exit"):
                yield from member("action", name, span)
            elif key == "tags":
                reason = names.identifier_problem(name)
                if reason:
                    yield from _bad("tag", name, reason, span)
    for field in spec.record:
        reason = names.identifier_problem(field.name)
        if reason:
            yield from _bad("record field", field.name, reason, field.span)
        elif field.name in names.RECORD_BUILTINS:
            yield problem(ID, SEVERITY, field.span,
                          f"record field `{field.name}` is a built-in key of every run record "
                          "(its JSON would have two)",
                          f"rename it, for example to `{field.name}Value`")
        for value in field.enum:
            reason = names.identifier_problem(value)
            if reason:
                yield from _bad(f"enum value of `{field.name}`", value, reason, field.span)
    yield from _status_names(spec)


def _status_names(spec: Spec) -> Check:
    """`status:` names and `counter:` record keys (docs/spec-format.md, "Status"): a counter
    is a key of the record, so it may not be a built-in key, a field or another counter."""
    fields = {f.name for f in spec.record}
    counters: dict[str, str] = {}
    for state in spec.states.values():
        if state.status and state.status_span is not None:
            reason = names.identifier_problem(state.status)
            if reason:
                yield from _bad("status", state.status, reason, state.status_span)
        if not state.counter or state.counter_span is None:
            continue
        name, span = state.counter, state.counter_span
        reason = names.identifier_problem(name)
        if reason:
            yield from _bad("counter", name, reason, span)
        elif name in names.RECORD_BUILTINS or name in fields:
            what = "a record field" if name in fields else "a built-in key of every run record"
            yield problem(ID, SEVERITY, span,
                          f"counter `{name}` of state `{state.name}` is {what} (the record "
                          "would have two)", f"rename it, for example to `{state.name}Count`")
        elif name in counters:
            yield problem(ID, SEVERITY, span,
                          f"counter `{name}` of state `{state.name}` is also the counter of "
                          f"`{counters[name]}`", f"rename it, for example to `{state.name}Count`")
        counters.setdefault(name, state.name)
