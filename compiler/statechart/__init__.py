"""statechart-compiler: validate, render and compile YAML statechart specs.

Errors: every exception the compiler raises on purpose derives from
`statechart_runtime.errors.StatechartError` (the runtime package ships with the compiler),
and keeps a standard base for `except` clauses written before:

    StatechartError
      CodegenError (+ ValueError)          statechart.codegen: a spec that cannot be generated
      LayoutError (+ RuntimeError)         statechart.render.layout: the layout program failed
      OutputUnavailable (+ RuntimeError)   statechart.outputs: a file `build` could not make
      ScaffoldError                        statechart.scaffold: `init` or `new` refused
      _Usage                               statechart.cli.diff: wrong `diff` arguments
    (HighlightError, statechart.render.highlight, is a ValueError and not yet a StatechartError.)

A spec's own problems are not exceptions: they are `Diagnostic`s, all reported at once.
"""

__version__ = "0.2.0"

REPOSITORY = "https://github.com/statechart-compiler/statechart-compiler"
# The runtime alone, as pip installs it (no index has it yet: README "Install"); a generated
# module names it when the runtime is missing.
RUNTIME_REQUIREMENT = f"statechart-runtime @ git+{REPOSITORY}#subdirectory=runtime"
