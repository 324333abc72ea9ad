"""Compare two versions of a spec and classify every change as breaking or safe.

Pure: takes two built `Spec`s, returns `Change`s; never reads files or prints.
`statechart.cli.diff` does the reading, checking and printing. docs/diff.md explains each kind.

"Breaking" has one meaning throughout: something that worked before fails now. Either a
*stored run* (a persisted record of the old version) can no longer be loaded or continued, or a
*caller* (code that sends events and reads the record) gets a refusal or a value it cannot
handle. Everything else is safe, even when behaviour changes (those are still reported, as
warnings, because a reviewer should see them).

This module holds the entry, `diff_specs`, and the order of the comparisons. Its modules:
`kinds` (the change kinds, `Change`), `sarif` (the reporters), `base` (what the comparisons
share), and one per concern: `states`, `transitions`, `shadowing`, `timers`, `work`,
`record`, `rules`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from statechart.diff.kinds import KINDS, Change, changes_to_diagnostics
from statechart.diff.record import RecordDiff
from statechart.diff.rules import RuleDiff
from statechart.diff.sarif import DOCS_URL, reporters
from statechart.diff.shadowing import ShadowingDiff
from statechart.diff.states import StateDiff
from statechart.diff.timers import TimerDiff
from statechart.diff.transitions import TransitionDiff
from statechart.diff.work import WorkDiff
from statechart.model import Spec


def diff_specs(old: Spec, new: Spec, *, state_renames: Mapping[str, str] | None = None,
               field_renames: Mapping[str, str | None] | None = None,
               overlay: bool = False) -> list[Change]:
    """Every change from `old` to `new`, sorted by file and position.

    `state_renames` / `field_renames` (old name -> new name; a field -> None: dropped) are
    migrations: stored runs are rewritten, so a state or field they cover is not lost. They are
    added to the NEW spec's own `migrations`. Version findings point at NEW's `version` (or,
    in an overlay that inherits it, at its `statechart` name).

    `overlay`: NEW is an overlay of OLD (`extends`), not its next version. What the overlay
    changes is classified as usual, but its own `statechart` name and its own `version` are
    not changes: an overlay must have its own name, and its versions count its own runs.
    """
    # An overlay that inherits `version` from its base is pointed at by its own name.
    version_at = new.version_span if new.version_span is not None \
        and new.version_span.file == new.path else new.name_span or new.span
    states, fields = _declared_migrations(old, new)
    states.update(state_renames or {})
    fields.update(field_renames or {})
    d = _Differ(old, new, states, fields)
    changes = d.run()
    if overlay:
        # No run of the base is ever loaded as a run of the overlay (another spec name): what
        # differs is listed, and what it means for the base's stored runs is dropped.
        changes = [replace(c, of_overlay=True, help="" if c.for_runs else c.help)
                   for c in changes if c.kind != "spec-renamed"]
    elif old.version > new.version:
        changes.append(Change(
            "version-lowered", f"`version` went down from {old.version} to {new.version}",
            version_at, for_runs=True,
            help="stored runs carry `specVersion`; a lower version cannot tell them apart"))
    elif old.version == new.version and any((c.for_runs or c.migrated)
                                            and c.kind not in PENDING_WORK for c in changes):
        # Only stored runs need a new version (spec-format.md: "Raise it when stored runs
        # must be migrated"); a change that breaks only callers is found by their tests.
        changes.append(Change(
            "version-not-raised",
            f"`version` is still {new.version} although stored runs are affected",
            version_at, for_runs=True,
            help=f"raise `version` to {new.version + 1}: migrations are keyed by the version "
                 "a stored run was written with"))
    return sorted(changes, key=lambda c: (c.span.file != new.path, c.span, c.kind, c.message))


# Changes that hit the pending work items of stored runs, not their records: a new `version`
# changes nothing for them (docs/diff.md, "Work").
PENDING_WORK = frozenset({"work-removed", "work-handler-changed"})


def _declared_migrations(old: Spec, new: Spec) -> tuple[dict[str, str], dict[str, str | None]]:
    """OLD's names -> NEW's names, by NEW's migration from OLD's version (`Spec.migrations`).

    A migration maps records of its `from_version` directly onto NEW (migrations are not
    chained; docs/spec-format.md), so only the one for OLD's version applies. A field mapped to
    None is dropped on purpose.
    """
    for m in getattr(new, "migrations", ()):
        if m.from_version == old.version:
            return {o: n for o, n, _ in m.states}, {o: n for o, n, _ in m.fields}
    return {}, {}


class _Differ(StateDiff, TransitionDiff, ShadowingDiff, TimerDiff, WorkDiff, RecordDiff,
              RuleDiff):
    """All the comparisons, run in the order their findings depend on: states first (the
    names the others map through), shadowing before the transitions (a shadowing finding is
    not also a `transition-added`)."""

    def run(self) -> list[Change]:
        if self.old.name != self.new.name:
            self.add("spec-renamed", f"the spec is now `{self.new.name}` (was `{self.old.name}`)",
                     self.new.name_span or self.new.span, callers=True,
                     help="the generated module and class are named after it")
        self.match_states()
        if self.smap.get(self.old.initial) != self.new.initial:
            self.add("initial-changed",
                     f"new runs start in `{self.new.initial}` (was `{self.old.initial}`)",
                     self.new.span)
        for o, n in self.smap.items():
            if o not in self.merged:
                self.compare_state(self.old.states[o], self.new.states[n])
        self.match_events()
        self.compare_shadowing()
        self.compare_transitions()
        self.compare_timers()
        self.compare_work()
        self.compare_record()
        self.compare_rules()
        return self.changes


__all__ = ["DOCS_URL", "KINDS", "Change", "changes_to_diagnostics", "diff_specs", "reporters"]
