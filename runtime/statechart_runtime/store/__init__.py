"""A run store: runs kept in SQLite or PostgreSQL, saved with optimistic concurrency, events
fired in one transaction, every transition appended to a queryable history (docs/runs.md).

```python
from statechart_runtime.store import open_store, open_async_store

store = open_store("sqlite:///runs.db")           # or "postgresql://user@host/db"
store.create(AgentRun())
store.fire(AgentRun, run_id, "approve", idempotency_key="approval-17")

async with await open_async_store("postgresql://user@host/db") as store:  # asyncio
    await store.fire(AgentRun, run_id, "approve", idempotency_key="approval-17")
```

The package: `core` decides what to read and write, with no I/O; each backend is a package
of its own (`BACKENDS`: `sqlite`, standard library `sqlite3`, so the runtime gains no
dependency; `postgres`, psycopg 3, the `postgres` extra) holding every SQL text it runs
(`SQL`), its schema as a list of migrations (`MIGRATIONS`), what its driver's errors mean
(`failure`) and its drivers. The logic that reads and writes is written once, asynchronous
(`_async`: `AsyncRunStore`), and the synchronous `RunStore` (`_sync`) is generated from it
(tools/async_to_sync.py). Adding a backend is one new package and one entry in `BACKENDS`.
A synchronous store holds one connection: use one per thread; an asynchronous store holds a
pool, and serves any number of tasks at once.
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Generator, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from statechart_runtime.chart.values import Clock
from statechart_runtime.errors import (
    BadPosition,
    ConcurrentUpdate,
    DamagedRow,
    OutcomeUnknown,
    PoolExhausted,
    ReadOnlyStore,
    RunIdTaken,
    RunNotFound,
    SchemaProblem,
    StoreError,
    StoreFull,
    StoreUnavailable,
    TimerFailed,
    UnknownName,
    UnstorableValue,
)
from statechart_runtime.listeners import Listener
from statechart_runtime.store._async.run_store import AsyncRunStore
from statechart_runtime.store._sync.run_store import RunStore
from statechart_runtime.store._sync.transactions import RunT as RunT  # a name it had before
from statechart_runtime.store.core.failures import UNREACHABLE_HINT as UNREACHABLE_HINT
from statechart_runtime.store.core.failures import BlockingInEventLoop, warn_in_event_loop
from statechart_runtime.store.core.pages import RunFilter
from statechart_runtime.store.core.rows import HistoryRow, StoredRun
from statechart_runtime.store.core.schema import OLDEST_VERSION as OLDEST_VERSION
from statechart_runtime.store.core.schema import SCHEMA_VERSION
from statechart_runtime.store.core.schema import UPGRADE_HINT as UPGRADE_HINT
from statechart_runtime.store.core.statements import Statements
from statechart_runtime.store.core.watch import BEGINNING, Change
from statechart_runtime.store.core.writes import Fired

__all__ = ["BACKENDS", "BEGINNING", "SCHEMA_VERSION", "AsyncRunStore", "Backend", "BadPosition",
           "BlockingInEventLoop", "Change", "ConcurrentUpdate", "DamagedRow", "Fired",
           "HistoryRow", "OutcomeUnknown", "PoolExhausted", "ReadOnlyStore", "RunFilter",
           "RunIdTaken", "RunNotFound", "RunStore", "SchemaProblem", "Statements", "StoreError",
           "StoreFull", "StoreUnavailable", "StoredRun", "TimerFailed", "UnknownName",
           "UnstorableValue", "open_async_store", "open_store"]


class Backend(typing.NamedTuple):
    """A backend of the registry: the package that holds it (it provides `open_url(url, *,
    timeout, read_only)` and `async open_async_url(url, *, timeout, read_only,
    pool_size)`), and what to `pip install` when its synchronous or asynchronous driver
    cannot be imported ("": nothing)."""

    module: str
    install: str
    install_async: str


# What to install for a backend's drivers: names every index has (the extras say the same).
_PSYCOPG = ("'psycopg[binary]>=3.1' (the `postgres` extra of statechart-runtime and "
            "statechart-compiler)")
_PSYCOPG_POOL = ("'psycopg[binary]>=3.1' 'psycopg_pool>=3.2' (the `postgres` extra of "
                 "statechart-runtime and statechart-compiler)")
# The backends, by URL scheme (imported when a URL needs one, so that psycopg is needed only
# for PostgreSQL). A path with no scheme is a SQLite file.
BACKENDS: dict[str, Backend] = {
    "sqlite": Backend("statechart_runtime.store.sqlite", "", ""),
    "postgresql": Backend("statechart_runtime.store.postgres", _PSYCOPG, _PSYCOPG_POOL),
    "postgres": Backend("statechart_runtime.store.postgres", _PSYCOPG, _PSYCOPG_POOL),
}


def _backend(url: str) -> tuple[str, Backend]:
    scheme = url.partition("://")[0] if "://" in url else "sqlite"
    if scheme not in BACKENDS:
        raise StoreError(f"unsupported store URL {url!r}: expected one of "
                         + ", ".join(f"{name}://..." for name in BACKENDS)
                         + " or a file path")
    return scheme, BACKENDS[scheme]


def _missing(scheme: str, exc: ImportError, install: str) -> StoreError:
    return StoreError(f"a {scheme}:// store needs {exc.name or 'a missing module'} ({exc})"
                      + (f": pip install {install}" if install else ""))


def _module(scheme: str, backend: Backend) -> ModuleType:
    try:
        return importlib.import_module(backend.module)
    except ImportError as exc:
        raise _missing(scheme, exc, backend.install) from None


def open_store(url: str | Path, *, timeout: float = 30.0, read_only: bool = False,
               clock: Clock | None = None, listeners: Iterable[Listener] = ()) -> RunStore:
    """The store at `url`: a file path, `sqlite:///relative/runs.db`, `sqlite:////abs/runs.db`,
    or `postgresql://user:password@host:port/database` (any libpq URL; psycopg 3 must be
    installed: the `postgres` extra). A writable store creates its tables if the database
    has none and upgrades an older store schema (one transaction); a newer one is refused
    (SchemaProblem). `read_only`: never writes, creates nor locks anything (docs/runs.md).
    `timeout` is how long a writer waits for another one, and the budget for reconnecting to
    a server that went away, in seconds. `clock` (a `Clock`, as runs take; default: the
    system's UTC time) is the store's one time source: steps, row times and due queries of
    every call that is not given a time (docs/runs.md, Clocks). `listeners` are told what
    its calls do, after each commits (`store.listen`, docs/observability.md). Called inside
    a running event loop: a `BlockingInEventLoop` warning (a RuntimeWarning, once per
    store), which says to use `open_async_store`."""
    warn_in_event_loop(str(url), set())
    text = str(url)
    scheme, backend = _backend(text)
    store: RunStore = _module(scheme, backend).open_url(text, timeout=timeout,
                                                        read_only=read_only)
    if clock is not None:
        store.clock = clock
    for listener in listeners:
        store.listen(listener)
    return store


class _Opening:
    """What `open_async_store` returns: awaited, the open store; or used as `async with
    open_async_store(url) as store:` (closed at the block's end)."""

    def __init__(self, url: str, kwargs: dict[str, Any]) -> None:
        self._url = url
        self._kwargs = kwargs
        self._store: AsyncRunStore | None = None

    async def _open(self) -> AsyncRunStore:
        text = self._url
        scheme, backend = _backend(text)
        clock = self._kwargs.pop("clock")
        listeners = self._kwargs.pop("listeners")
        module = _module(scheme, backend)
        try:
            store: AsyncRunStore = await module.open_async_url(text, **self._kwargs)
        except ImportError as exc:
            raise _missing(scheme, exc, backend.install_async) from None
        if clock is not None:
            store.clock = clock
        for listener in listeners:
            store.listen(listener)
        return store

    def __await__(self) -> Generator[Any, None, AsyncRunStore]:
        return self._open().__await__()

    async def __aenter__(self) -> AsyncRunStore:
        self._store = await self._open()
        return self._store

    async def __aexit__(self, *exc: object) -> None:
        if self._store is not None:
            await self._store.close()


def open_async_store(url: str | Path, *, timeout: float = 30.0, read_only: bool = False,
                     clock: Clock | None = None, pool_size: int | None = None,
                     pool_timeout: float | None = None,
                     listeners: Iterable[Listener] = ()) -> _Opening:
    """The asynchronous store at `url` (as `open_store`'s), its operations coroutines,
    serving any number of tasks at once: `store = await open_async_store(url)` (then `await
    store.close()`, or `async with store:`), or `async with open_async_store(url) as
    store:`. Each call leases a connection of the store's pool for its transaction: `pool_size`
    connections (PostgreSQL: psycopg_pool, default 8; SQLite: sqlite3, a thread each,
    default 1). A call that finds no connection free within `pool_timeout` seconds (default:
    `timeout`) raises PoolExhausted. Needs the `postgres` extra on PostgreSQL (SQLite:
    nothing). `listeners`: as `open_store`'s."""
    return _Opening(str(url), {"timeout": timeout, "read_only": read_only, "clock": clock,
                               "pool_size": pool_size, "pool_timeout": pool_timeout,
                               "listeners": tuple(listeners)})
