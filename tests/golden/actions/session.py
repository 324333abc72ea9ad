# Generated from spec.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: 63ff03b415fce7e9d6e1c066c7a96a5040a5b8dad49db7bccfe681285a068b47
# Regenerate with: statechart build
"""The `session` statechart, version 1: a typed python-statemachine class and its run record.
Generated; see DESCRIPTION for the spec's own words."""

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

SPEC_NAME: _Final = 'session'
SPEC_VERSION: _Final = 1
SPEC_SHA256: _Final = '63ff03b415fce7e9d6e1c066c7a96a5040a5b8dad49db7bccfe681285a068b47'
DESCRIPTION: _Final = 'Entry and exit actions on atomic and compound states.'


class SessionState(enum.Enum):
    """Every state, nested ones included, in document order."""

    connecting = 'connecting'
    online = 'online'
    active = 'active'
    away = 'away'
    gone = 'gone'


class SessionEvent(enum.Enum):
    """Every event, in order of first use."""

    connected = 'connected'
    drop = 'drop'
    logout = 'logout'
    idle = 'idle'
    wake = 'wake'


STATE_DESCRIPTIONS: _Final[_Mapping[SessionState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[SessionEvent, str]] = {
}


class SessionInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class SessionLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class SessionMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_DateTime: _TypeAlias = _dt.datetime
_SessionState: _TypeAlias = SessionState

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('connecting', None, 'atomic', None),
        ('online', None, 'compound', 'active'),
        ('active', 'online', 'atomic', None),
        ('away', 'online', 'atomic', None),
        ('gone', None, 'final', None),
    ),
    initial='connecting',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('connecting', 'connected', 'online', ()),
        ('online', 'drop', 'connecting', ()),
        ('online', 'logout', 'gone', ()),
        ('active', 'idle', 'away', ()),
        ('away', 'wake', 'active', ()),
    ),
    state_enum=SessionState,
    event_enum=SessionEvent,
    errors=(SessionInvalidRecord, SessionLimitExceeded, SessionMissingField),
)

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('spec.yaml',),
    'states': {
        'connecting': (0, 6),
        'online': (0, 9),
        'active': (0, 15),
        'away': (0, 19),
        'gone': (0, 21),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('connecting', 'connected', 0): (0, 8, None),
        ('online', 'drop', 0): (0, 13, None),
        ('online', 'logout', 0): (0, 13, None),
        ('active', 'idle', 0): (0, 18, None),
        ('away', 'wake', 0): (0, 20, None),
    },
}


class SessionStep(_api.Step[SessionEvent, SessionState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class SessionRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = SessionStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _SessionState = _SessionState.connecting
    configuration: list[_SessionState] = _field(
        default_factory=lambda: [SessionState.connecting])
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[SessionStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))


check_record: _Final = _api.record_checker(SessionRecord)


class SessionMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `Session`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    connecting = _api.State(initial=True, enter=['open_socket'])

    class online(_api.State.Compound, enter=['start_heartbeat'], exit=['stop_heartbeat']):
        active = _api.State(initial=True, enter=['mark_active'], exit=['mark_idle'])
        away = _api.State()
    gone = _api.State(final=True, enter=['close_socket'])

    connecting.to(online, event='connected')
    online.to(connecting, event='drop')
    online.to(gone, event='logout')
    online.active.to(online.away, event='idle')
    online.away.to(online.active, event='wake')


class Session(_api.Run[SessionRecord, SessionState, SessionEvent]):
    """One run of `session`: a method per event, the record in `record`, guards and actions to
    override."""

    _sc_spec = _SPEC
    _sc_record = SessionRecord
    _sc_machine = SessionMachine
    _sc_source = _SOURCE

    def connected(self) -> None:
        """Moves: connecting -> online."""
        self._fire('connected', None)

    def drop(self) -> None:
        """Moves: online -> connecting."""
        self._fire('drop', None)

    def logout(self) -> None:
        """Moves: online -> gone."""
        self._fire('logout', None)

    def idle(self) -> None:
        """Moves: active -> away."""
        self._fire('idle', None)

    def wake(self) -> None:
        """Moves: away -> active."""
        self._fire('wake', None)

    def open_socket(self) -> None:
        """Entry, exit or transition action. This default does nothing: override it in a
        subclass (or define it on a `model=` object; both run)."""

    def start_heartbeat(self) -> None:
        """Entry, exit or transition action. This default does nothing: override it in a
        subclass (or define it on a `model=` object; both run)."""

    def stop_heartbeat(self) -> None:
        """Entry, exit or transition action. This default does nothing: override it in a
        subclass (or define it on a `model=` object; both run)."""

    def mark_active(self) -> None:
        """Entry, exit or transition action. This default does nothing: override it in a
        subclass (or define it on a `model=` object; both run)."""

    def mark_idle(self) -> None:
        """Entry, exit or transition action. This default does nothing: override it in a
        subclass (or define it on a `model=` object; both run)."""

    def close_socket(self) -> None:
        """Entry, exit or transition action. This default does nothing: override it in a
        subclass (or define it on a `model=` object; both run)."""
