# Generated from spec.yaml by statechart-compiler. DO NOT EDIT.
# Source sha256: 9b30fd82d5990b332cf86862379f10b6ffe53bd380b9f5c5fd1c8b995cb36ccd
# Regenerate with: statechart build
"""The `np` statechart, version 1: a typed python-statemachine class and its run record.
Generated; see DESCRIPTION for the spec's own words."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
import math
import re
import uuid
from collections.abc import Callable as _Callable
from collections.abc import Mapping as _Mapping
from dataclasses import field as _field
from typing import Any as _Any
from typing import Final as _Final
from typing import TypeAlias as _TypeAlias

from statemachine import State as _State
from statemachine import StateMachine as _StateMachine
from statemachine.orderedset import OrderedSet as _OrderedSet

SPEC_NAME: _Final = 'np'
SPEC_VERSION: _Final = 1
SPEC_SHA256: _Final = '9b30fd82d5990b332cf86862379f10b6ffe53bd380b9f5c5fd1c8b995cb36ccd'
DESCRIPTION: _Final = (
    'A two-character name, and docstrings that fill the line to'
    ' the last column.'
)


class NpState(enum.Enum):
    """Every state, nested ones included, in document order."""

    alpha = 'alpha'
    beta = 'beta'
    gamma_a = 'gamma_a'
    delta = 'delta'
    epsilon_x = 'epsilon_x'
    omega = 'omega'


class NpEvent(enum.Enum):
    """Every event, in order of first use."""

    go = 'go'
    hop = 'hop'
    skip = 'skip'


STATE_DESCRIPTIONS: _Final[_Mapping[NpState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[NpEvent, str]] = {
}


class NpInvalidRecord(ValueError):
    """A run record this module refuses; `field` is the JSON key at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class NpLimitExceeded(RuntimeError):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""

    def __init__(self, state: str, limit: int) -> None:
        super().__init__(f"state `{state}` may be entered at most {limit} times per run")
        self.state = state
        self.limit = limit


class NpMissingField(ValueError):
    """A value a transition sets, or a state requires, was not given."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_str: _TypeAlias = str
_int: _TypeAlias = int
_datetime: _TypeAlias = _dt.datetime
_json_value_t: _TypeAlias = str | int | float | bool
_json_object: _TypeAlias = dict[str, _Any]
_clock: _TypeAlias = _Callable[[], _dt.datetime]
_Invalid = NpInvalidRecord
_Limit = NpLimitExceeded
_Missing = NpMissingField
_NpState: _TypeAlias = NpState
_NpEvent: _TypeAlias = NpEvent

_STATE: _Final = NpState.__members__
_EVENT: _Final = NpEvent.__members__
_FIELD_TYPES: _Final[dict[str, str]] = {
}
_FIELD_ENUMS: _Final[dict[str, type[enum.Enum]]] = {
}
# (source, event, target) -> (domain, entered states, fields set). Leaving a transition
# exits every active state under its domain (all of them when the domain is None).
_Effect: _TypeAlias = tuple[str | None, tuple[str, ...], tuple[str, ...]]
_EFFECTS: _Final[dict[tuple[str, str, str], _Effect]] = {
    ('alpha', 'go', 'omega'): (None, ('omega',), ()),
    ('alpha', 'hop', 'beta'): (None, ('beta',), ()),
    ('alpha', 'skip', 'epsilon_x'): (None, ('epsilon_x',), ()),
    ('beta', 'go', 'omega'): (None, ('omega',), ()),
    ('beta', 'hop', 'gamma_a'): (None, ('gamma_a',), ()),
    ('beta', 'skip', 'epsilon_x'): (None, ('epsilon_x',), ()),
    ('gamma_a', 'go', 'omega'): (None, ('omega',), ()),
    ('gamma_a', 'hop', 'delta'): (None, ('delta',), ()),
    ('gamma_a', 'skip', 'epsilon_x'): (None, ('epsilon_x',), ()),
    ('delta', 'go', 'omega'): (None, ('omega',), ()),
    ('delta', 'hop', 'alpha'): (None, ('alpha',), ()),
    ('delta', 'skip', 'epsilon_x'): (None, ('epsilon_x',), ()),
    ('epsilon_x', 'go', 'omega'): (None, ('omega',), ()),
}
_LIMITS: _Final[dict[str, int]] = {
}
_REQUIRES: _Final[dict[str, tuple[str, ...]]] = {
}
_INITIAL_CONFIGURATION: _Final[tuple[str, ...]] = ('alpha',)
_FINAL: _Final[frozenset[str]] = frozenset({'omega'})
_NO_VALUES: _Final[dict[str, tuple[_Any, _json_value_t]]] = {}
# Records of older versions: {version: (old state -> state, old field -> field or None)}.
_MIGRATIONS: _Final[dict[int, tuple[dict[str, str], dict[str, str | None]]]] = {}


# RFC 3339 date-time with an offset, as JSON Schema's `date-time` (rfc3339-validator) reads it
# (after upper-casing): no week dates, no basic format, no `,` fractions, no seconds offsets.
_RFC3339: _Final = re.compile(
    r"(\d{4})-(0[1-9]|1[0-2])-(\d{2})T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(\.\d+)?"
    r"(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)", re.ASCII)
_MINUTE: _Final = _dt.timedelta(minutes=1)


def _utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def _aware(value: object) -> bool:
    return isinstance(value, _dt.datetime) and value.utcoffset() is not None


def _time_text(value: _dt.datetime) -> str:
    """RFC 3339 text of an aware time: its own offset when that is whole minutes (RFC 3339
    has no seconds in offsets), else converted to UTC."""
    offset = value.utcoffset()
    if offset is not None and offset % _MINUTE:
        value = value.astimezone(_dt.UTC)
    return value.isoformat()


def _now(clock: _clock) -> _dt.datetime:
    now = clock()
    if not _aware(now):
        raise TypeError(f"the clock must return a datetime with a time zone, got {now!r}")
    return now


def _json_value(field: str, value: object) -> _json_value_t:
    """`value` as JSON, after checking it has the field's type (callers may ignore types)."""
    kind = _FIELD_TYPES[field]
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            if math.isfinite(value):
                return value
        except OverflowError:  # an int too large for a float
            pass
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "datetime" and isinstance(value, _dt.datetime) and _aware(value):
        return _time_text(value)
    if kind == "enum" and isinstance(value, _FIELD_ENUMS[field]):
        return str(value.value)
    raise TypeError(f"{field}: expected a {kind} value"
                    + (" with a time zone" if kind == "datetime" else "") + f", got {value!r}")


def _from_json_value(field: str, raw: object, where: str | None = None) -> _Any:
    """The typed value of a field's JSON value, or NpInvalidRecord naming the field."""
    kind = _FIELD_TYPES[field]
    try:
        if kind == "datetime" and isinstance(raw, str):
            return _parse_time(where or field, raw)
        if kind == "enum" and isinstance(raw, str):
            return _FIELD_ENUMS[field](raw)
        if kind == "number" and isinstance(raw, int) and not isinstance(raw, bool):
            return float(raw)
        if kind not in ("datetime", "enum"):
            _json_value(field, raw)
            return raw
    except (TypeError, ValueError, OverflowError):
        pass
    expected = f"one of {[m.value for m in _FIELD_ENUMS[field]]}" if kind == "enum" else kind
    raise _Invalid(where or field, f"expected {expected}, got {raw!r}")


def _parse_time(field: str, raw: object) -> _dt.datetime:
    if isinstance(raw, str):
        text = raw.upper()
        match = _RFC3339.fullmatch(text)
        if match is not None:
            fraction = (match.group(7) or "")[:7]  # Python keeps microseconds
            offset = "+00:00" if match.group(8) == "Z" else match.group(8)
            try:
                return _dt.datetime.fromisoformat(text[:19] + fraction + offset)
            except ValueError:  # a day the month does not have, year 0
                pass
    raise _Invalid(field, f"expected an RFC 3339 date-time with offset, got {raw!r}")


def _next_configuration(
    configuration: tuple[str, ...], domain: str | None, entered: tuple[str, ...]
) -> tuple[str, ...]:
    return entered


@dataclasses.dataclass(slots=True)
class NpStep:
    """One transition of a run: the transition's own source and target, and what it set."""

    event: _NpEvent
    source: _NpState
    target: _NpState
    at: _datetime
    values: dict[_str, _json_value_t] = _field(default_factory=dict)

    def to_dict(self) -> _json_object:
        return {
            "event": self.event.value,
            "source": self.source.value,
            "target": self.target.value,
            "at": _time_text(self.at),
            "values": dict(self.values),
        }


@dataclasses.dataclass
class NpRecord:
    """The persisted state of one run. JSON keys are the attribute names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    # Methods first: mypy reads a class body in order, and a record field named like a type
    # (say `dict`) would otherwise hide that type from the signatures below it.
    def to_dict(self) -> _json_object:
        data: _json_object = {
            "runId": self.runId,
            "specVersion": self.specVersion,
            "status": self.status.value,
            "lastTransitionAt": _time_text(self.lastTransitionAt),
            "history": [step.to_dict() for step in self.history],
            "counts": dict(self.counts),
        }
        for field in _FIELD_TYPES:
            value = getattr(self, field)
            if value is not None:
                data[field] = _json_value(field, value)
        return data

    def to_json(self) -> _str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False, indent=2)

    @classmethod
    def from_dict(cls, data: _Mapping[_str, _Any]) -> NpRecord:
        """Parse and check a record: types, status, configuration, counts and history.

        A record of an earlier spec version is first upgraded with that version's migration.
        """
        if not isinstance(data, _Mapping):
            raise _Invalid("(record)", "expected a JSON object")
        data = _upgrade(data)
        known = {"runId", "specVersion", "status", "configuration", "lastTransitionAt",
                 "history", "counts", *_FIELD_TYPES}
        for key in data:
            if key not in known:
                raise _Invalid(str(key), "unknown key")
        run_id = data.get("runId")
        if not isinstance(run_id, str) or not run_id:
            raise _Invalid("runId", "expected a non-empty string")
        version = data.get("specVersion")
        if isinstance(version, bool) or version != SPEC_VERSION:
            raise _Invalid(
                "specVersion", f"this module reads version {SPEC_VERSION} "
                f"records of {SPEC_NAME!r}, got {data.get('specVersion')!r}")
        status = _state_of("status", data.get("status"))
        counts = data.get("counts")
        if not isinstance(counts, dict) or set(counts) != set(_LIMITS) or not all(
                isinstance(n, int) and not isinstance(n, bool) for n in counts.values()):
            raise _Invalid("counts", f"expected entry counts of {sorted(_LIMITS)}")
        history = data.get("history")
        if not isinstance(history, list):
            raise _Invalid("history", "expected a list")
        record = cls(
            runId=run_id,
            status=status,
            lastTransitionAt=_parse_time("lastTransitionAt", data.get("lastTransitionAt")),
            history=[_step_from_dict(i, step) for i, step in enumerate(history)],
            counts=dict(counts),
        )
        for field in _FIELD_TYPES:
            if field in data:
                setattr(record, field, _from_json_value(field, data[field]))
        check_record(record)
        return record

    @classmethod
    def from_json(cls, text: _str | bytes) -> NpRecord:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise _Invalid(
                "(record)", f"not JSON: {exc}") from None
        return cls.from_dict(data)

    runId: _str
    specVersion: _int = SPEC_VERSION
    status: _NpState = _NpState.alpha
    lastTransitionAt: _datetime = _field(default_factory=_utcnow)
    history: list[NpStep] = _field(default_factory=list)
    counts: dict[_str, _int] = _field(default_factory=lambda: _initial_counts())
    # The spec's fields. Annotations use the `_` aliases: see the note above them.


def _state_of(where: str, raw: object) -> NpState:
    if isinstance(raw, str) and raw in _STATE:
        return _STATE[raw]
    raise _Invalid(where, f"unknown state {raw!r}")


def _upgrade(data: _Mapping[_str, _Any]) -> _Mapping[_str, _Any]:
    """A record stored by an earlier version of the spec, renamed into this version's names
    (states, fields, counts, history). Records of this version are returned as they are; a
    version with no migration keeps its names and is checked like any record."""
    version = data.get("specVersion")
    if not isinstance(version, int) or isinstance(version, bool) \
            or not 1 <= version < SPEC_VERSION:
        return data
    states, fields = _MIGRATIONS.get(version, ({}, {}))

    def state(name: _Any) -> _Any:
        return states.get(name, name) if isinstance(name, str) else name

    def values(raw: _Any) -> _Any:
        if not isinstance(raw, dict):
            return raw
        renamed = ((fields.get(key, key), value) for key, value in raw.items())
        return {key: value for key, value in renamed if key is not None}

    upgraded: dict[_str, _Any] = values(dict(data))
    upgraded["specVersion"] = SPEC_VERSION
    history = upgraded.get("history")
    if isinstance(history, list):
        upgraded["history"] = history = [
            {**step, "source": state(step.get("source")), "target": state(step.get("target")),
             "values": values(step.get("values"))} if isinstance(step, dict) else step
            for step in history
        ]
    # The renamed history is the source of truth: status, configuration and counts are
    # what replaying it gives (states may have moved into compound states or gained limits).
    # With no history, they follow from the renamed status; a history that does not replay
    # is refused by `check_record`, at the entry that breaks.
    status = state(upgraded.get("status"))
    replayed = _replay_raw(history) if isinstance(history, list) and history else None
    if replayed is not None:
        configuration, upgraded["counts"] = replayed
    elif isinstance(status, str) and status in _STATE:
        configuration = _default_configuration(status)
        upgraded["counts"] = _initial_counts() if history == [] else upgraded.get("counts")
    else:
        upgraded["status"] = status
        return upgraded
    upgraded["status"] = configuration[0]
    upgraded.pop("configuration", None)
    return upgraded


def _replay_raw(history: list[_Any]) -> tuple[tuple[str, ...], dict[str, int]] | None:
    """(configuration, counts) after replaying a JSON history, or None where it breaks."""
    configuration = _INITIAL_CONFIGURATION
    counts = _initial_counts()
    for step in history:
        if not isinstance(step, dict):
            return None
        source, event, target = step.get("source"), step.get("event"), step.get("target")
        if not (isinstance(source, str) and isinstance(event, str)
                and isinstance(target, str)):
            return None
        effect = _EFFECTS.get((source, event, target))
        if effect is None or source not in configuration:
            return None
        for name in effect[1]:
            if name in counts:
                counts[name] += 1
        configuration = _next_configuration(configuration, effect[0], effect[1])
    return configuration, counts


def _default_configuration(name: str) -> tuple[str, ...]:
    """`name` with its ancestors and the descendants entered with it by default."""
    return (name,)


def _step_from_dict(index: int, raw: object) -> NpStep:
    where = f"history[{index}]"
    keys = {"event", "source", "target", "at", "values"}
    if not isinstance(raw, dict) or set(raw) != keys:
        raise _Invalid(where, f"expected an object with keys {sorted(keys)}")
    event = raw["event"]
    if not isinstance(event, str) or event not in _EVENT:
        raise _Invalid(where + ".event", f"unknown event {event!r}")
    values = raw["values"]
    if not isinstance(values, dict):
        raise _Invalid(where + ".values", "expected an object")
    for field, value in values.items():
        if field not in _FIELD_TYPES:
            raise _Invalid(f"{where}.values.{field}", "not a field of the record")
        _from_json_value(field, value, f"{where}.values.{field}")
    return NpStep(
        event=_EVENT[event],
        source=_state_of(where + ".source", raw["source"]),
        target=_state_of(where + ".target", raw["target"]),
        at=_parse_time(where + ".at", raw["at"]),
        values=dict(values),
    )


def _initial_counts() -> dict[str, int]:
    counts = dict.fromkeys(_LIMITS, 0)
    for name in _INITIAL_CONFIGURATION:
        if name in counts:
            counts[name] += 1
    return counts


def _configuration_of(record: NpRecord) -> tuple[str, ...]:
    return (record.status.value,)


def check_record(record: NpRecord) -> None:
    """Refuse a record this spec could not have produced: every value must have its type (as
    `from_json` would give it), and the history is replayed from the initial state and must end
    in the recorded configuration, with the recorded counts, no limit exceeded, and every field
    the active states require set."""
    if not isinstance(record, NpRecord):
        raise _Invalid("(record)", f"expected a NpRecord, got {type(record).__name__}")
    if not isinstance(record.runId, str) or not record.runId:
        raise _Invalid("runId", f"expected a non-empty string, got {record.runId!r}")
    if isinstance(record.specVersion, bool) or record.specVersion != SPEC_VERSION:
        raise _Invalid("specVersion", f"expected {SPEC_VERSION}, got {record.specVersion!r}")
    if not isinstance(record.status, NpState):
        raise _Invalid("status", f"expected a NpState, got {record.status!r}")
    if not _aware(record.lastTransitionAt):
        raise _Invalid("lastTransitionAt", "expected a datetime with a time zone, got "
                       f"{record.lastTransitionAt!r}")
    if not isinstance(record.counts, dict) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in record.counts.values()):
        raise _Invalid("counts", f"expected entry counts of {sorted(_LIMITS)}")
    if not isinstance(record.history, list):
        raise _Invalid("history", f"expected a list, got {record.history!r}")
    for field, kind in _FIELD_TYPES.items():
        value = getattr(record, field)
        if value is not None:
            try:
                _json_value(field, value)
            except TypeError:
                raise _Invalid(field, f"expected a {kind} value, got {value!r}") from None
    configuration = _INITIAL_CONFIGURATION
    counts = _initial_counts()
    for index, step in enumerate(record.history):
        where = f"history[{index}]"
        _check_step(where, step)
        key = (step.source.value, step.event.value, step.target.value)
        effect = _EFFECTS.get(key)
        if effect is None:
            raise _Invalid(where, f"the spec has no transition {key[0]} -{key[1]}-> {key[2]}")
        if key[0] not in configuration:
            raise _Invalid(
                where, f"`{key[0]}` was not active (active: "
                f"{', '.join(configuration)})")
        for field in set(step.values) | set(effect[2]):
            if field not in effect[2]:
                raise _Invalid(f"{where}.values.{field}", f"`{key[1]}` does not set it")
            if field not in step.values:
                raise _Invalid(f"{where}.values.{field}", f"`{key[1]}` sets it; missing")
        for name in effect[1]:
            if name in counts:
                counts[name] += 1
                if counts[name] > _LIMITS[name]:
                    raise _Invalid(
                        where, f"enters `{name}` more than {_LIMITS[name]} "
                        "times (its limit)")
        configuration = _next_configuration(configuration, effect[0], effect[1])
    if record.status.value != configuration[0]:
        raise _Invalid(
            "status", f"the history ends in `{configuration[0]}`, not "
            f"`{record.status.value}`")
    if record.counts != counts:
        raise _Invalid("counts", f"the history gives {counts}, not {record.counts}")
    for name in configuration:
        for field in _REQUIRES.get(name, ()):
            if getattr(record, field) is None:
                raise _Invalid(field, f"required while in `{name}`, but not set")


def _check_step(where: str, step: object) -> None:
    if not isinstance(step, NpStep):
        raise _Invalid(where, f"expected a NpStep, got {step!r}")
    if not isinstance(step.event, NpEvent):
        raise _Invalid(where + ".event", f"expected a NpEvent, got {step.event!r}")
    for end, state in (("source", step.source), ("target", step.target)):
        if not isinstance(state, NpState):
            raise _Invalid(f"{where}.{end}", f"expected a NpState, got {state!r}")
    if not _aware(step.at):
        raise _Invalid(where + ".at", f"expected a datetime with a time zone, got {step.at!r}")
    if not isinstance(step.values, dict):
        raise _Invalid(where + ".values", f"expected a dict, got {step.values!r}")
    for field, value in step.values.items():
        if field not in _FIELD_TYPES:
            raise _Invalid(f"{where}.values.{field}", "not a field of the record")
        _from_json_value(field, value, f"{where}.values.{field}")


class NpMachine(_StateMachine):
    """The states and transitions for python-statemachine. Use `Np`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    # `statechart check` validated the graph; the library's own checks would repeat that at
    # every import, and the final-reachability one is quadratic in the number of states.
    validate_disconnected_states = False
    validate_trap_states = False
    validate_final_reachability = False

    alpha = _State(initial=True)
    beta = _State()
    gamma_a = _State()
    delta = _State()
    epsilon_x = _State()
    omega = _State(final=True)

    # One statement per transition: a long `a.to(b) | c.to(d) | ...` chain overflows the
    # compiler's recursion limit on big specs.
    alpha.to(omega, event='go')
    alpha.to(beta, event='hop')
    alpha.to(epsilon_x, event='skip')
    beta.to(omega, event='go')
    beta.to(gamma_a, event='hop')
    beta.to(epsilon_x, event='skip')
    gamma_a.to(omega, event='go')
    gamma_a.to(delta, event='hop')
    gamma_a.to(epsilon_x, event='skip')
    delta.to(omega, event='go')
    delta.to(alpha, event='hop')
    delta.to(epsilon_x, event='skip')
    epsilon_x.to(omega, event='go')


class _Model:
    """Where python-statemachine keeps the configuration (set before start: a restore)."""

    def __init__(self, state: object) -> None:
        self.state = state


class Np:
    """One run of `np`: a method per event, the record in `record`, guards and actions to
    override."""

    # Own API first: mypy reads a class body in order, and an event named like a type or
    # `property` would otherwise hide it from what follows.
    def __init__(
        self,
        record: NpRecord | None = None,
        *,
        run_id: str | None = None,
        model: object = None,
        clock: _clock | None = None,
    ) -> None:
        """A new run (entry actions of the initial states run), or, given a record, the run
        it describes, restored where it stopped (no entry action runs again)."""
        self.clock: _clock = clock if clock is not None else _utcnow
        self._pending: tuple[str, dict[str, tuple[_Any, _json_value_t]]] | None = None
        stored: object = None
        if record is None:
            for name in _INITIAL_CONFIGURATION:
                for field in _REQUIRES.get(name, ()):
                    raise _Missing(
                        field, f"the initial state `{name}` requires it; "
                        "start from a record that sets it")
            record = NpRecord(runId=run_id or uuid.uuid4().hex,
                                  lastTransitionAt=_now(self.clock))
        else:
            if run_id is not None:
                raise TypeError("run_id comes from the record when one is given")
            check_record(record)
            active = _configuration_of(record)
            stored = active[0] if len(active) == 1 else _OrderedSet(active)
        self.record = record
        self._active = _configuration_of(record)
        listeners: list[object] = [self] if model is None else [self, model]
        self.machine = NpMachine(model=_Model(stored), listeners=listeners)

    @classmethod
    def restore(cls, record: NpRecord, **kwargs: _Any) -> Np:
        """The run `record` describes (checked first: NpInvalidRecord names the field)."""
        return cls(record, **kwargs)

    @property
    def status(self) -> NpState:
        return self.record.status

    @property
    def configuration(self) -> tuple[NpState, ...]:
        """Every active state, ancestors included, in document order."""
        return tuple(_STATE[name] for name in _configuration_of(self.record))

    @property
    def is_terminated(self) -> bool:
        return self.record.status.value in _FINAL

    def before_transition(self, source: _State, target: _State) -> None:
        """python-statemachine calls this in every transition before any exit or entry
        action: it checks the spec's contract (raising cancels the transition), then
        updates the record. Kept in one function: it runs on every event."""
        pending = self._pending
        if pending is None:
            raise RuntimeError(f"send events through {type(self).__name__}'s methods, not its "
                               "machine: they keep the run record")
        event, values = pending
        key = (source.id, event, target.id)
        domain, entered, sets = _EFFECTS[key]
        record = self.record
        for field in sets:
            if field not in values:
                raise _Missing(
                    field, f"`{event}` from `{key[0]}` to `{key[2]}` sets "
                    f"it; pass {field}=...")
        configuration = _next_configuration(self._active, domain, entered)
        now = _now(self.clock)
        # Checked: from here on nothing raises, and `_fire` undoes it if the library does.
        step_values: dict[str, _json_value_t] = {}
        for field in sets:
            typed, as_json = values[field]
            setattr(record, field, typed)
            step_values[field] = as_json
        record.status = _STATE[configuration[0]]
        record.lastTransitionAt = now
        record.history.append(
            NpStep(_EVENT[event], _STATE[key[0]], _STATE[key[2]], now, step_values))
        self._active = configuration

    def _fire(self, event: str, values: dict[str, _Any] | None) -> None:
        if self._pending is not None:
            raise RuntimeError(f"event `{event}` sent while `{self._pending[0]}` is being "
                               "handled; send it after the action returns")
        checked = {f: (v, _json_value(f, v)) for f, v in values.items()
                   if v is not None} if values else _NO_VALUES
        record = self.record
        saved = (record.status, record.counts,
                 record.lastTransitionAt, len(record.history), self._active)
        fields = [(f, getattr(record, f)) for f in checked]
        self._pending = (event, checked)
        try:
            self.machine.send(event)
        except BaseException:
            # python-statemachine rolled its configuration back; roll the record back too.
            (record.status, record.counts,
             record.lastTransitionAt, length, self._active) = saved
            del record.history[length:]
            for field, value in fields:
                setattr(record, field, value)
            raise
        finally:
            self._pending = None

    def go(self) -> None:
        """Moves: alpha -> omega, beta -> omega, delta -> omega, epsilon_x -> omega, gamma_a ->
        omega."""
        self._fire('go', None)

    def hop(self) -> None:
        """Moves: alpha -> beta, beta -> gamma_a, delta -> alpha, gamma_a -> delta."""
        self._fire('hop', None)

    def skip(self) -> None:
        """Moves: alpha -> epsilon_x, beta -> epsilon_x, delta -> epsilon_x, gamma_a ->
        epsilon_x."""
        self._fire('skip', None)
