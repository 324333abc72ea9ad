"""What spec coverage (`pytest --statechart-cov`, statechart_runtime.coverage) costs a run.

    python bench/bench_coverage.py [--rounds 30] [--runs 40] [--baseline-ref REF]
                                   [--markdown FILE]

Events/s of the agent run (bench/agent_run_v1.yaml, created and driven along bench_runtime's
realistic 19-event path: a guarded alternative, an interruption, a retry), three ways, side by
side in one run:

- **without**: the runtime as it was before the coverage hook existed (`runtime/` at
  `--baseline-ref`, by default the parent of the commit that added the hook to run.py,
  extracted with `git archive`): the baseline;
- **off**: this runtime with recording off (`coverage.RECORDER` is None), which is what every
  run outside `pytest --statechart-cov` pays, the plugin installed or not;
- **on**: this runtime recording (`coverage.start()`), as under `pytest --statechart-cov`.

Each variant is an interpreter of its own (so the two runtimes never share a process) that
warms up, then times batches of `--runs` runs in CPU time when asked; the three are asked in
turn, `--rounds` times, and the medians of the per-round ratios against **without** are
reported (the machine is noisy: interleaved small batches see the same load).
The same generated module (built by this compiler) runs on all three.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_runtime import agent_path  # noqa: E402
from benchlib import agent_run_v1_module  # noqa: E402

CHILD = r"""
import enum, importlib.util, json, sys, time
runtime, module_path, mode, path = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
sys.path.insert(0, runtime)
import statechart_runtime
assert statechart_runtime.__file__.startswith(runtime), statechart_runtime.__file__
if mode == "on":
    from statechart_runtime import coverage
    coverage.start()
spec = importlib.util.spec_from_file_location("agent_run", module_path)
module = importlib.util.module_from_spec(spec)
sys.modules["agent_run"] = module
spec.loader.exec_module(module)
Run = module.AgentRun

def typed(field, value):
    kind = getattr(module, "AgentRun" + field[:1].upper() + field[1:], None)
    return kind(value) if isinstance(kind, type) and issubclass(kind, enum.Enum) else value

calls = [(getattr(Run, event), {f: typed(f, v) for f, v in values.items()})
         for event, values in path]

def drive(n):
    for i in range(n):
        run = Run(run_id=f"r{i}")
        for method, kwargs in calls:
            method(run, **kwargs)

drive(20)  # warm-up
done = 20
for line in sys.stdin:  # "N": time N runs, print their CPU seconds
    n = int(line)
    start = time.process_time()
    drive(n)
    print(time.process_time() - start, flush=True)
    done += n
if mode == "on":  # the recorder did record: every run took the guarded alternative
    [data] = coverage.RECORDER.data()
    assert data["hits"]["transition running error 0"] == done, data["hits"]
"""

VARIANTS = ("without", "off", "on")


def hook_commit() -> str:
    """The commit that added the coverage hook to run.py (its parent is the baseline)."""
    out = subprocess.run(["git", "log", "--format=%H", "--reverse", "-S", "coverage.RECORDER",
                          "--", "runtime/statechart_runtime/run.py"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    if not out:
        raise SystemExit("no commit adds the coverage hook to run.py: pass --baseline-ref")
    return out[0]


def extract_runtime(ref: str, folder: Path) -> Path:
    """`runtime/statechart_runtime` at `ref`, extracted under `folder`; the folder to put on
    sys.path."""
    archive = folder / "runtime.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", ref, "runtime/statechart_runtime"], cwd=ROOT,
                       stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder / "baseline", filter="data")
    return folder / "baseline" / "runtime"


class Child:
    """A fresh interpreter on one runtime that times batches of runs on demand (CPU time:
    the other processes of a busy machine do not count)."""

    def __init__(self, runtime: Path, module: Path, mode: str,
                 path: list[tuple[str, dict[str, str]]]) -> None:
        self.mode = mode
        self.process = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(runtime), str(module), mode, json.dumps(path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def seconds(self, runs: int) -> float:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(f"{runs}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.mode} measurement failed:\n{self.close()}")
        return float(line)

    def close(self) -> str:
        """Ends the child; its stderr (empty when it checked what it recorded)."""
        _, err = self.process.communicate()
        if self.process.returncode != 0:
            raise SystemExit(f"the {self.mode} measurement failed:\n{err}")
        return err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--baseline-ref", default=None)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    ref = args.baseline_ref or hook_commit() + "^"
    path = [(event, values) for event, values in agent_path(tool_calls=3)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        module = agent_run_v1_module(folder)
        runtimes = {"without": extract_runtime(ref, folder), "off": ROOT / "runtime",
                    "on": ROOT / "runtime"}
        children = {v: Child(runtimes[v], module, "on" if v == "on" else "off", path)
                    for v in VARIANTS}
        speeds: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for _ in range(args.rounds):
            for variant in VARIANTS:
                events = args.runs * len(path)
                speeds[variant].append(events / children[variant].seconds(args.runs))
        for child in children.values():
            child.close()
    ratios = {v: statistics.median(s / b for s, b in zip(speeds[v], speeds["without"],
                                                          strict=True)) for v in VARIANTS}
    medians = {v: statistics.median(speeds[v]) for v in VARIANTS}
    per_event_us = (1 / medians["on"] - 1 / medians["off"]) * 1e6
    lines = [
        f"Spec coverage: events/s of the agent run (v1), {len(path)} events a run, "
        f"{args.runs} runs a measurement, median of {args.rounds} rounds; baseline: the "
        f"runtime at {ref}",
        "",
        "| runtime | events/s | × without |",
        "| --- | ---: | ---: |",
        *(f"| {label} | {medians[v]:,.0f} | {ratios[v]:.2f}× |" for v, label in (
            ("without", "without the coverage hook (baseline)"),
            ("off", "with the hook, recording off (plugin off or not installed)"),
            ("on", "recording (`pytest --statechart-cov`)"))),
        "",
        f"Recording costs {per_event_us:.1f} µs per event (on against off, medians).",
    ]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
