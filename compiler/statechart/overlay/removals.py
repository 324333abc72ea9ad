"""An overlay's `remove:`: states, transitions and timers, record fields, overridable rules
and states' work of the base. Removals apply before additions, so remove-then-add replaces."""

from __future__ import annotations

import yaml

from statechart.overlay.base import ResolverBase
from statechart.overlay.merged import Change
from statechart.overlay.nodes import entry, key_name
from statechart.overlay.record_rules import rule_id_of
from statechart_runtime.chart import events


class Removal(ResolverBase):
    """The overlay's `remove:`, applied to the base's tree."""

    def remove(self, root: yaml.MappingNode, removal: yaml.Node,
               base_rules: dict[str, bool]) -> None:
        if not isinstance(removal, yaml.MappingNode):
            self.error(removal, "`remove` must be a mapping: {states: [...], transitions: "
                                "[STATE.EVENT], fields: [...], rules: [ID]}")
            return
        for k, v in removal.value:
            key = key_name(k)
            items = v.value if isinstance(v, yaml.SequenceNode) else [v]
            for item in items:
                name = key_name(item)
                if name is None:
                    self.error(item, f"each entry of `remove.{key}` must be a name")
                elif key == "states":
                    self._remove_state(root, name, item)
                elif key == "transitions":
                    self._remove_transition(root, name, item)
                elif key == "fields":
                    self._remove_from(root, "record", name, item, "field")
                elif key == "rules":
                    self._remove_rule(root, name, item, base_rules)
                elif key == "work":
                    self._remove_work(root, name, item)
                else:
                    self.error(k, f"unknown key `{key}` in `remove`",
                               "allowed: `states`, `transitions`, `fields`, `rules`, `work`")
                    break

    def _remove_state(self, root: yaml.MappingNode, name: str, node: yaml.Node) -> None:
        where = self.index(root).get(name)
        if where is None:
            self.error(node, f"cannot remove state `{name}`: the base has no such state")
            return
        holder, i = where
        del holder.value[i]
        self.changes.append(Change("state-removed", name, self.span(node)))

    def _remove_work(self, root: yaml.MappingNode, name: str, node: yaml.Node) -> None:
        """`remove: {work: [STATE]}`: the state stays, without its `work:`."""
        where = self.index(root).get(name)
        body = where[0].value[where[1]][1] if where is not None else None
        if not isinstance(body, yaml.MappingNode) or entry(body, "work") is None:
            self.error(node, f"cannot remove the work of `{name}`: the base has "
                             + ("no such state" if where is None else "no work on it"))
            return
        body.value[:] = [(k, v) for k, v in body.value if key_name(k) != "work"]
        self.changes.append(Change("state-changed", name, self.span(node)))

    def _remove_transition(self, root: yaml.MappingNode, name: str, node: yaml.Node) -> None:
        state, _, event = name.partition(".")
        where = self.index(root).get(state)
        # The `done:` transition, or the eventless ones (`always:`)
        written = "done" if event == events.done_event(state) else \
            "always" if event == events.ALWAYS else None
        if where is not None and written is not None:
            body = where[0].value[where[1]][1]
            if isinstance(body, yaml.MappingNode) and entry(body, written) is not None:
                body.value[:] = [(k, v) for k, v in body.value if key_name(k) != written]
                self.changes.append(Change("transition-removed", name))
                return
        section = "on"
        prefix = events.TIMER_PREFIX
        if event.startswith(prefix) and len(event) > len(prefix):  # a timer: `STATE.after.15m`
            section, event = "after", event[len(prefix):]
        on = entry(where[0].value[where[1]][1], section) if where else None
        if event and on is not None and section == "after" and entry(on[1], event) is None:
            # A timer named `name: reminder` is also `STATE.after.reminder`; its change is
            # named by its key as written, as a patch of it is.
            event = next((key_name(k) for k, v in on[1].value if event in _timer_names(v)),
                         None) or event
            name = f"{state}.after.{event}"
        if not event or on is None or entry(on[1], event) is None:
            what = f"timer `{event}`" if section == "after" else f"event `{event}`"
            self.error(node, f"cannot remove transition `{name}`: the base has no {what} "
                             f"on state `{state}`",
                       "write transitions to remove as `STATE.EVENT`, timers as "
                       "`STATE.after.KEY` (`waiting.after.15m`) or `STATE.after.NAME` for a "
                       "timer with a `name:`")
            return
        on[1].value[:] = [(k, v) for k, v in on[1].value if key_name(k) != event]
        self.changes.append(Change("transition-removed", name, self.span(node)))

    def _remove_from(self, root: yaml.MappingNode, section: str, name: str, node: yaml.Node,
                     what: str) -> None:
        holder = entry(root, section)
        if holder is None or entry(holder[1], name) is None:
            self.error(node, f"cannot remove {what} `{name}`: the base has no such {what}")
            return
        holder[1].value[:] = [(k, v) for k, v in holder[1].value if key_name(k) != name]
        self.changes.append(Change(f"{what}-removed", name, self.span(node)))

    def _remove_rule(self, root: yaml.MappingNode, rule_id: str, node: yaml.Node,
                     base_rules: dict[str, bool]) -> None:
        if rule_id not in base_rules:
            self.error(node, f"cannot remove rule `{rule_id}`: the base has no rule with that id")
        elif not base_rules[rule_id]:
            self.error(node, f"rule `{rule_id}` is not overridable; an overlay cannot remove it",
                       "the base's owners can mark it `overridable: true`")
        else:
            rules = entry(root, "rules")
            assert rules is not None and isinstance(rules[1], yaml.SequenceNode)
            rules[1].value[:] = [r for r in rules[1].value if rule_id_of(r) != rule_id]
            self.changes.append(Change("rule-removed", rule_id, self.span(node)))


def _timer_names(value: yaml.Node) -> set[str]:
    """The `name:`s written on the alternatives of one `after:` entry."""
    alternatives = value.value if isinstance(value, yaml.SequenceNode) else [value]
    return {name for alt in alternatives if (found := entry(alt, "name")) is not None
            and (name := key_name(found[1])) is not None}
