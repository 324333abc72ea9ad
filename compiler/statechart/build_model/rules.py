"""The spec's own rules (`rules:`): each `never`, `only` or `unreachable` rule with its
`from` and `to` selectors (state names or `{tag: NAME}`)."""

from __future__ import annotations

import yaml

from statechart import spec_format as fmt
from statechart.build_model.reader import Reader
from statechart.model import Selector, SpecRule


class RuleBuilder(Reader):
    """The spec's own rules and their state selectors."""

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
