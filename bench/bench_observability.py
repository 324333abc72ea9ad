"""Benchmark what observing runs costs (docs/observability.md): `store.fire` on SQLite with
no listener, with a listener that does nothing, with tracing on (the OpenTelemetry SDK, an
exporter that drops what it is given, behind a batch or a simple span processor; and with
its spans made 64 at a time, `TracingListener(batch=64)`), with a
listener that makes one bare span per fire (the SDK's own floor), and with metrics on; and
this tree's store with no listener and with tracing against the runtime it was built on
(`--base REV`, default `main`): the cost of the listener hooks when nobody listens (the
extra not installed), and whether tracing's cost changed (each runtime's tracing against
its own fires with no listener).

    python bench/bench_observability.py [--rounds 9] [--fires 2000] [--base main]
                                        [--folder /dev/shm] [--postgres URL]

Every figure is a ratio against a baseline measured in the same run, in interleaved rounds
(the machine is noisy), medians reported; the time is the process's CPU time (its threads'
too: the span processor's), which other processes' load does not inflate. The run fired is
a ticket (open -> approved -> open ...: `approve` and `reopen`, a value each), and a timed
ticket, the same with a timer on both states (each fire enters a state whose timer links
back to it: a tracing listener's span is started before the write, its context kept with
the state; its two variants are against the timed ticket with no listener; the fresh
processes fire it), one SQLite
file per variant, synchronous FULL commits (the store's own setting), in `--folder`
(default: /dev/shm when there is one, a memory file system where a commit's fsync costs
nothing: the store's own CPU time per fire, the strictest baseline for what observing adds;
on a disk the fsync dominates the wall time, not the CPU time). `--base`: `git archive REV
runtime` is unpacked in a temporary folder and timed in fresh interpreters, as is this
tree's runtime, alternately (the ticket and the timed ticket). `--postgres URL`: the
in-process variants on that PostgreSQL server too (a schema of their own, dropped after).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

TICKET = """\
statechart: ticket
version: 1
initial: open
record:
  note: {type: string}
states:
  open:
    on:
      approve: {target: approved, set: [note]}
      close: closed
  approved: {on: {reopen: {target: open, set: [note]}}}
  closed: {final: true}
"""
# The same with a timer on each state: every fire enters a state whose timer later links
# back to it, so a tracing listener starts its span before the write and the store keeps
# its context with the state (what a timer fired in another process links to).
TIMED = TICKET.replace("statechart: ticket", "statechart: timed_ticket").replace(
    "      close: closed\n", "      close: closed\n    after: {1h: closed}\n").replace(
    "  approved: {on: {reopen: {target: open, set: [note]}}}\n",
    "  approved:\n    on: {reopen: {target: open, set: [note]}}\n    after: {1h: closed}\n")

# Times `fires` fires of one ticket run on a new SQLite store (argv: folder of the generated
# modules, the store's file, fires, `off` or `tracing`: no listener, or the tracing listener
# behind a batch span processor, this folder, `plain` or `timed`: the ticket or the timed
# ticket); prints seconds per fire. Runs in the runtime on
# PYTHONPATH: this tree's or the base revision's.
FIRE_SCRIPT = """
import sys, time
sys.path.insert(0, sys.argv[1])
if sys.argv[6] == "timed":
    from timed_bench import TimedTicket as Ticket
else:
    from ticket_bench import Ticket
from statechart_runtime.store import open_store
listeners = []
if sys.argv[4] == "tracing":
    sys.path.insert(0, sys.argv[5])
    from bench_observability import tracing_listener
    listeners = [tracing_listener()[0]]
store = open_store(sys.argv[2], listeners=listeners)
store.create(Ticket(run_id="t"))
fires = int(sys.argv[3])
for i in range(50):
    store.fire(Ticket, "t", "approve" if i % 2 == 0 else "reopen", note="n")
start, wall = time.process_time(), time.perf_counter()
for i in range(fires):
    store.fire(Ticket, "t", "approve" if i % 2 == 0 else "reopen", note="n")
print((time.process_time() - start) / fires, (time.perf_counter() - wall) / fires)
"""


def ticket_module(folder: Path) -> None:
    sys.path.insert(0, str(ROOT / "compiler"))
    from statechart.codegen import python_module
    from statechart.linter import check_source

    for name, text in (("ticket_bench", TICKET), ("timed_bench", TIMED)):
        result = check_source(f"{name}.yaml", text.encode())
        assert result.spec is not None and not result.errors, result.errors
        (folder / f"{name}.py").write_text(python_module.render(result.spec))


def sdk_provider(batch: bool = True) -> Any:
    """A tracer provider whose exporter drops what it is given, behind a batch or a simple
    span processor."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SimpleSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    class Dropped(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()) if batch
                                else SimpleSpanProcessor(Dropped()))
    return provider


def tracing_listener(batch: bool = True, spans: int = 0) -> tuple[Any, Callable[[], None]]:
    """The tracing listener behind a batch or a simple span processor; `spans` > 0: its
    spans made that many at a time (`TracingListener(batch=...)`)."""
    from statechart_runtime.otel import TracingListener

    provider = sdk_provider(batch)
    listener = TracingListener(provider, batch=spans) if spans else TracingListener(provider)

    def shutdown() -> None:
        if spans:
            listener.flush()
        provider.shutdown()

    return listener, shutdown


def bare_span() -> tuple[Any, Callable[[], None]]:
    from statechart_runtime.listeners import StepTaken

    provider = sdk_provider()
    tracer = provider.get_tracer("bench")

    def listener(seen: Any) -> None:
        if isinstance(seen, StepTaken):
            tracer.start_span("step").end()

    return listener, provider.shutdown


def metrics_listener() -> tuple[Any, Callable[[], None]]:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from statechart_runtime.metrics import MetricsListener

    provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    return MetricsListener(provider), provider.shutdown


TIMED_OFF = "off, timed ticket"
TIMED_TRACING = "tracing (batch), timed ticket"
BATCHED = 64


def fresh_postgres(server: str) -> tuple[str, Callable[[], None]]:
    """A store URL on a schema of its own on `server`, and what drops it."""
    import uuid

    import psycopg

    schema = f"bench_obs_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")

    def drop() -> None:
        with psycopg.connect(server, autocommit=True) as db:
            db.execute(f"DROP SCHEMA {schema} CASCADE")

    separator = "&" if "?" in server else "?"
    return f"{server}{separator}options=-csearch_path%3D{schema}", drop


def in_process(folder: Path, rounds: int, fires: int, postgres: str | None = None
               ) -> dict[str, tuple[float, float]]:
    """Seconds per fire of each variant, in this process: medians of interleaved rounds.
    `postgres`: on that PostgreSQL store (a run of its own per variant and round), else on
    a SQLite file per variant and round in `folder`."""
    sys.path.insert(0, str(folder))
    from ticket_bench import Ticket  # type: ignore[import-not-found]
    from timed_bench import TimedTicket  # type: ignore[import-not-found]

    from statechart_runtime.store import open_store

    def none() -> tuple[Any, Callable[[], None]]:
        return None, lambda: None

    def nothing() -> tuple[Any, Callable[[], None]]:
        return (lambda seen: None), lambda: None

    variants: dict[str, Callable[[], tuple[Any, Callable[[], None]]]] = {
        "off": none, "a listener that does nothing": nothing,
        "tracing (batch span processor)": tracing_listener,
        "tracing (simple span processor)": lambda: tracing_listener(batch=False),
        f"tracing (batch span processor), spans made {BATCHED} at a time":
            lambda: tracing_listener(spans=BATCHED),
        "one bare span per fire (the SDK's floor)": bare_span}
    try:
        import statechart_runtime.metrics  # noqa: F401
        variants["metrics"] = metrics_listener
    except ImportError:
        pass
    # The timed ticket: each fire enters a state with a timer (a step's context kept).
    variants[TIMED_OFF] = none
    variants[TIMED_TRACING] = tracing_listener
    found: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for round_ in range(rounds):
        for index, (name, make) in enumerate(variants.items()):
            run_class = TimedTicket if name in (TIMED_OFF, TIMED_TRACING) else Ticket
            listener, shutdown = make()
            store = open_store(postgres or folder / f"{round_}-{index}.db",
                               listeners=[] if listener is None else [listener])
            run_id = f"t{round_}-{index}"
            store.create(run_class(run_id=run_id))
            for i in range(50):  # warm up
                store.fire(run_class, run_id, "approve" if i % 2 == 0 else "reopen", note="n")
            start, wall = time.process_time(), time.perf_counter()
            for i in range(fires):
                store.fire(run_class, run_id, "approve" if i % 2 == 0 else "reopen", note="n")
            found[name].append(((time.process_time() - start) / fires,
                                (time.perf_counter() - wall) / fires))
            store.close()
            shutdown()
    return {name: (statistics.median(t[0] for t in times),
                   statistics.median(t[1] for t in times)) for name, times in found.items()}


def against_base(folder: Path, base: str, rounds: int, fires: int
                 ) -> dict[tuple[str, str], tuple[float, float]]:
    """Seconds per fire with no listener and with tracing, this tree's runtime and
    `base`'s, each in fresh interpreters, alternately: (runtime, variant) -> figures."""
    unpacked = folder / "base"
    unpacked.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", base, "runtime"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(unpacked)], input=archive, check=True)
    trees = {"this tree": ROOT / "runtime", f"{base}": unpacked / "runtime"}
    found: dict[tuple[str, str], list[tuple[float, float]]] = {
        (name, f"{variant} {kind}"): [] for name in trees for variant in ("off", "tracing")
        for kind in ("plain", "timed")}
    for round_ in range(rounds):
        for (name, variant), times in found.items():
            env = {**os.environ, "PYTHONPATH": str(trees[name])}
            mode, kind = variant.split()
            out = subprocess.run(
                [sys.executable, "-c", FIRE_SCRIPT, str(folder),
                 str(folder / f"base-{round_}-{mode}-{kind}-{name[:4]}.db"), str(fires), mode,
                 str(HERE), kind], capture_output=True, text=True, check=True, env=env)
            cpu, wall = out.stdout.split()
            times.append((float(cpu), float(wall)))
    return {name: (statistics.median(t[0] for t in times),
                   statistics.median(t[1] for t in times)) for name, times in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--fires", type=int, default=2000)
    parser.add_argument("--base", default="main")
    parser.add_argument("--folder", default="/dev/shm" if Path("/dev/shm").is_dir() else None)
    parser.add_argument("--postgres", metavar="URL",
                        help="also time the in-process variants on this PostgreSQL server "
                             "(a schema of their own, dropped after)")
    args = parser.parse_args()
    on_postgres: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        folder = Path(tmp)
        ticket_module(folder)
        inside = in_process(folder, args.rounds, args.fires)
        if args.postgres:
            url, drop = fresh_postgres(args.postgres)
            try:
                on_postgres = in_process(folder, args.rounds, args.fires, url)
            finally:
                drop()
        base = against_base(folder, args.base, args.rounds, args.fires)
    print(f"{platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}, {args.rounds} rounds of {args.fires} fires (SQLite file in "
          f"{args.folder or tempfile.gettempdir()})")
    print("| Variant | CPU µs per fire | Ratio | Wall µs per fire | Ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")

    def row(label: str, found: tuple[float, float], reference: tuple[float, float]) -> None:
        print(f"| {label} | {found[0] * 1e6:.1f} | {found[0] / reference[0]:.3f}x "
              f"| {found[1] * 1e6:.1f} | {found[1] / reference[1]:.3f}x |")

    for name, found in inside.items():
        row(name, found, inside[TIMED_OFF if name in (TIMED_OFF, TIMED_TRACING) else "off"])
    for name, found in on_postgres.items():
        row(f"PostgreSQL: {name}", found,
            on_postgres[TIMED_OFF if name in (TIMED_OFF, TIMED_TRACING) else "off"])
    for kind in ("plain", "timed"):
        label = "ticket" if kind == "plain" else "timed ticket"
        for name in ("this tree", args.base):
            row(f"no listener, {label}, {name}'s runtime (fresh process)",
                base[(name, f"off {kind}")], base[(args.base, f"off {kind}")])
        for name in ("this tree", args.base):  # each against its own runtime, no listener
            row(f"tracing (batch), {label}, {name}'s runtime (fresh process)",
                base[(name, f"tracing {kind}")], base[(name, f"off {kind}")])


if __name__ == "__main__":
    main()
