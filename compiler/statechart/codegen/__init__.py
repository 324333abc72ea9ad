"""Code generators: the checked model in, file contents out (see `statechart.outputs`).

Generators are pure and deterministic: the same spec gives the same bytes on every machine.
They trust the checker (`statechart.linter.check_file`) for everything it checks, give names
that clash in Python their own Python names (`statechart.names`), and refuse, with
`CodegenError`, a value the templates cannot write as a literal (a lone surrogate, a number that
is not finite: `_jinja`).
"""

from __future__ import annotations

from statechart_runtime.errors import StatechartError


class CodegenError(StatechartError, ValueError):
    """The spec passed `check` but cannot be generated; the message names what to rename.

    A `StatechartError` (`statechart_runtime.errors`, the base of every error the project
    raises on purpose) and, as before, a `ValueError`: `build` reports it as the spec's problem.
    """
