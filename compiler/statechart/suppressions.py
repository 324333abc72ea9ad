"""Inline suppressions: `# statechart: ignore[RULE, ...]` on the line a finding points at.

A suppression is a YAML comment: a `#` that lies outside every scalar of the file. Comments
are not in the YAML nodes, so the text is searched for the mark, and a match is kept only when
no scalar node of the composed file (the tree `check` already has: keys and values, with their
start and end positions from the YAML scanner) covers it: a `#` inside a quoted or block
scalar, or in a plain scalar like `a#b`, is text. Measured on a 5,000-state spec with one
suppression, running the YAML scanner again for this cost 1.45x the whole check, walking
every node 1.1x; walking only the nodes on the commented lines (`_scalar_spans`) costs
nothing measurable.

Choices (docs/configuration.md, "Inline suppression"):
- Rule ids are required. A bare `# statechart: ignore` suppresses nothing and is reported:
  it would hide every future finding on the line, of any rule.
- Only rules a project may turn off (`rules.ADJUSTABLE`) can be suppressed.
- A suppression matches a finding whose location starts on its line, in its file: an
  overlay's finding located in its base is suppressed by a comment in the base.
- What suppresses nothing is a `unused-suppression` warning, reported only for the file being
  checked (a base is checked, and its comments reported, on its own).
- Suppressions apply before the project configuration: a suppression of a rule the
  configuration also ignores still counts as used.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass

import yaml

from statechart.diagnostics import Diagnostic, Span
from statechart.yaml_source import Source

_COMMENT = re.compile(r"#\s*statechart:\s*ignore\b(?P<ids>\[[^\]\n]*\]?)?")
_ID = re.compile(r"[^,\s\[\]]+")


@dataclass(frozen=True)
class Suppression:
    file: str
    line: int  # 1-based
    column: int  # of the `#`, 1-based
    end_column: int
    ids: tuple[tuple[str, int], ...]  # (rule id, its 1-based column)


Position = tuple[int, int]  # 0-based line and column, as YAML marks count them


def _scalar_spans(root: yaml.Node | None, lines: list[int]) -> list[tuple[Position, Position]]:
    """The (start, end) of every scalar node under `root` that lies on one of `lines` (0-based,
    sorted), in order. A node whose lines hold none of them is not walked into: on a large spec
    only the few paths to the commented lines are."""
    out: list[tuple[Position, Position]] = []
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        first, last = node.start_mark.line, node.end_mark.line
        i = bisect.bisect_left(lines, first)
        if i == len(lines) or lines[i] > last:
            continue
        if isinstance(node, yaml.ScalarNode):
            out.append(((first, node.start_mark.column), (last, node.end_mark.column)))
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack += (key, value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    out.sort()
    return out


def find(source: Source) -> list[Suppression]:
    """The suppression comments of a read spec file, in order."""
    text = source.text
    candidates = list(_COMMENT.finditer(text))
    if not candidates:
        return []
    at = [(text.count("\n", 0, m.start()) + 1, text.rfind("\n", 0, m.start()) + 1)
          for m in candidates]  # (1-based line, offset of the line's start)
    spans = _scalar_spans(source.root, sorted({line - 1 for line, _ in at}))
    starts = [start for start, _ in spans]
    out = []
    for m, (line, line_start) in zip(candidates, at, strict=True):
        where = (line - 1, m.start() - line_start)
        i = bisect.bisect_right(starts, where) - 1
        if i >= 0 and spans[i][0] <= where < spans[i][1]:
            continue  # inside a scalar: text, not a comment
        ids = tuple((found.group(), found.start() - line_start + 1)
                    for found in _ID.finditer(text, m.start("ids"), m.end("ids")))\
            if m.group("ids") else ()
        out.append(Suppression(source.path, line, m.start() - line_start + 1,
                               m.end() - line_start + 1, ids))
    return out


def apply(problems: Iterable[Diagnostic], sources: Iterable[Source],
          checked: str) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """`problems` without those a suppression in their file and line names, plus a
    `unused-suppression` warning for each suppression of `checked` that suppressed nothing
    (or part of one: each rule id it names counts); and the suppressed ones (SARIF lists them
    as suppressed in source)."""
    from statechart.build_model import did_you_mean
    from statechart.rules import ADJUSTABLE, RULES, unused_suppression

    found = {source.path: find(source) for source in sources}
    on_line = {(s.file, s.line): s for ss in found.values() for s in ss}
    problems = list(problems)
    if not on_line:
        return problems, []
    used: set[tuple[Suppression, str]] = set()
    out, suppressed = [], []
    for d in problems:
        s = on_line.get((d.span.file, d.span.line))
        if s is not None and d.rule in ADJUSTABLE and any(rule == d.rule for rule, _ in s.ids):
            used.add((s, d.rule))
            suppressed.append(d)
            continue
        out.append(d)

    def report(line: int, column: int, end: int, message: str, help: str) -> None:
        out.append(Diagnostic(unused_suppression.ID, unused_suppression.SEVERITY, message,
                              Span(checked, line, column, line, end), help))

    for s in found.get(checked, []):
        if not s.ids:
            report(s.line, s.column, s.end_column, "`# statechart: ignore` names no rule, so it "
                   "suppresses nothing", "name the rules to suppress on this line: "
                   "`# statechart: ignore[RULE, ...]` (`statechart check` shows each "
                   "finding's rule id)")
        for rule, column in s.ids:
            end = column + len(rule)
            if rule not in RULES:
                hint = did_you_mean(rule, RULES)
                report(s.line, column, end, f"`{rule}` is not a rule, so it suppresses nothing",
                       hint or "`statechart rule` lists the rule ids")
            elif rule not in ADJUSTABLE:
                report(s.line, column, end, f"`{rule}` cannot be suppressed: a spec with this "
                       "error cannot be compiled", "fix the error instead; these rules can be "
                       "suppressed: " + ", ".join(f"`{r}`" for r in sorted(ADJUSTABLE)))
            elif (s, rule) not in used:
                report(s.line, column, end, f"no `{rule}` finding on this line to suppress",
                       "remove the rule id from the comment (or the comment), or move it to the "
                       "line the finding points at")
    return out, suppressed
