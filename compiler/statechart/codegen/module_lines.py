"""The generated module's long sections, one line per state or per transition alternative,
written as text instead of through the template's loops (issue 31: a 10,000-state spec has
50,000 alternatives; a Jinja2 loop and a `py()` per row were most of the module's time).

The template prints each section as one `Lit`. What goes in is what the template printed
before, byte for byte: validated names (`Ident`, a state's attribute path) and literals
(`literal`, `_jinja.py`'s writer, for the rare values that are not plain names), so that the
rule of `_jinja` holds here too: spec text reaches the output only as a literal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from statechart.codegen._jinja import Ident, Lit, py


def text(value: str) -> str:
    """A str's literal, as `py` writes it (`ascii()`; a lone surrogate is refused there)."""
    return ascii(value) if value.isascii() else py(value)


def value(item: object) -> str:
    """A plain value's literal (str, None, int), as `py` writes it; anything else by `py`."""
    kind = type(item)
    if kind is str:
        return text(item)  # type: ignore[arg-type]
    if item is None or kind is int:
        return repr(item)
    return py(item)


def values(items: Sequence[object]) -> str:
    """A tuple's literal, as `py` writes it."""
    if len(items) == 1:
        return f"({value(items[0])},)"
    return "(" + ", ".join([value(v) for v in items]) + ")"


class Quoted(dict[str, str]):
    """A name -> its literal (`text`), made once per distinct name: a state's name recurs in
    its rows, its alternatives' rows and the rows of the alternatives into it."""

    def __missing__(self, key: str) -> str:
        found = self[key] = text(key)
        return found


class QuotedTuples(dict[tuple[object, ...], str]):
    """A tuple -> its literal (`values`), made once per distinct tuple (the fields the
    alternatives give: a few distinct tuples for thousands of rows)."""

    def __missing__(self, key: tuple[object, ...]) -> str:
        found = self[key] = values(key)
        return found


def rows(items: Iterable[tuple[object, ...]], pad: str) -> Lit:
    """One `{pad}{tuple},` line per row, each ending in a line break: the template prints
    the section just before its closing line."""
    return Lit("".join([f"{pad}{values(item)},\n" for item in items]))


def alternative_lines(alternatives: Iterable[tuple[object, ...]]) -> Lit:
    """`SpecTables(alternatives=...)`'s rows (`python_module.alternative_rows`)."""
    q, qt = Quoted(), QuotedTuples()
    out: list[str] = []
    for row in alternatives:
        source, event, target, given = row[:4]
        line = f"        ({q[source]}, {q[event]}, {q[target]}, {qt[given]}"  # type: ignore[index]
        out.append(line + (f", {py(row[4])}),\n" if len(row) > 4 else "),\n"))
    return Lit("".join(out))


def state_source_lines(entries: Iterable[tuple[str, int, int]]) -> Lit:
    """`_SOURCE['states']`: `name: (file, line),` per state."""
    return Lit("".join([f"        {text(name)}: ({file}, {line}),\n"
                        for name, file, line in entries]))


def transition_source_lines(entries: Iterable[tuple[str, str, int, int, int, int | None]]
                            ) -> Lit:
    """`_SOURCE['transitions']`: `(source, event, position): (file, line, guard line),` per
    alternative (the guard's line None when it has none)."""
    q = Quoted()
    return Lit("".join([f"        ({q[source]}, {q[event]}, {order}): ({file}, {line}, {guard}),\n"
                        for source, event, order, file, line, guard in entries]))


def member_lines(members: Iterable[tuple[Ident, str]]) -> Lit:
    """An enum's `member = 'value'` lines."""
    return Lit("".join([f"    {member} = {text(value)}\n" for member, value in members]))


def machine_lines(body: Sequence[tuple[int, str, Ident, list[tuple[Ident, object]]]]) -> Lit:
    """The machine class's states (`python_module._machine_body`: nested classes for
    compound and parallel states, a blank line before each but the first)."""
    out: list[str] = []
    for index, (depth, kind, name, kwargs) in enumerate(body):
        pad = "    " * (depth + 1)
        if kind in ("compound", "parallel"):
            if index:
                out.append("\n")
            base = "Compound" if kind == "compound" else "Parallel"
            out.append(f"{pad}class {name}(_api.State.{base}"
                       + "".join([f", {k}={v}" for k, v in kwargs]) + "):\n")
        elif kind == "history":
            out.append(f"{pad}{name} = _api.HistoryState("
                       + "".join([f"{k}={v}" for k, v in kwargs]) + ")\n")
        else:
            out.append(f"{pad}{name} = _api.State("
                       + ", ".join([f"{k}={v}" for k, v in kwargs]) + ")\n")
    return Lit("".join(out))


def transition_lines(statements: Iterable[tuple[str, str, str, str | None, bool, str | None]]
                     ) -> Lit:
    """The machine's `source.to(target, event=...)` statements, one per alternative:
    (source path, target, event literal, guard literal, internal, actions literal)."""
    out: list[str] = []
    for source, target, event, guard, internal, actions in statements:
        line = f"    {source}.to({target}, event={event}"
        if guard:
            line += f", cond={guard}"
        if internal:
            line += ", internal=True"
        if actions:
            line += f", on={actions}"
        out.append(line + ")\n")
    return Lit("".join(out))
