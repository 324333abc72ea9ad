"""The run store's queries by a spec's names: `history`, `find` (and `find_sql`, the query it
runs, for EXPLAIN) and `next_due`, composed in the backend's placeholders. Runs stored at
another version of the spec are answered as docs/runs.md (Mixed versions) says. `RunStore`
(store.py) keeps the methods and their documentation; they call these with the store itself.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from statechart_runtime import store_read
from statechart_runtime import store_versions as versions
from statechart_runtime.run import Run
from statechart_runtime.store_checks import utc_text
from statechart_runtime.store_read import HistoryRow

if TYPE_CHECKING:
    from statechart_runtime.store_connection import StoreConnection


def history(store: StoreConnection, run_id: str, *, event: str | None = None,
            since: dt.datetime | None = None, until: dt.datetime | None = None,
            first: int = 0, limit: int | None = None) -> list[HistoryRow]:
    """`RunStore.history`: the query, its filters as conditions."""
    p = store.sql.param
    sql = ('SELECT run_id, idx, event, source, target, at, "values", kind FROM history '
           f"WHERE run_id = {p}")
    args: list[Any] = [run_id]
    if event is not None:
        sql += f" AND event = {p}"
        args.append(getattr(event, "value", event))
    if since is not None:
        sql += f" AND at >= {p}"
        args.append(utc_text(since))
    if until is not None:
        sql += f" AND at < {p}"
        args.append(utc_text(until))
    if first:
        sql += f" AND idx >= {p}"
        args.append(int(first))
    tail = "" if limit is None else f" LIMIT {int(limit)}"
    rows = store._read(lambda: store._x(sql + " ORDER BY idx" + tail, args).fetchall())
    return store_read.history_rows(rows)


def find(store: StoreConnection, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
         state: Any = None, tag: str | None = None) -> list[str]:
    """`RunStore.find`: the ids from `find_sql`, and the runs of other spec versions
    answered in their own names."""
    query = find_sql(store, run_class, status=status, state=state, tag=tag)
    if query is None:
        return []
    spec = run_class._sc_spec
    p = store.sql.param

    def work() -> tuple[list[Any], list[Any]]:  # one snapshot, one round trip
        ids = store._x(*query)
        # The runs of other versions (index runs_by_version): older ones with their
        # states, newer ones by id alone. None, in the usual case.
        others = store._x(
            "SELECT r.run_id, r.spec_version, s.state FROM runs r LEFT JOIN run_states s "
            f"ON s.run_id = r.run_id WHERE r.spec = {p} AND r.spec_version < {p} "
            f"UNION ALL SELECT run_id, spec_version, NULL FROM runs WHERE spec = {p} AND "
            f"spec_version > {p}", (spec.name, spec.version, spec.name, spec.version))
        return ids.fetchall(), others.fetchall()

    found, others = store._read(work)
    if not others:  # every run of the spec is at the caller's version: the usual case
        return [row[0] for row in found]
    # Runs of other versions: not in this version's names. Older ones are answered as
    # their migration renames them; newer ones not at all (docs/runs.md, Mixed versions).
    stored: dict[str, tuple[int, list[str]]] = {}
    for run_id, version, name in others:
        stored.setdefault(run_id, (store_read.whole_number(
            run_id, "runs.spec_version", version), []))[1].extend([name] if name else [])
    tagged = None if tag is None else frozenset(spec.tags.get(tag, ()))
    wanted = (None if status is None else versions.status_name(spec, status),
              None if state is None else versions.state_name(spec, state), tagged)
    ids = {row[0] for row in found if row[0] not in stored}
    ids.update(run_id for run_id, (version, names) in stored.items()
               if version < spec.version and versions.matches(
                   spec, versions.current_states(spec, version, names), *wanted))
    return sorted(ids)


def find_sql(store: StoreConnection, run_class: type[Run[Any, Any, Any]], *,
             status: Any = None, state: Any = None, tag: str | None = None
             ) -> tuple[str, list[Any]] | None:
    """`RunStore.find_sql`: one set of ids per condition, intersected; each is read from
    an index that gives the ids in order (runs_by_status, run_states_by_state)."""
    spec = run_class._sc_spec
    p = store.sql.param
    parts: list[str] = []
    args: list[Any] = []
    if status is not None:
        parts.append(f"SELECT run_id FROM runs WHERE spec = {p} AND status = {p}")
        args += [spec.name, versions.status_name(spec, status)]
    if state is not None:
        parts.append(f"SELECT run_id FROM run_states WHERE spec = {p} AND state = {p}")
        args += [spec.name, versions.state_name(spec, state)]
    if tag is not None:
        tagged = sorted(spec.tags.get(tag, ()))
        if not tagged:
            return None
        marks = ", ".join([p] * len(tagged))
        # DISTINCT: two active states may carry the tag.
        parts.append(f"SELECT DISTINCT run_id FROM run_states WHERE spec = {p} AND "
                     f"state IN ({marks})")
        args += [spec.name, *tagged]
    if not parts:
        parts.append(f"SELECT run_id FROM runs WHERE spec = {p}")
        args.append(spec.name)
    return " INTERSECT ".join(parts) + " ORDER BY run_id", args


def next_due(store: StoreConnection, run_class: type[Run[Any, Any, Any]], *,
             skip: Sequence[str] = ()) -> dt.datetime | None:
    """`RunStore.next_due`: the run whose timer is due first, and when."""
    p = store.sql.param
    spec = run_class._sc_spec
    found = store._query(f"SELECT run_id, next_due FROM runs WHERE spec = {p} AND "
                         f"spec_version <= {p} AND next_due IS NOT NULL"
                         f"{store._not_in('run_id', skip)} "
                         "ORDER BY next_due LIMIT 1",
                         [spec.name, spec.version, *store._not_in_args(skip)])
    return store_read.column_time(found[0][0], "runs.next_due", found[0][1]) if found \
        else None
