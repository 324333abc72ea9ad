"""Check spec files: read, build the model, run every rule. Never prints; yields problems.

`check_file` returns the model too (None when the file could not be read as a spec) so that
`build` and `render` reuse one pass.

Each problem is stamped with its rule's id and default severity where it is found; this is
the one place that then applies the spec's own `# statechart: ignore[RULE]` comments
(`statechart.suppressions`) and what the project says about them (`statechart.config`):
`per-file-ignores` and `severity = "ignore"` drop a problem, `"warning"`/`"error"` restamp
it (`_settle`).
"""

from __future__ import annotations

import gc
import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from statechart import suppressions
from statechart.build_model import build, closest
from statechart.config import Config
from statechart.diagnostics import Diagnostic, Span
from statechart.graph import Graph
from statechart.model import OverlayInfo, Repair, Spec, Transition
from statechart.model_index import index
from statechart.overlay import Change, Merged, resolve
from statechart.rules import CHECKS, RULES
from statechart.spec_file import SpecFileError, read_spec
from statechart.yaml_source import Source, load_bytes

SPEC_SUFFIXES = (".yaml", ".yml")


@dataclass
class FileResult:
    path: str
    spec: Spec | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Findings a `# statechart: ignore[...]` comment suppressed: not reported, except by SARIF
    # (as results suppressed in source).
    suppressed: list[Diagnostic] = field(default_factory=list)
    # (path, SHA-256 of the text checked) of each file the spec was read from: its own, and
    # an overlay's bases (what `build` may skip a spec by: statechart.build_cache).
    sources: tuple[tuple[str, str], ...] = ()

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


def unique(results: Iterable[FileResult]) -> list[Diagnostic]:
    """The diagnostics of `results`, each once. A base's problem is found again through each
    overlay that extends it, sometimes with another help (what it causes differs with the
    overlay): the one found by checking the base's own file is kept, else the first."""
    kept: dict[tuple[str, Span, str], Diagnostic] = {}
    for r in results:
        for d in r.diagnostics:
            key = _identity(d)
            if key not in kept or (d.span.file == r.path and kept[key] != d):
                kept[key] = d
    return list(kept.values())


def check_source(path: str, raw: bytes, config: Config | None = None) -> FileResult:
    # The model and rules allocate about a million small objects while the YAML nodes are alive
    # and none of them form cycles: the collector only costs here (2x on a 10,000-state spec).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _check_source(path, raw, config)
    finally:
        if gc_was_enabled:
            gc.enable()


def _check_source(path: str, raw: bytes, config: Config | None) -> FileResult:
    source, problems = load_bytes(path, raw)
    spec = None
    sources: list[Source] = []  # each file read, for its `# statechart: ignore[...]` comments
    if source is not None:
        sources = [source]
        merged, problems = resolve(source)
        if merged is not None:
            sources = merged.sources
            spec, built = build(merged.source, merged.files)
            if spec is not None:
                spec = replace(spec, overlay=OverlayInfo(
                    tuple(merged.chain), tuple((c.kind, c.name) for c in merged.changes)))
            problems.extend(built)
        elif not problems:
            spec, problems = build(source)
        if spec is not None:
            found = _run_checks(spec)
            repairs = [*spec.repairs, *_unknown_targets(spec)]
            if repairs:
                problems = _fold_consequences(spec, repairs, problems, found)
            else:
                problems.extend(found)
        if merged is not None:
            problems = _fold_removals(source, merged, problems)
    problems, suppressed = suppressions.apply(problems, sources, path)
    if config is not None:
        problems, suppressed = _settle(problems, config), _settle(suppressed, config)
    problems.sort(key=_order)
    read = tuple((s.path, hashlib.sha256(s.text.encode("utf-8")).hexdigest()) for s in sources)
    return FileResult(path, spec, problems, suppressed, read)


def _settle(problems: list[Diagnostic], config: Config) -> list[Diagnostic]:
    """`problems` as the project configuration wants them: without those its `severity`
    sets to `ignore` or its `per-file-ignores` turn off for their file (the file a problem
    points into: an overlay's problem in its base follows the base's patterns), the others
    with the configured severity. The configuration only lets through rules that may be
    changed (`rules.ADJUSTABLE`)."""
    if not config.severity and not config.per_file_ignores:
        return problems
    ignored: dict[str, set[str]] = {}
    out = []
    for d in problems:
        if d.span.file not in ignored:
            ignored[d.span.file] = config.ignored(d.span.file)
        setting = config.severity.get(d.rule, d.severity)
        if setting == "ignore" or d.rule in ignored[d.span.file]:
            continue
        out.append(d if setting == d.severity else replace(d, severity=setting))
    return out


def _order(d: Diagnostic) -> tuple[str, int, int, int, str, str]:
    """Per file, what reading the file found (YAML, schema) first, then targets that name no
    state: they are the root causes of what the checks of the model report, so they are what
    to fix first."""
    module = RULES.get(d.rule)
    late = 0 if module is not None and module.PHASE == "yaml" else 1 if d.rule in _CAUSES else 2
    file, line, column, rule, message = d.sort_key()
    return (file, late, line, column, rule, message)


def _run_checks(spec: Spec) -> list[Diagnostic]:
    graph = Graph(spec)
    found: list[Diagnostic] = []
    for rule in CHECKS:
        # With two states of one name the graph is not well defined; reachability
        # findings would only echo the duplicate, so graph rules wait for the fix.
        if rule.PHASE == "graph" and spec.duplicates:
            continue
        found.extend(rule.check(spec, graph))
    return found


MAX_ATTRIBUTION_RUNS = 8  # per-cause re-checks; beyond that, consequences go to the first cause


def _unknown_targets(spec: Spec) -> list[Repair]:
    """A transition whose target is not a state (`unknown-state`) as a `Repair`: it most likely
    meant the closest state name (`deliverd`: `delivered`), else any state; its cause is the
    unknown-state finding at the target."""
    if index(spec).targets <= spec.states.keys():
        return []  # every target is a state: no transition to walk
    out = []
    for state in spec.states.values():
        for t in state.transitions:
            if t.target not in spec.states:
                out.append(Repair("transition", state.name, t.target_span, t.event,
                                  closest(t.target, spec.states, words=True)))
    return out


# The findings that can be a root cause: a schema error that dropped or misread part of the
# model, and a target that is not a state.
_CAUSES = frozenset({"schema", "unknown-state"})


def _fold_consequences(spec: Spec, repairs: list[Repair], problems: list[Diagnostic],
                       found: list[Diagnostic]) -> list[Diagnostic]:
    """`problems` (from reading the file) plus the model's findings `found`, without the
    findings that only exist because a schema error dropped or misread part of the model, or a
    target names no state.

    Such a finding is one that vanishes when the model is checked again with the dropped part
    put back (`Repair`): `traget: done` drops a transition, and `deliver: deliverd` leads
    nowhere, so `done` or `delivered` looks unreachable; a `final: yes` reads as not final, so
    the state looks like a trap. Each one is named in the help of the problem that causes it
    instead of being reported on its own: the root cause is what to fix, and fixing it clears
    them.
    """
    causes: dict[Span, list[Repair]] = {}
    for r in repairs:
        causes.setdefault(r.cause, []).append(r)
    consequences = set(found) - set(_run_checks(_repaired(spec, repairs)))
    if not consequences:
        return problems + found
    owner: dict[Diagnostic, Span] = {}
    if len(causes) > 1:
        for cause, some in list(causes.items())[:MAX_ATTRIBUTION_RUNS]:
            for d in consequences - set(_run_checks(_repaired(spec, some))):
                owner.setdefault(d, cause)
    first = next(iter(causes))
    notes: dict[Span, list[Diagnostic]] = {}
    for d in sorted(consequences, key=Diagnostic.sort_key):
        notes.setdefault(owner.get(d, first), []).append(d)
    out = []
    for p in [*problems, *(d for d in found if d not in consequences)]:
        caused = notes.pop(p.span, None) if p.rule in _CAUSES else None
        if caused:
            listed = "; ".join(f"[{d.rule}] {d.message} ({_where(d, p)})" for d in caused)
            if not p.help:
                lead = "Fixing"
            else:
                lead = p.help + (" Fixing" if p.help.endswith(("?", ".")) else "; fixing")
            p = replace(p, help=f"{lead} this also clears what it causes: {listed}")
        out.append(p)
    if notes:  # no problem at a cause's span (should not happen): report them as found
        out.extend(d for ds in notes.values() for d in ds)
    return out


def _where(d: Diagnostic, cause: Diagnostic) -> str:
    """Where a consequence is, seen from its cause: the line, and the file when another."""
    if d.span.file == cause.span.file:
        return f"line {d.span.line}"
    return f"{d.span.file}:{d.span.line}"


_REMOVED = {"state-removed": "state", "transition-removed": "transition",
            "field-removed": "record field", "rule-removed": "rule"}


def _fold_removals(source: Source, merged: Merged,
                   problems: list[Diagnostic]) -> list[Diagnostic]:
    """`problems`, with those that an overlay's `remove:` causes in its bases folded into one
    `overlay` problem at the `remove:` entry, which lists them in its help.

    `remove: {states: [cancelled]}` leaves every base transition to `cancelled` pointing at
    nothing: reported one by one, they would all point into a base the overlay's team does not
    own, and none at the line that caused them. A problem counts as caused by a removal when it
    is located outside the overlay file and disappears when the chain is merged without its
    removals; it is attributed to the removal its message names (else the first one)."""
    removals = [c for c in merged.changes if c.span is not None and c.kind in _REMOVED]
    elsewhere = [d for d in problems if d.span.file != source.path and d.rule != "overlay"]
    if not removals or not elsewhere:
        return problems
    kept, _ = resolve(source, removals=False)
    if kept is None:
        return problems
    spec, built = build(kept.source, kept.files)
    before = {_identity(d) for d in [*built, *(_run_checks(spec) if spec else [])]}
    caused = [d for d in elsewhere if _identity(d) not in before]
    if not caused:
        return problems
    groups: dict[Change, list[Diagnostic]] = {}
    for d in sorted(caused, key=Diagnostic.sort_key):
        owner = next((c for c in removals if any(f"`{part}`" in d.message for part in
                                                 {c.name, *c.name.split(".")})), removals[0])
        groups.setdefault(owner, []).append(d)
    out = [d for d in problems if d not in set(caused)]
    for change, ds in groups.items():
        assert change.span is not None
        what = _REMOVED[change.kind]
        lines: dict[tuple[str, str, str], list[str]] = {}  # one entry per message and file
        for d in ds:
            lines.setdefault((d.rule, d.message, d.span.file), []).append(str(d.span.line))
        listed = "; ".join(f"[{rule}] {message} at {file}:{', '.join(at)}"
                           for (rule, message, file), at in lines.items())
        count = f"{len(ds)} problem{'s' * (len(ds) != 1)}"
        out.append(Diagnostic(
            "overlay", "error" if any(d.severity == "error" for d in ds) else "warning",
            f"removing {what} `{change.name}` causes {count} in the base, which still uses it",
            change.span,
            f"in the base: {listed}. Change those in this overlay too (retarget a transition "
            "under `states:`, or remove it with `remove: {transitions: [STATE.EVENT]}`), or "
            f"keep the {what}"))
    return out


def _identity(d: Diagnostic) -> tuple[str, Span, str]:
    return (d.rule, d.span, d.message)


def _repaired(spec: Spec, repairs: Iterable[Repair]) -> Spec:
    """`spec` with what `repairs` describe put back: a dropped transition goes to the state it
    most likely meant (to every state when that is unknown), a misread `final` reads `true`.
    A transition whose target names no state gets the repaired ones just before it, as
    alternatives of its own kind (an alternative hides the ones after it: it stays, hidden,
    for `unknown-state`); when any state could be meant, each gets a guard of its own, so
    that none hides the others."""
    states = dict(spec.states)
    for r in repairs:
        state = states.get(r.state)
        if state is None:
            continue
        if r.kind == "final":
            if state.kind == "atomic":
                states[r.state] = replace(state, kind="final")
            continue
        targets = [r.target] if r.target in spec.states else list(spec.states)
        kept = state.transitions
        broken = next((i for i, t in enumerate(kept) if t.target_span == r.cause
                       and t.target not in spec.states), None)
        model = kept[broken] if broken is not None else Transition(
            r.state, r.event or "<dropped>", "", None, (), None, 0, state.span, state.span)
        added = tuple(replace(model, target=t, targets=(), guard=model.guard
                              if len(targets) == 1 else f"<repaired {t}>") for t in targets)
        transitions = kept + added if broken is None else kept[:broken] + added + kept[broken:]
        states[r.state] = replace(state, transitions=transitions)
    return replace(spec, states=states, repairs=())


def check_file(path: str | os.PathLike[str], config: Config | None = None) -> FileResult:
    name = str(path)
    try:
        raw = read_spec(path)
    except SpecFileError as exc:
        return FileResult(name, None, [Diagnostic(
            "yaml-syntax", "error", exc.message, Span.point(name, 1, 1), exc.hint)])
    except OSError as exc:
        return FileResult(name, None, [Diagnostic(
            "yaml-syntax", "error", f"cannot read the file: {exc.strerror or exc}",
            Span.point(name, 1, 1), "check the path and its permissions")])
    return check_source(name, raw, config)


def spec_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """The spec files named by `paths`: files as given, folders searched for *.yaml/*.yml."""
    for p in paths:
        path = Path(p)
        if path.is_dir():
            yield from sorted(f for f in path.rglob("*") if f.suffix in SPEC_SUFFIXES
                              and f.is_file())
        else:
            yield path
