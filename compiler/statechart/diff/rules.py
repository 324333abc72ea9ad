"""The spec's own rules (`rules:`) from OLD to NEW, matched by their `id` (or, without one,
by what they say): removed, added, or saying something else."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from statechart.diagnostics import Span
from statechart.diff.base import DiffBase
from statechart.model import SpecRule


class RuleDiff(DiffBase):
    def compare_rules(self) -> None:
        def says(r: SpecRule, names: Mapping[str, str]) -> object:
            def sel(s: Iterable[tuple[str, str, Span]]) -> tuple[tuple[str, str], ...]:
                return tuple(sorted((k, names.get(v, v) if k == "state" else v)
                                    for k, v, _ in s))
            return (r.kind, sel(r.sources), sel(r.targets))
        old = {r.id or says(r, self.smap): r for r in self.old.rules}
        new = {r.id or says(r, {}): r for r in self.new.rules}
        for k, r in old.items():
            if k not in new:
                self.add("rule-removed", f"rule {_rule_name(r)} was removed", r.span,
                         help="the graph no longer promises it; callers may rely on it")
            elif says(r, self.smap) != says(new[k], {}):
                self.add("rule-changed", f"rule {_rule_name(r)} now says something else",
                         new[k].span)
        for k, r in new.items():
            if k not in old:
                self.add("rule-added", f"new rule {_rule_name(r)}", r.span)


def _rule_name(r: SpecRule) -> str:
    return f"`{r.id}`" if r.id else f"`{r.kind}` at line {r.span.line}"


