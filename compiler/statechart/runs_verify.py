"""`statechart runs verify`: every stored run of a spec, replayed against the spec, and against
a proposed new version of it (the blast radius of a spec change, before it is merged).

Each stored record is read as the store holds it (`store.stored_records`: the whole history,
not checked; a batch of runs in one snapshot, so a run fired meanwhile is never seen half
old, half new) and parsed with the spec's record class (`from_dict`: an earlier version's record
is upgraded by the spec's migration, then the whole history is replayed by `check_record`).
A record the spec refuses is a finding, with a stable rule id:

- `run-unreplayable`: the spec could not have produced the record (its history does not
  replay on the spec's graph, or the record disagrees with its own history: a record changed
  outside the runtime, or stored by another version of the spec under the same version number);
- `run-stranded`: the run is in a state the spec no longer has, and no migration renames it;
- `run-migration-fails`: a record of an earlier spec version that the spec's migration does
  not turn into a record the spec accepts;
- `run-row-disagrees`: a record the spec accepts whose row says otherwise (the step count,
  or the columns `find` and `runs list` answer from: status, active states, next due time).

Findings are `Diagnostic`s with the reporters of `check`. A run has no file position: its
location is the store (the database file of a SQLite store, the URL without its password
otherwise) at line 1, column 1, and the message starts with the run id; `RunDiagnostic` also
carries the run id as a field (`run_id` in JSON, a logical location in SARIF).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from statechart import report
from statechart.diagnostics import Diagnostic, Span
from statechart.report import Reporter, Sources
from statechart_runtime.chart import timers
from statechart_runtime.errors import InvalidRecord, StoreError
from statechart_runtime.run import record_class_of, spec_of
from statechart_runtime.run.record_memo import RecordMemo
from statechart_runtime.store.core import checks as store_checks

DOCS_URL = ("https://github.com/statechart-compiler/statechart-compiler/blob/main/docs/runs.md")

RULES: dict[str, str] = {
    "run-unreplayable": "a stored run that the spec could not have produced",
    "run-stranded": "a stored run in a state that the spec no longer has",
    "run-migration-fails": "a stored run of an earlier spec version that the spec's migration "
                           "does not upgrade to a record the spec accepts",
    "run-row-disagrees": "a stored run whose record replays but whose row (step count, "
                         "status, active states, next due time) disagrees with it",
}


@dataclass(frozen=True)
class RunDiagnostic(Diagnostic):
    """A finding about one stored run: a `Diagnostic` whose location is the store."""

    run_id: str = ""

    def as_dict(self) -> dict[str, object]:
        return {**super().as_dict(), "run_id": self.run_id}


@dataclass
class Verified:
    """What `verify` found: the findings, and how many runs of the spec it read."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    runs: int = 0


@dataclass(frozen=True)
class Against:
    """One spec to verify against: its file, its Run class (compiled in memory), and whether
    it is the proposed new version (`--spec-new`) rather than the spec in force. `records`
    checks its stored records (`RecordMemo`: each distinct history structure replayed once,
    for every run checked against it)."""

    path: str
    run_class: type[Any]
    proposed: bool = False
    records: RecordMemo = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", RecordMemo(record_class_of(self.run_class)))


def verify(store: Any, location: str, spec: Against, new: Against | None = None) -> Verified:
    """Every stored run of `spec`'s spec name checked against `spec`, then (the runs that
    pass) against `new`. A run refused by the spec in force is reported once, not again for
    the proposed spec. The runs are read in batches, each batch in one snapshot
    (`store.stored_records`): a run fired meanwhile is seen whole, before or after."""
    out = Verified()
    where = Span.point(location, 1, 1)
    for run_id, stored in store.stored_records(spec_of(spec.run_class).name):
        out.runs += 1
        found = check_run(run_id, stored, spec, new, where)
        if found is not None:
            out.diagnostics.append(found)
    return out


def check_run(run_id: str, stored: tuple[Any, dict[str, Any]] | StoreError, spec: Against,
              new: Against | None, where: Span) -> RunDiagnostic | None:
    """The finding about one run as `store.stored_records` gives it (its columns and record,
    or the StoreError saying what of it is damaged), or None: its record under `spec`, then
    its row against the record, then (when both pass) its record under `new`."""
    if isinstance(stored, StoreError):
        return RunDiagnostic("run-unreplayable", "error", f"run `{run_id}`: {stored}", where,
                             "the record was changed outside the runtime", run_id)
    columns, raw = stored
    found = _judged(run_id, raw, spec, where)
    if isinstance(found, RunDiagnostic):
        return found
    wrong = _row_finding(columns, raw, found, spec_of(spec.run_class), where)
    if wrong is None and new is not None:
        return judge(run_id, raw, new, where)
    return wrong


def judge(run_id: str, raw: Mapping[str, Any], against: Against, where: Span
          ) -> RunDiagnostic | None:
    """The finding about one stored record under one spec, or None when the spec accepts it."""
    found = _judged(run_id, raw, against, where)
    return found if isinstance(found, RunDiagnostic) else None


def _judged(run_id: str, raw: Mapping[str, Any], against: Against, where: Span) -> Any:
    """The finding about one stored record under one spec, or, when it accepts it, the
    record the spec parsed from it (upgraded and replayed), or None when `against.records`
    accepted it by a structure seen before without building it."""
    tables = spec_of(against.run_class)
    version = raw.get("specVersion")
    older = isinstance(version, int) and not isinstance(version, bool) \
        and 1 <= version < tables.version
    spec_words = (f"the proposed spec {against.path} ({tables.name} version {tables.version})"
                  if against.proposed else
                  f"{against.path} ({tables.name} version {tables.version})")
    if against.proposed or older:
        gone = _stranded_in(raw, tables, version if older else None)
        if gone:
            names = ", ".join(f"`{name}`" for name in gone)
            return RunDiagnostic(
                "run-stranded", "error",
                f"run `{run_id}` is in {names}, which {spec_words} does not have",
                where, "keep the state, or bump the spec's version and add a migration that "
                "renames it to a state runs can continue from", run_id)
    try:
        return against.records.check(raw)
    except (InvalidRecord, ValueError, TypeError, LookupError) as exc:
        # InvalidRecord names the field at fault; the others cannot come from a record the
        # checker reads, but a finding is still better than a traceback.
        if older:
            return RunDiagnostic(
                "run-migration-fails", "error",
                f"run `{run_id}` (stored at version {version}): {spec_words} refuses it after "
                f"its migration: {exc}", where,
                "fix the migration (`migrations:` in the spec) so that the upgraded history "
                "replays", run_id)
        return RunDiagnostic(
            "run-unreplayable", "error",
            f"run `{run_id}`: {spec_words} could not have produced it: {exc}", where,
            ("the proposed spec cannot replay this run's history: keep the transitions it "
             "took, or bump the version with a migration") if against.proposed else
            ("the record was changed outside the runtime, or stored by another spec under "
             "the same name and version"), run_id)


def _row_finding(stored: Any, raw: Mapping[str, Any], record: Any, tables: Any, where: Span
                 ) -> RunDiagnostic | None:
    """The finding about a run whose record replays but whose row disagrees with it: the
    columns `find`, `runs list` and the workers answer from, and the step count."""
    same = raw.get("specVersion") == tables.version
    # `record` is None only for a spec without timers (`RecordMemo.check`): no next due time.
    due = timers.next_due(tables, record) if same and record is not None else None
    wrong = store_checks.row_disagreements(stored, raw, due, same_version=same)
    if not wrong:
        return None
    return RunDiagnostic(
        "run-row-disagrees", "error",
        f"run `{stored.run_id}`: its record replays, but its row disagrees with it: "
        + "; ".join(wrong), where,
        "the row was changed outside the runtime: set the columns to the record's values "
        "(or restore the run from a backup); until then `find` and `runs list` answer "
        "wrongly for it and `fire` refuses it", stored.run_id)


def _stranded_in(raw: Mapping[str, Any], tables: Any, version: int | None) -> list[str]:
    """The record's active states (renamed by the migration from `version`, when given) that
    the spec does not have. A record whose states are not names is left to `from_dict`."""
    configuration = raw.get("configuration")
    names = configuration if isinstance(configuration, list) else [raw.get("status")]
    renames: Mapping[str, str] = {}
    if version is not None:
        renames = tables.migrations.get(version, ({}, {}))[0]
    known = tables.states_by_name
    return [name for name in (renames.get(n, n) for n in names if isinstance(n, str))
            if name not in known]


def reporters() -> dict[str, Reporter]:
    """`check`'s reporters, with a SARIF one that lists the run rules and names each finding's
    run as a logical location (`report.sarif` knows only the spec rules)."""
    def sarif(diagnostics: Sequence[Diagnostic], sources: Sources) -> str:
        log = json.loads(report.sarif(diagnostics, sources))
        driver = log["runs"][0]["tool"]["driver"]
        driver["rules"] += [
            {"id": rule, "shortDescription": {"text": text}, "helpUri": f"{DOCS_URL}#{rule}",
             "defaultConfiguration": {"level": "error"}}
            for rule, text in RULES.items()
        ]
        index = {r["id"]: i for i, r in enumerate(driver["rules"])}
        for d, result in zip(diagnostics, log["runs"][0]["results"], strict=True):
            result["ruleIndex"] = index[result["ruleId"]]
            if isinstance(d, RunDiagnostic):
                result["locations"][0]["logicalLocations"] = [
                    {"name": d.run_id, "kind": "object"}]
        return json.dumps(log, indent=2, ensure_ascii=False) + "\n"

    return {**report.REPORTERS, "sarif": sarif}
