"""The names of the events a run raises itself, made and read here only.

- A completion event, `done.state.STATE`: STATE (a compound or parallel state with `done:`)
  has finished.
- The event of eventless transitions (`always:`), `always`: one name for all of them, since
  one microstep may take those of several states (parallel regions), as SCXML selects them;
  a step's source says whose it was. No application event may be called so.
- A timer's event, `after.KEY.STATE`: the timer KEY of STATE is due. KEY is the timer's id
  (docs/spec-format.md, "Timers"): its `name:`, else a deadline timer's datetime field, else
  `delayN` for the Nth delay timer of STATE (`delay_key`). Records written before timers had
  ids name a delay timer by its delay as written (`after.15m.waiting`): `looks_like_delay`
  tells such a KEY apart, and `statechart_runtime.timers.current_event` maps it.

All are in a spec's event enum and in a record's history, but no caller sends them
(`Run.send` refuses them). Everything else (the compiler, the runtime, `diff`, overlays)
asks this module rather than slicing strings, so a change of scheme is one change here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

DONE_PREFIX = "done.state."
ALWAYS = "always"
TIMER_PREFIX = "after."
DELAY_KEY_PREFIX = "delay"
# A delay as an `after:` key is written: a digit first, or `P` followed by a digit or `T`
# (ISO 8601). No timer id starts so: a field or a name that does is refused.
_DELAY_LIKE = re.compile(r"\d|P[\dT]")


class Internal(NamedTuple):
    """What an internal event name says: its kind, the state it belongs to, and for a timer
    its key (None for a completion event)."""

    kind: Literal["done", "after"]
    state: str
    key: str | None


def done_event(state: str) -> str:
    """The completion event of `state` (`done.state.running`)."""
    return DONE_PREFIX + state


def timer_event(key: str, state: str) -> str:
    """The event of the timer `key` of `state` (`after.delay1.waiting`)."""
    return f"{TIMER_PREFIX}{key}.{state}"


def delay_key(position: int) -> str:
    """The id of the `position`th (from 1) delay timer of a state that has no `name:`."""
    return f"{DELAY_KEY_PREFIX}{position}"


def looks_like_delay(key: str) -> bool:
    """Whether an `after:` key (or the KEY of a stored timer event) is written as a delay
    (`15m`, `PT1H`) rather than as a name (a datetime field, a timer's `name:`, `delay1`)."""
    return bool(_DELAY_LIKE.match(key))


def parse(event: str) -> Internal | None:
    """What an internal event name says, or None for any other name (an event the
    application sends)."""
    if event.startswith(DONE_PREFIX) and len(event) > len(DONE_PREFIX):
        return Internal("done", event[len(DONE_PREFIX):], None)
    if event.startswith(TIMER_PREFIX):
        key, dot, state = event[len(TIMER_PREFIX):].rpartition(".")
        if dot and key and state:
            return Internal("after", state, key)
    return None


def is_done(event: str) -> bool:
    """Whether `event` is a completion event (cheap: on every replayed step)."""
    return event.startswith(DONE_PREFIX)


def is_timer(event: str) -> bool:
    """Whether `event` names a timer."""
    found = parse(event)
    return found is not None and found.kind == "after"


def with_state(event: str, rename: Mapping[str, str]) -> str:
    """`event` with the state it names renamed (`rename`: old state -> new), for an internal
    event; any other event as it is."""
    found = parse(event)
    if found is None or found.state not in rename:
        return event
    new = rename[found.state]
    return done_event(new) if found.key is None else timer_event(found.key, new)


# A member of an event family, as a caller may send one: identifiers separated by dots (as an
# `on:` key is written: statechart.names.event_problem), at most 200 characters.
# (The record's JSON Schema writes the same pattern: statechart.codegen.record_schema.)
TOKEN = r"[A-Za-z][A-Za-z0-9_]{0,63}"
MEMBER_MAX = 200
_FAMILY_MEMBER = re.compile(rf"{TOKEN}(\.{TOKEN})+")


def family_key(name: str, listed: Mapping[str, object],
               internal: Mapping[str, object]) -> str | None:
    """The event of the spec's list (`listed`, less the run's own events, `internal`) whose
    family `name` is a member of (docs/spec-format.md, "Event descriptors"): the longest one
    that is a token prefix of it (`error.tool` for `error.tool.ratelimit`, when the spec lists
    `error` and `error.tool`), or None when none is, or `name` is not well formed. That
    event's transitions are the ones that take `name`: every key that takes `name` is a prefix
    of it, hence of the longest listed one, and takes that one too (in the same order)."""
    if len(name) > MEMBER_MAX or not _FAMILY_MEMBER.fullmatch(name):
        return None
    end = len(name)
    while (end := name.rfind(".", 0, end)) > 0:
        key = name[:end]
        if key in listed and key not in internal and key != ALWAYS:
            return key
    return None


class FamilyEvent(str):
    """The event of a history step sent by a name the spec lists only as a family
    (`error.tool.ratelimit`, taken by the key `error.tool`): it stands where a member of the
    spec's event enum stands, `.value` its full name (what the record keeps), `.key` the
    member of the listed event whose transitions took it. Equal to its name as text."""

    key: Any

    def __new__(cls, name: str, key: Any) -> FamilyEvent:
        made = super().__new__(cls, name)
        made.key = key
        return made

    @property
    def value(self) -> str:
        return str(self)

    @property
    def name(self) -> str:  # as a generated method would be called (`tool.lost` -> tool_lost)
        return self.replace(".", "_")

    def __repr__(self) -> str:
        return f"FamilyEvent({str(self)!r}, key={self.key!r})"

    def __reduce__(self) -> tuple[Any, ...]:  # picklable, copyable: it crosses processes
        return (FamilyEvent, (str(self), self.key))
