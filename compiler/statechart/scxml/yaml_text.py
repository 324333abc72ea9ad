"""Writing a spec as YAML text with comments (what `statechart import` writes).

PyYAML cannot write comments, and the comments are the point: each says what an SCXML
construct became. A `Block` is a mapping written in block style with comment lines above any
of its keys; a plain dict or list inside it is written in flow style (`{target: a, guard: g}`,
`[a, b]`). Scalars are written so that the YAML 1.2 core schema `check` uses reads them back as
the same value: a name plain, other text double-quoted with escapes.
"""

from __future__ import annotations

import json
import re
from typing import Any

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Plain words YAML 1.2's core schema reads as something other than a string.
_SPECIAL = frozenset({"true", "True", "TRUE", "false", "False", "FALSE", "null", "Null",
                      "NULL"})


class Block(dict[str, Any]):
    """A mapping written in block style, with comment lines above its keys."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: dict[str, list[str]] = {}

    def note(self, key: str, text: str) -> None:
        """A comment above `key` (once: a transition on several events is noted once)."""
        notes = self.notes.setdefault(key, [])
        if text not in notes:
            notes.append(text)


def scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if _PLAIN.match(text) and text not in _SPECIAL:
        return text
    quoted = json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted one
    # YAML refuses some characters even quoted (line separators, controls): their escapes.
    return "".join(c if c.isprintable() or c == " " else
                   (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
                   for c in quoted)


def flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{scalar(k)}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return scalar(value)


def _comment(text: str) -> str:
    """One comment line: what it quotes from the SCXML file stays on the line, shown safely."""
    return "".join(c if c.isprintable() else f"<U+{ord(c):04X}>" for c in text)


def block(mapping: Block, indent: int = 0) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    for key, value in mapping.items():
        out += [f"{pad}# {_comment(line)}" for line in mapping.notes.get(key, ())]
        if isinstance(value, Block):
            if value:
                out.append(f"{pad}{scalar(key)}:")
                out += block(value, indent + 2)
            else:
                out.append(f"{pad}{scalar(key)}: {{}}")
        elif isinstance(value, list) and value and any(isinstance(v, dict) for v in value):
            out.append(f"{pad}{scalar(key)}:")
            out += [f"{pad}  - {flow(v)}" for v in value]
        else:
            out.append(f"{pad}{scalar(key)}: {flow(value)}")
    return out


def dump(tree: Block, header: list[str]) -> str:
    return "".join(f"# {_comment(line)}\n" for line in header) + "\n".join(block(tree)) + "\n"
