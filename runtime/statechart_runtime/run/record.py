"""The run record: its JSON codec, its integrity check, and the upgrade of older records.

A generated module declares `<Name>Record` (a dataclass with the spec's typed fields) and
`<Name>Step` as subclasses of `Record` and `Step`; the behaviour lives here and reads the
spec's `SpecTables` (`_sc_spec` on the class).

A record is refused (the spec's `InvalidRecord`, naming the JSON key at fault) unless replaying
its history from the initial state gives exactly its configuration, status and entry counts,
with every step a transition of the spec whose source was active, setting exactly the fields
that transition sets, no limit exceeded, every field the active states require set, every
field other than run context holding what the history gives it (its default until a step sets
it, the last value set, unset after a step's `clear:` or the `clear:` of a state it exited),
`status` what the configuration reports, counters their states' counts,
`lastTransitionAt` the last step's time, no step earlier than the one before it, and, for a
spec with timers, `createdAt` no later than the first step and `timers` exactly the timers
the history arms, due when it says (statechart_runtime.timers.check). The replay is
statechart_runtime.replay, which takes each step with the run's own step function
(statechart_runtime.kernel.step). Run context (`context: true`) is set by the application
outside the history: only its type and the active states' `requires` are checked.

What this proves: the record is one the spec's graph could have produced, and its fields
other than run context agree with its own history. What it cannot prove: that the history is
what really happened (a record can be forged consistently), that the guards allowed each step
(they are not replayed), that an event was handled by the state a step names rather than by an
active descendant that would have taken precedence, what run context the application set,
that the times are true, or that a timer marked `declined` was refused by its guards.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, Self, TypeVar, overload

from statechart_runtime.chart import events as internal_events
from statechart_runtime.chart import step_kinds, timers
from statechart_runtime.chart.spec import SpecTables
from statechart_runtime.chart.values import SENT_BY, JsonValue, is_aware, parse_time, time_text
from statechart_runtime.run import replay as _replay

E = TypeVar("E", bound=enum.Enum)
S = TypeVar("S", bound=enum.Enum)
R = TypeVar("R", bound="Record")
JsonObject = dict[str, Any]
# Deeper JSON than this is refused before Python's own recursion limit is near.
MAX_JSON_DEPTH = 64
_FIXED_KEYS = ("runId", "specVersion", "status", "configuration", "lastTransitionAt", "history",
               "counts", "remembered")


@dataclasses.dataclass(slots=True)
class Step(Generic[E, S]):
    """One transition of a run: the transition's own source and target, and what it set."""

    event: E
    source: S
    target: S
    at: dt.datetime
    values: dict[str, JsonValue] = dataclasses.field(default_factory=dict)
    # How the step took its transition (docs/runs.md, "The record"): None for an external
    # transition; `shallow`/`deep`: it entered `target` by history; `internal`: it did not
    # exit its source; `targetless`: it exited and entered nothing (`target` is `source`).
    kind: str | None = None

    @property
    def history(self) -> str | None:
        """`shallow`/`deep` when the step entered its target by history, else None."""
        return self.kind if self.kind in step_kinds.HISTORY_KINDS else None

    def to_dict(self) -> JsonObject:
        data: JsonObject = {"event": self.event.value, "source": self.source.value,
                            "target": self.target.value, "at": time_text(self.at),
                            "values": dict(self.values)}
        if self.kind:
            data.update(step_kinds.to_json(self.kind))
        return data


class Counter:
    """A record's `counter:` key, as a class attribute of the generated record: how many times
    its state was entered in this run (its entry in `counts`), read-only."""

    __slots__ = ("state",)

    def __init__(self, state: str) -> None:
        self.state = state

    @overload
    def __get__(self, record: None, owner: Any = None) -> Self: ...
    @overload
    def __get__(self, record: object, owner: Any = None) -> int: ...
    def __get__(self, record: object, owner: Any = None) -> int | Self:
        if record is None:
            return self
        return record.counts[self.state]  # type: ignore[attr-defined, no-any-return]


class Record:
    """Base of a generated `<Name>Record` dataclass: persistence and the integrity check."""

    _sc_spec: ClassVar[SpecTables]
    _sc_step: ClassVar[type[Step[Any, Any]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if hasattr(cls, "_sc_spec"):  # a generated record class (or a subclass of one)
            _RECORD_CLASSES[cls] = (cls._sc_spec, cls._sc_step)

    def to_dict(self, *, history: bool = True) -> JsonObject:
        """The record as JSON data; with `history=False`, without its "history" key (a run
        store keeps the steps in a table of their own and the rest here, so that saving a
        long run does not serialize its whole history again)."""
        spec = self._sc_spec
        record: Any = self
        data: JsonObject = {"runId": record.runId, "specVersion": record.specVersion,
                            "status": record.status.value}
        if spec.timers:
            data["createdAt"] = time_text(record.createdAt)
        if not spec.flat:
            data["configuration"] = [state.value for state in record.configuration]
        data["lastTransitionAt"] = time_text(record.lastTransitionAt)
        if history:
            data["history"] = [step.to_dict() for step in record.history]
        data["counts"] = dict(record.counts)
        for counter, state in spec.counters.items():
            data[counter] = record.counts[state]
        if spec.timers:
            data["timers"] = [timer.to_dict() for timer in record.timers]
        if spec.chart.remembers:
            data["remembered"] = {name: list(states)
                                  for name, states in sorted(record.remembered.items())}
        for field, attr in spec.attrs.items():
            value = getattr(self, attr)
            if value is not None:
                data[field] = spec.codec.to_json(field, value)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False, indent=2)

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """Parse and check a record (see `from_dict`). Duplicate keys and JSON nested deeper
        than MAX_JSON_DEPTH are refused."""
        invalid = cls._sc_spec.invalid
        try:
            data = json.loads(text, object_pairs_hook=_unique_keys)
        except _DuplicateKey as exc:
            raise invalid(exc.args[0], "duplicate key") from None
        except RecursionError:
            raise invalid("(record)", "JSON nested too deeply") from None
        except ValueError as exc:
            raise invalid("(record)", f"not JSON: {exc}") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, check: bool = True) -> Self:
        """Parse and check a record: types, status, configuration, counts and history.

        A record of an earlier spec version is first upgraded with that version's migration.
        `check=False` parses the types only and does not replay the history: for a run store
        restoring a run it wrote itself, whose every step was checked when it was taken.
        """
        spec = cls._sc_spec
        invalid = spec.invalid
        if not isinstance(data, Mapping):
            raise invalid("(record)", "expected a JSON object")
        refuse_deep(data, invalid)
        stored_version = data.get("specVersion")
        data = upgrade(spec, data)
        upgraded = stored_version != data.get("specVersion")
        known = {*_FIXED_KEYS, *spec.codec.types, *spec.counters}
        if spec.timers:
            known.update(("createdAt", "timers"))
        for key in data:
            if key not in known or (spec.flat and key == "configuration") or (
                    key == "remembered" and not spec.chart.remembers):
                raise invalid(str(key), "unknown key")
        run_id = data.get("runId")
        if not isinstance(run_id, str) or not run_id:
            raise invalid("runId", "expected a non-empty string")
        version = data.get("specVersion")
        if isinstance(version, bool) or version != spec.version:
            raise invalid("specVersion", f"this module reads version {spec.version} records "
                          f"of {spec.name!r}, got {data.get('specVersion')!r}")
        values: dict[str, Any] = {"runId": run_id,
                                  "status": _status_of(spec, data.get("status"))}
        if not spec.flat:
            raw = data.get("configuration")
            if not isinstance(raw, list) or not raw:
                raise invalid("configuration", "expected a non-empty list of states")
            values["configuration"] = [_state_of(spec, "configuration", v) for v in raw]
        counts = data.get("counts")
        if not isinstance(counts, dict) or set(counts) != spec.counted or not all(
                isinstance(n, int) and not isinstance(n, bool) for n in counts.values()):
            raise invalid("counts", f"expected entry counts of {sorted(spec.counted)}")
        for counter, state in spec.counters.items():
            if data.get(counter) != counts[state] or isinstance(data.get(counter), bool):
                raise invalid(counter, f"expected the entry count of `{state}` "
                              f"({counts[state]}), got {data.get(counter)!r}")
        history = data.get("history")
        if not isinstance(history, list):
            raise invalid("history", "expected a list")
        values["lastTransitionAt"] = parse_time("lastTransitionAt",
                                                data.get("lastTransitionAt"), invalid)
        # Each step read once: the replay below takes these, not the steps made of them.
        read = [_replay.raw_step(spec, f"history[{i}]", step) for i, step in enumerate(history)]
        values["history"] = [_step_from_dict(cls, step, raw)
                             for step, raw in zip(read, history, strict=True)]
        values["counts"] = dict(counts)
        if spec.chart.remembers:
            values["remembered"] = _remembered_from(spec, data.get("remembered", {}))
        for field in spec.codec.types:
            # Absent is unset, not the field's default (a cleared field is absent).
            values[spec.attrs[field]] = spec.codec.from_json(field, data[field]) \
                if field in data else None
        if spec.timers and upgraded:
            # An older version's timers may differ (or it had none): the history decides, as
            # for the configuration. A record without `createdAt` was created no later than
            # its first step (or its last transition, with no history).
            history_steps = values["history"]
            values["createdAt"] = parse_time("createdAt", data["createdAt"], invalid) \
                if "createdAt" in data else (history_steps[0].at if history_steps
                                             else values["lastTransitionAt"])
            record = cls(**values)
            rec: Any = record
            rec.timers = replay(spec, record, read).timers
        else:
            if spec.timers:
                values["createdAt"] = parse_time("createdAt", data.get("createdAt"), invalid)
                values["timers"] = timers.from_json(spec, data.get("timers"))
            record = cls(**values)
        if check:
            _check_record(record, cls, read)
        return record


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


_SCALARS = frozenset((str, int, float, bool, type(None)))


def refuse_deep(data: object, invalid: type[Exception]) -> None:
    """Iteratively: a record is shallow; a deeply nested value is refused with its path.
    (Level by level and without paths first, as a run store restores a head on every
    `fire`; the walk that names the path runs only when a level reaches the limit.)"""
    level = [data]
    for _ in range(MAX_JSON_DEPTH):
        deeper: list[object] = []
        for value in level:
            if isinstance(value, Mapping):
                deeper.extend(v for v in value.values() if type(v) not in _SCALARS)
            elif isinstance(value, list):
                deeper.extend(v for v in value if type(v) not in _SCALARS)
        if not deeper:
            return
        level = deeper
    _refuse_deep_path(data, invalid)


def _refuse_deep_path(data: object, invalid: type[Exception]) -> None:
    stack: list[tuple[object, int, str]] = [(data, 0, "")]
    while stack:
        value, depth, where = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise invalid(where.lstrip(".") or "(record)", "nested too deeply")
        if isinstance(value, Mapping):
            stack.extend((v, depth + 1, f"{where}.{k}") for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, depth + 1, f"{where}[{i}]") for i, v in enumerate(value))


def _remembered_from(spec: SpecTables, raw: object) -> dict[str, tuple[str, ...]]:
    if not isinstance(raw, dict):
        raise spec.invalid("remembered", "expected an object: state -> the states active "
                           "under it when it was last left")
    out: dict[str, tuple[str, ...]] = {}
    for name, states in raw.items():
        if name not in spec.chart.remembers:
            raise spec.invalid(f"remembered.{name}", "no history transition targets it")
        if not isinstance(states, list) or not all(
                isinstance(s, str) and s in spec.chart.order for s in states):
            raise spec.invalid(f"remembered.{name}", "expected a list of state names")
        out[name] = tuple(states)
    return out


def _state_of(spec: SpecTables, where: str, raw: object) -> Any:
    members = spec.states_by_name
    if isinstance(raw, str) and raw in members:
        return members[raw]
    raise spec.invalid(where, f"unknown state {raw!r}")


def _status_of(spec: SpecTables, raw: object) -> Any:
    members = spec.statuses_by_name
    if isinstance(raw, str) and raw in members:
        return members[raw]
    what = "status" if spec.status_of else "state"
    raise spec.invalid("status", f"unknown {what} {raw!r}")


# A generated record class -> its spec tables and step class (`record_spec`, `step_class_of`):
# what other modules read of a record class, without reading its generated-code names.
_RECORD_CLASSES: weakref.WeakKeyDictionary[type, tuple[SpecTables, type[Step[Any, Any]]]] = \
    weakref.WeakKeyDictionary()


def _record_class(record: Record | type[Record]) -> tuple[SpecTables, type[Step[Any, Any]]]:
    found = _RECORD_CLASSES.get(record if isinstance(record, type) else type(record))
    if found is None:
        raise TypeError(f"{record!r} is not a generated record class nor one of its records")
    return found


def record_spec(record: Record | type[Record]) -> SpecTables:
    """The spec tables of a generated record class, or of one of its records."""
    return _record_class(record)[0]


def step_class_of(record: Record | type[Record]) -> type[Step[Any, Any]]:
    """The step class (`<Name>Step`) of a generated record class, or of one of its records."""
    return _record_class(record)[1]


def _step_from_dict(cls: type[Record], step: _replay.Raw, raw: object) -> Step[Any, Any]:
    """The `Step` of a history entry (`raw`, as JSON holds it) that `raw_step` read."""
    spec = cls._sc_spec
    event, source, target, at, values, kind = step
    kept = dict(values)
    if SENT_BY in raw["values"]:  # type: ignore[index]  # raw_step read it as a dict
        kept[SENT_BY] = raw["values"][SENT_BY]  # type: ignore[index]
    return cls._sc_step(spec.event_member(event), spec.states_by_name[source],
                        spec.states_by_name[target], at, kept, kind)


def check_record(record: Record, record_class: type[Record] | None = None) -> None:
    """Refuse a record this spec could not have produced (see the module's docstring); with
    `record_class`, first refuse a record of any other class (another spec's record)."""
    _check_record(record, record_class, None)


def _check_record(record: Record, record_class: type[Record] | None,
                  read: Sequence[_replay.Raw] | None) -> None:
    """`check_record`; `read`: the history's steps as `raw_step` read them, when the record
    was just parsed from them (`from_dict`), so the replay does not check them again."""
    if record_class is not None and not isinstance(record, record_class):
        raise record_spec(record_class).invalid(
            "(record)", f"expected a {record_class.__name__}, got {type(record).__name__}")
    spec = record_spec(record)
    invalid = spec.invalid
    rec: Any = record
    if not isinstance(rec.runId, str) or not rec.runId:
        raise invalid("runId", f"expected a non-empty string, got {rec.runId!r}")
    if isinstance(rec.specVersion, bool) or rec.specVersion != spec.version:
        raise invalid("specVersion", f"expected {spec.version}, got {rec.specVersion!r}")
    enum_name = spec.state_enum.__name__
    if not isinstance(rec.status, spec.status_enum):
        raise invalid("status", f"expected a {spec.status_enum.__name__}, got {rec.status!r}")
    if not spec.flat and (not isinstance(rec.configuration, list) or not rec.configuration
                          or not all(isinstance(s, spec.state_enum) for s in rec.configuration)):
        raise invalid("configuration", f"expected a non-empty list of {enum_name}, got "
                      f"{rec.configuration!r}")
    if not is_aware(rec.lastTransitionAt):
        raise invalid("lastTransitionAt", "expected a datetime with a time zone, got "
                      f"{rec.lastTransitionAt!r}")
    if not isinstance(rec.counts, dict) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in rec.counts.values()):
        raise invalid("counts", f"expected entry counts of {sorted(spec.counted)}")
    if not isinstance(rec.history, list):
        raise invalid("history", f"expected a list, got {rec.history!r}")
    for field, kind in spec.codec.types.items():
        value = getattr(record, spec.attrs[field])
        if value is not None:
            try:
                spec.codec.to_json(field, value)
            except TypeError:
                raise invalid(field, f"expected a {kind} value, got {value!r}") from None
    if spec.timers:
        if not is_aware(rec.createdAt):
            raise invalid("createdAt", "expected a datetime with a time zone, got "
                          f"{rec.createdAt!r}")
        if rec.history and is_aware(rec.history[0].at) and rec.history[0].at < rec.createdAt:
            raise invalid("createdAt", "expected a time no later than the first step's "
                          f"{time_text(rec.history[0].at)}, got {time_text(rec.createdAt)}")
    configuration, counts, last, remembered, armed = replay(spec, record, read)
    recorded = spec.configuration_names(record)
    if not spec.flat and recorded != configuration:
        raise invalid("configuration", f"the history ends in {list(configuration)}, "
                      f"not {list(recorded)}")
    reported = spec.reported(configuration)
    if rec.status is not reported:
        raise invalid("status", f"the history ends in {', '.join(configuration)}, which "
                      f"reports `{reported.value}`, not `{rec.status.value}`")
    if rec.counts != counts:
        raise invalid("counts", f"the history gives {counts}, not {rec.counts}")
    if spec.chart.remembers and {k: tuple(v) for k, v in rec.remembered.items()} != remembered:
        raise invalid("remembered", f"the history gives {remembered}, not {rec.remembered}")
    for name in configuration:
        for field in spec.requires.get(name, ()):
            if getattr(record, spec.attrs[field]) is None:
                raise invalid(field, f"required while in `{name}`, but not set")
    # Other than run context, fields change only by transitions: each holds its default or
    # the last value the history set, unless a later step cleared it.
    for field, attr in spec.attrs.items():
        if field in spec.context:
            continue  # the application's own (docs/generated-code.md: what is proved)
        value = getattr(record, attr)
        found = last.get(field)
        if found is None or found[1] is None:
            if value is not None:
                raise invalid(field, "no step of the history sets it" if found is None
                              else f"history[{found[2]}] clears it")
        elif not spec.codec.same(field, value, found[1]):
            where = "its default" if found[2] < 0 else f"history[{found[2]}]"
            raise invalid(field, f"the history's last value is {found[0]!r} ({where}), "
                          f"not {value!r}")
    if rec.history and rec.lastTransitionAt != rec.history[-1].at:
        raise invalid("lastTransitionAt", f"expected the last step's time "
                      f"{time_text(rec.history[-1].at)}, got {time_text(rec.lastTransitionAt)}")
    if armed is not None:
        timers.check(spec, record, armed)


def replay(spec: SpecTables, record: Record,
           read: Sequence[_replay.Raw] | None = None) -> _replay.Replayed:
    """Where a record's history ends (statechart_runtime.replay, strict): InvalidRecord at
    the first step this spec could not have taken. Delay timers of the initial states count
    from `createdAt`; run context is read from the record as it is now. `read`: the history
    as `raw_step` read it (the record's steps were made of it), else each step is checked."""
    rec: Any = record
    attrs = spec.attrs
    step_class = step_class_of(record)

    def typed(spec: Any, where: str, step: object) -> _replay.Raw:
        return _replay.typed_step(spec, step_class, where, step)

    def as_read(spec: Any, where: str, step: object) -> _replay.Raw:
        return step  # type: ignore[return-value]  # an entry of `read`

    return _replay.replay(  # type: ignore[return-value]  # strict: never None
        spec, rec.history if read is None else read, typed if read is None else as_read,
        created_at=rec.createdAt if spec.timers else None,
        context_of=lambda name: getattr(record, attrs[name]))


def upgrade(spec: SpecTables, data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A record stored by an earlier version of the spec, renamed into this version's names
    (states, fields, counts, history). Records of this version are returned as they are, but
    for timer events that name no timer now (`timers.current_event`: records written before
    timers had ids); a version with no migration keeps its names and is checked like any
    record."""
    version = data.get("specVersion")
    if not isinstance(version, int) or isinstance(version, bool) \
            or not 1 <= version < spec.version:
        return _timer_events(spec, data) if spec.timers else data
    states, fields = spec.migrations.get(version, ({}, {}))

    def state(name: Any) -> Any:
        return states.get(name, name) if isinstance(name, str) else name

    def values(raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        renamed = ((fields.get(key, key), value) for key, value in raw.items())
        return {key: value for key, value in renamed if key is not None}

    def event(name: Any, where: str) -> Any:
        # An internal event names its state (`after.delay1.waiting`): renamed with the
        # state; a timer's, then mapped to the timer it stands for now.
        if isinstance(name, str):
            name = internal_events.with_state(name, states)
        return timers.current_event(spec, name, where) if spec.timers else name

    upgraded: dict[str, Any] = values(dict(data))
    upgraded["specVersion"] = spec.version
    if not spec.timers:  # the old version had timers, this one has none
        upgraded.pop("createdAt", None)
        upgraded.pop("timers", None)
    for field in spec.fills.get(version, ()):  # a field that became required: its default
        upgraded.setdefault(field, spec.defaults[field])
    history = upgraded.get("history")
    if isinstance(history, list):
        steps = []
        for index, step in enumerate(history):
            if isinstance(step, dict):
                name = event(step.get("event"), f"history[{index}].event")
                target = state(step.get("target"))
                step = {**step, "source": _declaring(spec, state(step.get("source")), name,
                                                     target),
                        "event": name, "target": target, "values": values(step.get("values"))}
            steps.append(step)
        upgraded["history"] = history = steps
    # The renamed history is the source of truth: status, configuration and counts are
    # what replaying it gives (states may have moved into compound states or gained limits).
    # With no history, they follow from the renamed status; a history that does not replay
    # is refused by `check_record`, at the entry that breaks.
    status = state(upgraded.get("status"))
    replayed = _replay.replay(spec, history, _replay.raw_step, created_at=None,
                              context_of=lambda name: None, strict=False) \
        if isinstance(history, list) and history else None
    if replayed is not None:
        _agrees_with_replay(spec, upgraded, state, status, replayed[:2])
        configuration, upgraded["counts"] = replayed.configuration, replayed.counts
        if spec.chart.remembers:
            upgraded["remembered"] = {k: list(v) for k, v in replayed.remembered.items()}
    elif isinstance(status, str) and status in spec.chart.order:
        configuration = spec.chart.configuration_of(status)
        upgraded["counts"] = (dict(spec.initial_counts) if history == []
                              else upgraded.get("counts"))
    elif history == [] and spec.status_of:  # a status need not name a state
        configuration = spec.chart.initial_configuration()
        upgraded["counts"] = dict(spec.initial_counts)
    else:
        upgraded["status"] = status
        return upgraded
    upgraded["status"] = spec.reported(configuration).value
    for counter, counted in spec.counters.items():
        upgraded[counter] = upgraded["counts"].get(counted) \
            if isinstance(upgraded["counts"], dict) else None
    if spec.flat:
        upgraded.pop("configuration", None)
    else:
        upgraded["configuration"] = list(configuration)
    return upgraded


def _timer_events(spec: SpecTables, data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A record of this version with the timer events of its history and `timers` that name no
    timer of the spec now mapped to the ones they stand for (`timers.current_event`: a record
    written before timers had ids names them by their delay). Returned as it is when there
    are none (the common case: one look-up per step)."""
    known = spec.events_by_name
    history, armed = data.get("history"), data.get("timers")
    steps = history if isinstance(history, list) else []
    entries = armed if isinstance(armed, list) else []
    if all(not isinstance(x, dict) or not isinstance(x.get("event"), str)
           or x["event"] in known for x in (*steps, *entries)):
        return data
    upgraded = dict(data)
    for key, items in (("history", steps), ("timers", entries)):
        if items:
            upgraded[key] = [
                {**x, "event": timers.current_event(spec, x.get("event"), f"{key}[{i}].event")}
                if isinstance(x, dict) else x for i, x in enumerate(items)]
    return upgraded


def _declaring(spec: SpecTables, source: Any, event: Any, target: Any) -> Any:
    """The state that declares an old step's transition in this version: the step's own
    source, or, when the transition moved up to an ancestor (a state moved into a compound
    state that now handles the event for all its children), that ancestor."""
    if not (isinstance(source, str) and source in spec.chart.order
            and (source, event, target) not in spec.alternatives.keyed):
        return source
    for ancestor in spec.chart.ancestors(source):
        if (ancestor, event, target) in spec.alternatives.keyed:
            return ancestor
    return source


def _agrees_with_replay(spec: SpecTables, upgraded: Mapping[str, Any],
                        state: Callable[[Any], Any], status: Any,
                        replayed: tuple[tuple[str, ...], dict[str, int]]) -> None:
    """An old record's own status, configuration and counts, renamed, must agree with what its
    renamed history gives before they are replaced by it: a tampered old record is refused as
    the old module would have refused it. (A state may have moved into a compound state or
    gained children, so the stored states need only be among the replayed ones.)"""
    configuration, counts = replayed
    # With a status vocabulary a status need not be a state: it is recomputed from the
    # configuration, not compared.
    if isinstance(status, str) and not spec.status_of and status not in configuration:
        raise spec.invalid("status", f"the stored `{status}` is not where the history ends "
                           f"({', '.join(configuration)})")
    stored = upgraded.get("configuration")
    if isinstance(stored, list):
        for name in map(state, stored):
            if isinstance(name, str) and name not in configuration:
                raise spec.invalid("configuration", f"the stored `{name}` is not where the "
                                   f"history ends ({', '.join(configuration)})")
    old_counts = upgraded.get("counts")
    if isinstance(old_counts, dict):
        for name, count in old_counts.items():
            new = state(name)
            if new in counts and count != counts[new]:
                raise spec.invalid("counts", f"the stored count of `{name}` is {count!r}, the "
                                   f"history gives {counts[new]}")


def record_checker(record_class: type[R]) -> Callable[[R], None]:
    """The module-level `check_record` of a generated module: `check_record` for its own
    record class only."""
    def check(record: R) -> None:
        """Refuse a record this spec could not have produced: its class, the types of every
        field and history entry (as `from_json` gives them), then the history's replay."""
        check_record(record, record_class)
    return check
