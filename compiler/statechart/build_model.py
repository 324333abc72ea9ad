"""The one place that turns a YAML node tree into the model (`statechart.model.Spec`).

It reports what only the YAML shows: duplicate keys and schema problems (unknown or misplaced
keys, wrong types). Everything it can still make sense of goes into the model, so the graph
rules run and report too: a user sees all problems of a file at once. The allowed keys live in
`statechart.spec_format`, which also produces the published JSON Schema.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import yaml

from statechart import durations
from statechart import spec_format as fmt
from statechart.diagnostics import Diagnostic, Span
from statechart.model import (
    HistoryKind,
    Migration,
    RecordField,
    Repair,
    Selector,
    Spec,
    SpecRule,
    State,
    StateKind,
    Transition,
    TransitionKind,
    Trigger,
)
from statechart.yaml_source import MAX_DEPTH, STR_TAG, Source, scalar_value, span_of
from statechart_runtime import events
from statechart_runtime.errors import InvalidRecord
from statechart_runtime.values import parse_time

Items = list[tuple[str, yaml.Node, yaml.Node]]
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def closest(word: str, choices: Iterable[str], *, words: bool = False) -> str | None:
    """The choice `word` most likely misspells, or None when none is close. With `words`
    (state names), a choice that shares a word with `word`, written alike, counts too: a
    state renamed or reworded keeps a word of its name (`held` for `on_hold`,
    `awaiting_payment` for `payment_pending`)."""
    choices = list(choices)
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if close or not words:
        return close[0] if close else None
    best, score = None, 0.74
    for choice in choices:
        for part in (p for p in word.lower().split("_") if len(p) >= 3):
            for other in choice.lower().split("_"):
                ratio = difflib.SequenceMatcher(None, part, other).ratio()
                if ratio > score:
                    best, score = choice, ratio
    return best


def did_you_mean(word: str, choices: Iterable[str], *, words: bool = False) -> str:
    close = closest(word, choices, words=words)
    return f"did you mean `{close}`?" if close else ""


def listing(what: str, names: Iterable[str], limit: int = 12) -> str:
    """`states: a, b, c, ... (7 more)`: the first `limit` names, and how many were left out."""
    names = list(names)
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return f"{what}: {', '.join(names[:limit])}{more}"


class _Builder:
    def __init__(self, source: Source, files: dict[int, str] | None = None) -> None:
        self.path = source.path
        self.files = files or {}  # node id -> file, for nodes merged in from a base spec
        self.problems: list[Diagnostic] = []
        self.duplicates: set[str] = set()
        self.repairs: list[Repair] = []  # what a schema error dropped or misread

    def dropped(self, kind: str, state: str, event: str = "", target: str | None = None) -> None:
        """Record that the schema problem just reported made the builder drop or misread a
        part of the model (see `statechart.model.Repair`)."""
        self.repairs.append(Repair(kind, state, self.problems[-1].span,  # type: ignore[arg-type]
                                   event, target))

    # -- reporting -------------------------------------------------------------------------
    def span(self, node: yaml.Node) -> Span:
        return span_of(self.files.get(id(node), self.path), node)

    def error(self, rule: str, node: yaml.Node, message: str, hint: str = "") -> None:
        self.problems.append(Diagnostic(rule, "error", message, self.span(node), hint))

    def schema(self, node: yaml.Node, message: str, hint: str = "") -> None:
        self.error("schema", node, message, hint)

    # -- typed readers ---------------------------------------------------------------------
    def mapping(self, node: yaml.Node, where: str, allowed: dict[str, str]) -> Items | None:
        """The items of a mapping, after reporting duplicate, unknown and non-string keys."""
        if not isinstance(node, yaml.MappingNode):
            self.schema(node, f"{where} must be a mapping, not {_kind(node)}",
                        f"write {where} as `key: value` lines")
            return None
        items: Items = []
        first: dict[str, yaml.Node] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node, where)
            if key is None:
                continue
            if key in first:
                mark = first[key].start_mark
                self.error("duplicate-key", key_node,
                           f"duplicate key `{key}` in {where} (first defined at line "
                           f"{mark.line + 1}, column {mark.column + 1})",
                           "YAML keeps only the last value; remove or rename one of them")
                continue
            first[key] = key_node
            if allowed and key not in allowed:
                self._unknown_key(key, key_node, where, allowed)
                continue
            items.append((key, key_node, value_node))
        return items

    def _key(self, node: yaml.Node, where: str) -> str | None:
        if isinstance(node, yaml.ScalarNode):
            value = scalar_value(node)
            if isinstance(value, str) and value:
                return value
            if value is None or value == "":
                self.schema(node, f"empty key in {where}", "give the key a name")
                return None
            self.schema(node, f"key `{node.value}` in {where} is {_kind(node)}, not a name",
                        f"quote it if it is meant as a name: \"{node.value}\"")
            return None
        self.schema(node, f"a key in {where} must be a plain name, not {_kind(node)}")
        return None

    def _unknown_key(self, key: str, node: yaml.Node, where: str, allowed: dict[str, str]) -> None:
        hint = did_you_mean(key, allowed)
        if key == "set" and where.startswith("timer"):
            hint = "a timer is raised by the run itself and carries no values"
        elsewhere = fmt.WHERE_KEY_BELONGS.get(key)
        if not hint and elsewhere and elsewhere != where:
            hint = f"`{key}` belongs in {elsewhere}"
        if not hint:
            hint = "allowed keys: " + ", ".join(f"`{k}`" for k in allowed)
        self.schema(node, f"unknown key `{key}` in {where}", hint)

    def string(self, node: yaml.Node, where: str) -> str | None:
        if isinstance(node, yaml.ScalarNode) and node.tag == STR_TAG:
            value = scalar_value(node)
            if isinstance(value, str) and value:
                return value
            if node.style and node.value:
                return str(node.value)  # a scalar node's value is its text
        self.schema(node, f"{where} must be a non-empty string, not {_kind(node)}")
        return None

    def text(self, node: yaml.Node, where: str) -> str | None:
        """Free text (descriptions): any scalar, kept exactly as written."""
        if isinstance(node, yaml.ScalarNode):
            return str(node.value)  # a scalar node's value is its text
        self.schema(node, f"{where} must be text, not {_kind(node)}")
        return None

    def integer(self, node: yaml.Node, where: str, minimum: int) -> int | None:
        value = scalar_value(node) if isinstance(node, yaml.ScalarNode) else None
        if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
            return value
        self.schema(node, f"{where} must be an integer >= {minimum}, not {_kind(node)}")
        return None

    def boolean(self, node: yaml.Node, where: str) -> bool:
        value = scalar_value(node) if isinstance(node, yaml.ScalarNode) else None
        if isinstance(value, bool):
            return value
        self.schema(node, f"{where} must be `true` or `false`, not {_kind(node)}")
        return False

    def names(self, node: yaml.Node, where: str) -> list[tuple[str, yaml.Node]]:
        """A name or a list of names."""
        nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
        out = []
        for item in nodes:
            name = self.string(item, f"each entry of {where}")
            if name is not None:
                out.append((name, item))
        return out

    # -- the spec --------------------------------------------------------------------------
    def spec(self, source: Source) -> Spec | None:
        root = source.root
        if root is None or (isinstance(root, yaml.ScalarNode) and root.value == ""
                            and not root.style):
            self.problems.append(Diagnostic(
                "schema", "error", "the file is empty", Span.point(self.path, 1, 1),
                "a spec needs at least `statechart`, `version`, `initial` and `states`"))
            return None
        items = self.mapping(root, "the spec", fmt.SPEC_KEYS)
        if items is None:
            return None
        got = {key: (key_node, value) for key, key_node, value in items}
        for only_overlay in ("remove", "add"):
            if only_overlay in got:
                self.schema(got[only_overlay][0],
                            f"`{only_overlay}` is only allowed in a spec with `extends`",
                            f"add `extends: BASE`, or delete `{only_overlay}`")
        for key in fmt.SPEC_REQUIRED:
            if key not in got:
                self.schema(root, f"missing required key `{key}`", fmt.SPEC_KEYS[key])
        name = self._spec_name(got.get("statechart"))
        version = 1
        if "version" in got:
            version = self.integer(got["version"][1], "`version`", 1) or 1
        description = self.text(got["description"][1], "`description`") if "description" in got \
            else None
        initial = self.string(got["initial"][1], "`initial`") if "initial" in got else None
        states: dict[str, State] = {}
        if "states" in got:
            self.states(got["states"][1], None, states)
        record = self.record(got["record"][1]) if "record" in got else ()
        self.deadlines(states, record)
        self.assigned_types(states, record)
        rules = self.rules(got["rules"][1]) if "rules" in got else ()
        migrations = self.migrations(got["migrations"][1]) if "migrations" in got else ()
        return Spec(
            name=name or "",
            version=version,
            description=description,
            initial=initial or "",
            states=states,
            record=record,
            rules=rules,
            path=self.path,
            source_sha256=hashlib.sha256(source.text.encode("utf-8")).hexdigest(),
            span=self.span(got["initial"][1]) if "initial" in got else self.span(root),
            name_span=self.span(got["statechart"][1]) if "statechart" in got else None,
            version_span=self.span(got["version"][1]) if "version" in got else None,
            duplicates=frozenset(self.duplicates),
            migrations=migrations,
            repairs=tuple(self.repairs),
        )

    def _spec_name(self, entry: tuple[yaml.Node, yaml.Node] | None) -> str | None:
        if entry is None:
            return None
        return self.string(entry[1], "`statechart` (the spec's name)")

    # -- states ----------------------------------------------------------------------------
    def states(self, node: yaml.Node, parent: str | None, out: dict[str, State]) -> None:
        # An explicit stack, not recursion: nesting depth is the user's to choose.
        stack: list[tuple[yaml.Node, str | None, int]] = [(node, parent, 0)]
        while stack:
            mapping_node, parent_name, depth = stack.pop()
            where = f"the states of `{parent_name}`" if parent_name else "`states`"
            items = self.mapping(mapping_node, where, {})
            if items is None:
                continue
            if not items:
                self.schema(mapping_node, f"{where} has no states", "add at least one state")
            if depth >= MAX_DEPTH:
                self.schema(mapping_node, f"states nest deeper than {MAX_DEPTH} levels",
                            "flatten the spec")
                continue
            children_todo = []
            for name, key_node, value_node in items:
                if name in out:
                    self.duplicates.add(name)
                    first = out[name].span
                    where = "" if first.file == self.span(key_node).file else f"{first.file}, "
                    self.error("duplicate-state", key_node,
                               f"state `{name}` is already defined at {where}line {first.line}, "
                               f"column {first.column}",
                               "state names are unique across the whole tree; rename one")
                    continue
                state, sub = self.state(name, key_node, value_node, parent_name, depth)
                out[name] = state
                if sub is not None:
                    children_todo.append((sub, name, depth + 1))
            stack.extend(reversed(children_todo))
        # Children were filled in after their parents; reorder into document (pre-)order.
        # A child skipped as a duplicate state is dropped from its parent's `children`.
        kids: dict[str | None, list[str]] = {}
        for state in out.values():
            kids.setdefault(state.parent, []).append(state.name)
        ordered: dict[str, State] = {}
        walk = list(reversed(kids.get(parent, [])))
        while walk:
            current = walk.pop()
            own = tuple(c for c in out[current].children if c in kids.get(current, ()))
            state = out[current]
            ordered[current] = state if own == state.children else replace(state, children=own)
            walk.extend(reversed(own))
        out.clear()
        out.update(ordered)

    def state(self, name: str, key_node: yaml.Node, node: yaml.Node, parent: str | None,
              depth: int) -> tuple[State, yaml.Node | None]:
        where = f"state `{name}`"
        got: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        if isinstance(node, yaml.ScalarNode) and scalar_value(node) is None:
            pass  # `done:` with nothing: an atomic state with no keys
        else:
            items = self.mapping(node, where, fmt.STATE_KEYS)
            for key, k, v in items or ():
                got[key] = (k, v)

        def value(key: str) -> yaml.Node:
            return got[key][1]

        final = "final" in got and self.boolean(value("final"), f"`final` of {where}")
        if "final" in got and not _is_bool(value("final")):
            self.dropped("final", name)
        parallel = "parallel" in got and self.boolean(value("parallel"), f"`parallel` of {where}")
        children_node = value("states") if "states" in got else None
        children: tuple[str, ...] = ()
        if isinstance(children_node, yaml.MappingNode):
            children = tuple(_plain_keys(children_node))
        kind: StateKind
        if final:
            kind = "final"
            for bad in ("states", "initial", "parallel"):
                if bad in got and not (bad == "parallel" and not parallel):
                    self.schema(got[bad][0], f"final state `{name}` cannot have `{bad}`",
                                "a final state ends the run (or its region); it has no children")
        elif parallel:
            kind = "parallel"
            if children_node is None:
                self.schema(key_node, f"parallel state `{name}` needs `states` (its regions)")
            if "initial" in got:
                self.schema(got["initial"][0], f"parallel state `{name}` cannot have `initial`",
                            "every region of a parallel state is entered at once")
        elif children_node is not None:
            kind = "compound"
        else:
            kind = "atomic"
            if "initial" in got:
                self.schema(got["initial"][0], f"`initial` on `{name}`, which has no `states`",
                            "only a state with nested states has an initial child")
        initial = initial_span = None
        if "initial" in got and kind == "compound":
            initial = self.string(value("initial"), f"`initial` of {where}")
            initial_span = self.span(value("initial"))
        transitions = self.transitions(name, value("on")) if "on" in got else ()
        if "after" in got:
            if kind == "final":
                self.schema(got["after"][0], f"final state `{name}` cannot have `after`",
                            "a final state is never left, so its timers could never fire")
            else:
                transitions += self.timers(name, value("after"))
        if "done" in got:
            if kind in ("compound", "parallel"):
                transitions += self.done_transitions(name, *got["done"])
            else:
                self.schema(got["done"][0], f"`done` on {kind} state `{name}`",
                            "only a state with nested states completes: its final child "
                            "(or every region's) raises `done`")
        if "always" in got:
            if kind == "final":
                self.schema(got["always"][0], f"final state `{name}` cannot have `always`",
                            "a final state is never left")
            else:
                transitions += self.done_transitions(name, *got["always"], trigger="always")
        limit = self.integer(value("limit"), f"`limit` of {where}", 1) if "limit" in got else None
        state = State(
            name=name,
            parent=parent,
            kind=kind,
            description=self.text(value("description"), f"`description` of {where}")
            if "description" in got else None,
            initial=initial,
            children=children,
            transitions=transitions,
            tags=self._name_list(got, "tags", where),
            entry=self._name_list(got, "entry", where),
            exit=self._name_list(got, "exit", where),
            requires=self._name_list(got, "requires", where),
            limit=limit,
            span=self.span(key_node),
            initial_span=initial_span,
            depth=depth,
            name_spans=self._name_spans(got, ("tags", "entry", "exit", "requires", "clear")),
        )
        if any(k in got for k in ("clear", "status", "counter")):
            state = self._context_keys(state, got, where)
        if "history_default" in got:
            state = replace(state, history_defaults=self._history_defaults(
                kind, *got["history_default"], where))
        return state, children_node

    def _history_defaults(self, kind: str, key: yaml.Node, node: yaml.Node, where: str
                          ) -> tuple[tuple[HistoryKind, str, Span], ...]:
        """`history_default: NAME` (both kinds) or `{shallow: NAME, deep: NAME}`."""
        if kind not in ("compound", "parallel"):
            self.schema(key, f"`history_default` on {kind} {where}",
                        "only a state with nested states is entered by history")
            return ()
        if isinstance(node, yaml.MappingNode):
            out: list[tuple[HistoryKind, str, Span]] = []
            for written, _, value in self.mapping(node, f"`history_default` of {where}", {
                    k: f"the state a {k} history transition enters the first time"
                    for k in fmt.HISTORY_KINDS}) or ():
                name = self.string(value, f"`history_default.{written}` of {where}")
                if name is not None:
                    out.append((written, name, self.span(value)))  # type: ignore[arg-type]
            return tuple(out)
        name = self.string(node, f"`history_default` of {where}")
        if name is None:
            return ()
        kinds: tuple[HistoryKind, ...] = ("shallow", "deep")
        return tuple((k, name, self.span(node)) for k in kinds)

    def _context_keys(self, state: State, got: dict[str, tuple[yaml.Node, yaml.Node]],
                      where: str) -> State:
        """A state's run-context and status keys: `clear`, `status`, `counter`."""
        def name(key: str) -> tuple[str | None, Span | None]:
            if key not in got:
                return None, None
            return self.string(got[key][1], f"`{key}` of {where}"), self.span(got[key][1])
        status, status_span = name("status")
        counter, counter_span = name("counter")
        return replace(state, clear=self._name_list(got, "clear", where), status=status,
                       status_span=status_span, counter=counter, counter_span=counter_span)

    def _name_list(self, got: dict[str, tuple[yaml.Node, yaml.Node]], key: str,
                   where: str) -> tuple[str, ...]:
        if key not in got:
            return ()
        return tuple(n for n, _ in self.names(got[key][1], f"`{key}` of {where}"))

    def _name_spans(self, got: dict[str, tuple[yaml.Node, yaml.Node]],
                    keys: tuple[str, ...]) -> tuple[tuple[str, str, Span], ...]:
        out = []
        for key in keys:
            if key in got:
                node = got[key][1]
                for item in node.value if isinstance(node, yaml.SequenceNode) else [node]:
                    if isinstance(item, yaml.ScalarNode):
                        out.append((key, item.value, self.span(item)))
        return tuple(out)

    def transitions(self, source: str, node: yaml.Node) -> tuple[Transition, ...]:
        items = self.mapping(node, f"`on` of state `{source}`", {})
        if items is None:
            self.dropped("transition", source)
        out: list[Transition] = []
        for event, event_node, value in items or ():
            alternatives = value.value if isinstance(value, yaml.SequenceNode) else [value]
            if isinstance(value, yaml.SequenceNode) and not alternatives:
                self.schema(value, f"event `{event}` of `{source}` lists no targets")
            if event == events.ALWAYS:
                self.schema(event_node, f"`always` under `on` of `{source}`: no event may be "
                            "called so", "eventless transitions are written `always:` on the "
                            "state, next to `on:`; else name the event otherwise")
                self.dropped("transition", source, event)
                continue
            for order, alt in enumerate(alternatives):
                t = self.transition(source, event, event_node, alt, order)
                if t is not None:
                    out.append(t)
        return tuple(out)

    def timers(self, source: str, node: yaml.Node) -> tuple[Transition, ...]:
        """`after: {KEY: TARGET | {target, guard, description, history, name} | [...]}`: a KEY
        is a delay (statechart.durations) or a datetime field's name, checked in `deadlines`.
        A timer's event is `after.ID.SOURCE`, its id its `name:`, else its deadline field,
        else `delayN` for the Nth delay timer of the state (in writing order, named ones
        counted): a new delay keeps the event (docs/spec-format.md, "Timers")."""
        out: list[Transition] = []
        ids: dict[str, str] = {}  # timer id -> the `after:` key of the timer that has it
        position = 0  # of the delay timers
        for key, key_node, value in self.mapping(node, f"`after` of state `{source}`", {}) or ():
            delay: int | None = None
            deadline: str | None = None
            if durations.looks_like_delay(key):
                parsed = durations.parse(key)
                if isinstance(parsed, str):
                    self.schema(key_node, f"`after` key `{key}` of state `{source}`: {parsed}",
                                "write a delay such as `30s`, `15m`, `2h`, `1d`, `500ms` or "
                                "ISO 8601 `PT15M`, `P1DT2H`")
                    continue
                delay = parsed
                position += 1
            else:
                deadline = key
            alternatives = value.value if isinstance(value, yaml.SequenceNode) else [value]
            if isinstance(value, yaml.SequenceNode) and not alternatives:
                self.schema(value, f"timer `{key}` of `{source}` lists no targets")
            name = self._timer_name(source, key, alternatives)
            timer_id = name or deadline or events.delay_key(position)
            event = events.timer_event(timer_id, source)
            if timer_id in ids:
                self.schema(key_node, f"timers `{ids[timer_id]}` and `{key}` of `{source}` "
                            f"have the same id `{timer_id}`",
                            "give one of them another `name:` (a timer's id is its `name:`, "
                            "else its deadline field, else `delayN` for the Nth delay timer)")
                self.dropped("transition", source, event)
                continue
            ids[timer_id] = key
            timer = {"delay_ms": delay, "deadline": deadline, "after_key": key}
            for order, alt in enumerate(alternatives):
                t = self.transition(source, event, key_node, alt, order, "after", timer)
                if t is not None:
                    out.append(t)
        return tuple(out)

    def _timer_name(self, source: str, key: str, alternatives: list[yaml.Node]) -> str | None:
        """The `name:` of the timer `key` of `source`: written on any of its alternatives,
        the same wherever it is written."""
        where = f"timer `{key}` of `{source}`"
        found: str | None = None
        for alt in alternatives:
            node = next((v for k, v in alt.value if isinstance(k, yaml.ScalarNode)
                         and k.value == "name"), None) if isinstance(alt, yaml.MappingNode) \
                else None
            if node is None:
                continue
            name = self.string(node, f"`name` of {where}")
            if name is None:
                continue
            if not _IDENTIFIER.match(name):
                self.schema(node, f"`name` of {where} is `{name}`, not a name",
                            "a name is a letter, then letters, digits or `_`: `reminder`")
            elif events.looks_like_delay(name):
                self.schema(node, f"`name` of {where} is `{name}`, which reads as a delay",
                            "a name must not start with `P` and a digit or `T`: records "
                            "written before timers had ids call a delay timer by its delay")
            elif found is not None and name != found:
                self.schema(node, f"{where} is named both `{found}` and `{name}`",
                            "write `name:` on one alternative, or the same on each")
            elif found is None:
                found = name
        return found

    def deadlines(self, states: dict[str, State], record: tuple[RecordField, ...]) -> None:
        """A deadline key names a `datetime` field (an undeclared one is `unknown-field`)."""
        types = {f.name: f.type for f in record}
        for state in states.values():
            for t in state.transitions:
                if t.deadline is not None and t.order == 0 and types.get(t.deadline) not in (
                        None, "datetime"):
                    self.problems.append(Diagnostic(
                        "schema", "error", f"`after` key `{t.deadline}` of state `{state.name}` "
                        f"names a {types[t.deadline]} field; a deadline is a `datetime` field",
                        t.span, f"declare `{t.deadline}: {{type: datetime}}`, or write a delay "
                        "such as `15m`"))

    def done_transitions(self, source: str, key_node: yaml.Node, node: yaml.Node,
                         trigger: Trigger = "done") -> tuple[Transition, ...]:
        """`done:` of a compound or parallel state: its transitions on `done.state.SOURCE`;
        or (`trigger` "always") `always:` of a state: its eventless transitions, on the
        event `always`."""
        alternatives = node.value if isinstance(node, yaml.SequenceNode) else [node]
        if isinstance(node, yaml.SequenceNode) and not alternatives:
            self.schema(node, f"`{trigger}` of `{source}` lists no targets")
        event = events.ALWAYS if trigger == "always" else events.done_event(source)
        out: list[Transition] = []
        for order, alt in enumerate(alternatives):
            t = self.transition(source, event, key_node, alt, order, trigger=trigger)
            if t is not None:
                out.append(t)
        return tuple(out)

    def transition(self, source: str, event: str, event_node: yaml.Node, node: yaml.Node,
                   order: int, trigger: Trigger = "event",
                   timer: dict[str, Any] | None = None) -> Transition | None:
        """One alternative; `timer` holds a timer's delay or deadline field."""
        extra = timer or {}
        if trigger == "event":
            where = f"transition `{source}` on `{event}`"
        elif trigger == "after":
            where = f"timer `{extra['after_key']}` of `{source}`"
        else:
            where = f"the `{trigger}` transition of `{source}`"
        if isinstance(node, yaml.ScalarNode):
            target = self.string(node, f"the target of {where}")
            if target is None:
                self.dropped("transition", source, event)
                return None
            return Transition(source, event, target, None, (), None, order,
                              self.span(event_node), self.span(node), trigger=trigger, **extra)
        before = len(self.problems)
        items = self.mapping(node, where, fmt.TRANSITION_KEYS if trigger == "event" else
                             fmt.TIMER_KEYS if trigger == "after" else fmt.DONE_KEYS)
        if items is None:
            self.dropped("transition", source, event)
            return None
        got = {key: (k, v) for key, k, v in items}
        kind: TransitionKind = "external"
        targets: list[tuple[str, yaml.Node]] = []
        misspelt = _misspelt_target(node) if "target" not in got else None
        if misspelt is not None:
            cause = next(
                (p for p in self.problems[before:] if p.span == self.span(misspelt[0])), None)
            if cause is not None:
                # `traget: X`: the unknown-key problem (did you mean `target`?) is the root
                # cause and says all there is to say; X is the target it most likely meant.
                value_node = misspelt[1]
                likely = scalar_value(value_node) \
                    if isinstance(value_node, yaml.ScalarNode) else None
                self.repairs.append(Repair("transition", source, cause.span, event,
                                           likely if isinstance(likely, str) and likely
                                           else None))
                return None
        if "target" not in got:
            # A targetless transition: nothing is exited or entered (docs/semantics.md); the
            # model gives it its source as target, so paths and steps stay where they are.
            kind = "targetless"
            for key in ("history", "internal"):
                if key in got:
                    self.schema(got[key][0], f"{where} has `{key}` but no `target`",
                                f"add `target: STATE`, or drop `{key}`")
            target = source
            target_node = node
        else:
            target_node = got["target"][1]
            if isinstance(target_node, yaml.SequenceNode):
                targets = self.targets(target_node, where)
                target = targets[0][0] if targets else None
            else:
                target = self.string(target_node, f"`target` of {where}")
        if target is None:
            self.dropped("transition", source, event)
            return None
        internal_span = None
        if "internal" in got and kind != "targetless" and self.boolean(
                got["internal"][1], f"`internal` of {where}"):
            kind, internal_span = "internal", self.span(got["internal"][0])
        guard = guard_span = None
        if "guard" in got:
            guard = self.string(got["guard"][1], f"`guard` of {where}")
            guard_span = self.span(got["guard"][1])
        sets = self.names(got["set"][1], f"`set` of {where}") if "set" in got else []
        clears = self.names(got["clear"][1], f"`clear` of {where}") if "clear" in got else []
        actions = self.names(got["actions"][1], f"`actions` of {where}") \
            if "actions" in got else []
        in_states = self.names(got["in"][1], f"`in` of {where}") if "in" in got else []
        description = self.text(got["description"][1], f"`description` of {where}") \
            if "description" in got else None
        assigns = self.assigns(got["assign"][1], f"`assign` of {where}",
                               {n for n, _ in sets}) if "assign" in got else []
        history: HistoryKind | None = None
        if "history" in got:
            written = self.string(got["history"][1], f"`history` of {where}")
            if written in fmt.HISTORY_KINDS:
                history = written  # type: ignore[assignment]
            elif written is not None:
                self.schema(got["history"][1], f"`history` of {where} is `{written}`",
                            "use `shallow` (the child it was in) or `deep` (every nested "
                            "state it was in)" + _then(did_you_mean(written, fmt.HISTORY_KINDS)))
        sets += [(n, k) for n, _, k, _ in assigns]  # `sets`: every field it writes
        return Transition(
            source, event, target, guard, tuple(n for n, _ in sets), description, order,
            self.span(event_node), self.span(target_node), guard_span,
            set_spans=tuple(self.span(n) for _, n in sets), trigger=trigger,
            history=history if kind != "targetless" else None,
            kind=kind, internal_span=internal_span,
            actions=tuple(n for n, _ in actions),
            action_spans=tuple(self.span(n) for _, n in actions),
            in_states=tuple(n for n, _ in in_states),
            in_spans=tuple(self.span(n) for _, n in in_states),
            targets=tuple(n for n, _ in targets),
            target_spans=tuple(self.span(n) for _, n in targets),
            clears=tuple(n for n, _ in clears), clear_spans=tuple(self.span(n) for _, n in clears),
            assigns=tuple((n, v) for n, v, _, _ in assigns),
            assign_spans=tuple(self.span(v) for _, _, _, v in assigns),
            **extra,
        )

    def targets(self, node: yaml.SequenceNode, where: str) -> list[tuple[str, yaml.Node]]:
        """`target: [a2, b2]`: two states or more, each once (SCXML `target="a2 b2"`)."""
        found = self.names(node, f"`target` of {where}")
        names = [n for n, _ in found]
        if len(names) != len(node.value):
            return []  # not a name: reported
        if len(names) < 2:
            self.schema(node, f"`target` of {where} lists {len(names)} state"
                        f"{'' if len(names) == 1 else 's'}",
                        "a list of targets names two states or more (states of different "
                        "regions of one parallel state); write one target as a name")
            return []
        twice = next((n for i, (n, _) in enumerate(found) if n in names[:i]), None)
        if twice is not None:
            self.schema(node, f"`target` of {where} lists `{twice}` twice",
                        "name each state once")
            return []
        return found

    def assigns(self, node: yaml.Node, where: str, sets: set[str]
                ) -> list[tuple[str, Any, yaml.Node, yaml.Node]]:
        """`assign: {field: constant}`: (field, value, key node, value node) per entry; the
        value's type is checked against the field's once the record is known
        (`assigned_types`)."""
        out = []
        for name, key_node, value_node in self.mapping(node, where, {}) or ():
            value = scalar_value(value_node) if isinstance(value_node, yaml.ScalarNode) else None
            if value is None:
                self.schema(value_node, f"`{name}` in {where} must be a constant (a string, "
                            f"number or boolean), not {_kind(value_node)}",
                            "write `field: value`; to unset a field, use `clear:`")
            elif name in sets:
                self.schema(key_node, f"{where} gives `{name}`, which the transition's `set` "
                            "also lists (the caller's value)",
                            "keep one: `set` for the caller's value, `assign` for the spec's")
            else:
                out.append((name, value, key_node, value_node))
        if isinstance(node, yaml.MappingNode) and not node.value:
            self.schema(node, f"{where} is empty", "write `assign: {field: value}`, or drop it")
        return out

    def assigned_types(self, states: dict[str, State], record: tuple[RecordField, ...]) -> None:
        """An `assign:` value has its field's type (an undeclared field is `unknown-field`)."""
        fields = {f.name: f for f in record}
        for state in states.values():
            for t in state.transitions:
                for (name, value), span in zip(t.assigns, t.assign_spans, strict=True):
                    field = fields.get(name)
                    problem = _default_problem(field, value) if field is not None else ""
                    if field is not None and problem:
                        self.problems.append(Diagnostic(
                            "schema", "error", f"`assign` of `{state.name}` on `{t.shown}`: "
                            f"`{name}` must be {problem}, not {_value_text(value)}", span,
                            f"write a value of the field's type: {_default_example(field)}"))

    # -- record fields ---------------------------------------------------------------------
    def record(self, node: yaml.Node) -> tuple[RecordField, ...]:
        out = []
        for name, key_node, value in self.mapping(node, "`record`", {}) or ():
            where = f"record field `{name}`"
            items = self.mapping(value, where, fmt.FIELD_KEYS)
            if items is None:
                continue
            got = {key: (k, v) for key, k, v in items}
            enum: tuple[str, ...] = ()
            ftype = None
            if "enum" in got:
                enum_node = got["enum"][1]
                if not isinstance(enum_node, yaml.SequenceNode) or not enum_node.value:
                    self.schema(enum_node, f"`enum` of {where} must be a non-empty list")
                else:
                    enum = tuple(n for n, _ in self.names(enum_node, f"`enum` of {where}"))
                    if len(set(enum)) != len(enum):
                        self.schema(enum_node, f"`enum` of {where} lists a value twice")
                ftype = "enum"
                if "type" in got:
                    self.schema(got["type"][0], f"{where} has both `type` and `enum`",
                                "an enum field's values are strings; drop `type`")
            elif "type" in got:
                ftype = self.string(got["type"][1], f"`type` of {where}")
                if ftype is not None and ftype not in fmt.FIELD_TYPES:
                    self.schema(got["type"][1], f"unknown type `{ftype}` for {where}",
                                did_you_mean(ftype, fmt.FIELD_TYPES)
                                or "types: " + ", ".join(fmt.FIELD_TYPES))
                    ftype = None
            else:
                self.schema(value, f"{where} needs `type` or `enum`")
            description = self.text(got["description"][1], f"`description` of {where}") \
                if "description" in got else None
            field = RecordField(name, ftype or "string", enum,  # type: ignore[arg-type]
                                description, self.span(key_node))
            if "context" in got or "default" in got:
                field = self._field_context(field, got, where)
            out.append(field)
        return tuple(out)

    def _field_context(self, field: RecordField, got: dict[str, tuple[yaml.Node, yaml.Node]],
                       where: str) -> RecordField:
        """A field's `context` and `default` (a default must have the field's type)."""
        context = "context" in got and self.boolean(got["context"][1], f"`context` of {where}")
        if "default" not in got:
            return replace(field, context=context)
        node = got["default"][1]
        value = scalar_value(node) if isinstance(node, yaml.ScalarNode) else None
        problem = _default_problem(field, value)
        if problem:
            self.schema(node, f"`default` of {where} must be {problem}, not {_kind(node)}",
                        f"write a value of the field's type: {_default_example(field)}")
            value = None
        return replace(field, context=context, default=value,  # type: ignore[arg-type]
                       default_span=self.span(node))

    # -- migrations -----------------------------------------------------------------------
    def migrations(self, node: yaml.Node) -> tuple[Migration, ...]:
        if not isinstance(node, yaml.SequenceNode):
            self.schema(node, "`migrations` must be a list",
                        "write `- {from_version: 1, states: {old: new}}`")
            return ()
        out = []
        for item in node.value:
            items = self.mapping(item, "a migration", fmt.MIGRATION_KEYS)
            if items is None:
                continue
            got = {key: (k, v) for key, k, v in items}
            if "from_version" not in got:
                self.schema(item, "a migration needs `from_version`")
                continue
            version = self.integer(got["from_version"][1], "`from_version`", 1)
            if version is None:
                continue
            states = tuple((old, new, span) for old, new, span in self._renames(
                got.get("states"), "states", allow_null=False) if new is not None)
            fields = tuple(self._renames(got.get("fields"), "fields", allow_null=True))
            fill = tuple((n, self.span(v)) for n, v in self.names(
                got["fill"][1], "`fill` of a migration")) if "fill" in got else ()
            out.append(Migration(version, states, fields, self.span(got["from_version"][0]),
                                 fill))
        return tuple(out)

    def _renames(self, entry: tuple[yaml.Node, yaml.Node] | None, what: str,
                 allow_null: bool) -> list[tuple[str, str | None, Span]]:
        if entry is None:
            return []
        out: list[tuple[str, str | None, Span]] = []
        for old, _, value in self.mapping(entry[1], f"`{what}` of a migration", {}) or ():
            if isinstance(value, yaml.ScalarNode) and scalar_value(value) is None and allow_null:
                out.append((old, None, self.span(value)))
                continue
            if isinstance(value, (yaml.SequenceNode, yaml.MappingNode)):
                self.error("invalid-migration", value,
                           f"migration maps `{old}` to several {what}; a migration is a function: "
                           "each old name maps to one new name",
                           "pick the one name old records should get")
                continue
            new = self.string(value, f"the new name of `{old}`")
            if new is not None:
                out.append((old, new, self.span(value)))
        return out

    # -- the spec's own rules --------------------------------------------------------------
    def rules(self, node: yaml.Node) -> tuple[SpecRule, ...]:
        if not isinstance(node, yaml.SequenceNode):
            self.schema(node, "`rules` must be a list", "write each rule as `- never: {...}`")
            return ()
        out = []
        for item in node.value:
            items = self.mapping(item, "a rule", fmt.RULE_KEYS)
            if items is None:
                continue
            got = {key: (k, v) for key, k, v in items}
            kinds = [k for k in fmt.RULE_KINDS if k in got]
            if len(kinds) != 1:
                self.schema(item, "a rule needs exactly one of `never`, `only`, `unreachable`",
                            "split it into one rule per kind")
                continue
            kind = kinds[0]
            body = self.mapping(got[kind][1], f"`{kind}` rule", fmt.RULE_BODY_KEYS)
            if body is None:
                continue
            parts = {key: v for key, _, v in body}
            if "from" not in parts or "to" not in parts:
                self.schema(got[kind][1], f"a `{kind}` rule needs `from` and `to`")
                continue
            rule_id = self.string(got["id"][1], "rule `id`") if "id" in got else None
            out.append(SpecRule(
                kind=kind,  # type: ignore[arg-type]
                id=rule_id,
                description=self.text(got["description"][1], "rule `description`")
                if "description" in got else None,
                sources=self.selectors(parts["from"]),
                targets=self.selectors(parts["to"]),
                overridable="overridable" in got and self.boolean(got["overridable"][1],
                                                                   "`overridable`"),
                span=self.span(got[kind][0]),
            ))
        return tuple(out)

    def selectors(self, node: yaml.Node) -> tuple[Selector, ...]:
        nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
        if not nodes:
            # An empty side would make the rule hold vacuously: never checked, never broken.
            self.schema(node, "a rule's `from` and `to` name at least one state or tag",
                        "write a state name, `{tag: NAME}`, or a list of them")
        out: list[Selector] = []
        for item in nodes:
            if isinstance(item, yaml.MappingNode):
                body = self.mapping(item, "a state selector", {"tag": "a tag name"})
                if body is not None and not body:
                    self.schema(item, "a state selector mapping needs `tag`",
                                "write `{tag: NAME}`, or the state's name")
                for _, _, v in body or ():
                    tag = self.string(v, "`tag`")
                    if tag:
                        out.append(("tag", tag, self.span(v)))
            else:
                name = self.string(item, "a rule's state")
                if name:
                    out.append(("state", name, self.span(item)))
        return tuple(out)


def _default_problem(field: RecordField, value: object) -> str:
    """What a `default` of `field` must be, or "" when `value` is one."""
    if field.type == "enum":
        ok = isinstance(value, str) and value in field.enum
        return "" if ok else "one of " + ", ".join(f"`{v}`" for v in field.enum)
    if field.type == "datetime":
        try:
            ok = isinstance(value, str) and parse_time("default", value) is not None
        except InvalidRecord:
            ok = False
        return "" if ok else "an RFC 3339 time with an offset (`2024-01-01T00:00:00Z`)"
    wanted: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,),
                                           "number": (int, float), "boolean": (bool,)}
    ok = isinstance(value, wanted[field.type]) and (
        field.type == "boolean" or not isinstance(value, bool))
    if ok and isinstance(value, float) and not math.isfinite(value):
        ok = False
    article = "an" if field.type == "integer" else "a"
    return "" if ok else f"{article} {field.type}"


def _value_text(value: object) -> str:
    """A constant as `_kind` shows a node (what YAML made of it)."""
    if isinstance(value, bool):
        return f"the boolean `{str(value).lower()}`"
    if isinstance(value, int | float):
        return f"the number `{value}`"
    return f"the string {value!r}"


def _default_example(field: RecordField) -> str:
    examples = {"string": '`""`', "integer": "`0`", "number": "`0.5`", "boolean": "`false`",
                "datetime": "`2024-01-01T00:00:00Z`"}
    return f"`{field.enum[0]}`" if field.type == "enum" and field.enum \
        else examples.get(field.type, "")


def _then(hint: str) -> str:
    return f"; {hint}" if hint else ""


def _is_bool(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and isinstance(scalar_value(node), bool)


def _misspelt_target(node: yaml.Node) -> tuple[yaml.Node, yaml.Node] | None:
    """The (key, value) of a transition mapping whose key is a misspelling of `target`."""
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if (isinstance(key, str) and key not in fmt.TRANSITION_KEYS
                and difflib.get_close_matches(key, ["target"], n=1, cutoff=0.6)):
            return key_node, value_node
    return None


def _plain_keys(node: yaml.MappingNode) -> list[str]:
    """Distinct string keys of a mapping, first occurrence first (duplicates reported elsewhere)."""
    seen: dict[str, None] = {}
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            value = scalar_value(key_node)
            if isinstance(value, str) and value:
                seen.setdefault(value, None)
    return list(seen)


def _kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    value = scalar_value(node)  # type: ignore[arg-type]
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return f"the boolean `{node.value}`"
    if isinstance(value, (int, float)):
        return f"the number `{node.value}`"
    return f"the string {node.value!r}"


def build(source: Source, files: dict[int, str] | None = None) -> tuple[Spec | None,
                                                                         list[Diagnostic]]:
    """The model of a spec; `files` maps nodes merged in from base specs to their files."""
    builder = _Builder(source, files)
    spec = builder.spec(source)
    return spec, builder.problems
