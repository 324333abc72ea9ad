"""`statechart runs work --store URL --spec SPEC [--once] [--max-sleep S] [--handlers
MODULE:OBJECT] [--listener MODULE:OBJECT] [--metrics [HOST:]PORT]`: fire the due timers of
SPEC's runs until stopped (statechart_runtime.worker; docs/runs.md, "The worker"), and, with
`--handlers`, run their work items (docs/work.md): the asynchronous worker over the
asynchronous store, at most `--concurrency` items at once. `--listener`: told what the runs
do (docs/observability.md). `--metrics`: the runs' Prometheus metrics served at
`http://HOST:PORT/metrics` while it works (statechart_runtime.metrics.MetricsServer; the
`otel` extra).

One line on stderr per fired timer. SIGTERM and SIGINT let the transaction under way commit,
then exit 0. `--once` fires what is due now and exits (for cron). The spec's Run class is
compiled in memory, as the other `runs` actions do: its guards pass and it has no actions of
an application's (an application with its own guards or actions embeds `Worker`, or
`AsyncWorker` with its handlers, instead).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from statechart.report import inert


def add_arguments(actions: Any, store_argument: Any) -> None:
    p = actions.add_parser("work", help="fire the due timers of a spec's runs (and run their "
                           "work items: --handlers) until stopped",
                           description="Fire the due timers of SPEC's stored runs: sleep until "
                           "the next deadline (at most --max-sleep seconds; on PostgreSQL a "
                           "new earlier deadline wakes it), one line on stderr per fired "
                           "timer. With --handlers, also run their work items (docs/work.md). "
                           "SIGTERM/SIGINT: finish the transaction under way, exit 0. "
                           "Several workers may share a store.")
    store_argument(p)
    p.add_argument("--spec", metavar="SPEC", required=True, help="the runs' spec file")
    p.add_argument("--once", action="store_true",
                   help="fire the timers due now, then exit (for cron)")
    p.add_argument("--max-sleep", metavar="S", type=_seconds, default=60.0,
                   help="the longest sleep between looks at the store (default: 60)")
    p.add_argument("--retry-after", metavar="S", type=_seconds, default=60.0,
                   help="how long a run whose timer failed is skipped (default: 60)")
    p.add_argument("--handlers", metavar="MODULE:OBJECT",
                   help="also run the spec's work items: OBJECT of MODULE maps handler names "
                        "to functions (docs/work.md)")
    p.add_argument("--listener", metavar="MODULE:OBJECT", action="append", default=[],
                   help="tell OBJECT of MODULE (a callable taking one observation, or a "
                        "class made with no arguments) what the runs do: steps, refusals, "
                        "timers, work (docs/observability.md); may be repeated")
    p.add_argument("--metrics", metavar="[HOST:]PORT", type=_address,
                   help="serve the runs' Prometheus metrics at http://HOST:PORT/metrics "
                        "while working: transitions, refusals, fire latency, timers, work "
                        "claims and lease expiries, and from the store the runs by status, "
                        "the work queue and the overdue timers (HOST default 127.0.0.1; no "
                        "authentication; PORT 0: a free one, printed; docs/observability.md; "
                        "the `otel` extra)")
    p.add_argument("--concurrency", metavar="N", type=_count, default=4,
                   help="with --handlers: how many items run at once (default: 4)")
    p.add_argument("--poll", metavar="S", type=_seconds, default=1.0,
                   help="with --handlers: how often to look for ready items (default: 1)")
    p.add_argument("--shutdown-grace", metavar="S", type=_seconds, default=30.0,
                   help="with --handlers: on SIGTERM, how long running items may finish "
                        "before they are given back (default: 30)")


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {text!r}")
    return value


def _address(text: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]") if colon else "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected [HOST:]PORT, got {text!r}") from None
    if not 0 <= number < 65536 or not host:
        raise argparse.ArgumentTypeError(f"expected [HOST:]PORT (PORT 0 to 65535), got "
                                         f"{text!r}")
    return host, number


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def work(args: argparse.Namespace) -> int:
    from statechart.cli.runs import Usage, checked_spec, compiled, location, open_existing
    from statechart_runtime.run import spec_of
    from statechart_runtime.worker import Worker

    spec = checked_spec(args.spec, args)
    listeners = listeners_of(args.listener)
    if args.handlers is not None:
        return _work_items(args, spec, listeners)
    if not spec.timers():
        raise Usage(f"{args.spec}: spec `{spec.name}` has no timers (`after:`): its runs "
                    "are never due, there is nothing to work on"
                    + (" (its work items run with --handlers MODULE:OBJECT)"
                       if spec.work() else ""))
    run_class = compiled(spec)
    with open_existing(args.store, read_only=False) as store, _logging(), \
            _metrics(args, spec.name) as metrics:
        for listener in [*listeners, *metrics]:
            store.listen(listener)
        worker = Worker(store, run_class, max_sleep=args.max_sleep,
                        retry_after=args.retry_after)
        with worker.stopped_by_signals():
            name = spec_of(run_class).name
            print(inert(f"statechart runs work: firing the due timers of `{name}` runs in "
                        f"{location(args.store)}"
                        + ("" if args.once else f" (sleeping at most {args.max_sleep:g} s)")),
                  file=sys.stderr, flush=True)
            if args.once:
                try:
                    worker.run_once()
                finally:
                    worker.close()
            else:
                worker.run()
        print(inert(f"statechart runs work: fired {worker.fired} timer"
                    f"{'s' * (worker.fired != 1)}, {worker.declined} declined, "
                    f"{worker.failed} failed"), file=sys.stderr)
    return 0


def listeners_of(where: list[str]) -> list[Any]:
    """The listeners `--listener MODULE:OBJECT` names (Usage for one that does not load)."""
    from statechart.cli.runs import Usage
    from statechart_runtime.listeners import load_listener

    try:
        return [load_listener(one) for one in where]
    except ValueError as exc:
        raise Usage(str(exc)) from None


def _work_items(args: argparse.Namespace, spec: Any, listeners: list[Any]) -> int:
    """`--handlers`: timers and work items, by the asynchronous worker."""
    import asyncio

    from statechart.cli.runs import Usage, compiled, location, open_existing
    from statechart_runtime.handlers import load_handlers, missing_handlers
    from statechart_runtime.store import open_async_store
    from statechart_runtime.worker import AsyncWorker

    if not spec.work():
        raise Usage(f"{args.spec}: spec `{spec.name}` declares no work (`work:` of a state): "
                    "--handlers has nothing to run")
    try:
        handlers = load_handlers(args.handlers)
    except ValueError as exc:
        raise Usage(str(exc)) from None
    run_class = compiled(spec)
    open_existing(args.store, read_only=False).close()  # it must exist: say so now
    missing = missing_handlers(run_class, handlers)

    async def main() -> AsyncWorker:
        # A missing driver (psycopg_pool) is the store's StoreError, which says
        # what to install.
        async with open_async_store(args.store, listeners=[*listeners, *metrics]) as store:
            worker = AsyncWorker(store, run_class, max_sleep=args.max_sleep,
                                 retry_after=args.retry_after, handlers=handlers,
                                 concurrency=args.concurrency, poll=args.poll,
                                 shutdown_grace=args.shutdown_grace)
            async with worker.stopped_by_signals():
                print(inert(f"statechart runs work: running the work items of `{spec.name}` "
                            f"runs in {location(args.store)} ({', '.join(sorted(handlers))}; "
                            f"{args.concurrency} at once) and firing their due timers"),
                      file=sys.stderr, flush=True)
                if missing:
                    print(inert("statechart runs work: no handler for "
                                f"{', '.join(missing)}: their items wait for a worker that "
                                "has one"), file=sys.stderr, flush=True)
                if args.once:
                    try:
                        await worker.run_once()
                    finally:
                        await worker.close()
                else:
                    await worker.run()
            return worker

    with _logging(), _metrics(args, spec.name) as metrics:
        worker = asyncio.run(main())
    print(inert(f"statechart runs work: {worker.applied} outcome"
                f"{'s' * (worker.applied != 1)} applied, {worker.work_failed} failed, "
                f"{worker.leases_lost} lease{'s' * (worker.leases_lost != 1)} lost; fired "
                f"{worker.fired} timer{'s' * (worker.fired != 1)}"), file=sys.stderr)
    return 0


@contextmanager
def _metrics(args: argparse.Namespace, spec: str) -> Iterator[list[Any]]:
    """`--metrics [HOST:]PORT`: the metrics' listener (none without it), served meanwhile."""
    if args.metrics is None:
        yield []
        return
    from statechart.cli.runs import Failure, location

    try:
        from statechart_runtime.metrics import MetricsServer, PrometheusMetrics
    except ImportError as exc:
        raise Failure(f"--metrics needs the `otel` extra ({exc.name} is missing): pip "
                      "install 'statechart-compiler[otel]'") from None
    metrics = PrometheusMetrics([spec])
    host, port = args.metrics
    try:
        server = MetricsServer(metrics, args.store, host=host, port=port)
    except OSError as exc:
        metrics.close()
        raise Failure(f"--metrics {host}:{port}: cannot serve there ({exc.strerror or exc})"
                      ) from None
    print(inert(f"statechart runs work: metrics of `{spec}` runs in {location(args.store)} "
                f"at {server.url}"), file=sys.stderr, flush=True)
    try:
        yield [metrics.listener]
    finally:
        server.close()
        metrics.close()


@contextmanager
def _logging() -> Iterator[None]:
    """The worker's log lines on stderr, one per line, for as long as it works."""
    logger = logging.getLogger("statechart_runtime.worker")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Inert("%(asctime)s %(levelname)s %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


class _Inert(logging.Formatter):
    """Run ids and messages come from the store: no terminal escapes reach the terminal."""

    def format(self, record: logging.LogRecord) -> str:
        return inert(super().format(record))
