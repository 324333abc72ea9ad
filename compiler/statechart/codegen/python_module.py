"""`generated/NAME.py` (the `code` folder of the project configuration): a typed
python-statemachine module for one spec.

What the module holds (docs/generated-code.md is the user's guide): the spec as data and a
typed API over the `statechart_runtime` package, which holds the behaviour (as protobuf's
and betterproto's generated code subclasses their runtime's message class):

- enums for states, events and every `enum` record field;
- `_SPEC`, the spec's tables (states, transitions, fields, limits, ...);
- `<Name>Record`, the run record (a dataclass with the spec's typed fields over
  `statechart_runtime.run.record.Record`) and `<Name>Step`, one entry of its history;
- `<Name>Machine`, the python-statemachine class (over `statechart_runtime.psm.machine.Machine`):
  every state (nested and parallel ones as `State.Compound` / `State.Parallel` classes), one
  statement per transition;
- `<Name>`, the facade users call (over `statechart_runtime.run.Run`): one method per event
  whose keyword-only arguments are the fields the event sets, typed precisely; default guards
  and actions to override.

The module checks at import that the installed runtime provides the API it was built for.
"""

from __future__ import annotations

import re
import string
import textwrap
from typing import TYPE_CHECKING

from statechart import RUNTIME_REQUIREMENT, __version__, names, spec_chart
from statechart.codegen import CodegenError, module_lines
from statechart.codegen._jinja import Ident, Lit, entry, environment, py
from statechart.diagnostics import Span
from statechart.model import RecordField, Spec, State, Transition
from statechart.model_index import index
from statechart.outputs import display_path, folder, header_lines, project
from statechart_runtime.chart import events

if TYPE_CHECKING:
    from statechart.linter import FileResult


def camel(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in snake.split("_"))


# Module-level names the template defines besides the classes below. A class named after a
# record field must not take one; `_` + class is its alias for class bodies, so the names
# behind the template's own `_` names are taken too.
TEMPLATE_NAMES = frozenset({
    "SPEC_NAME", "SPEC_VERSION", "SPEC_SHA256", "DESCRIPTION", "STATE_DESCRIPTIONS",
    "EVENT_DESCRIPTIONS", "Final", "TypeAlias", "Mapping", "SPEC", "rt", "api", "error",
    "check_record", "Str", "Int", "Float", "Bool", "DateTime",
})


def class_names(spec: Spec) -> dict[str, Ident]:
    """The module's class names. The fixed ones are the spec's CamelCase name plus distinct
    suffixes, so they cannot clash; an enum field's class is the name plus the field's, and
    gets `Values` (then `_`) appended while that is taken (`state` would give `...State`)."""
    base = camel(spec.name)
    suffixes = {"facade": "", "machine": "Machine", "record": "Record", "step": "Step",
                "state": "State", "event": "Event", "invalid": "InvalidRecord",
                "limit": "LimitExceeded", "missing": "MissingField"}
    if spec.statuses():
        suffixes["status"] = "Status"
    if any(f.context for f in spec.record):
        suffixes["context"] = "Context"
    out = {key: base + suffix for key, suffix in suffixes.items()}
    taken = set(out.values()) | TEMPLATE_NAMES
    for f in spec.record:
        if f.type == "enum":
            name = base + f.name[:1].upper() + f.name[1:]
            if name in taken:
                name += "Values"
            while name in taken:
                name += "_"
            taken.add(name)
            out["enum:" + f.name] = name
    return {k: Ident(v) for k, v in out.items()}


class PythonNames:
    """The Python names of the spec's names (statechart.names, docs/generated-code.md "Names"):
    each table holds only the names that are mapped; any other name is its own Python name."""

    def __init__(self, spec: Spec) -> None:
        self.paths: dict[str, Ident] = {}  # state -> its attribute path (`_state_path`)
        guards = [t.guard for t in spec.transitions() if t.guard]
        actions = spec.actions()
        members = [*spec.states, *spec.events(), *guards, *actions]
        taken = set(members)
        # A spec with run context gives its facade `update` and its constructor the context
        # fields as keywords: a method or a context field must not take those names.
        context = {f.name for f in spec.record if f.context}
        method_needs = names.member_needs_mapping if not context else (
            lambda n: names.member_needs_mapping(n) or n == "update")

        def field_needs(n: str) -> bool:
            return names.field_needs_mapping(n) or (n in context and n in _CONSTRUCTOR_ARGS)
        # One namespace: the machine's attributes and the facade's methods never meet a
        # mapped name of another kind.
        self.states = names.python_names(spec.states, "state", names.member_needs_mapping,
                                         taken)
        internal = {t.event for t in spec.transitions() if t.internal}
        sent = [e for e in spec.events() if e not in internal]
        # A dotted event's Python name has `_` for its dots (`error.tool` -> `error_tool`;
        # invalid-name refuses one that is another name of the spec), then is mapped as any.
        flat = {e: names.event_python_name(e) for e in sent if "." in e}
        taken.update(flat.values())
        mapped = names.python_names([flat.get(e, e) for e in sent], "event", method_needs,
                                    taken)
        self.events = {e: mapped.get(flat[e], flat[e]) if e in flat else mapped[e]
                       for e in sent if e in flat or e in mapped}
        # Internal events (`done.state.x`) are enum members named after them (`done_state_x`)
        # and machine events `_sc_<member>`: no spec name starts with `_`, and
        # python-statemachine gives `done_state_*` ids a meaning of its own.
        self.internal: dict[str, str] = {}
        for event in spec.events():
            if event in internal:
                member = names.suggestion(event)
                while member in taken or names.enum_member_needs_mapping(member):
                    member += "_"
                taken.add(member)
                self.internal[event] = member
                self.events[event] = "_sc_" + member
        self.guards = names.python_names(guards, "guard", method_needs, taken)
        self.actions = names.python_names(actions, "action", method_needs, taken)
        # Counters are record attributes too (docs/spec-format.md, "Status").
        fields = [f.name for f in spec.record] + list(spec.counters())
        self.fields = names.python_names(fields, "field", field_needs,
                                         {*fields, *names.RECORD_BUILTINS})
        self.statuses = names.python_names(spec.statuses(), "value",
                                           names.enum_member_needs_mapping,
                                           set(spec.statuses()))
        self.values = {f.name: names.python_names(f.enum, "value",
                                                  names.enum_member_needs_mapping,
                                                  set(f.enum)) for f in spec.record}

    def state(self, name: str) -> Ident:
        return Ident(self.states.get(name, name))

    def event(self, name: str) -> Ident:
        return Ident(self.events.get(name, name))

    def guard(self, name: str) -> Ident:
        return Ident(self.guards.get(name, name))

    def action(self, name: str) -> Ident:
        return Ident(self.actions.get(name, name))

    def field(self, name: str) -> Ident:
        return Ident(self.fields.get(name, name))

    def state_member(self, name: str) -> Ident:
        """The state's enum member: its own name unless Python's enum refuses it."""
        return self.state(name) if names.enum_member_needs_mapping(name) else Ident(name)

    def event_member(self, name: str) -> Ident:
        if name in self.internal:
            return Ident(self.internal[name])
        return self.event(name) if "." in name or names.enum_member_needs_mapping(name) \
            else Ident(name)

    def history_state(self, target: str, kind: str) -> Ident:
        """The machine's HistoryState for history transitions of `kind` into `target`."""
        return Ident(f"_sc_h_{kind}_{self.state(target)}")

    def value_member(self, field: str, value: str) -> Ident:
        return Ident(self.values[field].get(value, value))

    def status_member(self, status: str) -> Ident:
        return Ident(self.statuses.get(status, status))


# The run facade's constructor keywords besides the context fields (statechart_runtime.run).
_CONSTRUCTOR_ARGS = frozenset({"record", "run_id", "model", "clock", "check", "context"})


def _state_path(spec: Spec, pn: PythonNames, name: str) -> Ident:
    """The state's attribute path from the machine class (`running.reasoning`); each state's
    once per spec (a transition names two), checked as an `Ident` once."""
    path = pn.paths.get(name)
    if path is None:
        path = pn.paths[name] = Ident(".".join(
            reversed([pn.state(n) for n in (name, *spec.ancestors(name))])))
    return path


def _state_kwargs(spec: Spec, pn: PythonNames, state: State) -> list[tuple[Ident, object]]:
    kwargs: list[tuple[Ident, object]] = []
    if state.name in pn.states:  # the runtime knows a state by its value: the spec's name
        kwargs.append((Ident("value"), py(state.name)))
    parent = spec.states[state.parent] if state.parent else None
    is_initial = (state.name == spec.initial) if parent is None else (
        parent.kind == "compound" and parent.initial == state.name)
    if is_initial:
        kwargs.append((Ident("initial"), py(True)))
    if state.kind == "final":
        kwargs.append((Ident("final"), py(True)))
    if state.entry:
        kwargs.append((Ident("enter"), py([pn.action(a) for a in state.entry])))
    if state.exit:
        kwargs.append((Ident("exit"), py([pn.action(a) for a in state.exit])))
    return kwargs


# The machine class gets one `a.to(b, event=...)` statement per transition: a long
# `a.to(b) | c.to(d) | ...` chain overflows Python's compiler recursion limit on big specs.
def _machine_body(spec: Spec, pn: PythonNames
                  ) -> list[tuple[int, str, Ident, list[tuple[Ident, object]]]]:
    """(depth, kind, name, kwargs) in document order, for the template's nested classes."""
    histories = history_kinds(spec)
    closing: dict[str, list[str]] = {}  # last state of a class body -> its history targets
    for target in histories:
        closing.setdefault(spec.subtree(target)[-1], []).append(target)
    out: list[tuple[int, str, Ident, list[tuple[Ident, object]]]] = []
    for s in spec.states.values():
        out.append((s.depth, s.kind, pn.state(s.name), _state_kwargs(spec, pn, s)))
        # History states end their target's class body, innermost body first.
        ends = closing.get(s.name)
        for target in sorted(ends, key=lambda n: -spec.states[n].depth) if ends else ():
            for kind in histories[target]:
                out.append((spec.states[target].depth + 1, "history",
                            pn.history_state(target, kind), [(Ident("type"), py(kind))]))
    return out


def _to_statements(spec: Spec, pn: PythonNames
                   ) -> list[tuple[str, str, str, str | None, bool, str | None]]:
    """The machine's `to()` statements (`module_lines.transition_lines`): source path, target
    (a path, a history state's, `None` when targetless, a list when several), the event's
    literal, the guard's, internal, the actions' list; each name's literal made once."""
    for name in spec.states:
        _state_path(spec, pn, name)
    paths = pn.paths
    events: dict[str, str] = {}
    guards: dict[str, str] = {}
    out: list[tuple[str, str, str, str | None, bool, str | None]] = []
    for t in spec.transitions():
        if t.targets:  # several targets: a list of validated names (one transition)
            target = "[" + ", ".join([paths[x] for x in t.targets]) + "]"
        elif t.targetless:
            target = "None"
        else:
            target = paths[t.target] if not t.history else \
                paths[t.target] + "." + pn.history_state(t.target, t.history)
        guard = t.guard and (guards.get(t.guard) or guards.setdefault(
            t.guard, module_lines.text(pn.guard(t.guard))))
        event = events.get(t.event) or events.setdefault(
            t.event, module_lines.text(pn.event(t.event)))
        out.append((paths[t.source], target, event, guard or None,
                    t.kind == "internal",
                    py([pn.action(a) for a in t.actions]) if t.actions else None))
    return out


def history_kinds(spec: Spec) -> dict[str, list[str]]:
    """Target -> the history kinds transitions into it use, in first-use order."""
    out: dict[str, list[str]] = {}
    for t in index(spec).history:  # the model's history transitions, in document order
        if t.history and t.target in spec.states:
            kinds = out.setdefault(t.target, [])
            if t.history not in kinds:
                kinds.append(t.history)
    return out


def alternative_rows(spec: Spec, pn: PythonNames) -> list[tuple[object, ...]]:
    """`SpecTables(alternatives=...)` (runtime API 1.7, `chart.alternatives.AlternativeRow`):
    one row per alternative in the order the module's machine declares them (per state in
    document order, its `to()` statements in order): (source, event, target as the tables
    key it, the fields the caller gives), and a dict of what it has of its step kind, guard
    (the method's Python name), actions (theirs) and `assign:` constants."""
    by_source: dict[str, list[Transition]] = {}
    for t in spec.transitions():
        by_source.setdefault(t.source, []).append(t)
    out: list[tuple[object, ...]] = []
    for state in spec.states:
        for t in by_source.get(state, ()):
            extra: dict[str, object] = {}
            if t.move_kind:
                extra["kind"] = t.move_kind
            if t.guard:
                extra["guard"] = str(pn.guard(t.guard))
            if t.actions:
                extra["actions"] = tuple(str(pn.action(a)) for a in t.actions)
            if t.assigns:
                extra["assigns"] = dict(t.assigns)
            row = (t.source, t.event, t.move_target, tuple(t.given))
            out.append((*row, extra) if extra else row)
    return out


def used_history_defaults(spec: Spec) -> dict[tuple[str, str], str]:
    """(target, kind) -> `history_default:` state, for the kinds history transitions use."""
    histories = history_kinds(spec)
    return {key: default for key, default in spec_chart.history_defaults(spec).items()
            if key[1] in histories.get(key[0], ())}


def _history_defaults(spec: Spec, pn: PythonNames) -> list[tuple[Ident, Ident]]:
    """(history state, default target): a history state never left enters the state's
    `history_default:`, else its parent's default: the initial child, or every region."""
    out: list[tuple[Ident, Ident]] = []
    named = spec_chart.history_defaults(spec)
    for target, kinds in history_kinds(spec).items():
        state = spec.states[target]
        for kind in kinds:
            defaults = [named[(target, kind)]] if (target, kind) in named else \
                state.children if state.kind == "parallel" else \
                [spec_chart.chart(spec).default_initial(target)]
            path = Ident(_state_path(spec, pn, target) + "." + pn.history_state(target, kind))
            out.extend((path, Ident(_state_path(spec, pn, d))) for d in defaults if d)
    return out


def _events(spec: Spec, pn: PythonNames, classes: dict[str, Ident]) -> list[dict[str, object]]:
    """Per event: the facade method's keyword arguments and docstring."""
    field_types = {f.name: f for f in spec.record}
    by_event: dict[str, list[Transition]] = {}
    for t in spec.transitions():  # grouped once: filtering per event is quadratic
        by_event.setdefault(t.event, []).append(t)
    out: list[dict[str, object]] = []
    for event, ts in by_event.items():
        if ts[0].internal:
            continue  # the run raises it: no method
        givens = [t.given for t in ts]  # a property: computed once per alternative
        fields: dict[str, None] = {}
        for given in givens:
            fields.update(dict.fromkeys(given))
        required = {f for f in fields if all(f in given for given in givens)}
        docs = [t.description for t in ts if t.description]
        moves = sorted({f"{t.source} -> {t.target}" for t in ts})
        text = "Moves: " + ", ".join(moves) + "."
        out.append({
            "name": pn.event(event),
            "member": pn.event_member(event),
            "spec_name": py(event),
            "args": [(pn.field(f), field_types[f].type, classes.get("enum:" + f),
                      f in required) for f in fields],
            "doc": docstring(text, 8),
            "description": " ".join(dict.fromkeys(docs)),
            "call_values": Lit("{" + ", ".join(f"{py(f)}: {pn.field(f)}" for f in fields) + "}"
                               if fields else "None"),
        })
    return out


def docstring(text: str, indent: int, width: int = 100) -> Lit:
    """A triple-quoted docstring of generated text (names, punctuation), wrapped so that every
    line, the opening and closing quotes included, fits in `width` columns (a single name
    longer than that cannot be broken)."""
    if not set(text) <= set(string.ascii_letters + string.digits + "_ ,.-`>();:'"):
        raise CodegenError(f"docstring text is not plain: {text!r:.60}")  # spec text: py()
    # Room for both quotes on every line: a text that fits one line has both there.
    lines = wrap(text, width - indent - 6)
    body = ("\n" + " " * indent).join(lines)
    return Lit('"""' + body + '"""')


def wrap(text: str, width: int) -> list[str]:
    """`textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)`, for a
    text of words between single spaces, none longer than `width`, by one regex: the longest
    run of at most `width` characters that ends before a space or the end is the greedy
    line textwrap makes (an event's docstring lists every move: at 10,000 states textwrap's
    chunking was a tenth of the module's time). tests/test_module_lines.py compares."""
    if "  " in text or text != text.strip() or not text or \
            max(map(len, text.split(" "))) > width:
        return textwrap.wrap(text, width=width, break_long_words=False,
                             break_on_hyphens=False)
    return re.findall(f"(.{{1,{width}}})(?: |$)", text)


def _tables(spec: Spec, pn: PythonNames) -> dict[str, object]:
    """The spec's data for `_SPEC`: one literal row per state and per transition alternative
    (`alternative_rows`)."""
    requires = [entry(s.name, s.requires, 8) for s in spec.states.values() if s.requires]
    histories = history_kinds(spec)
    by_tag: dict[str, list[str]] = {}
    for s in spec.states.values():
        for tag in s.tags:
            by_tag.setdefault(tag, []).append(s.name)
    tags = [entry(tag, tuple(names), 8) for tag, names in by_tag.items()]
    return {
        "flat": spec_chart.is_flat(spec) and not spec.statuses(),  # statuses keep configuration
        "state_rows": module_lines.rows(spec_chart.rows(spec), "        "),
        "alternative_rows": module_lines.alternative_lines(alternative_rows(spec, pn)),
        "limits": py(limits) if (limits := {s.name: s.limit for s in spec.states.values()
                                             if s.limit}) else None,
        "requires": requires,
        "tags": tags,
        "initial_configuration": [pn.state_member(n)
                                  for n in spec_chart.initial_configuration(spec)],
        # A timer's machine event id is derived by the runtime (`_sc_` + its member's name).
        "event_ids": [(py(k), py(v)) for k, v in pn.events.items()
                      if not events.is_timer(k)],
        "attrs": [(py(k), py(v)) for k, v in pn.fields.items()],
        "timers": [py(row) for row in spec.timer_rows()],
        "internal": [(py(t.event), py(t.source)) for t in dict.fromkeys(
            t for t in spec.transitions()  # timers: in `timers`
            if t.internal and t.order == 0 and t.trigger != "after")],
        "in_states": [(py((t.source, t.event, t.order)), py(t.in_states))
                      for t in spec.transitions() if t.in_states],
        "history_default_rows": [(py(key), py(default))
                                 for key, default in used_history_defaults(spec).items()],
        "history_ids": [(py(f"{target}.{kind}"), py(str(pn.history_state(target, kind))))
                        for target, kinds in histories.items() for kind in kinds],
        "remembers": sorted(histories),
        "migrations": [(py(m.from_version), py({old: new for old, new, _ in m.states}),
                        py({old: new for old, new, _ in m.fields}))
                       for m in sorted(spec.migrations, key=lambda m: m.from_version)],
    }


def _source_tables(spec: Spec) -> dict[str, object]:
    """`_SOURCE`: the file and line of each state and each transition alternative (its
    target's line: alternatives of one event share the event's key), and of its guard; spec
    coverage reports them (statechart_runtime.coverage)."""
    files: dict[str, int] = {}
    shown: dict[str, int] = {}  # a span's file -> its index: display_path resolves the path

    def at(span: Span) -> int:
        index = shown.get(span.file)
        if index is None:
            index = shown[span.file] = files.setdefault(display_path(span.file), len(files))
        return index

    states = module_lines.state_source_lines([(s.name, at(s.span), s.span.line)
                                              for s in spec.states.values()])
    transitions = module_lines.transition_source_lines(
        [(t.source, t.event, t.order, at(t.target_span), t.target_span.line,
          t.guard_span.line if t.guard_span else None) for t in spec.transitions()])
    return {"source_files": py(tuple(files)), "source_states": states,
            "source_transitions": transitions}


def _context_tables(spec: Spec, pn: PythonNames, classes: dict[str, Ident]
                    ) -> dict[str, object]:
    """Run context, `clear:`, defaults, fills, statuses and counters (docs/spec-format.md):
    the template's data for them, all empty for a spec that uses none."""
    clears: dict[tuple[str, str, str], list[str]] = {}
    for t in spec.transitions():
        if t.clears:
            cleared = clears.setdefault((t.source, t.event, t.move_target), [])
            cleared.extend(f for f in t.clears if f not in cleared)
    statuses = spec.statuses()
    initial_status = None
    if statuses:
        best: tuple[int, str] | None = None
        initial = spec_chart.initial_configuration(spec)
        for name in initial:
            s = spec.states[name]
            if s.status and (best is None or s.depth > best[0]):
                best = (s.depth, s.status)
        initial_status = pn.status_member(best[1] if best else initial[0])

    def default(f: RecordField) -> Lit:
        if f.default is None:
            return Lit("None")
        if f.type == "enum":
            return Lit(f"_{classes['enum:' + f.name]}.{pn.value_member(f.name, str(f.default))}")
        if f.type == "datetime":
            return Lit(f"_api.parse_time({py(f.name)}, {py(f.default)})")  # RFC 3339 as read
        return py(f.default)

    return {
        "context": [(pn.field(f.name), f.type, classes.get("enum:" + f.name))
                    for f in spec.record if f.context],
        "context_names": [py(f.name) for f in spec.record if f.context],
        "defaults": [(py(f.name), py(f.default)) for f in spec.record if f.default is not None],
        "field_defaults": {f.name: default(f) for f in spec.record},
        "clears": [(py(k), py(tuple(v))) for k, v in clears.items()],
        "exit_clears": [entry(s.name, s.clear, 8) for s in spec.states.values() if s.clear],
        "fills": [(py(m.from_version), py(tuple(n for n, _ in m.fill)))
                  for m in sorted(spec.migrations, key=lambda m: m.from_version) if m.fill],
        "status_names": [(pn.status_member(n), py(n)) for n in statuses],
        "status_rows": [(py(s.name), py(s.status)) for s in spec.states.values() if s.status],
        "initial_status": initial_status,
        "counters": [(pn.field(c), py(c), py(state), state)
                     for c, state in spec.counters().items()],
    }


# The runtime API every module needs (statechart_runtime.API_VERSION): 1.7, whose spec
# tables take a row per alternative (`alternative_rows`), which an older runtime cannot read.
# Modules of the older APIs (one row per distinct transition, bound to the order their
# machine declares) still import: the runtime accepts both.
MODULE_API = (1, 7)


def render(spec: Spec) -> str:
    # The runtime and python-statemachine know events, not descriptors (`error` taking
    # `error.tool`, `*`): each alternative is listed under every event it takes.
    spec = spec_chart.per_event(spec)
    classes = class_names(spec)
    pn = PythonNames(spec)
    context = {
        "spec": spec,
        "header": header_lines(spec),
        "C": classes,
        "states": [(pn.state_member(s.name), py(s.name), s.description)
                   for s in spec.states.values() if s.description],
        "state_members": module_lines.member_lines(
            [(pn.state_member(name), name) for name in spec.states]),
        "event_names": [(pn.event_member(e), py(e)) for e in spec.events()],
        "fields": [(pn.field(f.name), f.name, f.type, classes.get("enum:" + f.name),
                    f.description, [(pn.value_member(f.name, v), py(v)) for v in f.enum])
                   for f in spec.record],
        "machine": module_lines.machine_lines(_machine_body(spec, pn)),
        "transitions": module_lines.transition_lines(_to_statements(spec, pn)),
        "history_defaults": _history_defaults(spec, pn),
        "events": _events(spec, pn, classes),
        "guards": [pn.guard(g) for g in dict.fromkeys(t.guard for t in spec.transitions()
                                                        if t.guard)],
        "actions": [pn.action(a) for a in spec.actions()],
        "initial_top": pn.state_member(spec.initial),
        "module_doc": docstring(f"The `{spec.name}` statechart, version {spec.version}: a "
                                "typed python-statemachine class and its run record. "
                                "Generated; see DESCRIPTION for the spec's own words.", 0),
        "facade_doc": docstring(f"One run of `{spec.name}`: a method per event, the record "
                                "in `record`, guards and actions to override.", 4),
        "field_types": {f.type for f in spec.record},
        "work": [py(w.row) for w in spec.work()],
        "compiler": py(f"statechart-compiler {__version__}"),
        **_tables(spec, pn),
        **_source_tables(spec),
    }
    extra = _context_tables(spec, pn, classes)
    context.update(extra, api_version=py(MODULE_API))
    # No `noqa` comment: under ruff's default rules one is itself a finding (RUF100), and a
    # project that enables E501 ignores it for the folder (docs/generated-code.md).
    return environment().get_template("python_module.py.j2").render(
        context, install_hint=f"pip install {RUNTIME_REQUIREMENT!r}")


def outputs(spec: Spec) -> dict[str, bytes]:
    # The tests parse, import and type-check what the templates produce; parsing here
    # again would be most of the build's time.
    text = render(spec)
    return {f"{folder('code')}/{spec.name}.py": text.encode("ascii")}


PACKAGE_HEADER = "# Generated from the specs by statechart-compiler. DO NOT EDIT.\n"


def package_outputs(results: list[FileResult]) -> dict[str, bytes]:
    """`__init__.py` of the code folder, so that the folder is a package: `mypy --strict .` in
    the project then knows each module by one name (`generated.order`), not two. Not written
    where the folder is the project root, or where the project's own `__init__.py` is."""
    code = folder("code")
    if code in ("", "."):
        return {}
    rel = f"{code}/__init__.py"
    try:
        with open(project().root / rel, "rb") as f:
            theirs = not f.read(len(PACKAGE_HEADER)).decode("utf-8", "replace") \
                .startswith(PACKAGE_HEADER)
    except FileNotFoundError:
        theirs = False
    except OSError:  # a folder in the way, say: `build` fails on it with a message
        theirs = False
    if theirs:
        return {}
    text = (PACKAGE_HEADER + "# Regenerate with: statechart build\n"
            '"""The modules generated from the specs: `NAME.py` for `NAME.yaml`."""\n')
    return {rel: text.encode("ascii")}
