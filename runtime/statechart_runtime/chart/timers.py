"""Timers (`after:`): which are armed, when they are due, and how a record stores them.

A timer belongs to a state. Entering the state arms it: a delay timer is due at the entering
step's time plus its delay, a deadline timer at its datetime field's value (re-read whenever
the field changes; unset: not armed). Leaving the state disarms it. The armed timers are data
in the record (`timers`, in due order), so they survive a save and a restore in another
process: nothing runs in the background. `Run.fire_due` fires the due ones.

Due order: the due time, then the document order of the state, then the order the timers are
declared in (the order of the spec's timer table).

A timer's event is `after.ID.STATE` (statechart_runtime.events), its id not its delay, so a
new delay keeps the event. A record written before timers had ids names a delay timer by its
delay as written (`after.24h.waiting`): `current_event` says which timer of this spec such an
event, or the event of a timer that was renamed, stands for.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any, Generic, NamedTuple, TypeVar

from statechart_runtime.chart import events as internal_events
from statechart_runtime.chart.values import parse_time, time_text

S = TypeVar("S")
E = TypeVar("E")
# (state, internal event, delay in milliseconds or None, datetime field or None)
TimerRow = tuple[str, str, int | None, str | None]
# What a generated module passes (`SpecTables(timers=...)`): since API 1.3, a TimerRow and the
# timer's `after:` key as written (`24h`, `PT1H`, a deadline field); a module of API 1.2 passes
# TimerRows, whose events carry that key.
GeneratedTimerRow = TimerRow | tuple[str, str, int | None, str | None, str]


class Timer(NamedTuple, Generic[S, E]):
    """An armed timer: the state that armed it, the event it raises, and when (aware UTC).
    A named tuple: one is made on every step that arms a timer."""

    state: S
    event: E
    due: dt.datetime
    declined: bool = False  # it came due and its guards all said no (see `declined`)

    def to_dict(self) -> dict[str, Any]:
        state: Any = self.state
        event: Any = self.event
        data: dict[str, Any] = {"state": state.value, "event": event.value,
                                "due": time_text(self.due)}
        if self.declined:
            data["declined"] = True
        return data


class TimerTable:
    """The spec's timers, by state and by event, with each one's position in due order ties."""

    __slots__ = ("by_event", "by_field", "by_state", "delays", "rank", "written")

    def __init__(self, rows: Iterable[GeneratedTimerRow]) -> None:
        self.by_state: dict[str, list[TimerRow]] = {}
        self.by_event: dict[str, TimerRow] = {}
        self.by_field: dict[str, list[TimerRow]] = {}  # deadline field -> its timers
        self.rank: dict[str, int] = {}
        self.delays: dict[str, dt.timedelta] = {}  # event -> delay, made once
        self.written: dict[str, str] = {}  # event -> the `after:` key as written
        for index, generated in enumerate(rows):
            row: TimerRow = generated[:4]
            # API 1.2 rows end at the field: their events carry the key as written.
            found = internal_events.parse(row[1])
            self.written[row[1]] = generated[4] if len(generated) > 4 \
                else found.key if found and found.key else row[1]
            if row[2] is not None:
                self.delays[row[1]] = dt.timedelta(milliseconds=row[2])
            self.by_state.setdefault(row[0], []).append(row)
            self.by_event[row[1]] = row
            self.rank[row[1]] = index
            if row[3] is not None:
                self.by_field.setdefault(row[3], []).append(row)

    def __bool__(self) -> bool:
        return bool(self.by_event)

    def order(self, timers: list[Timer[Any, Any]]) -> list[Timer[Any, Any]]:
        rank = self.rank
        return sorted(timers, key=lambda t: (t.due, rank[t.event.value]))

    def stands_for(self, event: str) -> str | None:
        """The event of this table's timer that a stored timer event of a state with timers
        stands for: itself when it is one; else the one timer of its state whose `after:` key
        as written is the event's KEY (a record written before timers had ids, or a deadline
        timer that got a `name:`); else, for a KEY written as a delay (a record written
        before timers had ids) when its state has exactly one timer, that timer (its delay
        changed). None otherwise: the timer is gone, or which one it became is ambiguous."""
        if event in self.by_event:
            return event
        found = internal_events.parse(event)
        if found is None or found.key is None or found.state not in self.by_state:
            return None
        rows = self.by_state[found.state]
        same = [row[1] for row in rows if self.written[row[1]] == found.key]
        if len(same) == 1:
            return same[0]
        if not same and len(rows) == 1 and internal_events.looks_like_delay(found.key):
            return rows[0][1]
        return None


def utc(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is dt.UTC else value.astimezone(dt.UTC)


def rearm(spec: Any, armed: list[Timer[Any, Any]], configuration: Iterable[str],
          entered: Iterable[str], at: dt.datetime, changed: Iterable[str],
          value_of: Callable[[str], Any]) -> list[Timer[Any, Any]]:
    """The armed timers after a step (pure: `armed` is not changed) that entered `entered`
    (exits and re-entries included: a re-entered state's timers start again) at `at`,
    leaving `configuration` active, and changed the fields `changed` (`value_of(field)`: a
    deadline field's value after the step). The one place a timer's due time is computed:
    a new run, every step of a live run, `update`, and the integrity check's replay call it.
    Only the timers touched are recomputed: this runs on every step of a spec with timers."""
    table: TimerTable = spec.timers
    by_state = table.by_state
    entered = set(entered)
    touched = [row for name in entered if name in by_state for row in by_state[name]]
    if not armed and not touched and table.by_field.keys().isdisjoint(changed):
        return armed  # nothing was armed and nothing arms: the common step of most states
    active = set(configuration)
    if spec.chart.ended(active):
        return []  # the run has ended: every state was exited
    kept = [t for t in armed if t.state.value in active and t.state.value not in entered]
    for name in changed:
        for row in table.by_field.get(name, ()):
            if row[0] in active and row[0] not in entered:
                kept = [t for t in kept if t.event.value != row[1]]
                touched.append(row)
    states, events = spec.states_by_name, spec.events_by_name
    start = utc(at)
    delays = table.delays
    for state, event, delay, deadline in touched:
        if delay is not None:
            due: dt.datetime | None = start + delays[event]
        else:
            due = value_of(deadline) if deadline is not None else None
        if due is not None:
            kept.append(Timer(states[state], events[event], utc(due)))
    # Due order with ties by the table's order (document order of states, then declaration).
    return table.order(kept) if len(kept) > 1 else kept


def declined(armed: list[Timer[Any, Any]], timer: Timer[Any, Any]) -> list[Timer[Any, Any]]:
    """`armed` with `timer` marked declined: it came due and no transition of it was
    enabled (its guards all said no). It stays armed, so the record still shows it and the
    integrity check can prove it, but it does not fire again until it is re-armed."""
    return [t._replace(declined=True) if t == timer else t for t in armed]


def next_due(spec: Any, record: Any) -> dt.datetime | None:
    """When a record's earliest armed timer that was not declined is due (its timers are in
    due order), or None: `Run.next_deadline`, and the store's `next_due` column."""
    if not spec.timers:
        return None
    for timer in record.timers:
        if not timer.declined:
            return timer.due  # type: ignore[no-any-return]
    return None


def pending(armed: list[Timer[Any, Any]], when: dt.datetime) -> list[Timer[Any, Any]]:
    """The armed timers that are due at `when` and not declined, in due order."""
    return [t for t in armed if t.due <= when and not t.declined]


def check(spec: Any, record: Any, armed: list[Timer[Any, Any]]) -> None:
    """Refuse a record whose `timers` are not exactly the ones its history arms (none
    missing, none extra, each due when the history says), in due order. Whether a timer was
    declined (its guards said no) is the record's to say: guards are not replayed."""
    invalid = spec.invalid
    timers = record.timers
    if not isinstance(timers, list) or not all(isinstance(t, Timer) for t in timers):
        raise invalid("timers", f"expected a list of Timer, got {timers!r}")
    by_event = {t.event: t for t in armed}
    for index, timer in enumerate(timers):
        where = f"timers[{index}]"
        found = by_event.get(timer.event)
        if found is None or found.state != timer.state:
            raise invalid(where, f"the history arms no timer `{getattr(timer.event, 'value', '?')}`"
                          f" of `{getattr(timer.state, 'value', '?')}` now")
        if not isinstance(timer.due, dt.datetime) or timer.due.utcoffset() is None \
                or utc(timer.due) != found.due:
            raise invalid(where + ".due", f"the history gives {time_text(found.due)}, not "
                          f"{timer.due!r}")
        if not isinstance(timer.declined, bool):
            raise invalid(where + ".declined", f"expected a boolean, got {timer.declined!r}")
    if timers != spec.timers.order(list(timers)) or len({t.event for t in timers}) != len(timers):
        raise invalid("timers", "expected each armed timer once, in due order")
    present = {t.event for t in timers}
    for timer in armed:
        if timer.event not in present:
            raise invalid("timers", f"the timer `{timer.event.value}` of `{timer.state.value}` "
                          f"is armed by the history (due {time_text(timer.due)}) but missing")


def from_json(spec: Any, raw: object) -> list[Timer[Any, Any]]:
    invalid = spec.invalid
    if not isinstance(raw, list):
        raise invalid("timers", "expected a list")
    out = []
    for index, item in enumerate(raw):
        where = f"timers[{index}]"
        if not isinstance(item, dict) or not {"state", "event", "due"} <= set(item) <= {
                "state", "event", "due", "declined"}:
            raise invalid(where, "expected an object with keys ['due', 'event', 'state'] "
                          "(and `declined`)")
        flag = item.get("declined", False)
        if not isinstance(flag, bool):
            raise invalid(where + ".declined", f"expected a boolean, got {flag!r}")
        state, event = item["state"], item["event"]
        if not isinstance(state, str) or state not in spec.states_by_name:
            raise invalid(where + ".state", f"unknown state {state!r}")
        if not isinstance(event, str) or event not in spec.timers.by_event:
            raise invalid(where + ".event", f"not a timer of the spec: {event!r}")
        due = utc(parse_time(where + ".due", item["due"], invalid))
        out.append(Timer(spec.states_by_name[state], spec.events_by_name[event], due, flag))
    return out


def _id(event: str) -> str | None:
    found = internal_events.parse(event)
    return found.key if found is not None else None


def current_event(spec: Any, event: object, where: str) -> object:
    """The event that a stored record's `event` (at `where`) is in this spec: a timer event
    that names no timer of the spec is mapped to the timer it stands for
    (`TimerTable.stands_for`), and refused when its state has no timer it can stand for. Any
    other value is returned as it is (and checked later)."""
    if not isinstance(event, str) or event in spec.events_by_name:
        return event
    found = internal_events.parse(event)
    if found is None or found.key is None or found.state not in spec.states_by_name:
        return event
    table: TimerTable = spec.timers
    current = table.stands_for(event)
    if current is not None:
        return current
    rows = table.by_state.get(found.state, [])
    timers = ", ".join(f"`{_id(row[1])}` (after {table.written[row[1]]})" for row in rows) \
        or "none"
    delay = internal_events.looks_like_delay(found.key)
    why = "which one it became is ambiguous" if delay and rows else "it is gone"
    keep = f"keep a timer written `{found.key}`" if delay \
        else f"keep it, or give the timer that replaces it `name: {found.key}`"
    raise spec.invalid(where, f"unknown event {event!r}: `{found.state}` has no timer "
                       f"`{found.key}` now (its timers: {timers}) and {why}, so a record "
                       f"that fired it cannot be migrated to version {spec.version}: {keep}")
