"""Work (`work:` of a state, docs/spec-format.md "Work"): the table a generated module
carries, and what a transition does to a run's work items.

Entering a state with work enqueues one item; leaving the state, by any transition, ends it.
An item is identified by its run, its state and the index of the history step that entered
the state (`item_key`): the same across attempts, new on each entry. This module computes
which items a step starts and ends; a run store writes them in the step's transaction and
leases them to workers.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# What a generated module passes (`WorkTable(rows)`): (state, handler, timeout in ms,
# heartbeat in ms or None, outcome events, error event or None, retries, backoff in ms).
WorkRow = tuple[str, str, int, int | None, tuple[str, ...], str | None, int, int]


@dataclass(frozen=True)
class Work:
    """The work of one state: who runs it, how long an attempt may take, what it may fire."""

    state: str
    handler: str
    timeout: dt.timedelta
    heartbeat: dt.timedelta | None
    outcomes: tuple[str, ...]
    error: str | None
    retries: int  # attempts after the first failed one
    backoff: dt.timedelta  # before the first retry; doubled for each later one

    @property
    def lease(self) -> dt.timedelta:
        """How long a claim lasts without news: the heartbeat when there is one (a handler
        renews it by heartbeating), else the timeout."""
        return self.heartbeat or self.timeout

    @property
    def attempts(self) -> int:
        """How many attempts an item gets in all."""
        return 1 + self.retries

    def retry_delay(self, failed: int) -> dt.timedelta | None:
        """The wait after the `failed`-th failed attempt (1 for the first) before the next
        one, or None when the attempts are used up (then the `error` event, if any)."""
        if failed < 1:
            raise ValueError(f"failed attempts count from 1, got {failed}")
        if failed > self.retries:
            return None
        return self.backoff * int(2 ** (failed - 1))

    def accepts(self, event: str) -> bool:
        """Whether `event` may be the outcome of this work (an outcome or the error event)."""
        return event in self.outcomes or event == self.error


@dataclass(frozen=True)
class WorkChange:
    """What one step does to a run's work: the states whose items it ends (left) and
    starts (entered), each in document order. A state left and entered again (a transition
    to itself) is in both: its item ends and a new one starts."""

    ended: tuple[Work, ...]
    started: tuple[Work, ...]

    def __bool__(self) -> bool:
        return bool(self.ended or self.started)


class WorkTable:
    """The spec's work, by state (in document order)."""

    __slots__ = ("by_state", "handlers")

    def __init__(self, rows: Iterable[WorkRow] = ()) -> None:
        self.by_state: dict[str, Work] = {}
        for state, handler, timeout, heartbeat, outcomes, error, retries, backoff in rows:
            self.by_state[state] = Work(
                state, handler, dt.timedelta(milliseconds=timeout),
                None if heartbeat is None else dt.timedelta(milliseconds=heartbeat),
                tuple(outcomes), error, retries, dt.timedelta(milliseconds=backoff))
        self.handlers = frozenset(w.handler for w in self.by_state.values())

    def __bool__(self) -> bool:
        return bool(self.by_state)

    def __iter__(self) -> Any:
        return iter(self.by_state.values())

    def get(self, state: str) -> Work | None:
        return self.by_state.get(state)

    def active(self, configuration: Iterable[str]) -> tuple[Work, ...]:
        """The work of the active states: the items a run in `configuration` has pending."""
        names = set(configuration)
        return tuple(w for s, w in self.by_state.items() if s in names)

    def change(self, exited: Iterable[str], entered: Iterable[str]) -> WorkChange:
        """What a step that exited and entered these states does to the run's items."""
        left, came = set(exited), set(entered)
        return WorkChange(tuple(w for s, w in self.by_state.items() if s in left),
                          tuple(w for s, w in self.by_state.items() if s in came))

    def step(self, before: Iterable[str], after: Iterable[str],
             entered: Iterable[str]) -> WorkChange:
        """What a step does, from the configurations before and after it and the states it
        entered (the kernel's `Effect.entered`): a state entered that was active before was
        exited first (a transition to itself), so its item ends and a new one starts."""
        was, now, came = set(before), set(after), set(entered)
        return self.change((was - now) | (came & was), came)

    def between(self, before: Sequence[str], after: Sequence[str]) -> WorkChange:
        """What a step from configuration `before` to `after` does, judged by the
        configurations alone: right for every step but one that leaves a state with work and
        enters it again (a self-transition), which only `change` with the step's exit and
        entry sets sees."""
        was, now = set(before), set(after)
        return self.change(was - now, now - was)


def item_key(run_id: str, state: str, entered_at_step: int | None) -> str:
    """An item's stable key: the same across its attempts, new for each entry of the state.
    `entered_at_step` is the index in the run's history of the step that entered the state,
    or None for a state of the run's initial configuration (no step entered it):
    `run-1/tool_call/7`, `run-1/triaging/start`."""
    if entered_at_step is not None and entered_at_step < 0:
        raise ValueError(f"a history index is >= 0, got {entered_at_step}")
    return f"{run_id}/{state}/{'start' if entered_at_step is None else entered_at_step}"


EMPTY = WorkTable()


def work_of(run: Any) -> WorkTable:
    """The work table of a generated run class, or of one of its runs (an empty table for a
    module generated before work existed, or a spec without work)."""
    cls = run if isinstance(run, type) else type(run)
    table = getattr(cls, "_sc_work", EMPTY)
    return table if isinstance(table, WorkTable) else EMPTY
