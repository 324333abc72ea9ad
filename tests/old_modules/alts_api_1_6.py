# Generated from alts.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: 7326224a7fde182394f57929d980faed39f25d9efdc1538280e023407dc8398f
# Regenerate with: statechart build
"""The `alts` statechart, version 1: a typed python-statemachine class and its run record.
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
_rt.check_api((1, 4), __name__, 'statechart-compiler 0.2.0')

SPEC_NAME: _Final = 'alts'
SPEC_VERSION: _Final = 1
SPEC_SHA256: _Final = '7326224a7fde182394f57929d980faed39f25d9efdc1538280e023407dc8398f'
DESCRIPTION: _Final = ''


class AltsState(enum.Enum):
    """Every state, nested ones included, in document order."""

    open = 'open'
    idle = 'idle'
    busy = 'busy'
    review = 'review'
    done = 'done'


class AltsEvent(enum.Enum):
    """Every event, in order of first use."""

    close = 'close'
    poke = 'poke'
    work = 'work'
    rest = 'rest'
    back = 'back'
    again = 'again'


STATE_DESCRIPTIONS: _Final[_Mapping[AltsState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[AltsEvent, str]] = {
}


class AltsInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class AltsLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class AltsMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_Bool: _TypeAlias = bool
_DateTime: _TypeAlias = _dt.datetime
_AltsState: _TypeAlias = AltsState

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('open', None, 'compound', 'idle'),
        ('idle', 'open', 'atomic', None),
        ('busy', 'open', 'atomic', None),
        ('review', None, 'atomic', None),
        ('done', None, 'final', None),
    ),
    initial='open',
    # (source, event, target, fields it sets)
    transitions=(
        ('open', 'close', 'done', ('outcome', 'note'), ((0, {'outcome': 'urgent'}), (2, {}), (3, {}))),
        ('open', 'close', 'review', ()),
        ('open', 'poke', 'busy', ()),
        ('idle', 'work', 'busy', ()),
        ('busy', 'rest', 'idle', ()),
        ('review', 'back', 'open', ()),
        ('review', 'again', 'open', ()),
    ),
    state_enum=AltsState,
    event_enum=AltsEvent,
    fields={
        'outcome': 'string',
        'note': 'string',
    },
    errors=(AltsInvalidRecord, AltsLimitExceeded, AltsMissingField),
    # (source, event, position among its alternatives) -> the states that must all be
    # active for it to be enabled (`in:`)
    in_states={
        ('open', 'close', 1): ('busy',),
    },
    # (source, event, target, kind) of every history, internal or targetless transition
    history=(
        ('open', 'poke', 'busy', 'internal'),
        ('review', 'back', 'open', 'deep'),
    ),
    history_ids={
        'open.deep': '_sc_h_deep_open',
    },
    # (source, event, target) -> fields the transition clears
    clears={
        ('open', 'close', 'done'): ('note',),
    },
)

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('alts.yaml',),
    'states': {
        'open': (0, 8),
        'idle': (0, 18),
        'busy': (0, 21),
        'review': (0, 24),
        'done': (0, 28),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('open', 'close', 0): (0, 12, 12),
        ('open', 'close', 1): (0, 13, None),
        ('open', 'close', 2): (0, 14, 14),
        ('open', 'close', 3): (0, 15, None),
        ('open', 'poke', 0): (0, 16, None),
        ('idle', 'work', 0): (0, 20, None),
        ('busy', 'rest', 0): (0, 23, None),
        ('review', 'back', 0): (0, 26, None),
        ('review', 'again', 0): (0, 27, None),
    },
}


class AltsStep(_api.Step[AltsEvent, AltsState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class AltsRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = AltsStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _AltsState = _AltsState.open
    configuration: list[_AltsState] = _field(
        default_factory=lambda: [AltsState.open, AltsState.idle])
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[AltsStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))
    # History targets -> the states active under them when last left.
    remembered: dict[_Str, tuple[_Str, ...]] = _field(default_factory=dict)
    # The spec's fields. Annotations use the `_` aliases: see the note above them.
    outcome: _Str | None = None
    note: _Str | None = None


check_record: _Final = _api.record_checker(AltsRecord)


class AltsMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `Alts`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    class open(_api.State.Compound, initial=True):
        idle = _api.State(initial=True)
        busy = _api.State()
        _sc_h_deep_open = _api.HistoryState(type='deep')
    review = _api.State()
    done = _api.State(final=True)

    open.to(done, event='close', cond='is_urgent')
    open.to(review, event='close')
    open.to(done, event='close', cond='is_late')
    open.to(done, event='close', on=['log_close'])
    open.to(open.busy, event='poke', internal=True)
    open.idle.to(open.busy, event='work')
    open.busy.to(open.idle, event='rest')
    review.to(open._sc_h_deep_open, event='back')
    review.to(open, event='again', on=['log_again'])
    open._sc_h_deep_open.to(open.idle)  # entered when there is nothing to remember yet


class Alts(_api.Run[AltsRecord, AltsState, AltsEvent]):
    """One run of `alts`: a method per event, the record in `record`, guards and actions to
    override."""

    _sc_spec = _SPEC
    _sc_record = AltsRecord
    _sc_machine = AltsMachine
    _sc_source = _SOURCE

    def close(self, *, outcome: _Str | None = None, note: _Str | None = None) -> None:
        """Moves: open -> done, open -> review."""
        self._fire('close', {'outcome': outcome, 'note': note})

    def poke(self) -> None:
        """Moves: open -> busy."""
        self._fire('poke', None)

    def work(self) -> None:
        """Moves: idle -> busy."""
        self._fire('work', None)

    def rest(self) -> None:
        """Moves: busy -> idle."""
        self._fire('rest', None)

    def back(self) -> None:
        """Moves: review -> open."""
        self._fire('back', None)

    def again(self) -> None:
        """Moves: review -> open."""
        self._fire('again', None)

    def is_urgent(self) -> _Bool:
        """Guard. This default lets the transition through: override it in a subclass (a
        `model=` object's answer is combined with this one by `and`)."""
        return True

    def is_late(self) -> _Bool:
        """Guard. This default lets the transition through: override it in a subclass (a
        `model=` object's answer is combined with this one by `and`)."""
        return True

    def log_close(self) -> None:
        """Entry, exit or transition action. This default does nothing: override it in a
        subclass (or define it on a `model=` object; both run)."""

    def log_again(self) -> None:
        """Entry, exit or transition action. This default does nothing: override it in a
        subclass (or define it on a `model=` object; both run)."""
