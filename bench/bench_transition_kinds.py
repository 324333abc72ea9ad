"""Events/s of a targetless transition, an internal one and eventless routing (`always:`)
against what a spec had to write before them (docs/semantics.md), in the generated facade.

    python bench/bench_transition_kinds.py [--rounds 21] [--events 2000] [--case route]

Two specs differ in one line. `progress` updates a field while a run is in `running.tool_call`:
targetless (`progress: {set: [percent]}` on `running`) against an external self-transition on
the inner state (`progress: {target: tool_call, set: [percent]}` on `tool_call`, which exits
and re-enters it and re-arms its timer). `call_tool` goes from `reasoning` to `tool_call`:
internal (`{target: tool_call, internal: true}` on `running`) against external (the same on
`running` without `internal`, which exits and re-enters `running` and re-arms its timer).
`route` triages a run and routes it by a guard, then closes it (back to the start): with
`always:` on `triaged` (`triage()`, `close()`: two sends, three transitions) against an event
the application sends to route it (`triage()`, `route()`, `close()`: three sends, the same
three transitions); measured per routed run, printed as routed runs/s.
Rounds are interleaved in ABBA order on this noisy machine; the medians of the ratios are
printed (above 1: the new kind is faster).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from codegen_support import checked_text, generate, import_source

SPEC = """\
statechart: {name}
version: 1
initial: running
record:
  percent: {{type: integer}}
states:
  running:
    initial: reasoning
    after: {{1h: done}}
    on:
      stop: done
      {running_on}
    states:
      reasoning: {{on: {{call: tool_call}}}}
      tool_call:
        after: {{10m: reasoning}}
        on:
          back: reasoning
          {tool_call_on}
  done: {{final: true}}
"""
CASES = {
    "progress": (  # (new, old): targetless against an external self-transition
        {"running_on": "progress: {set: [percent]}", "tool_call_on": ""},
        {"running_on": "", "tool_call_on": "progress: {target: tool_call, set: [percent]}"}),
    "call_tool": (  # internal against external
        {"running_on": "call_tool: {target: tool_call, internal: true}", "tool_call_on": ""},
        {"running_on": "call_tool: {target: tool_call}", "tool_call_on": ""}),
}

ROUTE = """\
statechart: {name}
version: 1
initial: created
states:
  created: {{on: {{triage: triaged}}}}
  triaged:
    {triaged}
  urgent: {{on: {{close: created}}}}
  normal: {{on: {{close: created, stop: done}}}}
  done: {{final: true}}
"""
ROUTING = "[{target: urgent, guard: is_urgent}, {target: normal}]"
ROUTES = {"triaged": f"always: {ROUTING}"}, {"triaged": f"on: {{route: {ROUTING}}}"}


def facade(name: str, parts: dict[str, str], folder: Path, template: str = SPEC) -> Any:
    text = template.format(name=name, **parts)
    spec = checked_text(text)
    assert spec is not None, name
    module = import_source(generate(spec)[f"generated/{name}.py"], folder, name)
    return getattr(module, "".join(p.capitalize() for p in name.split("_")))


def per_event(run_class: Any, case: str, events: int) -> float:
    run = run_class(run_id="b")
    if case == "route":  # per routed run; urgent and normal in turn
        run_class.is_urgent = lambda self: self.flip
        explicit = hasattr(run, "route")
        start = time.perf_counter()
        for i in range(events):
            run.flip = i % 2 == 0
            run.triage()
            if explicit:
                run.route()
            run.close()
        return (time.perf_counter() - start) / events
    if case == "progress":
        run.call()
        send = run.progress
        start = time.perf_counter()
        for i in range(events):
            send(percent=i)
        return (time.perf_counter() - start) / events
    start = time.perf_counter()
    for _ in range(events // 2):
        run.call_tool()
        run.back()
    return (time.perf_counter() - start) / events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--case", choices=[*CASES, "route"], action="append",
                        help="only these cases (default: all)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    for case, (new, old) in [*CASES.items(), ("route", ROUTES)]:
        if args.case and case not in args.case:
            continue
        template = ROUTE if case == "route" else SPEC
        a = facade(f"new_{case}", new, folder, template)
        b = facade(f"old_{case}", old, folder, template)
        ta: list[float] = []
        tb: list[float] = []
        for i in range(args.rounds):
            order = [(a, ta), (b, tb)] if i % 2 == 0 else [(b, tb), (a, ta)]
            for run_class, times in order:
                times.append(per_event(run_class, case, args.events))
        ratios = [o / n for n, o in zip(ta, tb, strict=True)]
        unit = "routed runs/s" if case == "route" else "events/s"
        print(f"{case}: new {1 / statistics.median(ta):,.0f} {unit}, old "
              f"{1 / statistics.median(tb):,.0f} {unit}, ratio (new/old speed) "
              f"{statistics.median(ratios):.2f} over {args.rounds} rounds")


if __name__ == "__main__":
    main()
