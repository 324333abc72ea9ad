"""Timers of a state (`after:`): each key a delay or a deadline field, each timer its id
(`name:`, else its deadline field, else `delayN`) and its alternatives; and the check, once
the record is known, that a deadline names a `datetime` field."""

from __future__ import annotations

import re

import yaml

from statechart import durations
from statechart.build_model.transitions import TransitionBuilder
from statechart.diagnostics import Diagnostic
from statechart.model import RecordField, State, Transition
from statechart_runtime.chart import events

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


class TimerBuilder(TransitionBuilder):
    """A state's timers; each alternative is read as a transition on the timer's event."""

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
        for t in self.typed_in_order(states):
            if t.deadline is not None and t.order == 0 and types.get(t.deadline) not in (
                    None, "datetime"):
                self.problems.append(Diagnostic(
                    "schema", "error", f"`after` key `{t.deadline}` of state `{t.source}` "
                    f"names a {types[t.deadline]} field; a deadline is a `datetime` field",
                    t.span, f"declare `{t.deadline}: {{type: datetime}}`, or write a delay "
                    "such as `15m`"))
