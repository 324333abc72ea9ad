"""An overlay's record fields and rules: new fields, new rules, and base rules replaced by
their `id` where the base marks them `overridable: true`."""

from __future__ import annotations

import yaml

from statechart.overlay.base import ResolverBase
from statechart.overlay.merged import Change
from statechart.overlay.nodes import empty_map, entry, key_name, set_entry
from statechart.yaml_source import SEQ_TAG, scalar_value


class RecordAndRulesMerge(ResolverBase):
    """The overlay's `record:` and `rules:`, added to the base's."""

    def add_fields(self, root: yaml.MappingNode, key_node: yaml.Node, fields: yaml.Node) -> None:
        if not isinstance(fields, yaml.MappingNode):
            set_entry(root, key_node, fields)  # the builder reports the wrong type
            return
        record = entry(root, "record")
        if record is None or not isinstance(record[1], yaml.MappingNode):
            record = (key_node, empty_map(fields))
            set_entry(root, key_node, record[1])
        for k, v in fields.value:
            name = key_name(k) or "?"
            if entry(record[1], name) is not None:
                self.error(k, f"record field `{name}` is already defined by the base",
                           f"to change it, also list it under `remove: {{fields: [{name}]}}`")
                continue
            record[1].value.append((k, v))
            self.changes.append(Change("field-added", name))

    def add_rules(self, root: yaml.MappingNode, key_node: yaml.Node, rules: yaml.Node,
                  base_rules: dict[str, bool]) -> None:
        if not isinstance(rules, yaml.SequenceNode):
            return
        holder = entry(root, "rules")
        if holder is None or not isinstance(holder[1], yaml.SequenceNode):
            holder = (key_node, yaml.SequenceNode(SEQ_TAG, [], rules.start_mark, rules.end_mark))
            set_entry(root, key_node, holder[1])
        for rule in rules.value:
            rule_id = rule_id_of(rule)
            present = rule_id is not None and any(
                rule_id_of(r) == rule_id for r in holder[1].value)
            if rule_id is not None and rule_id in base_rules and present:
                if not base_rules[rule_id]:
                    self.error(rule, f"rule `{rule_id}` of the base is not overridable; an "
                                     "overlay cannot weaken it",
                               "give the new rule another id: both then apply")
                    continue
                holder[1].value[:] = [rule if rule_id_of(r) == rule_id else r
                                      for r in holder[1].value]
                self.changes.append(Change("rule-replaced", rule_id))
                continue
            holder[1].value.append(rule)
            # A base rule removed above and written again: the overlay replaced it.
            kind = "rule-replaced" if rule_id in base_rules else "rule-added"
            self.changes.append(Change(kind, rule_id or "(unnamed)"))


def rule_id_of(rule: yaml.Node) -> str | None:
    found = entry(rule, "id")
    return key_name(found[1]) if found else None


def base_rules_of(root: yaml.MappingNode) -> dict[str, bool]:
    rules = entry(root, "rules")
    out: dict[str, bool] = {}
    for rule in rules[1].value if rules and isinstance(rules[1], yaml.SequenceNode) else []:
        rule_id = rule_id_of(rule)
        if rule_id is not None:
            flag = entry(rule, "overridable")
            out[rule_id] = bool(flag and scalar_value(flag[1]) is True)  # type: ignore[arg-type]
    return out
