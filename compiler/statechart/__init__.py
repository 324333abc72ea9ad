"""statechart-compiler: validate, render and compile YAML statechart specs."""

__version__ = "0.2.0"
