"""How much a diagram's layout may cost, decided from the spec's size before it runs.

The SVG layout grows much faster than the spec (docs/performance.md, render section): a
15-line spec of 10 compound states and 9,010 transitions passes `check` in 0.3 s, and
today's settings did not lay it out in 2 minutes. So the settings are chosen by a
deterministic measure, the number of transitions, never by how long a run takes (`build
--check` must give the same answer on every machine):

- up to `FULL_MAX_TRANSITIONS`: the full settings (edge labels as layout nodes, curved edges);
- up to `max_transitions` (default `DEFAULT_MAX_TRANSITIONS`): the fast settings
  (`dot.FAST_GRAPH_ATTR`, labels as `xlabel`): straight edges, which may cross clusters;
- beyond: no layout at all. `build` writes the docs page without the picture, saying why;
  `render` refuses with a one-line error (exit 1).

The timeout and the memory cap stay as a safety net only: a layout that hits them fails
`build` or `render` with a clear error. Set in the project configuration (`[diagrams]`,
docs/configuration.md), over which the environment variables (`ENV_*` below) and then the
command-line options of `build` and `render` win. Changing `max_transitions` changes the pages
`build` writes: set it the same way for everyone (in the project configuration), not in one
person's shell. The layout program (`engine`) travels with the bounds.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from statechart_runtime.errors import StatechartError

if TYPE_CHECKING:  # `build --help` imports this module for its defaults: keep it light
    from statechart.config import Config
    from statechart.model import Spec

FULL_MAX_TRANSITIONS = 100
DEFAULT_TIMEOUT = 120.0  # seconds; `statechart.render.layout` uses it too
DEFAULT_MAX_TRANSITIONS = 1000
DEFAULT_MAX_MEMORY_MB = 4096

ENV_MAX_TRANSITIONS = "STATECHART_LAYOUT_MAX_TRANSITIONS"
ENV_TIMEOUT = "STATECHART_LAYOUT_TIMEOUT"
ENV_MAX_MEMORY = "STATECHART_LAYOUT_MAX_MEMORY_MB"

Settings = Literal["full", "fast"]


class BoundsError(StatechartError, ValueError):
    """An environment variable with a value that is not a positive number (a usage error).
    A `StatechartError` (`statechart_runtime.errors`) like every error raised on purpose."""


@dataclass(frozen=True)
class LayoutBounds:
    max_transitions: int = DEFAULT_MAX_TRANSITIONS
    timeout: float = DEFAULT_TIMEOUT  # seconds; the safety net
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB  # the layout program's address space
    engine: str = "graphviz-pure"  # `statechart.render.layout.ENGINES`

    @property
    def max_memory(self) -> int:
        return self.max_memory_mb * 2**20

    def settings(self, spec: Spec) -> Settings | None:
        """The layout settings for this spec, or None: too big to lay out."""
        n = len(spec.transitions())
        if n > self.max_transitions:
            return None
        return "full" if n <= FULL_MAX_TRANSITIONS else "fast"

    def omitted(self, spec: Spec) -> str:
        """Why there is no picture, in words that depend only on the spec and the bound."""
        return (f"{len(spec.transitions()):,} transitions exceed the layout bound of "
                f"{self.max_transitions:,}")


def _number(name: str, default: float, kind: type[int] | type[float]) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise BoundsError(f"{name}={raw!r}: expected a positive "
                          f"{'whole number' if kind is int else 'number'}")
    return value


def from_env(base: LayoutBounds | None = None) -> LayoutBounds:
    """`base` (the project configuration's bounds; default: the defaults) with the
    environment's variables on top."""
    base = base or LayoutBounds()
    return replace(
        base,
        max_transitions=int(_number(ENV_MAX_TRANSITIONS, base.max_transitions, int)),
        timeout=_number(ENV_TIMEOUT, base.timeout, float),
        max_memory_mb=int(_number(ENV_MAX_MEMORY, base.max_memory_mb, int)))


def configured(config: Config) -> LayoutBounds:
    """The bounds a project configuration sets (`[diagrams]`), the defaults elsewhere."""
    out = LayoutBounds()
    if config.layout_max_transitions is not None:
        out = replace(out, max_transitions=config.layout_max_transitions)
    if config.layout_timeout is not None:
        out = replace(out, timeout=config.layout_timeout)
    if config.engine is not None:
        out = replace(out, engine=config.engine)
    return out


_CURRENT: ContextVar[LayoutBounds | None] = ContextVar("layout_bounds", default=None)


def current() -> LayoutBounds:
    """The bounds of this run: the ones a command set with `using`, else the environment's."""
    return _CURRENT.get() or from_env()


@contextmanager
def using(max_transitions: int | None = None, timeout: float | None = None,
          config: Config | None = None) -> Iterator[LayoutBounds]:
    """The configuration's bounds, the environment's on top, the command line's options on
    top of both, for the block (how `build` passes its options to the docs generator without
    a parameter on every generator)."""
    bounds = from_env(configured(config) if config is not None else None)
    if max_transitions is not None:
        bounds = replace(bounds, max_transitions=max_transitions)
    if timeout is not None:
        bounds = replace(bounds, timeout=timeout)
    token = _CURRENT.set(bounds)
    try:
        yield bounds
    finally:
        _CURRENT.reset(token)
