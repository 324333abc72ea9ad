"""Checking many stored records of one spec (`statechart runs verify`): the replay of each
distinct history structure once, each record's own values and times every time.

`Record.from_dict` replays a record's whole history to check it. Most of what that replay
decides depends only on the record's structure: which steps it took (event, source, target,
kind, the fields each step set and which of them are null), its status, configuration,
counts, counters and remembered history, and which keys it has. Runs of one spec share few
structures (a loop taken n times is one structure per n), so `RecordMemo` replays the first
record of each structure with `from_dict`, keeps what the checks of the record's own values
need from that replay (where each field's last value comes from), and checks every other
record of that structure by the parts that are its own:

- the run id, and every value's type (the field codec, as `from_dict` reads it), `@by`;
- the steps' times: each an RFC 3339 time, none earlier than the one before it, the last
  one `lastTransitionAt`;
- the record's fields: each the last value its history set (or the field's default; unset
  when a step cleared it), the fields its active states require set;
- no JSON nested deeper than `from_dict` reads (only a record with list or object values
  can be).

A record the memo cannot vouch for (a structure not seen yet, one of its own checks failing,
a record the memo does not take: see `RecordMemo.check`) is checked by `from_dict` itself, so
a refused record is refused with `from_dict`'s own error, naming the same key.

What the structure leaves out, it checks: values that select an `assign:` alternative are
part of the structure, and a spec with timers (whose armed timers depend on the steps' times
and on field values) is not memoized at all.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from typing import Any

from statechart_runtime.chart.values import SENT_BY, parse_time, sent_by_problem
from statechart_runtime.errors import InvalidRecord
from statechart_runtime.run import record as _record

# The default bound of a memo: the steps its structures hold, in all (a structure is a tuple
# per step: 0.09 KiB a step for the agent run under tracemalloc, so about 5 MiB at this
# bound; more for steps that set many fields). The oldest structures are dropped past it.
MAX_STEPS = 50_000
# A record with more steps than this is checked by `from_dict` alone: its structure would
# take much of the bound, for one run.
MAX_RECORD_STEPS = 1_000
# The record keys whose values are the structure itself (the others: the run id, times and
# field values, checked per record; counters, compared as they are).
_STRUCTURE_KEYS = frozenset(("specVersion", "status", "configuration", "history", "counts",
                             "remembered"))
_SCALARS = frozenset((str, int, float, bool, type(None)))
# In a structure, a step value that is not null (its value is the record's own).
_SET = object()
# In a structure's field sources: take the value from the record's own step.
_FROM_STEP = object()


class _Structure:
    """What the replay of a structure's first record left for the others: the active states
    it ends in, and where each field's last value comes from (field -> (step index, or -1
    for the default; the typed value, or _FROM_STEP for the record's own step's value))."""

    __slots__ = ("configuration", "sources", "steps")

    def __init__(self, configuration: tuple[str, ...], sources: dict[str, tuple[int, Any]],
                 steps: int) -> None:
        self.configuration = configuration
        self.sources = sources
        self.steps = steps


class RecordMemo:
    """The records of one record class, checked as `from_dict` checks them, each distinct
    structure replayed once. Bounded: at most `max_steps` steps of structures are kept (the
    oldest dropped first), and records longer than `max_record_steps` are not memoized."""

    def __init__(self, record_class: type[_record.Record], *, max_steps: int = MAX_STEPS,
                 max_record_steps: int = MAX_RECORD_STEPS) -> None:
        spec = _record.record_spec(record_class)
        self.record_class = record_class
        self.spec = spec
        self.max_steps = max_steps
        self.max_record_steps = min(max_record_steps, max_steps)
        self.structures: dict[Hashable, _Structure] = {}
        self.steps = 0  # the steps the structures hold
        self.hits = 0  # records accepted by a structure seen before
        # Timers are armed by times and values a structure leaves out: replayed every time.
        self.enabled = not spec.timers
        # The values that tell which `assign:` alternative a step took (the replay compares
        # them with the constants, for the events with such alternatives): in the steps of
        # those events, a value equal to one of its field's constants is structure (any
        # other takes the alternative without constants, whatever it is).
        assigning = [alternative for found in spec.alternatives.on.values()
                     for alternative in found if alternative.assigns]
        self.constant_events = frozenset(alternative.event for alternative in assigning)
        constants: dict[str, list[Any]] = {}
        for alternative in assigning:
            for name, (_, as_json) in alternative.assigns.items():
                constants.setdefault(name, []).append(as_json)
        self.constants = {name: tuple(values) for name, values in constants.items()}
        self.fields = spec.codec.types
        # Run context is the application's: `from_dict` does not hold it to the history.
        self.checked_fields = tuple(f for f in spec.attrs if f not in spec.context)

    def check(self, data: Mapping[str, Any]) -> _record.Record | None:
        """Check a stored record as `record_class.from_dict(data)` does: the spec's
        InvalidRecord (and what else `from_dict` raises) for one it refuses. Returns the
        parsed record, or None when the record was accepted by a structure seen before
        (no record is built: it would be the one `from_dict` returns; only for a spec
        without timers)."""
        key = self._structure_of(data) if self.enabled else None
        known = self.structures.get(key) if key is not None else None
        if known is not None and self._own_parts_hold(data, known):
            self.hits += 1
            return None
        record = self.record_class.from_dict(data)
        if key is not None and known is None:
            self._remember(key, record)
        return record

    def _structure_of(self, data: Mapping[str, Any]) -> Hashable | None:
        """The record's structure (a hashable key that equals another record's only when
        the replay decides the same for both, but for their own parts), or None for a
        record the memo does not take: one of an earlier version (its migration runs),
        too long, or with a value where the structure has a name of another type (every
        structure value is an exact str or int, so that 1, 1.0 and True never meet)."""
        if type(data) is not dict:
            return None
        history = data.get("history")
        version = data.get("specVersion")
        if type(history) is not list or len(history) > self.max_record_steps \
                or type(version) is not int or version != self.spec.version:
            return None
        top: list[Any] = []
        fields = self.fields
        for name, value in data.items():
            if name in fields:  # a field's value is the record's own: whether it is null
                top.append((name, value is None))
            elif name == "history":
                continue
            elif name in _STRUCTURE_KEYS:
                frozen = _frozen(value)
                if frozen is None:
                    return None
                top.append((name, frozen))
            elif name in ("runId", "lastTransitionAt", "createdAt", "timers"):
                top.append(name)
            elif type(value) is int:  # a counter (or a key `from_dict` refuses)
                top.append((name, value))
            else:
                return None
        constant_events = self.constant_events
        listed = self.spec.listed
        steps: list[Any] = []
        append = steps.append
        for step in history:
            if type(step) is not dict:
                return None
            values = step.get("values")
            event, source, target = step.get("event"), step.get("source"), step.get("target")
            if type(values) is not dict or type(event) is not str \
                    or type(source) is not str or type(target) is not str:
                return None
            names: tuple[Any, ...] = ()
            if values:
                if constant_events and (listed(event) or event) in constant_events:
                    names = tuple((name, self._value_shape(name, value))
                                  for name, value in values.items())
                else:
                    names = tuple((name, _SET if value is not None else None)
                                  for name, value in values.items())
            if len(step) == 5:  # event, source, target, at, values: an external transition
                append((event, source, target, names))
                continue
            kinds = tuple(step[k] for k in ("history", "kind") if k in step)
            if any(k is not None and type(k) is not str for k in kinds):
                return None
            append((tuple(step), event, source, target, kinds, names))
        return tuple(top), tuple(steps)

    def _value_shape(self, name: str, value: Any) -> Any:
        """What the structure holds of a value in a step of an `assign:` event: the value
        itself (as JSON text: 1, 1.0 and true apart) when it equals one of its field's
        constants, else whether it is null."""
        if any(value == constant for constant in self.constants.get(name, ())):
            return json.dumps(value, sort_keys=True)
        return _SET if value is not None else None

    def _own_parts_hold(self, data: Mapping[str, Any], known: _Structure) -> bool:
        """Whether a record of a known structure passes the checks that are its own (see the
        module's docstring): then `from_dict` accepts it, as it accepted the structure's
        first record."""
        spec = self.spec
        invalid = spec.invalid
        codec = spec.codec
        run_id = data.get("runId")
        if type(run_id) is not str or not run_id:
            return False
        nested = False
        try:
            previous = None
            for step in data["history"]:
                at = parse_time("", step["at"], invalid)
                if previous is not None and at < previous:
                    return False
                previous = at
                for name, value in step["values"].items():
                    if name == SENT_BY:
                        if sent_by_problem(value) is not None:
                            return False
                        continue
                    codec.from_json(name, value)
                    nested = nested or type(value) not in _SCALARS
            last_at = parse_time("", data.get("lastTransitionAt"), invalid)
            if previous is not None and last_at != previous:
                return False
            typed: dict[str, Any] = {}
            for field in self.fields:
                if field in data:
                    raw = data[field]
                    value = codec.from_json(field, raw)
                    nested = nested or type(raw) not in _SCALARS
                    if value is not None:
                        codec.to_json(field, value)
                    typed[field] = value
            for name in known.configuration:
                for required in spec.requires.get(name, ()):
                    if typed.get(required) is None:
                        return False
            history = data["history"]
            for field in self.checked_fields:
                value = typed.get(field)
                index, last = known.sources.get(field, (-1, None))
                if last is _FROM_STEP:
                    last = codec.from_json(field, history[index]["values"][field])
                if last is None:
                    if value is not None:
                        return False
                elif value is None or not codec.same(field, value, last):
                    return False
            if nested:
                _record.refuse_deep(data, invalid)
        except (InvalidRecord, TypeError, ValueError, LookupError, RecursionError):
            return False  # `from_dict` says what
        return True

    def _remember(self, key: Hashable, record: _record.Record) -> None:
        """Keep what the replay of a structure's first record (accepted) decided, dropping
        the oldest structures past the bound."""
        spec = self.spec
        replayed = _record.replay(spec, record)
        steps_of_key = key[1]  # type: ignore[index]  # (top, steps): `_structure_of`
        sources: dict[str, tuple[int, Any]] = {}
        for field in self.checked_fields:
            found = replayed.last.get(field)
            if found is None:
                continue
            _, value, index = found
            # The step's own value, unless the structure decides it: a default, a field
            # the step cleared, a value the structure holds as it is (one that chose an
            # `assign:` alternative, as JSON text: `_value_shape`), or its constant.
            own = index >= 0 and value is not None and \
                not isinstance(dict(steps_of_key[index][-1]).get(field), str)
            sources[field] = (index, _FROM_STEP if own else value)
        steps = len(steps_of_key) + 1
        self.structures[key] = _Structure(replayed.configuration, sources, steps)
        self.steps += steps
        while self.steps > self.max_steps:
            oldest = next(iter(self.structures))
            self.steps -= self.structures.pop(oldest).steps


def _frozen(value: Any) -> Hashable | None:
    """A structure value as a hashable of exact strs and ints, two levels deep at most (a
    list of states, counts, remembered history: state -> list of states), or None when it
    holds anything else (`from_dict` says what)."""
    kind = type(value)
    if kind is str or kind is int:
        return value  # type: ignore[no-any-return]
    if kind is list:
        return ("list", tuple(value)) if all(type(v) is str or type(v) is int for v in value) \
            else None
    if kind is not dict:
        return None
    pairs: list[tuple[str, Hashable]] = []
    for name, inner in value.items():
        if type(inner) is list and all(type(v) is str for v in inner):
            pairs.append((name, ("list", tuple(inner))))
        elif type(inner) is int or type(inner) is str:
            pairs.append((name, inner))
        else:
            return None
    return ("dict", tuple(pairs))
