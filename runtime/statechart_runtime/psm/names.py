"""The public names of python-statemachine that the runtime outside `psm` uses: a module
outside this package names the library only through here (tests/test_runtime_layout.py)."""

from __future__ import annotations

from statemachine import HistoryState, State, StateMachine
from statemachine.exceptions import TransitionNotAllowed
from statemachine.orderedset import OrderedSet

__all__ = ["HistoryState", "OrderedSet", "State", "StateMachine", "TransitionNotAllowed"]
