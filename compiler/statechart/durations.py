"""Timer delays (`after:` keys): `500ms`, `30s`, `15m`, `2h`, `1d`, or an ISO 8601 duration
(`PT15M`, `P1DT2H`, `PT0.5S`, `P2W`).

ISO 8601 years and months are refused: their length depends on the date they start from, and
a timer's delay is a fixed number of milliseconds (write days instead). A delay must be a whole
number of milliseconds greater than zero.
"""

from __future__ import annotations

import re
from decimal import Decimal

from statechart_runtime.chart import events

_SHORT = re.compile(r"(\d+)(ms|s|m|h|d)\Z")
_ISO = re.compile(r"P(?:(\d+)W|(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?)\Z")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
# A timer firing more than ~100 years out is a mistake, and keeps due times inside datetime.
MAX_MS = 100 * 366 * 86_400_000


def looks_like_delay(key: str) -> bool:
    """Whether an `after:` key is meant as a delay (else it names a datetime field): a digit
    first, or `P` followed by a digit or `T` (the runtime's test too: records written before
    timers had ids name a delay timer by its delay)."""
    return events.looks_like_delay(key)


def parse(key: str) -> int | str:
    """The delay in milliseconds, or why `key` is not a delay (a message for a schema error)."""
    short = _SHORT.match(key)
    if short:
        ms = int(short.group(1)) * _UNIT_MS[short.group(2)]
    else:
        iso = _ISO.match(key)
        if iso is None or key in ("P", "PT") or key.endswith("T"):
            if key.startswith("P") and re.search(r"\d[YM]", key[1:].split("T")[0]):
                return "ISO 8601 years and months have no fixed length"
            return "not a delay"
        weeks, days, hours, minutes, seconds = iso.groups()
        total = Decimal(seconds or 0) * 1000 + (
            int(weeks or 0) * 7 * 86_400_000 + int(days or 0) * 86_400_000
            + int(hours or 0) * 3_600_000 + int(minutes or 0) * 60_000)
        if total != total.to_integral_value():
            return "not a whole number of milliseconds"
        ms = int(total)
    if ms <= 0:
        return "a delay must be greater than zero"
    if ms > MAX_MS:
        return "longer than 100 years"
    return ms


def text(ms: int) -> str:
    """The shortest `15m`-style text of a delay (for messages)."""
    for unit in ("d", "h", "m", "s"):
        if ms % _UNIT_MS[unit] == 0:
            return f"{ms // _UNIT_MS[unit]}{unit}"
    return f"{ms}ms"
