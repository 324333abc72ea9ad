"""What the run store's tests share (tests/conftest.py makes fixtures of it): a spec whose
events conflict, raw SQL on a store's database, and importing a generated module by path (in
worker processes too)."""

from __future__ import annotations

import datetime as dt
import importlib.util
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import psycopg

# A loop with conflicts: from `open`, `approve` and `deny` race; only one of them is taken.
# Every event sets `note`, so each accepted event leaves a token in exactly one history row.
TICKET = """\
statechart: ticket
version: 1
initial: open
record:
  note: {type: string}
states:
  open:
    tags: [waiting]
    on:
      approve: {target: approved, set: [note]}
      deny: {target: denied, set: [note]}
  approved: {on: {reopen: {target: open, set: [note]}, close: closed}}
  denied: {on: {reopen: {target: open, set: [note]}, close: closed}}
  closed: {final: true}
"""
TICKET_MODULE = "ticket_store_test"

# `waiting` expires after 30 s, unless its guard says no (`gate_class`).
GATE = """\
statechart: gate
version: 1
initial: waiting
states:
  waiting:
    on: {answer: done}
    after: {30s: {target: expired, guard: may_expire}}
  expired: {final: true}
  done: {final: true}
"""

# A job whose `working` state has work (docs/work.md): `do_it` returns `done` with an
# output; its error event `broke` takes why. `{timeout}`, `{backoff}` and `{retries}` are
# filled in.
JOB = """\
statechart: job
version: 1
initial: queued
record:
  output: {{type: json}}
  why: {{type: string}}
states:
  queued:
    on: {{start: working, cancel: cancelled}}
  working:
    work:
      handler: do_it
      timeout: {timeout}
      outcomes: [done]
      error: broke
      retry: {{max: {retries}, backoff: {backoff}}}
    on:
      done: {{target: finished, set: [output]}}
      broke: {{target: failed, set: [why]}}
      redo: working
      note: {{}}
      cancel: cancelled
  finished: {{final: true}}
  failed: {{final: true}}
  cancelled: {{final: true}}
"""


def job_class(folder: Path, *, timeout: str = "10s", backoff: str = "100ms",
              retries: int = 1) -> type[Any]:
    """The job run class of JOB with this timeout, backoff and retries (a module each)."""
    from codegen_support import checked_text, generate

    name = f"job_{timeout}_{backoff}_{retries}_store_test"
    module = sys.modules.get(name)
    if module is None:
        spec = checked_text(job_text(timeout=timeout, backoff=backoff, retries=retries))
        assert spec is not None
        path = folder / f"{name}.py"
        path.write_bytes(generate(spec)["generated/job.py"])
        module = import_path(path, name)
    return module.Job  # type: ignore[no-any-return]


def import_with_schema(text: str, folder: Path, name: str) -> ModuleType:
    """The spec of `text` generated into `folder`: its module imported as `name` (a name
    pickle and a store test's processes find again) and its record schema written beside
    it, under the schema's own file name (`SPEC.schema.json`)."""
    from codegen_support import checked_text, generate

    spec = checked_text(text)
    assert spec is not None
    for output, data in generate(spec).items():
        if output.endswith(".schema.json"):
            (folder / Path(output).name).write_bytes(data)
        else:
            (folder / f"{name}.py").write_bytes(data)
    return import_path(folder / f"{name}.py", name)


def job_text(*, timeout: str = "10s", backoff: str = "100ms", retries: int = 1) -> str:
    return JOB.format(timeout=timeout, backoff=backoff, retries=retries)


@dataclass
class Backend:
    """A fresh store's URL, and raw SQL on its database (to damage it on purpose)."""

    name: str
    url: str

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> None:
        if self.name == "sqlite":
            with sqlite3.connect(self.url.removeprefix("sqlite:///")) as db:
                db.execute(sql, args)
        else:
            with psycopg.connect(self.url, autocommit=True) as db:
                db.execute(sql.replace("?", "%s"), args)

    def rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of a query, read past the store (what its columns hold)."""
        if self.name == "sqlite":
            with sqlite3.connect(self.url.removeprefix("sqlite:///")) as db:
                return list(db.execute(sql, args).fetchall())
        with psycopg.connect(self.url, autocommit=True) as db:
            return list(db.execute(sql.replace("?", "%s"), args).fetchall())


def import_path(path: Path, name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def timed(module: ModuleType) -> type[Any]:
    """The ticket run class with one timer, written by hand on the contract that generated
    runs with timers follow (`next_deadline`, `fire_due(now)`): `open` times out after an
    hour, to `denied` with the note "timeout". For the store's due-work tests."""
    cached = getattr(module, "TimedTicket", None)
    if cached is not None:
        return cached

    class TimedTicket(module.Ticket):
        @property
        def next_deadline(self) -> dt.datetime | None:
            if self.status != module.TicketState.open:
                return None
            return self.record.lastTransitionAt + dt.timedelta(hours=1)

        def fire_due(self, now: dt.datetime | None = None) -> list[str]:
            deadline = self.next_deadline
            if deadline is None or deadline > (now or dt.datetime.now(dt.UTC)):
                return []
            self.deny(note="timeout")
            return ["deny"]

    module.TimedTicket = TimedTicket
    return TimedTicket


def gate_class(folder: Path) -> type[Any]:
    """The gate run class: the guard of `waiting`'s timer refuses for the run `stubborn`
    and raises for the run `broken` (a failing timer)."""
    from codegen_support import checked_text, generate

    module = sys.modules.get("gate_store_test")
    if module is None:
        spec = checked_text(GATE)
        assert spec is not None
        path = folder / "gate_store_test.py"
        path.write_bytes(generate(spec)["generated/gate.py"])
        module = import_path(path, "gate_store_test")
    cached = getattr(module, "GuardedGate", None)
    if cached is not None:
        return cached

    class GuardedGate(module.Gate):  # type: ignore[name-defined, misc]
        def may_expire(self) -> bool:
            if self.record.runId == "broken":
                raise RuntimeError("the guard's service is down")
            return bool(self.record.runId != "stubborn")

    module.GuardedGate = GuardedGate
    return GuardedGate


class Clock:
    """A clock a test sets: `at`, moved by `advance`."""

    def __init__(self, at: dt.datetime) -> None:
        self.at = at

    def __call__(self) -> dt.datetime:
        return self.at

    def advance(self, delta: dt.timedelta) -> None:
        self.at += delta


def assert_usable(store: Any, module: ModuleType) -> None:
    """After a refused call, the same store object still does the ordinary things: create a
    run, fire an event at it, load it back (its whole history replayed)."""
    run = module.Ticket()
    store.create(run)
    fired = store.fire(module.Ticket, run.record.runId, "approve", note="still usable")
    assert fired.applied and fired.revision == 2
    loaded = store.load(module.Ticket, run.record.runId)
    assert [s.values for s in loaded.record.history] == [{"note": "still usable"}]


class Intercepted:
    """A store's connection whose `execute` goes through `hook(sql, args, execute)`."""

    def __init__(self, db: Any, hook: Any) -> None:
        self._db = db
        self._hook = hook

    def execute(self, sql: str, args: Any = ()) -> Any:
        return self._hook(sql, args, self._db.execute)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def intercept(store: Any, hook: Any) -> None:
    """Make every statement of the synchronous `store` go through `hook(sql, args,
    execute)` (fault injection: a statement held, another writer let in between two)."""
    lease = store._lease

    def intercepted() -> Any:
        return Intercepted(lease(), hook)

    store._lease = intercepted


# -- the asynchronous store, called as the synchronous one (the conformance suite) --------

_LOOP: Any = None


def _loop() -> Any:
    """One event loop, in a thread of its own, that every asynchronous store of the tests
    runs on (a test calls it from its own thread, as it calls a synchronous store)."""
    global _LOOP
    if _LOOP is None:
        import asyncio
        import threading

        _LOOP = asyncio.new_event_loop()
        threading.Thread(target=_LOOP.run_forever, daemon=True, name="async-store").start()
    return _LOOP


def _awaited(coroutine: Any) -> Any:
    import asyncio

    return asyncio.run_coroutine_threadsafe(coroutine, _loop()).result()


class AsyncAsSync:
    """An AsyncRunStore whose coroutines are awaited on the tests' loop: the synchronous
    API's tests run unchanged through the asynchronous API (what it returns and raises is
    the asynchronous store's own)."""

    # The stores a test opened, closed after it (`close_opened`): tests open stores without
    # closing them, as the synchronous API lets them; an asynchronous store left open keeps
    # its pool's connections and tasks until the process ends ("Task was destroyed but it is
    # pending" at exit).
    opened: list[AsyncAsSync] = []

    def __init__(self, url: Any, **kwargs: Any) -> None:
        from statechart_runtime.store import open_async_store

        async def opened() -> Any:
            return await open_async_store(url, **kwargs)

        object.__setattr__(self, "_store", _awaited(opened()))
        AsyncAsSync.opened.append(self)

    @classmethod
    def close_opened(cls) -> None:
        """Close every store opened since the last call (closing one twice is allowed);
        the first error a close raised is raised once all were tried."""
        stores, cls.opened[:] = list(cls.opened), []
        failed: BaseException | None = None
        for store in stores:
            try:
                store.close()
            except Exception as exc:  # the others are closed all the same
                failed = failed or exc
        if failed is not None:
            raise failed

    def __getattr__(self, name: str) -> Any:
        import inspect

        found = getattr(self._store, name)
        if name == "stored_records":
            def records(*args: Any, **kwargs: Any) -> Any:
                async def listed() -> list[Any]:
                    return [item async for item in found(*args, **kwargs)]
                return iter(_awaited(listed()))
            return records
        if inspect.iscoroutinefunction(found):
            return lambda *args, **kwargs: _awaited(found(*args, **kwargs))
        return found

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._store, name, value)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def settled(store: Any, run_class: Any, count: int, **kwargs: Any) -> list[Any]:
    """`store.changes(run_class, **kwargs)` once it gives `count` steps (at most 30 s): on
    PostgreSQL a step waits for every transaction older than its own, on the whole server
    (other tests' too), to end."""
    import time

    deadline = time.monotonic() + 30
    while len(found := store.changes(run_class, **kwargs)) < count \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    return found  # type: ignore[no-any-return]
