"""`statechart paths`' outputs: the paths `statechart_runtime.testing.paths` found, as text,
JSON or a pytest module, with each transition's place in the spec (`file:line`).

The paths are computed by the runtime (the step kernel a live run uses, on the spec's
generated class compiled in memory); this module only writes them down.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
from typing import Any

from statechart import __version__
from statechart.codegen.python_module import PythonNames, class_names
from statechart.model import Spec
from statechart.outputs import spec_display_path
from statechart.report import inert
from statechart_runtime.testing import Item, Path, Paths, Step, Transition
from statechart_runtime.testing.explore import START


class SpecLines:
    """The spec line of an item (`lines(item)`): the state's, or the transition
    alternative's; each alternative's line is looked up in a table made once per spec (a
    printout names thousands of transitions)."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.alternatives: dict[tuple[str, str | None, int | None], int] = {}
        for name, state in spec.states.items():
            for t in state.transitions:
                # the first alternative of that event and place, as the order of a state's
                # transitions lists them
                self.alternatives.setdefault((name, t.event, t.order), t.target_span.line)

    def __call__(self, item: Item) -> int:
        if item.kind == "state":
            return self.spec.states[item.state].span.line
        return self.transition(item.state, item.event, item.alternative)

    def transition(self, state: str, event: str | None, alternative: int | None) -> int:
        """The line of the `alternative`th alternative of `event` on `state`."""
        line = self.alternatives.get((state, event, alternative))
        return self.spec.states[state].span.line if line is None else line


def _when(at: dt.datetime) -> str:
    """A time as an offset from the run's start: `T+1:00:00`."""
    return "T" if at == START else f"T+{at - START}"


def _value_text(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, dt.datetime):
        return _when(value)
    return repr(value) if isinstance(value, str) else json.dumps(value)


def _json_value(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value


# -- text ------------------------------------------------------------------------------------

def text(spec: Spec, found: Paths) -> str:
    where = inert(spec_display_path(spec))  # a terminal must not act on a file's name
    spec_line = SpecLines(spec)
    what = found.cover or f"a path to `{found.items[0].state}`"
    reached = len(found.items) - len(found.unreachable)
    lines = [f"{spec.name}: {len(found.paths)} path{'s' * (len(found.paths) != 1)}, "
             f"{found.events} step{'s' * (found.events != 1)}"
             + (f", covering {reached} of {len(found.items)} {what}" if found.cover else "")
             + f" ({found.configurations} configurations explored)",
             f"T is the run's clock at its start ({START.isoformat()}); guards not named "
             "answer yes."]
    if found.opening:
        lines += ["", "a new run's constructor takes (every path starts after it):"]
        lines += [_transition_line(spec_line, where, t, "  ") for t in found.opening]
    for number, path in enumerate(found.paths, 1):
        lines += ["", f"path {number} ({path.events} step{'s' * (path.events != 1)}), from "
                  + _configuration(path.configuration, path.status)
                  + "".join(f", context {k}={_value_text(v)}" for k, v in path.context.items())]
        for index, step in enumerate(path.steps, 1):
            lines += _step_lines(spec_line, where, index, step)
    if found.unreachable:
        lines += ["", "unreachable (no path from a new run takes it, whatever the guards "
                  "answer):" if found.complete else
                  f"not reached (the exploration stopped at {found.configurations} "
                  "configurations: they may still be reachable):"]
        lines += [f"  {where}:{spec_line(i)}: {i}" for i in found.unreachable]
    return "\n".join(lines) + "\n"


def _configuration(configuration: tuple[str, ...], status: str) -> str:
    return f"[{', '.join(configuration)}] (status {status})"


def _step_lines(spec_line: SpecLines, where: str, index: int, step: Step) -> list[str]:
    if step.kind == "clock":
        head = f"clock to {_when(step.at)}: fire_due()"
    else:
        head = f"{step.event}(" + ", ".join(f"{k}={_value_text(v)}"
                                            for k, v in step.values.items()) + ")"
    if step.guards:
        head += "  with " + ", ".join(f"{g}={'yes' if a else 'no'}"
                                       for g, a in step.guards.items())
    out = [f"  {index}. {head}"]
    if step.refused:
        out.append("       refused (its guards said no): the run stays where it is")
    out += [_transition_line(spec_line, where, t, " " * 7) for t in step.transitions]
    out.append(f"       => {_configuration(step.configuration, step.status)}")
    return out


def _transition_line(spec_line: SpecLines, where: str, t: Transition, indent: str) -> str:
    by = "" if t.kind is None else f" (history: {t.kind})" if t.kind in ("shallow", "deep") \
        else f" ({t.kind})"
    line = spec_line.transition(t.source, t.event, t.alternative)
    return f"{indent}{t.source} -{t.event}-> {t.target}{by}  {where}:{line}"


# -- JSON ------------------------------------------------------------------------------------

def as_json(spec: Spec, found: Paths) -> str:
    where = spec_display_path(spec)
    spec_line = SpecLines(spec)

    def item(i: Item) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": i.kind, "state": i.state}
        if i.kind != "state":
            data.update(event=i.event, alternative=i.alternative, target=i.target)
        if i.kind == "guard":
            data.update(guard=i.guard, answer=i.answer)
        data.update(text=str(i), file=where, line=spec_line(i))
        return data

    def transition(t: Transition) -> dict[str, Any]:
        return {"source": t.source, "event": t.event, "target": t.target,
                "alternative": t.alternative, "kind": t.kind,
                "line": spec_line.transition(t.source, t.event, t.alternative)}

    def step(s: Step) -> dict[str, Any]:
        return {"kind": s.kind, "event": s.event,
                "values": {k: _json_value(v) for k, v in s.values.items()},
                "guards": dict(s.guards), "at": s.at.isoformat(),
                "transitions": [transition(t) for t in s.transitions],
                "fired": list(s.fired), "refused": s.refused,
                "configuration": list(s.configuration), "status": s.status}

    def path(p: Path) -> dict[str, Any]:
        return {"context": {k: _json_value(v) for k, v in p.context.items()},
                "configuration": list(p.configuration), "status": p.status,
                "steps": [step(s) for s in p.steps], "covers": [str(i) for i in p.covers]}

    data = {"spec": spec.name, "file": where, "cover": found.cover, "start": START.isoformat(),
            "configurations": found.configurations, "complete": found.complete,
            "items": len(found.items), "covered": len(found.items) - len(found.unreachable),
            "events": found.events, "opening": [transition(t) for t in found.opening],
            "paths": [path(p) for p in found.paths],
            "unreachable": [item(i) for i in found.unreachable]}
    return json.dumps(data, indent=2) + "\n"


# -- pytest ----------------------------------------------------------------------------------

def pytest_module(spec: Spec, found: Paths, module: str, command: str) -> str:
    """A test module that drives the generated class along each path, asserting the
    configuration and status after every step; guards answer through `model=`. Not a build
    output (no "DO NOT EDIT" header): it is the user's to fill in and extend."""
    names = class_names(spec)
    python = PythonNames(spec)
    facade = str(names["facade"])
    enums = {f.name: str(names["enum:" + f.name]) for f in spec.record if f.type == "enum"}
    guards = sorted({python.guards.get(t.guard, t.guard) for t in spec.transitions()
                     if t.guard})
    steps = [s for p in found.paths for s in p.steps]
    used = {enums[f] for s in steps for f, v in s.values.items() if isinstance(v, enum.Enum)}
    used |= {enums[f] for p in found.paths for f, v in p.context.items()
             if isinstance(v, enum.Enum)}
    refused = any(s.refused for s in steps)
    lines = [
        # a comment ends at a line break: the command's text (a spec path) is escaped
        f"# Written by `{_one_line(command)}` (statechart-compiler {__version__}).",
        f'"""Paths through `{spec.name}` that cover '
        + (f"every reachable {found.cover[:-1]}" if found.cover else
           f"the way to `{found.items[0].state}`") + ".",
        "",
        "Each test starts a new run on a fixed clock, sends each event with placeholder values",
        "(replace them with real ones), answers the guards through `model=`, and asserts the",
        'configuration and status after every step. Add your own assertions."""',
        "",
        "from __future__ import annotations",
        "",
        "import datetime as dt",
        "",
        *(["import pytest", ""] if refused else []),
        f"from {module} import (",
        *[f"    {name}," for name in sorted({facade, *used})],
        ")",
        *(["from statechart_runtime.run import EventNotAccepted"] if refused else []),
        "",
        f"T = dt.datetime({START.year}, {START.month}, {START.day}, tzinfo=dt.UTC)",
        "",
        "",
        "class Clock:",
        '    """The time the run sees: set `now` to move it."""',
        "",
        "    def __init__(self) -> None:",
        "        self.now = T",
        "",
        "    def __call__(self) -> dt.datetime:",
        "        return self.now",
        "",
        "",
        "class Guards:",
        '    """The guards\' answers (`model=`): set `answers` before a step; unnamed: yes."""',
        "",
        "    def __init__(self) -> None:",
        "        self.answers: dict[str, bool] = {}",
        *[line for g in guards for line in (
            "", f"    def {g}(self) -> bool:", f"        return self.answers.get({g!r}, True)")],
        "",
        "",
        f"def start(**context: object) -> tuple[{facade}, Clock, Guards]:",
        "    clock, guards = Clock(), Guards()",
        f"    return {facade}(clock=clock, model=guards, **context), clock, guards  "
        "# type: ignore[arg-type]",
        "",
        "",
        f"def configuration(run: {facade}) -> list[str]:",
        "    return [s.value for s in run.configuration]",
    ]
    for number, path in enumerate(found.paths, 1):
        lines += ["", "", *_pytest_path(number, path, python, enums)]
    return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    """`text` with line breaks and other control characters as escapes (`\\n`)."""
    return text.encode("unicode_escape").decode("ascii")


def _pytest_path(number: int, path: Path, python: PythonNames,
                 enums: dict[str, str]) -> list[str]:
    last = path.steps[-1] if path.steps else None
    ending = "" if last is None else "_" + (
        python.events.get(str(last.event), str(last.event)) if last.kind == "event"
        else "timer")
    context = ", ".join(f"{python.fields.get(k, k)}={_py_value(v, k, enums)}"
                        for k, v in path.context.items())
    out = [f"def test_path_{number}{ending}() -> None:"]
    if path.covers:
        out += ['    """Covers:', *[f"    - {i}" for i in path.covers], '    """']
    clock = "clock" if any(s.kind == "clock" for s in path.steps) else "_"
    guards = "guards" if any(s.guards for s in path.steps) else "_"
    out += [*_call(f"    run, {clock}, {guards} = start(", context, ")"),
            f"    assert configuration(run) == {list(path.configuration)!r}",
            f"    assert run.status.value == {path.status!r}"]
    answers: dict[str, bool] = {}
    for step in path.steps:
        if dict(step.guards) != answers:
            answers = dict(step.guards)
            out.append(f"    guards.answers = {answers!r}")
        if step.kind == "clock":
            out += [f"    clock.now = T + {_py_delta(step.at - START)}",
                    f"    assert run.fire_due() == {list(step.fired)!r}"]
        else:
            event = str(step.event)
            args = ", ".join(f"{python.fields.get(k, k)}={_py_value(v, k, enums)}"
                             for k, v in step.values.items())
            method = python.events.get(event, event)
            if step.refused:
                out += ["    with pytest.raises(EventNotAccepted):",
                        *_call(f"        run.{method}(", args, ")")]
            else:
                out += _call(f"    run.{method}(", args, ")")
        out += [f"    assert configuration(run) == {list(step.configuration)!r}",
                f"    assert run.status.value == {step.status!r}"]
    return out


def _call(head: str, args: str, tail: str) -> list[str]:
    """A call on one line, or with one argument a line when that is over 99 characters."""
    if len(head) + len(args) + len(tail) < 100:
        return [head + args + tail]
    indent = " " * (len(head) - len(head.lstrip()) + 4)
    return [head, *[f"{indent}{arg}," for arg in args.split(", ")],
            " " * (len(head) - len(head.lstrip())) + tail]


def _py_value(value: Any, field: str, enums: dict[str, str]) -> str:
    if isinstance(value, enum.Enum):
        return f"{enums[field]}.{value.name}"
    if isinstance(value, dt.datetime):
        return f"T + {_py_delta(value - START)}"
    return repr(value)


def _py_delta(delta: dt.timedelta) -> str:
    seconds = delta.total_seconds()
    if seconds and seconds % 3600 == 0:
        return f"dt.timedelta(hours={seconds / 3600:g})"
    return f"dt.timedelta(seconds={seconds:g})"
