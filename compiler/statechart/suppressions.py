"""Inline suppressions: `# statechart: ignore[RULE, ...]` on the line a finding points at.

A suppression is a YAML comment: a `#` that the YAML scanner does not count as part of a
scalar. Comments are not in the YAML nodes, so the text is searched for the mark, and a match
is kept only when it lies outside every scalar token of the file (`yaml.scan`, the real
tokenizer: a `#` inside a quoted or block scalar, or a plain scalar like `a#b`, is text).
The scan runs only for a file whose text has a candidate.

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

_COMMENT = re.compile(r"#\s*statechart:\s*ignore\b(?P<ids>\[[^\]\n]*\]?)?")
_ID = re.compile(r"[^,\s\[\]]+")


@dataclass(frozen=True)
class Suppression:
    file: str
    line: int  # 1-based
    column: int  # of the `#`, 1-based
    end_column: int
    ids: tuple[tuple[str, int], ...]  # (rule id, its 1-based column)


def _scalar_ranges(text: str) -> list[tuple[int, int]] | None:
    """The (start, end) character offsets of every scalar token, in order; None when the text
    does not tokenize (the file's YAML error is reported, and is never suppressible)."""
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return [(t.start_mark.index, t.end_mark.index) for t in yaml.scan(text, Loader=loader)
                if isinstance(t, yaml.ScalarToken)]
    except yaml.YAMLError:
        return None


def find(file: str, text: str) -> list[Suppression]:
    """The suppression comments of `text`, in order."""
    candidates = list(_COMMENT.finditer(text))
    if not candidates:
        return []
    ranges = _scalar_ranges(text)
    if ranges is None:
        return []
    starts = [start for start, _ in ranges]
    out = []
    for m in candidates:
        i = bisect.bisect_right(starts, m.start()) - 1
        if i >= 0 and ranges[i][0] <= m.start() < ranges[i][1]:
            continue  # inside a scalar: text, not a comment
        line = text.count("\n", 0, m.start()) + 1
        line_start = text.rfind("\n", 0, m.start()) + 1
        ids = tuple((found.group(), found.start() - line_start + 1)
                    for found in _ID.finditer(text, m.start("ids"), m.end("ids")))\
            if m.group("ids") else ()
        out.append(Suppression(file, line, m.start() - line_start + 1,
                               m.end() - line_start + 1, ids))
    return out


def apply(problems: Iterable[Diagnostic], texts: dict[str, str],
          checked: str) -> list[Diagnostic]:
    """`problems` without those a suppression in their file and line names, plus a
    `unused-suppression` warning for each suppression of `checked` that suppressed nothing
    (or part of one: each rule id it names counts)."""
    from statechart.build_model import did_you_mean
    from statechart.rules import ADJUSTABLE, RULES, unused_suppression

    found = {file: find(file, text) for file, text in texts.items()}
    on_line = {(s.file, s.line): s for ss in found.values() for s in ss}
    problems = list(problems)
    if not on_line:
        return problems
    used: set[tuple[Suppression, str]] = set()
    out = []
    for d in problems:
        s = on_line.get((d.span.file, d.span.line))
        if s is not None and d.rule in ADJUSTABLE and any(rule == d.rule for rule, _ in s.ids):
            used.add((s, d.rule))
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
    return out
