"""`statechart runs work --store URL --spec SPEC [--once] [--max-sleep S]`: fire the due
timers of SPEC's runs until stopped (statechart_runtime.worker; docs/runs.md, "The worker").

One line on stderr per fired timer. SIGTERM and SIGINT let the transaction under way commit,
then exit 0. `--once` fires what is due now and exits (for cron). The spec's Run class is
compiled in memory, as the other `runs` actions do: its guards pass and it has no actions of
an application's (an application with its own guards or actions embeds `Worker` instead).
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
    p = actions.add_parser("work", help="fire the due timers of a spec's runs until stopped",
                           description="Fire the due timers of SPEC's stored runs: sleep until "
                           "the next deadline (at most --max-sleep seconds; on PostgreSQL a "
                           "new earlier deadline wakes it), one line on stderr per fired "
                           "timer. SIGTERM/SIGINT: finish the transaction under way, exit 0. "
                           "Several workers may share a store.")
    store_argument(p)
    p.add_argument("--spec", metavar="SPEC", required=True, help="the runs' spec file")
    p.add_argument("--once", action="store_true",
                   help="fire the timers due now, then exit (for cron)")
    p.add_argument("--max-sleep", metavar="S", type=_seconds, default=60.0,
                   help="the longest sleep between looks at the store (default: 60)")
    p.add_argument("--retry-after", metavar="S", type=_seconds, default=60.0,
                   help="how long a run whose timer failed is skipped (default: 60)")


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
    if not spec.timers():
        raise Usage(f"{args.spec}: spec `{spec.name}` has no timers (`after:`): its runs "
                    "are never due, there is nothing to work on")
    run_class = compiled(spec)
    with open_existing(args.store, read_only=False) as store, _logging():
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
