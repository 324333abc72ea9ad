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
import math
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
    can store (see the module's docstring): TypeError or UnstorableValue naming `field`."""
    _check_shape(field, value)
    try:
        text = _encode(value)
        size = len(text.encode("utf-8"))
    except (ValueError, UnicodeEncodeError) as exc:
        raise UnstorableValue(f"{field}: the value cannot be stored as JSON ({exc}); nothing "
                              "was changed: change the value (no lone surrogates, integers of "
                              "at most 4,300 digits)") from None
    if size > MAX_JSON_BYTES:
        raise UnstorableValue(
            f"{field}: the value is {size:,} bytes of JSON, over the limit of "
            f"{MAX_JSON_BYTES:,} (1 MiB) per json value; nothing was changed: store large "
            "data elsewhere (a blob store) and keep its reference in the record")
    return json.loads(text)


def loaded_json(field: str, value: object) -> Any:
    """A stored value, as a record read back holds it: checked for its shape only (a stored
    value was measured when it was set)."""
    _check_shape(field, value)
    return value


def same_json(a: object, b: object) -> bool:
    """Whether two JSON values are the same (object keys in any order; `true` is not `1`)."""
    try:
        return a is b or _encode_sorted(a) == _encode_sorted(b)
    except (TypeError, ValueError):
        return False


def _check_shape(field: str, value: object) -> None:
    """TypeError for a value that is not JSON; UnstorableValue past MAX_DEPTH. Iterative:
    the depth is the caller's."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item is None or isinstance(item, (str, bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise TypeError(f"{field}: {item!r} is not a JSON number (JSON has no NaN or "
                                "infinity)")
            continue
        if isinstance(item, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                raise UnstorableValue(f"{field}: the value nests deeper than {MAX_DEPTH} "
                                      "levels; nothing was changed: flatten it")
            if isinstance(item, dict):
                for key, sub in item.items():
                    if not isinstance(key, str):
                        raise TypeError(f"{field}: a JSON object's keys are strings, got the "
                                        f"key {key!r}")
                    stack.append((sub, depth + 1))
            else:
                stack.extend((sub, depth + 1) for sub in item)
            continue
        raise TypeError(f"{field}: expected a JSON value (dict, list, str, int, float, bool or "
                        f"None), got {type(item).__name__} {_short(item)}")


def _short(item: object) -> str:
    text = repr(item)
    return text if len(text) <= 60 else text[:57] + "..."


def shortened(value: object, limit: int = 80) -> str:
    """A JSON value as text output shows it (`json.dumps`'s spacing): cut to `limit`
    characters when longer, with its size as the limit measures it after an ellipsis
    (`{"rows": [1, 2, 3, ... (2,345 bytes)`)."""
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(_encode(value).encode('utf-8')):,} bytes)"
