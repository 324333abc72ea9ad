"""Transitions of a state: `on:` (events), `done:` and `always:`, each alternative with its
target or targets, guard, `set`, `clear`, `assign`, `actions`, `in:`, history and kind."""

from __future__ import annotations

import difflib
from typing import Any

import yaml

from statechart import spec_format as fmt
from statechart.build_model.reader import Reader, node_kind
from statechart.build_model.spelling import did_you_mean
from statechart.diagnostics import Span
from statechart.model import HistoryKind, Repair, Transition, TransitionKind, Trigger
from statechart.yaml_source import scalar_value
from statechart_runtime.chart import events


class TransitionBuilder(Reader):
    """A state's `on:`, `done:` and `always:` transitions, one alternative at a time."""

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
            t = Transition(source, event, target, None, (), None, order,
                           self.span(event_node), self.span(node), trigger=trigger, **extra)
            if t.deadline is not None:
                self.typed.append(t)
            return t
        before = len(self.problems)
        got = self.keyed(node, where, fmt.TRANSITION_KEYS if trigger == "event" else
                         fmt.TIMER_KEYS if trigger == "after" else fmt.DONE_KEYS)
        if got is None:
            self.dropped("transition", source, event)
            return None
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
        history: HistoryKind | None = None
        if "history" in got:
            written = self.string(got["history"][1], f"`history` of {where}")
            if written in fmt.HISTORY_KINDS:
                history = written  # type: ignore[assignment]
            elif written is not None:
                self.schema(got["history"][1], f"`history` of {where} is `{written}`",
                            "use `shallow` (the child it was in) or `deep` (every nested "
                            "state it was in)" + _then(did_you_mean(written, fmt.HISTORY_KINDS)))
        # The keys a transition rarely has are read, and passed on, only when written: a
        # 10,000-state spec has 50,000 alternatives, and a keyword per field of every one
        # cost more than reading the keys it has.
        more: dict[str, Any] = dict(extra)
        if kind != "external":
            more["kind"] = kind
        if history is not None and kind != "targetless":
            more["history"] = history
        if internal_span is not None:
            more["internal_span"] = internal_span
        if trigger != "event":
            more["trigger"] = trigger
        if targets:
            more["targets"], more["target_spans"] = self._listing(targets)
        sets: list[tuple[str, yaml.Node]] = []
        for key, fields in _LISTS.items():  # read in this order, as their problems are reported
            if key in got:
                found = self.names(got[key][1], f"`{key}` of {where}")
                if key == "set":
                    sets = found
                elif found:
                    more[fields[0]], more[fields[1]] = self._listing(found)
        assigns = self.assigns(got["assign"][1], f"`assign` of {where}",
                               {n for n, _ in sets}) if "assign" in got else []
        if assigns:
            sets = sets + [(n, k) for n, _, k, _ in assigns]  # `sets`: every field it writes
            more["assigns"] = tuple([(n, v) for n, v, _, _ in assigns])
            more["assign_spans"] = tuple([self.span(v) for _, _, _, v in assigns])
        if sets:
            more["set_spans"] = tuple([self.span(n) for _, n in sets])
        description = self.text(got["description"][1], f"`description` of {where}") \
            if "description" in got else None
        t = Transition(source, event, target, guard, _names(sets), description, order,
                       self.span(event_node), self.span(target_node), guard_span, **more)
        if assigns or t.deadline is not None:
            self.typed.append(t)
        return t

    def _listing(self, found: list[tuple[str, yaml.Node]]
                 ) -> tuple[tuple[str, ...], tuple[Span, ...]]:
        """The names read and the span of each."""
        return tuple([n for n, _ in found]), tuple([self.span(n) for _, n in found])

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
                            f"number or boolean), not {node_kind(value_node)}",
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


# The keys of a transition that list names, in the order they are read, and the fields of
# `Transition` for the names and their spans (`set`'s go with `assign`'s).
_LISTS = {"set": ("sets", "set_spans"), "clear": ("clears", "clear_spans"),
          "actions": ("actions", "action_spans"), "in": ("in_states", "in_spans")}


def _names(found: list[tuple[str, yaml.Node]]) -> tuple[str, ...]:
    return tuple([n for n, _ in found]) if found else ()


def _then(hint: str) -> str:
    return f"; {hint}" if hint else ""


def _misspelt_target(node: yaml.Node) -> tuple[yaml.Node, yaml.Node] | None:
    """The (key, value) of a transition mapping whose key is a misspelling of `target`."""
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if (isinstance(key, str) and key not in fmt.TRANSITION_KEYS
                and difflib.get_close_matches(key, ["target"], n=1, cutoff=0.6)):
            return key_node, value_node
    return None
