"""A spec's `SpecTables`, built from the model in memory: what the generated module's `_SPEC`
holds, its table of alternatives listed by the same rows.

`statechart paths` needs the spec's tables only (the explorer runs the step kernel, never the
machine): rendering the whole module and executing it, which builds the python-statemachine
class, was most of the command's time at 500 states. The values are the ones
`python_module.render` writes as literals (the same helpers compute them), and
tests/test_spec_tables.py compares the two for every spec the tests and the examples hold.
"""

from __future__ import annotations

import enum

from statechart import __version__, spec_chart
from statechart.codegen import python_module
from statechart.model import Spec
from statechart_runtime.chart.events import is_timer
from statechart_runtime.chart.spec import SpecTables


def spec_tables(spec: Spec) -> SpecTables:
    """The spec's tables, bound: `statechart_runtime.testing.paths` explores them as it
    explores the generated Run class (`spec` is a checked spec without errors)."""
    spec = spec_chart.per_event(spec)  # as `render`: alternatives listed under each event
    classes = python_module.class_names(spec)
    pn = python_module.PythonNames(spec)
    transitions = spec.transitions()

    def members(name: str, pairs: list[tuple[str, str]]) -> type[enum.Enum]:
        return enum.Enum(name, pairs)  # type: ignore[return-value]

    state_enum = members(str(classes["state"]),
                         [(str(pn.state_member(s)), s) for s in spec.states])
    event_enum = members(str(classes["event"]),
                         [(str(pn.event_member(e)), e) for e in spec.events()])
    fields: dict[str, str | type[enum.Enum]] = {
        f.name: members(str(classes["enum:" + f.name]),
                        [(str(pn.value_member(f.name, v)), v) for v in f.enum])
        if f.type == "enum" else f.type for f in spec.record}
    clears: dict[tuple[str, str, str], list[str]] = {}
    for t in transitions:
        if t.clears:
            cleared = clears.setdefault((t.source, t.event, t.move_target), [])
            cleared.extend(f for f in t.clears if f not in cleared)
    histories = python_module.history_kinds(spec)
    by_tag: dict[str, list[str]] = {}
    for s in spec.states.values():
        for tag in s.tags:
            by_tag.setdefault(tag, []).append(s.name)
    statuses = spec.statuses()
    status_enum = members(str(classes["status"]), [(str(pn.status_member(n)), n)
                                                   for n in statuses]) if statuses else None
    return SpecTables(
        name=spec.name, version=spec.version, sha256=spec.source_sha256,
        compiler=f"statechart-compiler {__version__}",
        states=spec_chart.rows(spec), initial=spec.initial,
        alternatives=python_module.alternative_rows(spec, pn),
        state_enum=state_enum, event_enum=event_enum, fields=fields,
        limits={s.name: s.limit for s in spec.states.values() if s.limit},
        requires={s.name: s.requires for s in spec.states.values() if s.requires},
        migrations={m.from_version: ({old: new for old, new, _ in m.states},
                                     {old: new for old, new, _ in m.fields})
                    for m in sorted(spec.migrations, key=lambda m: m.from_version)},
        tags={tag: tuple(names) for tag, names in by_tag.items()},
        in_states={(t.source, t.event, t.order): t.in_states for t in transitions
                   if t.in_states},
        timers=spec.timer_rows(),
        event_ids={k: v for k, v in pn.events.items() if not is_timer(k)},
        internal={t.event: t.source for t in transitions
                  if t.internal and t.order == 0 and t.trigger != "after"},
        history_ids={f"{target}.{kind}": str(pn.history_state(target, kind))
                     for target, kinds in histories.items() for kind in kinds},
        history_defaults=python_module.used_history_defaults(spec),
        attrs=dict(pn.fields),
        context=[f.name for f in spec.record if f.context],
        defaults={f.name: f.default for f in spec.record if f.default is not None},
        clears={key: tuple(fields) for key, fields in clears.items()},
        exit_clears={s.name: s.clear for s in spec.states.values() if s.clear},
        fills={m.from_version: tuple(n for n, _ in m.fill)
               for m in sorted(spec.migrations, key=lambda m: m.from_version) if m.fill},
        statuses={s.name: s.status for s in spec.states.values() if s.status},
        status_enum=status_enum,
        counters=dict(spec.counters()),
    )
