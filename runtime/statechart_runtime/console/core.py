"""What the console does, once, for the JSON API and the pages alike: read the conditions of
a list from a query, list runs, show one, page its history, answer a run (fire an event in
someone's name), preview and apply a bulk cancel, gather the inbox. Errors a caller can meet
are `Problem`s with the HTTP status they answer with; nothing here knows about HTML or JSON
responses.
"""

from __future__ import annotations

import base64
import binascii
import collections
import dataclasses
import datetime as dt
import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anyio.to_thread

from statechart_runtime.chart.values import SENT_BY, parse_time
from statechart_runtime.console import views
from statechart_runtime.console.auth import Auth, Identity
from statechart_runtime.console.backend import ConsoleStore
from statechart_runtime.errors import (
    ConcurrentUpdate,
    FieldProblem,
    LimitExceeded,
    MacrostepLoop,
    OutcomeUnknown,
    RunError,
    RunNotFound,
    StatechartError,
    StoreError,
    StoreUnavailable,
    UnstorableValue,
)
from statechart_runtime.listeners import Answered, Listener, Listeners
from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import RunFilter, StoredRun

# The statuses and tags that put a run in the inbox (a state tagged so, or reporting it).
WAITING = ("waiting",)
PAGE = 50
HISTORY_PAGE = 50
# A list counts each status up to this many runs (a bounded read, whatever the store holds;
# the page says "1000+").
COUNT_CAP = 1_000
# How many runs one bulk cancel takes at most (the preview says when there are more).
BULK_MAX = 10_000
_FOREVER = dt.datetime.max.replace(tzinfo=dt.UTC)
# A run's diagram: (run class, active states) -> SVG text, or None (none to draw).
Diagram = Callable[[type[Any], tuple[str, ...]], str | None]


class Problem(StatechartError):
    """A request the console refuses: `status` (HTTP), a short `code`, the message, and for
    a run that moved on, the run as it is now."""

    def __init__(self, status: int, code: str, message: str, *,
                 run: dict[str, Any] | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.run = run
        self.field = field

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": self.code, "message": self.message}
        if self.field is not None:
            out["field"] = self.field
        if self.run is not None:
            out["run"] = self.run
        return out


@dataclasses.dataclass(frozen=True)
class Query:
    """A list's conditions as the URL gives them (kept in the URL: a view is a link)."""

    spec: str | None = None
    status: str | None = None
    state: str | None = None
    tag: str | None = None
    due: str | None = None  # "any" | "overdue"
    waiting: bool = False
    order: str = "id"  # "id" | "due"
    after: str | None = None
    limit: int = PAGE

    @classmethod
    def of(cls, params: Mapping[str, str]) -> Query:
        def text(name: str) -> str | None:
            value = params.get(name, "").strip()
            return value or None

        due = text("due")
        if due not in (None, "any", "overdue"):
            raise Problem(422, "invalid", f"due: expected `any` or `overdue`, got {due!r}",
                          field="due")
        order = text("order") or "id"
        if order not in ("id", "due"):
            raise Problem(422, "invalid", f"order: expected `id` or `due`, got {order!r}",
                          field="order")
        try:
            limit = int(params.get("limit") or PAGE)
        except ValueError:
            limit = 0
        if not 1 <= limit <= 500:
            raise Problem(422, "invalid", "limit: expected a whole number from 1 to 500",
                          field="limit")
        return cls(text("spec"), text("status"), text("state"), text("tag"), due,
                   params.get("waiting") in ("1", "true", "on"), order, text("after"), limit)

    def link(self, **changes: Any) -> dict[str, str]:
        """The query's parameters (for a URL), with `changes`; defaults left out."""
        data = dataclasses.asdict(dataclasses.replace(self, **changes))
        out = {k: str(v) for k, v in data.items() if v not in (None, False, "")}
        if data["waiting"]:
            out["waiting"] = "1"
        if out.get("order") == "id":
            del out["order"]
        if out.get("limit") == str(PAGE):
            del out["limit"]
        return out


def _cursor(values: list[Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode("utf-8")).decode("ascii")


def _uncursor(text: str, by_due: bool) -> tuple[Any, ...]:
    try:
        values = json.loads(base64.urlsafe_b64decode(text.encode("ascii")))
        if by_due:
            return parse_time("after", values[0]), str(values[1])
        return (str(values[0]),)
    except (ValueError, TypeError, IndexError, KeyError, binascii.Error, UnicodeError):
        raise Problem(422, "invalid", "after: not a cursor this console gave",
                      field="after") from None


class Console:
    """The console over a store and the Run classes of its specs."""

    def __init__(self, store: ConsoleStore, run_classes: Iterable[type[Any]], *,
                 read_only: bool = False, diagram: Diagram | None = None,
                 waiting: Iterable[str] = WAITING, cancel_event: str = "cancel",
                 auth: Auth | None = None, listeners: Iterable[Listener] = ()) -> None:
        self.store = store
        # Told of each answer (Answered), after the store committed it.
        self.listeners = Listeners(listeners)
        self.auth = auth
        self.classes: dict[str, type[Any]] = {}
        for run_class in run_classes:
            self.classes[views.tables(run_class).name] = run_class
        self.read_only = read_only
        self.diagram = diagram
        self.waiting = frozenset(waiting)
        self.cancel_event = cancel_event
        self._trails: collections.OrderedDict[str, views.Trail] = collections.OrderedDict()
        # Run id -> its spec's name, for the runs last shown or answered (it never changes).
        self._specs: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._diagrams: collections.OrderedDict[tuple[str, tuple[str, ...]], str | None] = \
            collections.OrderedDict()

    # -- names ---------------------------------------------------------------------------

    def run_class(self, spec: str) -> type[Any] | None:
        return self.classes.get(spec)

    def _class_of(self, spec: str | None) -> list[type[Any]]:
        if spec is None:
            return list(self.classes.values())
        found = self.classes.get(spec)
        return [found] if found is not None else []

    def statuses(self, spec: str | None) -> list[str]:
        """The statuses the runs of `spec` (of every spec given) report: what a list counts."""
        return sorted({name for run_class in self._class_of(spec)
                       for name in views.tables(run_class).statuses_by_name})

    def waiting_states(self, spec: str | None) -> tuple[str, ...]:
        """The states that put a run in the inbox: tagged with, or reporting, a waiting name."""
        names: set[str] = set()
        for run_class in self._class_of(spec):
            tables = views.tables(run_class)
            for tag in self.waiting:
                names.update(tables.tags.get(tag, ()))
            names.update(state for state, (_, status) in tables.status_of.items()
                         if status.value in self.waiting)
        return tuple(sorted(names))

    def conditions(self, query: Query, now: dt.datetime) -> RunFilter:
        """The store's conditions for a query; a name the spec does not have is a 422."""
        active: list[tuple[str, ...]] = []
        classes = self._class_of(query.spec)
        if query.spec is not None and not classes:
            if query.state is not None or query.tag is not None:
                raise Problem(422, "invalid", f"spec: the console has no spec `{query.spec}` "
                              f"(it has: {', '.join(sorted(self.classes)) or 'none'})",
                              field="spec")
        if query.status is not None and classes and not any(
                query.status in views.tables(c).statuses_by_name for c in classes):
            raise Problem(422, "invalid", f"status: no spec here reports `{query.status}`",
                          field="status")
        if query.state is not None:
            if classes and not any(query.state in views.tables(c).states_by_name for c in classes):
                raise Problem(422, "invalid", f"state: no state `{query.state}`",
                              field="state")
            active.append((query.state,))
        if query.tag is not None:
            tagged = sorted({s for c in classes for s in views.tables(c).tags.get(query.tag, ())})
            if not tagged:
                raise Problem(422, "invalid", f"tag: no state is tagged `{query.tag}`",
                              field="tag")
            active.append(tuple(tagged))
        if query.waiting:
            active.append(self.waiting_states(query.spec))
        due = None if query.due is None else _FOREVER if query.due == "any" else now
        return RunFilter(spec=query.spec, status=query.status, active=tuple(active),
                         due_by=due)

    # -- lists ---------------------------------------------------------------------------

    async def list_runs(self, query: Query) -> dict[str, Any]:
        by_due = query.order == "due"
        after = None if query.after is None else _uncursor(query.after, by_due)
        now, rows, counts = await self.store.listing(
            lambda now: self.conditions(query, now), by_due=by_due, after=after,
            limit=query.limit, counts=self.statuses(query.spec), cap=COUNT_CAP)
        runs = [views.run_summary(r, self.run_class(r.spec), now) for r in rows]
        cursor = None
        if len(rows) == query.limit:
            last = rows[-1]
            cursor = _cursor([views.when(last.next_due), last.run_id] if by_due
                             else [last.run_id])
        return {"runs": runs, "counts": counts, "next": cursor, "now": views.when(now),
                "counts_at_least": sorted(s for s, n in counts.items() if n >= COUNT_CAP)}

    async def inbox(self, spec: str | None = None) -> dict[str, Any]:
        """The runs waiting for someone (`waiting` states), earliest deadline first, then
        those without one; each with the events it takes now (for the answer forms)."""
        conditions = RunFilter(spec=spec, active=(self.waiting_states(spec),))
        now, with_deadline, _ = await self.store.listing(
            lambda now: conditions, by_due=True, limit=200, counts=None)
        _, everyone, _ = await self.store.listing(lambda now: conditions, limit=200,
                                                  counts=None)
        rest = [r for r in everyone if r.next_due is None]
        items = []
        for stored in [*with_deadline, *rest]:
            run_class = self.run_class(stored.spec)
            item = views.run_summary(stored, run_class, now)
            item["accepted_events"] = []
            if run_class is not None:
                try:
                    head = await self.store.head(run_class, stored.run_id)
                except (RunNotFound, RunError, StoreError):
                    continue  # answered or damaged since the list was read
                item["revision"] = head.revision
                item["accepted_events"] = views.accepted_events(head.run)
            items.append(item)
        return {"runs": items, "now": views.when(now), "waiting": sorted(self.waiting)}

    # -- one run -------------------------------------------------------------------------

    async def run(self, run_id: str) -> dict[str, Any]:
        try:
            now, stored, head = await self.store.run_view(run_id, self.run_class)
        except RunNotFound:
            raise Problem(404, "not_found", f"no run {run_id!r} in the store") from None
        except RunError as exc:  # a record the spec refuses (edited by hand, newer version)
            raise Problem(409, "unreadable", str(exc)) from None
        if stored is None:
            raise Problem(404, "not_found", f"no run {run_id!r} in the store")
        self._specs[run_id] = stored.spec
        while len(self._specs) > 10_000:
            self._specs.popitem(last=False)
        if head is None:
            return {**views.run_summary(stored, None, now), "record": None,
                    "configuration": sorted(stored.states), "timers": [],
                    "accepted_events": [], "ended": None, "work": [],
                    "note": f"the console was started without the spec `{stored.spec}`: "
                            "its record cannot be read"}
        items = await self.store.work_items(run_id)
        return {**views.run_detail(head.run, head.revision, stored, now),
                "work": [views.work_item(item, now) for item in items]}

    async def history(self, run_id: str, page: int | None = None) -> dict[str, Any]:
        """A page of the run's history, newest first (page 0 holds the latest steps), each
        step with who sent it and the configuration after it (walked once per run over the
        chart, `views.Trail`, extended as the history grows; the 256 runs last looked at
        are kept)."""
        page = 0 if page is None else page
        trail = self._trails.pop(run_id, None)

        def plan(stored: StoredRun) -> tuple[int, int, int | None]:
            pages = max(1, -(-stored.steps // HISTORY_PAGE))
            if not 0 <= page < pages:
                raise Problem(422, "invalid", f"page: expected 0 to {pages - 1}",
                              field="page")
            end = stored.steps - page * HISTORY_PAGE
            first = max(0, end - HISTORY_PAGE)
            walked = 0 if trail is None or len(trail.configurations) > stored.steps \
                else len(trail.configurations)
            return first, end - first, walked if walked < stored.steps else None

        stored, rows, rest = await self.store.history_view(run_id, plan)
        if stored is None:
            raise Problem(404, "not_found", f"no run {run_id!r} in the store")
        steps = [views.step(row) for row in reversed(rows)]
        run_class = self.run_class(stored.spec)
        if run_class is not None and stored.spec_version == views.tables(run_class).version:
            if trail is None or len(trail.configurations) > stored.steps:
                trail = views.Trail(run_class)
            if rest:
                await anyio.to_thread.run_sync(trail.extend, run_class, rest)
            self._trails[run_id] = trail
            while len(self._trails) > 256:
                self._trails.popitem(last=False)
            for item in steps:
                index = item["index"]
                found = trail.configurations[index] if index < len(trail.configurations) \
                    else None
                item["after"] = views.innermost(run_class, found) if found else None
        return {"run_id": run_id, "steps": steps, "page": page,
                "pages": max(1, -(-stored.steps // HISTORY_PAGE)), "total": stored.steps}

    async def diagram_svg(self, run_class: type[Any], active: tuple[str, ...]) -> str | None:
        if self.diagram is None:
            return None
        key = (views.tables(run_class).name, active)
        if key not in self._diagrams:
            self._diagrams[key] = await anyio.to_thread.run_sync(self.diagram, run_class,
                                                                 active)
            while len(self._diagrams) > 128:
                self._diagrams.popitem(last=False)
        return self._diagrams[key]

    # -- answers -------------------------------------------------------------------------

    def _writer(self, who: Identity) -> None:
        if self.read_only:
            raise Problem(403, "read_only", "this console is read-only")
        if not who.can_write:
            raise Problem(403, "forbidden", f"{who.name} may read runs, not change them")

    async def answer(self, who: Identity, run_id: str, event: str, values: Mapping[str, Any],
                     *, key: str | None, if_revision: int | None) -> dict[str, Any]:
        """Fire `event` at the run in `who`'s name (the step's `@by`; a `@by` among the
        values is dropped), bound to `if_revision` when given."""
        self._writer(who)
        given = {name: value for name, value in values.items() if name != SENT_BY}
        given[SENT_BY] = who.name

        def run_class_of(name: str) -> type[Any]:
            run_class = self.run_class(name)
            if run_class is None:
                raise Problem(409, "no_spec", f"the console was started without the spec "
                              f"`{name}`: it cannot send events to its runs")
            spec = views.tables(run_class)
            if spec.listed(event) is None or event in spec.internal:
                raise Problem(404, "no_event", f"`{name}` has no event `{event}` to send")
            self._specs[run_id] = name
            while len(self._specs) > 10_000:
                self._specs.popitem(last=False)
            return run_class

        # A run's spec never changes: once known, the answer is the fire alone.
        known = self._specs.get(run_id)
        try:
            fired = await self.store.fire(
                run_id, run_class_of(known) if known is not None else run_class_of, event,
                idempotency_key=key, if_revision=if_revision, values=given)
        except ConcurrentUpdate as exc:
            now = await self.run(run_id)
            raise Problem(409, "moved_on", f"the run moved on: it is now {now['status']} "
                          f"({', '.join(now['states'])}), revision {exc.found}; you answered "
                          f"revision {exc.expected}", run=now) from None
        except (EventNotAccepted, LimitExceeded, MacrostepLoop) as exc:
            raise Problem(409, "not_accepted", str(exc)) from None
        except FieldProblem as exc:
            raise Problem(422, "invalid", str(exc), field=exc.field) from None
        except TypeError as exc:  # a value of the wrong type, a field the event does not set
            raise Problem(422, "invalid", str(exc)) from None
        except UnstorableValue as exc:
            raise Problem(422, "invalid", str(exc)) from None
        except RunNotFound:
            raise Problem(404, "not_found", f"no run {run_id!r} in the store") from None
        except (StoreUnavailable, OutcomeUnknown) as exc:
            raise Problem(503, "unavailable", str(exc)) from None
        except StoreError as exc:
            if self.store.store_failed(exc):  # busy, full, damaged, read-only: not the answer's
                raise  # the app's store error answer (503 or 500)
            raise Problem(409, "refused", str(exc)) from None  # a key used for another answer
        if self.listeners:
            self.listeners.notify(Answered(run_id, self._specs.get(run_id, ""), event,
                                           who.name, fired.applied, fired.revision,
                                           fired.run.status.value))
        return {"applied": fired.applied, "revision": fired.revision,
                "events": list(fired.events), "run_id": run_id,
                "status": fired.run.status.value,
                "states": views.innermost(type(fired.run), tuple(
                    s.value for s in fired.run.configuration))}

    # -- bulk cancel ---------------------------------------------------------------------

    async def bulk_conditions(self, query: Query) -> tuple[type[Any], RunFilter]:
        """The runs a bulk cancel of `query` takes: those it lists that accept the cancel
        event now (a state with a transition on it is active)."""
        if query.spec is None or self.run_class(query.spec) is None:
            raise Problem(422, "invalid", "a bulk cancel needs one spec (spec=...)",
                          field="spec")
        run_class = self.classes[query.spec]
        tables = views.tables(run_class)
        sources = tuple(sorted(tables.alternatives.sources.get(self.cancel_event, ())))
        if not sources:
            raise Problem(422, "invalid", f"`{query.spec}` has no event "
                          f"`{self.cancel_event}`", field="spec")
        base = self.conditions(query, await self.store.now())  # names checked here
        return run_class, dataclasses.replace(base, active=(*base.active, sources))

    async def bulk_preview(self, query: Query) -> dict[str, Any]:
        run_class, conditions = await self.bulk_conditions(query)
        counts = await self.store.counts(conditions)  # by status: the status aside
        count = counts.get(conditions.status, 0) if conditions.status is not None \
            else sum(counts.values())
        fields = views.event_fields(run_class, self.cancel_event)
        return {"count": count, "takes": min(count, BULK_MAX), "event": self.cancel_event,
                "fields": fields}

    async def bulk_cancel(self, who: Identity, query: Query, values: Mapping[str, Any]
                          ) -> dict[str, Any]:
        """Cancel every run the preview counted (at most BULK_MAX), each once (an
        idempotency key per run and batch), in `who`'s name; refusals are counted."""
        self._writer(who)
        _, conditions = await self.bulk_conditions(query)
        batch = uuid.uuid4().hex[:12]
        applied = refused = 0
        reasons: collections.Counter[str] = collections.Counter()
        after: tuple[Any, ...] | None = None
        done = 0
        while done < BULK_MAX:
            _, rows, _ = await self.store.listing(lambda now: conditions, after=after,
                                                  limit=200, counts=None)
            if not rows:
                break
            for stored in rows:
                done += 1
                try:
                    await self.answer(who, stored.run_id, self.cancel_event, values,
                                      key=f"bulk-{batch}-{stored.run_id}", if_revision=None)
                    applied += 1
                except Problem as exc:
                    refused += 1
                    reasons[exc.code] += 1
            after = (rows[-1].run_id,)
        return {"applied": applied, "refused": refused, "reasons": dict(reasons),
                "batch": batch}

