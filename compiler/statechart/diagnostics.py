"""Positions and problems: the two values every stage of the tool passes around."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from statechart.frozen import fast_init

Severity = Literal["error", "warning"]


@fast_init  # one per key of a spec: statechart.frozen
@dataclass(frozen=True, order=True)
class Span:
    """A region of a source file. Lines and columns are 1-based; the end is exclusive."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def point(cls, file: str, line: int, column: int) -> Span:
        return cls(file, line, column, line, column + 1)


_new = object.__new__
_set = object.__setattr__


def new_span(file: str, line: int, column: int, end_line: int, end_column: int) -> Span:
    """`Span(file, line, column, end_line, end_column)`, made without the class call: the
    model builder makes one per key and name of a spec (141,000 at 10,000 states), and the
    call's argument handling was a third of each."""
    span: Span = _new(Span)
    _set(span, "__dict__", {"file": file, "line": line, "column": column,
                            "end_line": end_line, "end_column": end_column})
    return span


@dataclass(frozen=True)
class Diagnostic:
    rule: str
    severity: Severity
    message: str
    span: Span
    help: str = ""

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.span.file, self.span.line, self.span.column, self.rule, self.message)

    def as_dict(self) -> dict[str, object]:
        return {
            "file": self.span.file,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "help": self.help,
        }
