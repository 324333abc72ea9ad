"""A checked spec as an SCXML 1.0 document (`statechart render --format scxml`).

How each construct is written (docs/scxml.md has the table):

- states, `parallel`, `final`, `initial`: `<state>`, `<parallel>`, `<final>`, `initial=`;
- a transition: `<transition event cond target type>`, `cond` its guard's name and its `in:`
  states as `In('x')`, joined by `and`; no `target` for a targetless one, `type="internal"` for
  an internal one; `done:` is the transition on SCXML's own `done.state.ID`; `always:` is an
  eventless `<transition>` (no `event`);
- `history: shallow|deep`: the target is a `<history>` child of the state, whose default
  transition enters the state's `history_default:` or its default entry (`_history_default`);
- actions (`entry`, `exit`, a transition's `actions`): `<log label="NAME"/>`, named executable
  content that any SCXML engine runs (it prints the name) and that has no effect on the chart;
- timers: `<send event="after.ID.STATE" id=... delay="Nms">` on entry and `<cancel>` on exit;
  a deadline timer has `delayexpr` naming its datetime field (an engine must give that name
  the time left, as our runtime does from the record);
- everything else (record fields, rules, migrations, `set:`, tags, ...): our namespace
  (`statechart.scxml.extras`).

The text is deterministic: attributes in a fixed order, two-space indentation, the generated
header as an XML comment after the declaration.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from statechart.model import Migration, RecordField, Spec, SpecRule, State, Transition
from statechart.scxml import NS, PREFIX, SCXML_NS, extras
from statechart_runtime.errors import StatechartError

# The SCXML element of each kind of state (a compound and an atomic state are both `<state>`).
ELEMENT = {"atomic": "state", "compound": "state", "parallel": "parallel", "final": "final"}


class ExportError(StatechartError):
    """The spec holds text that an XML document cannot hold (a check that the tables of
    `extras` encode every free text)."""


def _s(tag: str) -> str:
    return f"{{{SCXML_NS}}}{tag}"


def _ours(attributes: dict[str, str]) -> dict[str, str]:
    return {f"{{{NS}}}{name}": value for name, value in attributes.items()}


def history_id(state: str, kind: str) -> str:
    """The id of the `<history>` child of `state`: a dot cannot be in a state's name, so it
    names no state."""
    return f"{state}.history.{kind}"


def _history_default(spec: Spec, state: State) -> str:
    """Where a history of `state` goes when nothing is remembered: its default entry (the
    initial child, or every region)."""
    return state.initial if state.kind == "compound" and state.initial else " ".join(
        state.children)


def condition(t: Transition) -> str | None:
    """The transition's `cond`: its guard's name and `In('x')` for each `in:` state."""
    terms = ([t.guard] if t.guard else []) + [f"In('{s}')" for s in t.in_states]
    return " and ".join(terms) or None


def _actions(parent: ET.Element, names: tuple[str, ...]) -> None:
    for name in names:
        ET.SubElement(parent, _s("log"), {"label": name})


def _transition(parent: ET.Element, t: Transition) -> None:
    # `always:` is SCXML's eventless transition: no `event` attribute at all.
    attributes = {} if t.trigger == "always" else {"event": t.event}
    cond = condition(t)
    if cond:
        attributes["cond"] = cond
    if not t.targetless:
        # Several targets (`target: [a2, b2]`) are SCXML's `target="a2 b2"`.
        attributes["target"] = history_id(t.target, t.history) if t.history else \
            t.move_target
    if t.kind == "internal":
        attributes["type"] = "internal"
    element = ET.SubElement(parent, _s("transition"),
                            {**attributes, **_ours(extras.written(extras.TRANSITION, t))})
    _actions(element, t.actions)


def _timers(spec: Spec, state: State, entry: ET.Element, exit_: ET.Element) -> None:
    for source, event, delay_ms, deadline, key in spec.timer_rows():
        if source != state.name:
            continue
        send = {"event": event, "id": event}
        if delay_ms is not None:
            send["delay"] = f"{delay_ms}ms"
        else:
            send["delayexpr"] = deadline or ""
        ET.SubElement(entry, _s("send"), {**send, **_ours({"after": key})})
        ET.SubElement(exit_, _s("cancel"), {"sendid": event})


def _state(spec: Spec, parent: ET.Element, state: State, histories: set[tuple[str, str]]) -> None:
    attributes = {"id": state.name}
    if state.kind == "compound" and state.initial:
        attributes["initial"] = state.initial
    element = ET.SubElement(parent, _s(ELEMENT[state.kind]),
                            {**attributes, **_ours(extras.written(extras.STATE, state))})
    entry, exit_ = ET.Element(_s("onentry")), ET.Element(_s("onexit"))
    _actions(entry, state.entry)
    _actions(exit_, state.exit)
    _timers(spec, state, entry, exit_)
    for block in (entry, exit_):
        if len(block):
            element.append(block)
    for t in state.transitions:
        _transition(element, t)
    # A `history_default:` is the history's default transition, marked as written (a default
    # that is the state's default entry would otherwise come back as none); in the order
    # written, then the kinds only transitions use.
    defaults: dict[str, str] = {kind: name for kind, name, _ in state.history_defaults}
    for kind in (*defaults, *(k for k in ("shallow", "deep") if k not in defaults)):
        if (state.name, kind) in histories or kind in defaults:
            history = ET.SubElement(element, _s("history"), {
                "id": history_id(state.name, kind), "type": kind,
                **_ours({"default": "written"} if kind in defaults else {})})
            ET.SubElement(history, _s("transition"),
                          {"target": defaults.get(kind) or _history_default(spec, state)})
    for child in state.children:
        _state(spec, element, spec.states[child], histories)


def _field(parent: ET.Element, field: RecordField) -> None:
    ET.SubElement(parent, f"{{{NS}}}field",
                  {"name": field.name, **extras.written(extras.FIELD, field)})


def _selectors(selectors: tuple[tuple[str, str, object], ...]) -> str:
    return " ".join(f"tag:{name}" if kind == "tag" else name for kind, name, _ in selectors)


def _rule(parent: ET.Element, rule: SpecRule) -> None:
    attributes: dict[str, str] = {"kind": rule.kind}
    if rule.id is not None:
        attributes["rule-id"] = rule.id
    attributes["from"] = _selectors(rule.sources)
    attributes["to"] = _selectors(rule.targets)
    if rule.description is not None:
        attributes["description"] = extras.text_out(rule.description) or ""
    if rule.overridable:
        attributes["overridable"] = "true"
    ET.SubElement(parent, f"{{{NS}}}rule", attributes)


def _migration(parent: ET.Element, migration: Migration) -> None:
    element = ET.SubElement(parent, f"{{{NS}}}migration",
                            {"from-version": str(migration.from_version)})
    for old, new, _ in migration.states:
        ET.SubElement(element, f"{{{NS}}}rename-state", {"old": old, "new": new})
    for old, new_field, _ in migration.fields:
        ET.SubElement(element, f"{{{NS}}}rename-field",
                      {"old": old, **({"new": new_field} if new_field is not None else {})})
    for name, _ in migration.fill:
        ET.SubElement(element, f"{{{NS}}}fill", {"field": name})


_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;",
            "\t": "&#9;"}  # line breaks and tabs: or a reader would normalise them to spaces


def _name(qualified: str) -> str:
    """`{NS}name` as written: SCXML's namespace is the default one, ours has `PREFIX`."""
    if qualified.startswith(f"{{{SCXML_NS}}}"):
        return qualified[len(SCXML_NS) + 2:]
    if qualified.startswith(f"{{{NS}}}"):
        return f"{PREFIX}:{qualified[len(NS) + 2:]}"
    return qualified


def _xml(element: ET.Element, depth: int) -> list[str]:
    """The element as text, two spaces per level (ElementTree's writer cannot have SCXML's
    namespace as the default one next to unqualified attributes)."""
    attributes = dict(element.attrib)
    if depth == 0:
        attributes = {"xmlns": SCXML_NS, f"xmlns:{PREFIX}": NS, **attributes}
    text = "".join(f' {_name(k)}="{"".join(_ESCAPES.get(c, c) for c in v)}"'
                   for k, v in attributes.items())
    pad = "  " * depth
    if not len(element):
        return [f"{pad}<{_name(element.tag)}{text}/>\n"]
    inner = [line for child in element for line in _xml(child, depth + 1)]
    return [f"{pad}<{_name(element.tag)}{text}>\n", *inner, f"{pad}</{_name(element.tag)}>\n"]


def scxml_text(spec: Spec, header: list[str]) -> str:
    """The document: `header` lines (the generated-file header) as an XML comment first."""
    from statechart.render.labels import comment_text

    root = ET.Element(_s("scxml"), {"version": "1.0", "name": spec.name,
                                    "initial": spec.initial})
    ours = {"spec-version": str(spec.version)}
    if spec.description is not None:
        ours["description"] = extras.text_out(spec.description) or ""
    root.attrib.update(_ours(ours))
    for field in spec.record:
        _field(root, field)
    for rule in spec.rules:
        _rule(root, rule)
    for migration in spec.migrations:
        _migration(root, migration)
    histories: set[tuple[str, str]] = {(t.target, t.history) for t in spec.transitions()
                                       if t.history}
    for state in spec.top_level:
        _state(spec, root, state, histories)
    for element in root.iter():
        for value in (*element.attrib.values(), element.text or ""):
            bad = extras.NOT_XML.search(value)
            if bad:
                raise ExportError(
                    f"{spec.path}: the text {value[:40]!r} holds U+{ord(bad.group()):04X}, "
                    "which an XML document cannot hold; write it another way")
    body = "".join(_xml(root, 0))
    comment = "".join(f"<!-- {comment_text(line, '--')} -->\n" for line in header)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{comment}{body}'
