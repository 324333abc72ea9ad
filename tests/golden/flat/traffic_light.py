# Generated from spec.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: 9038b48522fb48649f863cfd829b95cf5f97ab39b1e01d895a34f2f9f0f691bc
# Regenerate with: statechart build
"""The `traffic_light` statechart, version 1: a typed python-statemachine class and its run
record. Generated; see DESCRIPTION for the spec's own words."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
from collections.abc import Mapping as _Mapping
from dataclasses import field as _field
from typing import Final as _Final
from typing import TypeAlias as _TypeAlias

try:
    import statechart_runtime as _rt
    from statechart_runtime import api as _api
except ImportError as _error:  # an application that runs this module needs only the runtime
    raise ImportError(f"{__name__} needs the statechart-runtime package: "
                      "pip install 'statechart-runtime @ git+https://github.com/statechart-compiler/statechart-compiler#subdirectory=runtime'") from _error
_rt.check_api((1, 7), __name__, 'statechart-compiler 0.2.0')

SPEC_NAME: _Final = 'traffic_light'
SPEC_VERSION: _Final = 1
SPEC_SHA256: _Final = '9038b48522fb48649f863cfd829b95cf5f97ab39b1e01d895a34f2f9f0f691bc'
DESCRIPTION: _Final = 'A flat machine with a final state.'


class TrafficLightState(enum.Enum):
    """Every state, nested ones included, in document order."""

    red = 'red'
    green = 'green'
    yellow = 'yellow'
    off_duty = 'off_duty'


class TrafficLightEvent(enum.Enum):
    """Every event, in order of first use."""

    go = 'go'
    shut_down = 'shut_down'
    slow = 'slow'
    stop = 'stop'


STATE_DESCRIPTIONS: _Final[_Mapping[TrafficLightState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[TrafficLightEvent, str]] = {
}


class TrafficLightInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class TrafficLightLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class TrafficLightMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_DateTime: _TypeAlias = _dt.datetime
_TrafficLightState: _TypeAlias = TrafficLightState

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('red', None, 'atomic', None),
        ('green', None, 'atomic', None),
        ('yellow', None, 'atomic', None),
        ('off_duty', None, 'final', None),
    ),
    initial='red',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('red', 'go', 'green', ()),
        ('red', 'shut_down', 'off_duty', ()),
        ('green', 'slow', 'yellow', ()),
        ('green', 'shut_down', 'off_duty', ()),
        ('yellow', 'stop', 'red', ()),
        ('yellow', 'shut_down', 'off_duty', ()),
    ),
    state_enum=TrafficLightState,
    event_enum=TrafficLightEvent,
    errors=(TrafficLightInvalidRecord, TrafficLightLimitExceeded, TrafficLightMissingField),
)

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('spec.yaml',),
    'states': {
        'red': (0, 6),
        'green': (0, 8),
        'yellow': (0, 10),
        'off_duty': (0, 12),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('red', 'go', 0): (0, 7, None),
        ('red', 'shut_down', 0): (0, 7, None),
        ('green', 'slow', 0): (0, 9, None),
        ('green', 'shut_down', 0): (0, 9, None),
        ('yellow', 'stop', 0): (0, 11, None),
        ('yellow', 'shut_down', 0): (0, 11, None),
    },
}


class TrafficLightStep(_api.Step[TrafficLightEvent, TrafficLightState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class TrafficLightRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = TrafficLightStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _TrafficLightState = _TrafficLightState.red
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[TrafficLightStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))


check_record: _Final = _api.record_checker(TrafficLightRecord)


class TrafficLightMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `TrafficLight`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    red = _api.State(initial=True)
    green = _api.State()
    yellow = _api.State()
    off_duty = _api.State(final=True)

    red.to(green, event='go')
    red.to(off_duty, event='shut_down')
    green.to(yellow, event='slow')
    green.to(off_duty, event='shut_down')
    yellow.to(red, event='stop')
    yellow.to(off_duty, event='shut_down')


class TrafficLight(_api.Run[TrafficLightRecord, TrafficLightState, TrafficLightEvent]):
    """One run of `traffic_light`: a method per event, the record in `record`, guards and actions
    to override."""

    _sc_spec = _SPEC
    _sc_record = TrafficLightRecord
    _sc_machine = TrafficLightMachine
    _sc_source = _SOURCE

    def go(self) -> None:
        """Moves: red -> green."""
        self._fire('go', None)

    def shut_down(self) -> None:
        """Moves: green -> off_duty, red -> off_duty, yellow -> off_duty."""
        self._fire('shut_down', None)

    def slow(self) -> None:
        """Moves: green -> yellow."""
        self._fire('slow', None)

    def stop(self) -> None:
        """Moves: yellow -> red."""
        self._fire('stop', None)
