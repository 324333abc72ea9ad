"""Runs of several versions of a spec in one store (a rolling deploy; docs/runs.md, "Mixed
versions"): the names a caller gives `find` checked against its version, and the runs stored
at an older version seen in the caller's names, through the renames its migrations declare.

A run's row keeps the names of the version that last wrote it until a newer version fires it
(which upgrades and rewrites it). `find` with a version 2 class must still see the version 1
runs that load as the version 2 states asked for: their active states are renamed by the
migration from their version (`spec.migrations[version]`), and the renamed states' ancestors
in the caller's spec are added (a state may have moved into a new parent). Runs stored by a
newer version are not answered: the caller can neither load nor fire them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from statechart_runtime.errors import UnknownName
from statechart_runtime.store.core import rows


def state_name(spec: Any, state: Any) -> str:
    name = state.value if isinstance(state, spec.state_enum) else state
    if name not in spec.states_by_name:
        raise UnknownName(f"{spec.name!r} version {spec.version} has no state `{name}`"
                          + _renamed(spec, name))
    return name  # type: ignore[no-any-return]


def status_name(spec: Any, status: Any) -> str:
    """A status as the `status` column keeps it: the record's `status` value."""
    name = status.value if isinstance(status, spec.status_enum) else status
    if name not in spec.statuses_by_name:
        raise UnknownName(f"{spec.name!r} version {spec.version} has no status `{name}`"
                          + _renamed(spec, name))
    return name  # type: ignore[no-any-return]


def _renamed(spec: Any, name: object) -> str:
    """What to say of a name an older version had: find takes the caller's version's names."""
    for version, (states, _) in sorted(spec.migrations.items()):
        if isinstance(name, str) and name in states and states[name] is not None:
            return (f" (version {version} called it `{name}`; it is `{states[name]}` now): "
                    f"find takes the names of the class's version, and answers for older "
                    f"runs in them")
    return ": find takes the names of the class's version (see its state enum)"


def current_states(spec: Any, version: int, states: Iterable[str]) -> frozenset[str]:
    """The active states of a run stored at `version` (older than `spec`'s), in `spec`'s
    names: renamed by that version's migration, with their ancestors; states `spec` does not
    have (a stranded run) are left out."""
    renames: Mapping[str, str] = spec.migrations.get(version, ({}, {}))[0]
    chart = spec.chart
    out: set[str] = set()
    for old in states:
        name = renames.get(old, old)
        if name in spec.states_by_name:
            out.add(name)
            out.update(chart.ancestors(name))
    return frozenset(out)


def matches(spec: Any, active: frozenset[str], status: str | None, state: str | None,
            tagged: frozenset[str] | None) -> bool:
    """Whether a run in `active` (the caller's names) answers `find`'s conditions."""
    if not active:
        return False
    if state is not None and state not in active:
        return False
    if tagged is not None and tagged.isdisjoint(active):
        return False
    return status is None or spec.reported(chart_order(spec, active)).value == status


def chart_order(spec: Any, active: Iterable[str]) -> tuple[str, ...]:
    return tuple(spec.chart.sort(active))


def same_key_values(spec: Any, stored: str, values: str) -> bool:
    """Whether the values an idempotency key was applied with (`stored`, JSON text) are
    `values` in `spec`'s names: a request applied by a worker of an older version, retried on
    one of `spec`'s version, names the fields its migration renamed by their old names."""
    try:
        old = json.loads(stored)
    except ValueError:
        return False
    if not isinstance(old, dict):
        return False
    for _, fields in spec.migrations.values():
        renamed = {fields.get(name, name): value for name, value in old.items()}
        if None not in renamed and json.dumps(renamed, sort_keys=True) == values:
            return True
    return False


def found(spec: Any, ids: Sequence[Sequence[Any]], others: Sequence[Sequence[Any]], *,
          status: Any, state: Any, tag: str | None) -> list[str]:
    """`find`'s answer from its two queries' rows: the ids matching in the caller's names
    (`ids`), and the runs of the spec's other versions (`others`: run_id, spec_version,
    state; state NULL for a newer one). Older ones are answered as their migration renames
    them; newer ones not at all (docs/runs.md, Mixed versions)."""
    if not others:  # every run of the spec is at the caller's version: the usual case
        return [row[0] for row in ids]
    stored: dict[str, tuple[int, list[str]]] = {}
    for run_id, version, name in others:
        stored.setdefault(run_id, (rows.whole_number(
            run_id, "runs.spec_version", version), []))[1].extend([name] if name else [])
    tagged = None if tag is None else frozenset(spec.tags.get(tag, ()))
    wanted = (None if status is None else status_name(spec, status),
              None if state is None else state_name(spec, state), tagged)
    matching = {row[0] for row in ids if row[0] not in stored}
    matching.update(run_id for run_id, (version, names) in stored.items()
                    if version < spec.version and matches(
                        spec, current_states(spec, version, names), *wanted))
    return sorted(matching)
