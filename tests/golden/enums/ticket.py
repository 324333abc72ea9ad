# Generated from spec.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: 62c4e476ea606ba1517134e6c6d50395cd69bc61596cbde39b2d448089d102c1
# Regenerate with: statechart build
"""The `ticket` statechart, version 3: a typed python-statemachine class and its run record.
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

SPEC_NAME: _Final = 'ticket'
SPEC_VERSION: _Final = 3
SPEC_SHA256: _Final = '62c4e476ea606ba1517134e6c6d50395cd69bc61596cbde39b2d448089d102c1'
DESCRIPTION: _Final = 'Record fields of every type, required fields and a limit.'


class TicketState(enum.Enum):
    """Every state, nested ones included, in document order."""

    new = 'new'
    open = 'open'
    working = 'working'
    closed = 'closed'


class TicketEvent(enum.Enum):
    """Every event, in order of first use."""

    take = 'take'
    work = 'work'
    close = 'close'
    pause = 'pause'


class TicketPriority(enum.Enum):
    'The values of the record field `priority`.'

    low = 'low'
    normal = 'normal'
    high = 'high'


class TicketChannel(enum.Enum):
    'The values of the record field `channel`.'

    email = 'email'
    phone = 'phone'


STATE_DESCRIPTIONS: _Final[_Mapping[TicketState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[TicketEvent, str]] = {
}


class TicketInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class TicketLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class TicketMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_Float: _TypeAlias = float
_Bool: _TypeAlias = bool
_DateTime: _TypeAlias = _dt.datetime
_TicketState: _TypeAlias = TicketState
_TicketPriority: _TypeAlias = TicketPriority
_TicketChannel: _TypeAlias = TicketChannel

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('new', None, 'atomic', None),
        ('open', None, 'atomic', None),
        ('working', None, 'atomic', None),
        ('closed', None, 'final', None),
    ),
    initial='new',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('new', 'take', 'open', ('priority', 'channel', 'dueAt')),
        ('open', 'work', 'working', ('estimate', 'urgent')),
        ('open', 'close', 'closed', ('note',)),
        ('working', 'pause', 'open', ('attempts',)),
        ('working', 'close', 'closed', ('note',)),
    ),
    state_enum=TicketState,
    event_enum=TicketEvent,
    fields={
        'priority': TicketPriority,
        'channel': TicketChannel,
        'estimate': 'number',
        'attempts': 'integer',
        'urgent': 'boolean',
        'dueAt': 'datetime',
        'note': 'string',
    },
    limits={'working': 2},
    requires={
        'open': ('priority',),
        'working': ('estimate',),
        'closed': ('note',),
    },
    errors=(TicketInvalidRecord, TicketLimitExceeded, TicketMissingField),
)

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('spec.yaml',),
    'states': {
        'new': (0, 14),
        'open': (0, 17),
        'working': (0, 22),
        'closed': (0, 28),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('new', 'take', 0): (0, 16, None),
        ('open', 'work', 0): (0, 20, None),
        ('open', 'close', 0): (0, 21, None),
        ('working', 'pause', 0): (0, 26, None),
        ('working', 'close', 0): (0, 27, None),
    },
}


class TicketStep(_api.Step[TicketEvent, TicketState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class TicketRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = TicketStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _TicketState = _TicketState.new
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[TicketStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))
    # The spec's fields. Annotations use the `_` aliases: see the note above them.
    priority: _TicketPriority | None = _field(default=None, metadata={
        "description": 'How urgent.'})
    channel: _TicketChannel | None = None
    estimate: _Float | None = None
    attempts: _Int | None = None
    urgent: _Bool | None = None
    dueAt: _DateTime | None = _field(default=None, metadata={
        "description": 'When it must be solved.'})
    note: _Str | None = None


check_record: _Final = _api.record_checker(TicketRecord)


class TicketMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `Ticket`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    new = _api.State(initial=True)
    open = _api.State()
    working = _api.State()
    closed = _api.State(final=True)

    new.to(open, event='take')
    open.to(working, event='work')
    open.to(closed, event='close')
    working.to(open, event='pause')
    working.to(closed, event='close')


class Ticket(_api.Run[TicketRecord, TicketState, TicketEvent]):
    """One run of `ticket`: a method per event, the record in `record`, guards and actions to
    override."""

    _sc_spec = _SPEC
    _sc_record = TicketRecord
    _sc_machine = TicketMachine
    _sc_source = _SOURCE

    def take(self, *, priority: _TicketPriority, channel: _TicketChannel, dueAt: _DateTime) -> None:
        """Moves: new -> open."""
        self._fire('take', {'priority': priority, 'channel': channel, 'dueAt': dueAt})

    def work(self, *, estimate: _Float, urgent: _Bool) -> None:
        """Moves: open -> working."""
        self._fire('work', {'estimate': estimate, 'urgent': urgent})

    def close(self, *, note: _Str) -> None:
        """Moves: open -> closed, working -> closed."""
        self._fire('close', {'note': note})

    def pause(self, *, attempts: _Int) -> None:
        """Moves: working -> open."""
        self._fire('pause', {'attempts': attempts})
