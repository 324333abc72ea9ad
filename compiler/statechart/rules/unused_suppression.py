"""An inline suppression that suppresses nothing.

What: a `# statechart: ignore[RULE, ...]` comment names a rule that has no finding on that
line, a rule that does not exist, or a rule that cannot be suppressed; or it names no rule at
all (`# statechart: ignore`).

Why: a suppression is a claim that a finding on this line is accepted. Once the finding is
gone (the spec was fixed, the rule id was misspelled, the comment sits on the wrong line), the
comment only hides the next, different finding of that rule there, and readers believe
something that is no longer true. Naming the rules is required, so that a new kind of finding
on a suppressed line is never hidden. Only the rules a project may turn off can be suppressed
(the warnings and the design errors `unreachable-state`, `trap-state`, `no-path-to-final`,
`rule-violation`, as in docs/configuration.md): every other error means the spec cannot be
compiled. Reported for the file being checked, not for the bases an overlay reads.

Example:

    record:
      notes: {type: string}   # statechart: ignore[unused-field]  (the application sets it)
      owner: {type: string}   # statechart: ignore[unused-feild]  <- unused-suppression

Fix: remove the comment (or the rule id from it), correct the rule id, or move the comment to
the line the finding points at (`statechart check` shows it).
"""

from statechart.diagnostics import Severity

ID = "unused-suppression"
SEVERITY: Severity = "warning"
PHASE = "model"
