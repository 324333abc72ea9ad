"""Values of `json` record fields (docs/spec-format.md, "Structured values"): any JSON value,
at most `MAX_JSON_BYTES` of JSON text.

A value is checked where it is set (`send`, an event method, `update`, a store's `fire`):
a Python value that is not JSON (a set, a NaN, a key that is not a string) is a TypeError, as
a wrong type is for every field; one that JSON cannot store (over the size limit, nested
deeper than `MAX_DEPTH`, a string with a lone surrogate, an integer of more than 4,300 digits)
is `UnstorableValue`. Either way nothing was changed. The record keeps its own copy (what
`json.loads` makes of the value's text), so the caller's object can change afterwards.

Why 1 MiB: a value is stored in the record and in the history step that set it, and every
later transition rewrites the record, so its size is paid on each step of the run and on
every `load`; 1 MiB holds a tool's output or a model's message and keeps a step's write well
inside what PostgreSQL and SQLite store comfortably in a row. Larger data belongs in a blob
store, its reference in a `string` field.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any, TypeAlias

from statechart_runtime.errors import UnstorableValue

# What a `json` field holds, as the generated code types it.
JsonData: TypeAlias = "dict[str, JsonData] | list[JsonData] | str | int | float | bool | None"

MAX_JSON_BYTES = 1 << 20  # 1 MiB of compact UTF-8 JSON text, per value
MAX_DEPTH = 100  # nested objects and lists

_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
_encode_sorted = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"),
                                  sort_keys=True).encode


def checked_json(field: str, value: object) -> Any:
    """A copy of `value` as JSON reads it back, after checking that it is a JSON value JSON
    can store (see the module's docstring): TypeError or UnstorableValue naming `field`.

    The encoder judges the types; what it would let through is found after it, cheaply: the
    nesting depth from the text, and an object key that is not a string (written as one, so
    the copy differs from the value) by comparing the copy with the value."""
    try:
        text = _encode(value)
    except TypeError as exc:  # not a JSON type: the encoder names it
        raise TypeError(f"{field}: expected a JSON value (dict, list, str, int, float, bool or "
                        f"None): {exc}") from None
    except ValueError as exc:
        if "float" in str(exc):  # NaN or infinity
            raise TypeError(f"{field}: a JSON number is finite (JSON has no NaN or infinity): "
                            f"{exc}") from None
        raise _unstorable(field, exc) from None  # an integer too long for JSON text
    except RecursionError:
        raise _too_deep(field) from None
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:  # a lone surrogate
        raise _unstorable(field, exc) from None
    if size > MAX_JSON_BYTES:
        raise UnstorableValue(
            f"{field}: the value is {size:,} bytes of JSON, over the limit of "
            f"{MAX_JSON_BYTES:,} (1 MiB) per json value; nothing was changed: store large "
            "data elsewhere (a blob store) and keep its reference in the record")
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(text) > MAX_DEPTH:
        raise _too_deep(field)
    copy = json.loads(text)
    if copy != value:  # tuples (written as lists), or a key that is not a string
        _check_keys(field, value)
    return copy


def loaded_json(field: str, value: object) -> Any:
    """A stored value, as a record read back holds it (JSON's own parse of the stored text:
    measured and checked when it was set)."""
    if value is None or not isinstance(value, (dict, list, str, int, float)):
        raise TypeError(f"{field}: expected a JSON value, got {value!r:.60}")
    return value


def same_json(a: object, b: object) -> bool:
    """Whether two JSON values are the same (object keys in any order; `true` is not `1`)."""
    try:
        return a is b or _encode_sorted(a) == _encode_sorted(b)
    except (TypeError, ValueError):
        return False


# A JSON string (the unrolled form: several times faster than an alternation on long text),
# and what is not a bracket.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings do not
    count)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _check_keys(field: str, value: object) -> None:
    """TypeError for an object key that is not a string, anywhere in `value`."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            bad = next((k for k in item if not isinstance(k, str)), None)
            if bad is not None or (item and not all(isinstance(k, str) for k in item)):
                raise TypeError(f"{field}: a JSON object's keys are strings, got the key "
                                f"{bad!r}")
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _too_deep(field: str) -> UnstorableValue:
    return UnstorableValue(f"{field}: the value nests deeper than {MAX_DEPTH} levels; nothing "
                           "was changed: flatten it")


def _unstorable(field: str, exc: Exception) -> UnstorableValue:
    return UnstorableValue(f"{field}: the value cannot be stored as JSON ({exc}); nothing was "
                           "changed: change the value (no lone surrogates, integers of at most "
                           "4,300 digits)")


def shortened(value: object, limit: int = 80) -> str:
    """A JSON value as text output shows it (`json.dumps`'s spacing): cut to `limit`
    characters when longer, with its size as the limit measures it after an ellipsis
    (`{"rows": [1, 2, 3, ... (2,345 bytes)`)."""
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(_encode(value).encode('utf-8')):,} bytes)"
