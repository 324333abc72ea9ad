"""Metrics of runs (the `otel` extra: OpenTelemetry's metrics API; docs/observability.md).

`MetricsListener` is a listener (statechart_runtime.listeners) that counts and times what it
is told, on a meter of `meter_provider` (default: the global one); `StoreGauges` reads what
only the store knows (runs by status, overdue timers, the work queue) when metrics are
collected; `PrometheusMetrics` puts both behind a Prometheus text exposition (the console's
`/metrics`: `console.app(..., metrics=...)`); `MetricsServer` serves it on a port of its own
(prometheus-client's HTTP server: `statechart runs work --metrics [HOST:]PORT`).

Instruments (Prometheus names in brackets; no label is a run id: every label is bounded by
the spec):

- `statechart.transitions` [`statechart_transitions_total`]: transitions taken, by `spec`,
  `event`, `source`, `target`;
- `statechart.refusals` [`statechart_refusals_total`]: events refused, by `spec`, `event`,
  `reason`;
- `statechart.fire.duration` [`statechart_fire_duration_seconds`]: the time of each call
  that took or refused an event, commit included, by `spec`, `via`, `outcome`;
- `statechart.state.duration` [`statechart_state_duration_seconds`]: how long a run stayed
  in a state before a macrostep left it, by `spec`, `state` (the approval wait time is its
  `waiting_for_approval` series);
- `statechart.timer.lateness` [`statechart_timer_lateness_seconds`]: how long after its
  due time a timer fired, by `spec`, `state`;
- `statechart.timer.failures` [`statechart_timer_failures_total`]: runs whose due timers
  could not be fired (a guard or an action raised), by `spec`, `reason`;
- `statechart.work.claims` [`statechart_work_claims_total`]: claims, by `spec`, `handler`,
  `expired` (true: it took over an expired lease: a lease expiry);
- `statechart.work.ends` [`statechart_work_ends_total`]: attempts ended, by `spec`,
  `handler`, `result` (`completed`, `retry`, `failed`);
- `statechart.work.leases_lost` [`statechart_work_leases_lost_total`]: calls refused for a
  lost lease, by `spec`, `call`;
- `statechart.answers` [`statechart_answers_total`]: console answers, by `spec`, `event`;
- gauges read from the store (`StoreGauges`): `statechart.runs` [`statechart_runs`] by
  `spec`, `status`; `statechart.timers.overdue` [`statechart_timers_overdue`]: runs whose
  earliest timer is due more than `overdue_after` ago, by `spec`; `statechart.work.queue`
  [`statechart_work_queue`]: open work items by `spec`, `handler`, `status` (`pending`,
  `claimed`).
"""

from __future__ import annotations

import collections
import datetime as dt
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Observation

from statechart_runtime import listeners as heard
from statechart_runtime.errors import StatechartError
from statechart_runtime.store.core.pages import RunFilter

# The instruments of this module: names in the `statechart` namespace, not modules.
INSTRUMENTS = frozenset({
    "statechart.answers", "statechart.fire.duration", "statechart.refusals",
    "statechart.runs", "statechart.state.duration", "statechart.timer.failures",
    "statechart.timer.lateness",
    "statechart.timers.overdue", "statechart.transitions", "statechart.work.claims",
    "statechart.work.ends", "statechart.work.leases_lost", "statechart.work.queue"})
# Buckets of the seconds histograms: a fire's milliseconds to a wait's days.
_CALL_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
_WAIT_BUCKETS = (1.0, 10.0, 60.0, 300.0, 900.0, 3600.0, 4 * 3600.0, 86400.0, 7 * 86400.0)


log = logging.getLogger("statechart_runtime.metrics")


def _meter(meter_provider: Any) -> Any:
    return metrics.get_meter("statechart_runtime", meter_provider=meter_provider)


class MetricsListener:
    """Counts and times what runs do (the module's instruments but the gauges)."""

    def __init__(self, meter_provider: Any = None) -> None:
        meter = _meter(meter_provider)
        # Transitions are counted here and reported at collection (an observable counter):
        # a dictionary's increment per transition, where the SDK's `add` costs ~7 µs.
        self._lock = threading.Lock()
        self._transitions: collections.Counter[tuple[str, str, str, str]] = \
            collections.Counter()
        meter.create_observable_counter(
            "statechart.transitions", [self._observe_transitions], unit="{transition}",
            description="Transitions taken")
        self._refusals = meter.create_counter(
            "statechart.refusals", unit="{event}", description="Events refused")
        self._fire = meter.create_histogram(
            "statechart.fire.duration", unit="s", description="A call that took or refused "
            "an event, commit included", explicit_bucket_boundaries_advisory=_CALL_BUCKETS)
        self._stay = meter.create_histogram(
            "statechart.state.duration", unit="s", description="Time in a state before a "
            "step left it", explicit_bucket_boundaries_advisory=_WAIT_BUCKETS)
        self._late = meter.create_histogram(
            "statechart.timer.lateness", unit="s", description="Time from a timer's due "
            "time to its firing", explicit_bucket_boundaries_advisory=_WAIT_BUCKETS)
        self._timer_failures = meter.create_counter(
            "statechart.timer.failures", unit="{run}",
            description="Runs whose due timers could not be fired")
        self._claims = meter.create_counter(
            "statechart.work.claims", unit="{claim}", description="Work items claimed")
        self._ends = meter.create_counter(
            "statechart.work.ends", unit="{attempt}", description="Work attempts ended")
        self._lost = meter.create_counter(
            "statechart.work.leases_lost", unit="{call}",
            description="Work calls refused for a lost lease")
        self._answers = meter.create_counter(
            "statechart.answers", unit="{answer}", description="Console answers")
        self._last_call: tuple[str, float] | None = None  # one call: timed once

    def __call__(self, seen: heard.Observation) -> None:
        if isinstance(seen, heard.StepTaken):
            self._step(seen)
        elif isinstance(seen, heard.EventRefused):
            self._refusals.add(1, {"spec": seen.spec, "event": seen.event,
                                   "reason": seen.reason})
            self._timed(seen.run_id, seen.spec, seen.via, "refused", seen.started, seen.ended)
        elif isinstance(seen, heard.TimersFailed):
            self._timer_failures.add(1, {"spec": seen.spec, "reason": seen.reason})
        elif isinstance(seen, heard.WorkClaimed):
            self._claims.add(1, {"spec": seen.spec, "handler": seen.handler,
                                 "expired": str(seen.expired is not None).lower()})
        elif isinstance(seen, heard.WorkCompleted):
            self._ends.add(1, {"spec": seen.spec, "handler": seen.handler,
                               "result": "completed"})
        elif isinstance(seen, heard.WorkFailed):
            self._ends.add(1, {"spec": seen.spec, "handler": seen.handler,
                               "result": "retry" if seen.retry_at is not None else "failed"})
        elif isinstance(seen, heard.LeaseLost):
            self._lost.add(1, {"spec": seen.spec, "call": seen.call})
        elif isinstance(seen, heard.Answered):
            self._answers.add(1, {"spec": seen.spec, "event": seen.event})

    def _observe_transitions(self, options: CallbackOptions) -> Iterator[Observation]:
        with self._lock:
            counted = list(self._transitions.items())
        for (spec, event, source, target), count in counted:
            yield Observation(count, {"spec": spec, "event": event, "source": source,
                                      "target": target})

    def _step(self, seen: heard.StepTaken) -> None:
        with self._lock:
            for step in seen.steps:
                self._transitions[(seen.spec, step.event, step.source, step.target)] += 1
        if seen.since is not None:
            self._stay.record(max(0.0, (seen.at - seen.since).total_seconds()),
                              {"spec": seen.spec, "state": seen.source})
        if seen.timer is not None:
            late = time.time() - seen.at.timestamp()
            self._late.record(max(0.0, late), {"spec": seen.spec, "state": seen.timer})
        self._timed(seen.run_id, seen.spec, seen.via, "taken", seen.started, seen.ended)

    def _timed(self, run_id: str, spec: str, via: str, outcome: str, started: float,
               ended: float) -> None:
        # The macrosteps of one call (timers due first, then the event) share its times.
        call = (run_id, started)
        if call == self._last_call:
            return
        self._last_call = call
        self._fire.record(max(0.0, ended - started), {"spec": spec, "via": via,
                                                      "outcome": outcome})


class StoreGauges:
    """Gauges of what the store holds, for the runs of `specs` (spec names): read by
    `refresh(store)` (a synchronous store) or `await refresh_async(store)`, then reported at
    the next collection. Each refresh is a few indexed reads per spec
    (`store.status_counts`, `store.work_counts`)."""

    def __init__(self, specs: Iterable[str], meter_provider: Any = None, *,
                 overdue_after: dt.timedelta = dt.timedelta(minutes=1)) -> None:
        self.specs = tuple(specs)
        self.overdue_after = overdue_after
        self._runs: list[tuple[int, dict[str, str]]] = []
        self._overdue: list[tuple[int, dict[str, str]]] = []
        self._queue: list[tuple[int, dict[str, str]]] = []
        meter = _meter(meter_provider)
        meter.create_observable_gauge(
            "statechart.runs", [self._observe(lambda: self._runs)], unit="{run}",
            description="Runs by status")
        meter.create_observable_gauge(
            "statechart.timers.overdue", [self._observe(lambda: self._overdue)], unit="{run}",
            description="Runs whose earliest timer is overdue")
        meter.create_observable_gauge(
            "statechart.work.queue", [self._observe(lambda: self._queue)], unit="{item}",
            description="Open work items")

    @staticmethod
    def _observe(values: Any) -> Any:
        def callback(options: CallbackOptions) -> Iterator[Observation]:
            for value, attributes in values():
                yield Observation(value, attributes)
        return callback

    def _reads(self, now: dt.datetime) -> list[tuple[str, str, RunFilter | None]]:
        reads: list[tuple[str, str, RunFilter | None]] = []
        for spec in self.specs:
            reads.append(("runs", spec, RunFilter(spec=spec)))
            reads.append(("overdue", spec, RunFilter(spec=spec,
                                                     due_by=now - self.overdue_after)))
            reads.append(("queue", spec, None))
        return reads

    def _keep(self, found: list[tuple[str, str, Any]]) -> None:
        runs: list[tuple[int, dict[str, str]]] = []
        overdue: list[tuple[int, dict[str, str]]] = []
        queue: list[tuple[int, dict[str, str]]] = []
        for kind, spec, value in found:
            if kind == "runs":
                runs.extend((count, {"spec": spec, "status": status})
                            for status, count in value.items())
            elif kind == "overdue":
                overdue.append((sum(value.values()), {"spec": spec}))
            else:
                queue.extend((count, {"spec": spec, "handler": handler, "status": status})
                             for (handler, status), count in value.items())
        self._runs, self._overdue, self._queue = runs, overdue, queue

    def refresh(self, store: Any) -> None:
        """Read the gauges' values from a synchronous store."""
        found = []
        for kind, spec, conditions in self._reads(store.now()):
            found.append((kind, spec, store.work_counts(spec) if conditions is None
                          else store.status_counts(conditions)))
        self._keep(found)

    async def refresh_async(self, store: Any) -> None:
        """Read the gauges' values from an asynchronous store."""
        found = []
        for kind, spec, conditions in self._reads(store.now()):
            found.append((kind, spec, await store.work_counts(spec) if conditions is None
                          else await store.status_counts(conditions)))
        self._keep(found)


class PrometheusMetrics:
    """A MetricsListener and StoreGauges of `specs` on a meter provider of their own, read
    by a Prometheus reader into a registry of their own (prometheus-client): `text()` is
    the exposition (`/metrics`). Register `listener` where runs are stepped."""

    def __init__(self, specs: Iterable[str] = (), *,
                 overdue_after: dt.timedelta = dt.timedelta(minutes=1)) -> None:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from opentelemetry.sdk.metrics import MeterProvider
        from prometheus_client import CollectorRegistry

        self.registry = CollectorRegistry()
        self._reader = PrometheusMetricReader(registry=self.registry)
        self.provider = MeterProvider(metric_readers=[self._reader])
        self.listener = MetricsListener(self.provider)
        self.gauges = StoreGauges(specs, self.provider, overdue_after=overdue_after)

    def text(self) -> bytes:
        """The Prometheus text exposition of every instrument now."""
        from prometheus_client import generate_latest

        return bytes(generate_latest(self.registry))

    def close(self) -> None:
        self.provider.shutdown()


class MetricsServer:
    """`metrics` (a PrometheusMetrics) served at `http://HOST:PORT/metrics` by
    prometheus-client's own HTTP server, in daemon threads, without authentication (bind it
    where only the scraper reaches: loopback by default). Each scrape first reads the store's
    gauges from a read-only store of the server's own, opened from `url` at the first scrape
    and shared by the scrapes one at a time (the caller's store stays in the caller's
    thread). A scrape whose read fails (the database away) logs a warning and serves the
    gauges of the last read that worked, with the counters. `port` 0: a free port, read back
    from `address`."""

    def __init__(self, metrics: PrometheusMetrics, url: str, *, host: str = "127.0.0.1",
                 port: int) -> None:
        from prometheus_client import CollectorRegistry, start_http_server

        self.metrics = metrics
        self._url = url
        self._lock = threading.Lock()
        self._store: Any = None
        # OSError (the port taken, the host not this machine's) is the caller's to report.
        served = CollectorRegistry(auto_describe=False)
        served.register(self)
        self._server, self._thread = start_http_server(port, addr=host, registry=served)
        bound = self._server.server_address
        self.address: tuple[str, int] = (str(bound[0]), int(bound[1]))

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/metrics"

    def collect(self) -> Iterator[Any]:
        """The exposition's families, the gauges read first (prometheus-client's collector
        protocol: the server's registry holds this object)."""
        from statechart_runtime.store import open_store

        with self._lock:
            try:
                if self._store is None:
                    self._store = open_store(self._url, read_only=True)
                self.metrics.gauges.refresh(self._store)
            except StatechartError as exc:
                log.warning("metrics: the store's gauges were not read (%s: %s); serving "
                            "the last ones read", type(exc).__name__, exc)
        yield from self.metrics.registry.collect()

    def close(self) -> None:
        """Stop serving and close the server's store (not the metrics: the caller's)."""
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
