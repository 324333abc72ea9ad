"""The kinds of change `statechart diff` reports, and a change as a finding.

`KINDS` is the single list of change kinds (docs/diff.md, SARIF rules, tests); `Change` is
one difference between OLD and NEW and says, as a diagnostic, whom it breaks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from statechart.diagnostics import Diagnostic, Span

# kind -> one line: what it means. The single list of change kinds (docs, SARIF rules, tests).
KINDS: dict[str, str] = {
    "spec-added": "A new spec file.",
    "spec-removed": "A spec file was deleted.",
    "spec-renamed": "The spec's `statechart` name changed.",
    "version-not-raised": "Stored runs are affected, but `version` is unchanged.",
    "version-lowered": "`version` went down.",
    "initial-changed": "A run (or a compound state) starts in a different state.",
    "state-added": "A new state.",
    "state-removed": "A state is gone.",
    "state-renamed": "A state is gone and a new one with the same shape appeared.",
    "state-moved": "A state has a different parent.",
    "state-kind-changed": "A state became compound, atomic or parallel.",
    "final-added": "A state was made terminal (`final: true`).",
    "final-removed": "A terminal state was made non-terminal.",
    "requires-added": "A state newly requires a record field.",
    "requires-removed": "A state no longer requires a record field.",
    "limit-lowered": "A state's entry `limit` was added or lowered.",
    "limit-raised": "A state's entry `limit` was raised or removed.",
    "event-added": "A new event.",
    "event-removed": "An event is gone.",
    "event-renamed": "An event is gone and a new one with the same transitions appeared.",
    "transition-added": "A new transition of an existing event on an existing state.",
    "transition-removed": "A state no longer handles an event it handled.",
    "transition-retargeted": "A transition enters a different state.",
    "transition-shadowed": "A state's new transition takes events an ancestor's transition "
                           "took while the state is active (by their name or a descriptor).",
    "guard-added": "An unguarded transition now has a guard.",
    "guard-removed": "A guarded transition lost its guard.",
    "guard-changed": "A transition's guard is a different method.",
    "set-added": "An event now demands a record field (`set`).",
    "set-removed": "An event no longer takes a record field (`set`).",
    "field-added": "A new record field.",
    "field-removed": "A record field is gone.",
    "field-renamed": "A record field was renamed by a migration.",
    "field-type-changed": "A record field has a different type.",
    "enum-narrowed": "An enum field lost values.",
    "enum-widened": "An enum field gained values.",
    "timer-added": "A state has a new timer (`after:`).",
    "timer-removed": "A state's timer (`after:`) is gone.",
    "timer-changed": "A timer's delay or deadline field, its id, or where it leads, changed.",
    "history-changed": "A transition now enters its target by history, or no longer does, "
                       "or by the other kind of history.",
    "transition-actions-changed": "A transition runs other actions (`actions:`).",
    "eventless-added": "A state has a new eventless transition (`always:`): runs may leave "
                       "it by themselves, so callers may find them elsewhere.",
    "targets-changed": "A multi-target transition (`target: [a2, b2]`) enters other states "
                       "besides its first target, or now has several targets, or one.",
    "history-default-changed": "A state's history default (`history_default:`) names another "
                               "state, or was added or removed.",
    "in-changed": "A transition is enabled while other states are active (`in:`), or no "
                  "longer depends on one; stored runs are safe (a step taken stays valid).",
    "transition-kind-changed": "A transition became targetless or internal (`internal: true`), "
                               "or no longer is.",
    # Work (docs/spec-format.md "Work"): what stored runs with a pending item meet.
    "work-added": "A state has new work (`work:`).",
    "work-removed": "A state's work is gone.",
    "work-handler-changed": "A state's work names another handler.",
    "work-timeout-changed": "A state's work has another timeout or heartbeat.",
    "work-outcomes-changed": "A state's work may return other events (`outcomes`, `error`).",
    "work-retry-changed": "A state's work retries another number of times, or waits "
                          "otherwise between attempts.",
    # Run context and status vocabulary (docs/spec-format.md "Run context", "Status").
    "context-added": "A record field became run context (`context: true`).",
    "context-removed": "A record field is no longer run context.",
    "default-changed": "A record field's `default` was added, changed or removed.",
    "clear-changed": "A transition or a state clears other record fields (`clear:`).",
    "assign-changed": "A transition sets other constants (`assign:`), or none any more.",
    "status-changed": "A state reports another status (`status:`).",
    "counter-changed": "A state's `counter:` record key was added, renamed or removed.",
    "rule-added": "A new rule in `rules:`.",
    "rule-removed": "A rule of `rules:` is gone.",
    "rule-changed": "A rule with the same `id` selects different states.",
}


@dataclass(frozen=True)
class Change:
    """One difference between OLD and NEW.

    `for_runs` / `for_callers` say whom it breaks; a change that breaks nobody is safe.
    `span` is in NEW, or in OLD for what no longer exists there (the span names its file).
    `migrated` marks a change that would break stored runs but is covered by a migration, or
    by the upgrade of a stored run to the new version (a new timer is armed): `note` then says
    which, in place of "migrated". `of_overlay`: a difference between a base and an overlay
    that extends it, which is a new spec with runs of its own: nothing stored is at stake.
    """

    kind: str
    message: str
    span: Span
    for_runs: bool = False
    for_callers: bool = False
    help: str = ""
    migrated: bool = False
    note: str = ""
    of_overlay: bool = False

    @property
    def breaking(self) -> bool:
        return not self.of_overlay and (self.for_runs or self.for_callers)

    def diagnostic(self) -> Diagnostic:
        """Breaking -> error, safe -> warning; the rule id is the change kind."""
        who = [w for w, hit in (("stored runs", self.for_runs), ("callers", self.for_callers))
               if hit]
        if self.of_overlay and self.for_callers:
            note = "callers written for the base must change"
        elif self.of_overlay:
            note = "safe" + (": the overlay is a new spec, with no stored runs of the base"
                             if self.for_runs or self.migrated else "")
        elif who:
            note = f"breaks {' and '.join(who)}"
        else:
            note = (self.note or "migrated") if self.migrated else "safe"
        return Diagnostic(self.kind, "error" if self.breaking else "warning",
                          f"{self.message} ({note})", self.span, self.help)


def changes_to_diagnostics(changes: Iterable[Change]) -> list[Diagnostic]:
    return [c.diagnostic() for c in changes]

