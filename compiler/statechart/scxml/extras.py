"""What SCXML has no place for, as attributes of our namespace: one table per construct.

Each row is (attribute, spec key, write, read): `write` takes the model object and gives the
attribute's text (None: not written), `read` takes the text and gives the spec's YAML value.
The exporter writes every row, the importer reads every row back, so a new key of a state or
a transition is one row here (and a new SCXML construct one entry of the tables in
`export` and `importer`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from statechart.model import WORK_BACKOFF, WORK_RETRIES, RecordField, State, Transition, Work

Row = tuple[str, str, Callable[[Any], str | None], Callable[[str], Any]]


def words(names: tuple[str, ...]) -> str | None:
    """A list of names as an SCXML attribute does (`target="a b"`): space-separated."""
    return " ".join(names) if names else None


def split(text: str) -> list[str]:
    return text.split()


# Characters XML 1.0 cannot hold, escaped or not (YAML's `"\x01"` can make them).
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def text_out(value: str | None) -> str | None:
    """Free text (a description) as an attribute: as it is, unless XML cannot hold one of its
    characters; then, and when it starts with `"`, as a JSON string (`text_in` reads both)."""
    if value is None:
        return None
    return json.dumps(value) if NOT_XML.search(value) or value.startswith('"') else value


def text_in(text: str) -> str:
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value if isinstance(value, str) else text
    return text


def _same(text: str) -> str:
    return text


def _json(value: Any) -> str:
    """A constant (a default, an `assign:` value) keeps its type: JSON, not bare text."""
    return json.dumps(value)  # ASCII: `\uXXXX` for what XML could not hold


def _work(work: Work) -> dict[str, Any]:
    """A state's `work:` as its YAML writes it (SCXML has no place for it)."""
    out: dict[str, Any] = {"handler": work.handler, "timeout": work.timeout}
    if work.heartbeat is not None:
        out["heartbeat"] = work.heartbeat
    out["outcomes"] = list(work.outcomes)
    if work.error is not None:
        out["error"] = work.error
    retry = {**({"max": work.retries} if work.retries != WORK_RETRIES else {}),
             **({"backoff": work.backoff} if work.backoff != WORK_BACKOFF else {})}
    if retry:
        out["retry"] = retry
    return out


STATE: list[Row] = [
    ("description", "description", lambda s: text_out(s.description), text_in),
    ("tags", "tags", lambda s: words(s.tags), split),
    ("requires", "requires", lambda s: words(s.requires), split),
    ("clear", "clear", lambda s: words(s.clear), split),
    ("limit", "limit", lambda s: None if s.limit is None else str(s.limit), int),
    ("status", "status", lambda s: s.status, _same),
    ("counter", "counter", lambda s: s.counter, _same),
    ("work", "work", lambda s: None if s.work is None else _json(_work(s.work)), json.loads),
]

TRANSITION: list[Row] = [
    ("description", "description", lambda t: text_out(t.description), text_in),
    ("set", "set", lambda t: words(t.given), split),
    ("clear", "clear", lambda t: words(t.clears), split),
    ("assign", "assign", lambda t: _json(dict(t.assigns)) if t.assigns else None, json.loads),
]

FIELD: list[Row] = [
    ("type", "type", lambda f: None if f.type == "enum" else f.type, _same),
    ("enum", "enum", lambda f: words(f.enum), split),
    ("description", "description", lambda f: text_out(f.description), text_in),
    ("context", "context", lambda f: "true" if f.context else None, lambda text: text == "true"),
    ("default", "default", lambda f: None if f.default is None else _json(f.default),
     json.loads),
]


def written(rows: list[Row], item: State | Transition | RecordField) -> dict[str, str]:
    """The attributes of `item` (names without namespace), in the table's order."""
    out: dict[str, str] = {}
    for attribute, _key, write, _read in rows:
        value = write(item)
        if value is not None:
            out[attribute] = value
    return out


def read(rows: list[Row], attributes: dict[str, str]) -> dict[str, Any]:
    """The spec keys those attributes stand for (names without namespace)."""
    return {key: parse(attributes[attribute])
            for attribute, key, _write, parse in rows if attribute in attributes}
