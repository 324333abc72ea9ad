"""What every rule module shares: the problem constructor and the check signature."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from statechart.diagnostics import Diagnostic, Severity, Span
from statechart.graph import Graph
from statechart.model import Spec


class RuleModule(Protocol):
    """A rule is a module: `ID`, `SEVERITY`, `PHASE`, a docstring, and for graph and model
    rules a `check(spec, graph)` generator."""

    ID: str
    SEVERITY: Severity
    PHASE: str
    __doc__: str | None


Check = Iterator[Diagnostic]


def problem(module_id: str, severity: Severity, span: Span, message: str,
            help: str = "") -> Diagnostic:
    return Diagnostic(module_id, severity, message, span, help)


__all__ = ["Check", "Diagnostic", "Graph", "RuleModule", "Span", "Spec", "problem"]
