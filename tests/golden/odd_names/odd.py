# Generated from spec.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: 87744d7beca1bc36a66654e07d8412fbb7cb1a1637c07fda09ac691a5be1f8a0
# Regenerate with: statechart build
"""The `odd` statechart, version 1: a typed python-statemachine class and its run record.
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

SPEC_NAME: _Final = 'odd'
SPEC_VERSION: _Final = 1
SPEC_SHA256: _Final = '87744d7beca1bc36a66654e07d8412fbb7cb1a1637c07fda09ac691a5be1f8a0'
DESCRIPTION: _Final = (
    'Odd but legal: """ quotes \'\'\' and \\ backslashes,\n a '
    'newline, a bare \r return, \u2028 a line separator,\ttabs, '
    'unicode \xe9 \u2603 \U0001d518, and `# comments`.'
)


class OddState(enum.Enum):
    """Every state, nested ones included, in document order."""

    State = 'State'
    send = 'send'
    Enum = 'Enum'
    Any = 'Any'
    Optional = 'Optional'
    Final_ = 'Final_'


class OddEvent(enum.Enum):
    """Every event, in order of first use."""

    int = 'int'
    json = 'json'
    on_hold = 'on_hold'
    error_handling = 'error_handling'
    dataclass = 'dataclass'
    float = 'float'
    list_ = 'list_'
    print = 'print'


class OddFinal(enum.Enum):
    'The values of the record field `Final`.'

    value = 'value'
    name = 'name'
    count = 'count'
    upper = 'upper'
    Any = 'Any'
    TypeAlias = 'TypeAlias'


class OddClass(enum.Enum):
    'The values of the record field `class`.'

    value_mro = 'mro'
    value_class = 'class'
    on_hold = 'on_hold'


STATE_DESCRIPTIONS: _Final[_Mapping[OddState, str]] = {
    OddState.State: 'a state named State; """; x = 1 #',
    OddState.Final_: 'ends; print("pwned")',
}


EVENT_DESCRIPTIONS: _Final[_Mapping[OddEvent, str]] = {
}


class OddInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class OddLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class OddMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_Bool: _TypeAlias = bool
_DateTime: _TypeAlias = _dt.datetime
_OddState: _TypeAlias = OddState
_OddFinal: _TypeAlias = OddFinal
_OddClass: _TypeAlias = OddClass

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('State', None, 'atomic', None),
        ('send', None, 'atomic', None),
        ('Enum', None, 'compound', 'Any'),
        ('Any', 'Enum', 'atomic', None),
        ('Optional', 'Enum', 'atomic', None),
        ('Final_', None, 'final', None),
    ),
    initial='State',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('State', 'int', 'Enum', ('str', 'dict')),
        ('State', 'json', 'Final_', ('datetime', 'Final')),
        ('State', 'on_hold', 'send', ('class', 'to_dict'), {'guard': 'guard_after_review'}),
        ('send', 'error_handling', 'State', ()),
        ('Enum', 'dataclass', 'Final_', ('dataclasses', 'OddState')),
        ('Any', 'float', 'Optional', ()),
        ('Optional', 'list_', 'Any', ()),
        ('Optional', 'print', 'Final_', ()),
    ),
    state_enum=OddState,
    event_enum=OddEvent,
    fields={
        'str': 'string',
        'dict': 'integer',
        'datetime': 'datetime',
        'dataclasses': 'boolean',
        'Final': OddFinal,
        'OddState': 'string',
        'class': OddClass,
        'to_dict': 'integer',
    },
    errors=(OddInvalidRecord, OddLimitExceeded, OddMissingField),
    # Names mapped in Python (docs/generated-code.md, "Names"): event -> machine event id
    event_ids={
        'on_hold': 'event_on_hold',
        'error_handling': 'event_error_handling',
    },
    # record field -> attribute (its JSON key is the field's name)
    attrs={
        'class': 'field_class',
        'to_dict': 'field_to_dict',
    },
)

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('spec.yaml',),
    'states': {
        'State': (0, 15),
        'send': (0, 22),
        'Enum': (0, 26),
        'Any': (0, 32),
        'Optional': (0, 34),
        'Final_': (0, 36),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('State', 'int', 0): (0, 19, None),
        ('State', 'json', 0): (0, 20, None),
        ('State', 'on_hold', 0): (0, 21, 21),
        ('send', 'error_handling', 0): (0, 25, None),
        ('Enum', 'dataclass', 0): (0, 30, None),
        ('Any', 'float', 0): (0, 33, None),
        ('Optional', 'list_', 0): (0, 35, None),
        ('Optional', 'print', 0): (0, 35, None),
    },
}


class OddStep(_api.Step[OddEvent, OddState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class OddRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = OddStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _OddState = _OddState.State
    configuration: list[_OddState] = _field(
        default_factory=lambda: [OddState.State])
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[OddStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))
    # The spec's fields. Annotations use the `_` aliases: see the note above them.
    str: _Str | None = _field(default=None, metadata={
        "description": 'a field named like a type "str"\n'})
    dict: _Int | None = None
    datetime: _DateTime | None = None
    dataclasses: _Bool | None = None
    Final: _OddFinal | None = None
    OddState: _Str | None = _field(default=None, metadata={
        "description": 'named like the generated class'})
    field_class: _OddClass | None = None
    field_to_dict: _Int | None = None


check_record: _Final = _api.record_checker(OddRecord)


class OddMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `Odd`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    State = _api.State(initial=True, enter=['property'])
    state_send = _api.State(value='send', enter=['action_record'])

    class Enum(_api.State.Compound, exit=['classmethod']):
        Any = _api.State(initial=True)
        Optional = _api.State()
    Final_ = _api.State(final=True)

    State.to(Enum, event='int')
    State.to(Final_, event='json')
    State.to(state_send, event='event_on_hold', cond='guard_after_review')
    state_send.to(State, event='event_error_handling')
    Enum.to(Final_, event='dataclass')
    Enum.Any.to(Enum.Optional, event='float')
    Enum.Optional.to(Enum.Any, event='list_')
    Enum.Optional.to(Final_, event='print')


class Odd(_api.Run[OddRecord, OddState, OddEvent]):
    """One run of `odd`: a method per event, the record in `record`, guards and actions to
    override."""

    _sc_spec = _SPEC
    _sc_record = OddRecord
    _sc_machine = OddMachine
    _sc_source = _SOURCE

    def int(self, *, str: _Str, dict: _Int) -> None:
        """Moves: State -> Enum."""
        self._fire('int', {'str': str, 'dict': dict})

    def json(self, *, datetime: _DateTime, Final: _OddFinal) -> None:
        """Moves: State -> Final_."""
        self._fire('json', {'datetime': datetime, 'Final': Final})

    def event_on_hold(self, *, field_class: _OddClass, field_to_dict: _Int) -> None:
        """Moves: State -> send."""
        self._fire('on_hold', {'class': field_class, 'to_dict': field_to_dict})

    def event_error_handling(self) -> None:
        """Moves: send -> State."""
        self._fire('error_handling', None)

    def dataclass(self, *, dataclasses: _Bool, OddState: _Str) -> None:
        """Moves: Enum -> Final_."""
        self._fire('dataclass', {'dataclasses': dataclasses, 'OddState': OddState})

    def float(self) -> None:
        """Moves: Any -> Optional."""
        self._fire('float', None)

    def list_(self) -> None:
        """Moves: Optional -> Any."""
        self._fire('list_', None)

    def print(self) -> None:
        """Moves: Optional -> Final_."""
        self._fire('print', None)

    def guard_after_review(self) -> _Bool:
        """Guard. This default lets the transition through: override it in a subclass (a
        `model=` object's answer is combined with this one by `and`)."""
        return True

    def property(self) -> None:
        """Entry, exit or transition action. This default does nothing: override it in a
        subclass (or define it on a `model=` object; both run)."""

    def action_record(self) -> None:
        """Entry, exit or transition action. This default does nothing: override it in a
        subclass (or define it on a `model=` object; both run)."""

    def classmethod(self) -> None:
        """Entry, exit or transition action. This default does nothing: override it in a
        subclass (or define it on a `model=` object; both run)."""
