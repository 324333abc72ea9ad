"""The Jinja2 environment for Python templates: nothing reaches the output unchecked.

Spec text never becomes code. A template may print only two kinds of value:
`Ident`, a name the checker validated (an ASCII identifier, not a keyword), and `Lit`, a
Python literal made by the `py` filter (`ascii()` for text, so quotes, backslashes, newlines,
`\\r` and U+2028 come out escaped and the output stays pure ASCII). Anything else, a raw `str`
above all, makes `finalize` raise, so a template mistake fails the build instead of emitting
spec text as code. Parsing the output would not catch such a mistake: a description that
closes the string it was printed into and adds a statement is still valid Python.
"""

from __future__ import annotations

import math
import textwrap
from functools import cache
from typing import TYPE_CHECKING, Any, Self

from statechart.codegen import CodegenError

if TYPE_CHECKING:
    import jinja2


class Ident(str):
    """A validated identifier, or a dotted path of them: safe to print as a Python name."""

    __slots__ = ()

    def __new__(cls, value: str) -> Self:
        if type(value) is cls:  # checked when it was made (a state's path, named per transition)
            return value
        if not (value.isascii() and (value.isidentifier() or all(
                p.isidentifier() for p in value.split(".")))):
            raise CodegenError(f"not an identifier: {value!r}")
        return super().__new__(cls, value)


class Lit(str):
    """Python source of a literal, produced by `py` (never from spec text directly)."""

    __slots__ = ()


def py(value: Any) -> Lit:
    """The Python literal for `value`: str, int, float, bool, None, tuples and lists of them."""
    return value if isinstance(value, Lit) else Lit(_literal(value))


def _literal(value: Any) -> str:
    """`py`'s text: plain strings inside (a `Lit` is made once, for the whole literal), the
    common types first (a 10,000-state module has 800,000 of them)."""
    kind = type(value)
    if kind is str:
        return ascii(value) if value.isascii() else _text(value)
    if kind is tuple:
        if len(value) == 1:
            return f"({_literal(value[0])},)"
        return "(" + ", ".join([_literal(v) for v in value]) + ")"
    if value is None or kind is int or kind is bool:
        return repr(value)
    if isinstance(value, Lit):
        return value
    if isinstance(value, str):  # an Ident, say
        text = str(value)
        return ascii(text) if text.isascii() else _text(text)
    if isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CodegenError("not a finite number")
        return repr(value)
    if isinstance(value, tuple):
        return _literal(tuple(value))
    if isinstance(value, list):
        return "[" + ", ".join([_literal(v) for v in value]) + "]"
    if isinstance(value, dict):  # insertion order is the spec's order: deterministic
        return "{" + ", ".join([f"{_literal(k)}: {_literal(v)}" for k, v in value.items()]) \
            + "}"
    if isinstance(value, frozenset):
        return "frozenset({" + ", ".join([_literal(v) for v in sorted(value)]) + "})" \
            if value else "frozenset()"
    raise CodegenError(f"no literal for {type(value).__name__}")


def _text(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise CodegenError("text contains a lone surrogate, which cannot be encoded") from None
    return ascii(value)


def py_text(value: str, indent: int, start: int | None = None, width: int = 96) -> Lit:
    """A long text as implicitly concatenated literals in parentheses, one chunk a line
    (indented `indent` + 4), so that generated lines stay short; a text that fits after
    column `start` (where the literal begins; default `indent`) stays one literal."""
    single = py(value)
    if (indent if start is None else start) + len(single) <= width:
        return single
    pad = " " * (indent + 4)
    chunks = textwrap.wrap(value, width=max(20, (width - indent - 8) * 2 // 3),
                           drop_whitespace=False, replace_whitespace=False,
                           break_on_hyphens=False, expand_tabs=False) or [value]
    # textwrap never drops characters with these settings; check it anyway.
    if "".join(chunks) != value:
        chunks = [value]
    lines = "\n".join(pad + py(c) for c in chunks)
    return Lit("(\n" + lines + "\n" + " " * indent + ")")


def comment(value: str) -> Lit:
    """Text for a `#` comment: printable ASCII only, everything else escaped, so that no line
    break (`\\n`, a bare `\\r`, U+2028 for other tools) can end the comment early."""
    return Lit("".join(c if " " <= c <= "~" else ascii(c)[1:-1] for c in value))


def raw(value: str) -> Lit:
    """Template punctuation and indentation (braces, commas, spaces) and nothing else."""
    if set(value) <= set(" {}[](),:"):
        return Lit(value)
    raise CodegenError(f"`raw` is for punctuation only, not {value!r:.60}")


def pretty(value: Any, indent: int, width: int = 100) -> Lit:
    """`py(value)`, with tuples spread over lines (one element each) when too long."""
    flat = py(value)
    if indent + len(flat) + 2 <= width or not isinstance(value, tuple) or not value:
        return flat
    inner = "".join(" " * (indent + 4) + pretty(v, indent + 4, width) + ",\n" for v in value)
    return Lit("(\n" + inner + " " * indent + ")")


def entry(key: Any, value: Any, indent: int = 4, width: int = 100) -> Lit:
    """One `key: value,` line of a dict display, split after the colon when too long."""
    pad = " " * indent
    line = f"{pad}{py(key)}: {py(value)},"
    if len(line) <= width:
        return Lit(line)
    return Lit(f"{pad}{pretty(key, indent, width)}:\n"
               f"{pad}    {pretty(value, indent + 4, width)},")


def _finalize(value: Any) -> str:
    if isinstance(value, (Ident, Lit)):
        return value
    raise CodegenError(f"template tried to print a raw {type(value).__name__}: {value!r:.60}; "
                       "wrap names in Ident and literals in the `py` filter")


@cache
def environment() -> jinja2.Environment:
    # Imported here: what only reads names (`statechart paths`) does not load Jinja2.
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("statechart", "templates"),
        autoescape=False,  # HTML escaping is wrong for Python; finalize guards instead
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["py"] = py
    env.filters["py_text"] = py_text
    env.filters["comment"] = comment
    env.filters["raw"] = raw
    env.filters["ident"] = Ident
    env.globals["entry"] = entry
    return env
