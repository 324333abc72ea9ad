"""The active configuration to mark on a diagram: from state names or a stored run record.

A run record is JSON with `status` (the active top-level state) and, optionally,
`configuration` (every active state). Both are accepted; when both are present,
`configuration` wins (it is the complete answer for nested and parallel states).
"""

from __future__ import annotations

import json
from pathlib import Path

from statechart import spec_chart
from statechart.build_model import did_you_mean
from statechart.model import Spec
from statechart_runtime.errors import StatechartError


class HighlightError(StatechartError, ValueError):
    """A one-line reason the highlight cannot be computed (the CLI prints it, exit 2)."""


def active_configuration(spec: Spec, names: list[str]) -> frozenset[str]:
    """The configuration to mark. One name (`--highlight STATE`, or a record with only a
    `status`) means a run that has just entered that state: its ancestors, its default
    children and the default states of the other regions of a parallel ancestor
    (`spec_chart.configuration_of`). Several names (a record's `configuration`) are taken as
    they are, with their ancestors (an ancestor of an active state is active)."""
    for name in names:
        if name not in spec.states:
            hint = did_you_mean(name, spec.states, words=True)
            raise HighlightError(f"no state `{name}` in spec `{spec.name}`"
                                 + (f"; {hint}" if hint else ""))
    if len(names) == 1:
        return frozenset(spec_chart.configuration_of(spec, names[0]))
    active: set[str] = set(names)
    for name in names:
        active.update(spec.ancestors(name))
    return frozenset(active)


def names_from_record(path: str | Path) -> list[str]:
    """The active state names a run record file stores."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise HighlightError(f"cannot read run record {path}: {exc.strerror or exc}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise HighlightError(f"run record {path} is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise HighlightError(f"run record {path} is not a JSON object")
    configuration = data.get("configuration")
    if isinstance(configuration, list) and configuration \
            and all(isinstance(n, str) for n in configuration):
        return list(configuration)
    status = data.get("status")
    if isinstance(status, str) and status:
        return [status]
    raise HighlightError(f"run record {path} has neither `configuration` (a list of state "
                         "names) nor `status` (a state name)")
