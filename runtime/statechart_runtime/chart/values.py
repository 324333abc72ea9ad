"""Record field values: their types, their JSON form, and times.

A field's type is one of the spec format's (`string`, `integer`, `number`, `boolean`,
`datetime`, `enum`, `json`: statechart_runtime.chart.json_values). Times are aware datetimes
in Python and RFC 3339 text in JSON, read exactly as JSON Schema's `date-time` format reads
them, so a record the runtime writes always validates against the generated schema and the
other way round.
"""

from __future__ import annotations

import datetime as dt
import enum
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from statechart_runtime.chart.json_values import checked_json, loaded_json, same_json
from statechart_runtime.errors import InvalidRecord

JsonValue = str | int | float | bool
Clock = Callable[[], dt.datetime]

# RFC 3339 date-time with an offset, as JSON Schema's `date-time` (rfc3339-validator) reads it
# (after upper-casing): no week dates, no basic format, no `,` fractions, no seconds offsets.
_RFC3339 = re.compile(
    r"(\d{4})-(0[1-9]|1[0-2])-(\d{2})T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(\.\d+)?"
    r"(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)", re.ASCII)
_MINUTE = dt.timedelta(minutes=1)

# The reserved value of a step: who sent its event (`run.send(event, **{SENT_BY: "alice"})`),
# as an authenticated caller names them (the console stores the identity its authentication
# gives, never a form's). No record field can be called so (a field name is an identifier),
# and no transition sets it: it is kept in the step's `values` only, so the store, `history`
# and a record's JSON carry it without a column of their own (docs/runs.md, "Who sent it").
SENT_BY = "@by"
# The longest identity a step keeps (a name, an e-mail address, a subject claim).
SENT_BY_MAX = 256


def sent_by_problem(value: object) -> str | None:
    """Why `value` cannot be a step's `@by`, or None when it can: a non-empty string of at
    most SENT_BY_MAX characters."""
    if not isinstance(value, str) or not value:
        return f"expected a non-empty string (who sent the event), got {value!r}"
    if len(value) > SENT_BY_MAX:
        return f"longer than {SENT_BY_MAX} characters"
    return None


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def is_aware(value: object) -> bool:
    return isinstance(value, dt.datetime) and value.utcoffset() is not None


def outside_utc(value: dt.datetime) -> str | None:
    """Why an aware time cannot be a step's or a field's time, or None: one whose UTC falls
    outside the years 1-9999 (9999-12-31T23:00-05:00) cannot be compared, stored or armed."""
    try:
        value.astimezone(dt.UTC)
    except OverflowError:
        return f"{value.isoformat()} is outside the years 1-9999 in UTC"
    return None


def time_text(value: dt.datetime) -> str:
    """RFC 3339 text of an aware time: its own offset when that is whole minutes (RFC 3339
    has no seconds in offsets), else converted to UTC."""
    offset = value.utcoffset()
    if offset is not None and offset % _MINUTE:
        value = value.astimezone(dt.UTC)
    return value.isoformat()


def now(clock: Clock) -> dt.datetime:
    value = clock()
    if not is_aware(value):
        raise TypeError(f"the clock must return a datetime with a time zone, got {value!r}")
    outside = outside_utc(value)
    if outside is not None:
        raise TypeError(f"the clock's time {outside}")
    return value


def parse_time(where: str, raw: object, error: type[InvalidRecord] = InvalidRecord
               ) -> dt.datetime:
    if isinstance(raw, str):
        text = raw.upper()
        match = _RFC3339.fullmatch(text)
        if match is not None:
            fraction = (match.group(7) or "")[:7]  # Python keeps microseconds
            offset = "+00:00" if match.group(8) == "Z" else match.group(8)
            try:
                return dt.datetime.fromisoformat(text[:19] + fraction + offset)
            except ValueError:  # a day the month does not have, year 0
                pass
    raise error(where, f"expected an RFC 3339 date-time with offset, got {raw!r}")


class FieldCodec:
    """The record fields of one spec: name -> type, and the enum class of enum fields."""

    __slots__ = ("enums", "error", "types")

    def __init__(self, types: Mapping[str, str], enums: Mapping[str, type[enum.Enum]],
                 error: type[InvalidRecord]) -> None:
        self.types = dict(types)
        self.enums = dict(enums)
        self.error = error

    def to_json(self, field: str, value: object) -> JsonValue:
        """`value` as JSON, after checking it has the field's type (callers may ignore
        types); TypeError names the field, its type and, for an enum, its values. A `json`
        field's value is a copy (UnstorableValue past its limits)."""
        kind = self.types[field]
        if kind == "json":
            return checked_json(field, value)  # type: ignore[no-any-return]
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
        if kind == "datetime" and isinstance(value, dt.datetime) and is_aware(value):
            outside = outside_utc(value)
            if outside is not None:
                raise TypeError(f"{field}: {outside}")
            return time_text(value)
        if kind == "enum" and isinstance(value, self.enums[field]):
            return str(value.value)
        if kind == "enum":
            cls = self.enums[field]
            raise TypeError(f"{field}: expected a {cls.__name__} (one of "
                            f"{[m.value for m in cls]}), got {value!r}")
        raise TypeError(f"{field}: expected a {kind} value"
                        + (" with a time zone" if kind == "datetime" else "")
                        + f", got {value!r}")

    def checked(self, field: str, value: object) -> tuple[Any, JsonValue]:
        """(the value a record keeps, its JSON form) for a value being set: `to_json`'s
        checks; a `json` field keeps its own copy (both are that copy), so that changing the
        caller's object afterwards changes nothing stored."""
        encoded = self.to_json(field, value)
        return (encoded if self.types[field] == "json" else value), encoded

    def from_input(self, field: str, value: object) -> object:
        """`value` as `Run.send` takes it: the field's Python value, or its JSON form (an
        enum's value, RFC 3339 text with an offset for a datetime), so that a worker
        forwarding a JSON payload converts nothing itself. Anything else is returned as it is,
        for `to_json` to refuse; a JSON form that is not a value of the field is a TypeError
        naming the field and what it takes."""
        kind = self.types[field]
        if kind == "enum" and isinstance(value, str) and \
                not isinstance(value, self.enums[field]):
            cls = self.enums[field]
            try:
                return cls(value)
            except ValueError:
                raise TypeError(f"{field}: {value!r} is not one of {[m.value for m in cls]} "
                                f"(a {cls.__name__} or its value)") from None
        if kind == "datetime" and isinstance(value, str):
            try:
                return parse_time(field, value, self.error)
            except InvalidRecord:
                raise TypeError(f"{field}: expected a datetime with a time zone, or RFC 3339 "
                                f"text with an offset (2026-05-01T12:30:00Z), got {value!r}"
                                ) from None
        return value

    def same(self, field: str, a: object, b: object) -> bool:
        """Whether two typed values of a field are the same value: numbers by their value as
        a float (JSON has one number type), times as instants (two aware datetimes in
        different zones compare oddly around a DST fold)."""
        kind = self.types[field]
        if kind == "json":
            return same_json(a, b)
        if kind == "number" and isinstance(a, (int, float)) and isinstance(b, (int, float)):
            try:
                return float(a) == float(b)
            except OverflowError:
                return False
        if kind == "datetime" and isinstance(a, dt.datetime) and isinstance(b, dt.datetime):
            return a.astimezone(dt.UTC) == b.astimezone(dt.UTC)
        return a == b

    def from_json(self, field: str, raw: object, where: str | None = None) -> Any:
        """The typed value of a field's JSON value; the spec's InvalidRecord names the field."""
        kind = self.types[field]
        try:
            if kind == "json":
                return loaded_json(field, raw)
            if kind == "datetime" and isinstance(raw, str):
                return parse_time(where or field, raw, self.error)
            if kind == "enum" and isinstance(raw, str):
                return self.enums[field](raw)
            if kind == "number" and isinstance(raw, int) and not isinstance(raw, bool):
                return float(raw)
            if kind not in ("datetime", "enum"):
                self.to_json(field, raw)
                return raw
        except (TypeError, ValueError, OverflowError):
            pass
        expected = (f"one of {[m.value for m in self.enums[field]]}" if kind == "enum"
                    else kind)
        raise self.error(where or field, f"expected {expected}, got {raw!r}")
