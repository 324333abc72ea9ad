"""The run console: a JSON API and pages over a run store, for the people who answer runs
(docs/console.md). An ASGI app (Starlette) a team mounts in its own service, or
`statechart runs serve` runs:

```python
from statechart_runtime.console import app, basic_auth

console = app("sqlite:///runs.db", [AgentRun], auth=basic_auth({"alice": "secret"}))
# uvicorn.run(console), or Mount("/console", console) in a Starlette app
```

Needs the `console` extra (Starlette, Jinja2, uvicorn, python-multipart; a PostgreSQL store
needs the `postgres` extra; htmx is vendored in `static/` with its licence).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from statechart_runtime.console import api, pages, views
from statechart_runtime.console.auth import (
    Auth,
    Identity,
    Unauthenticated,
    basic_auth,
    basic_auth_from_env,
    identify,
    trusted_header,
)
from statechart_runtime.console.backend import ConsoleStore
from statechart_runtime.console.core import WAITING, Console, Diagram, Problem
from statechart_runtime.console.security import SecurityHeaders
from statechart_runtime.errors import OutcomeUnknown, StoreError, StoreUnavailable
from statechart_runtime.listeners import Listener
from statechart_runtime.store import AsyncRunStore, RunStore

__all__ = ["Auth", "Diagram", "Identity", "app", "basic_auth", "basic_auth_from_env",
           "trusted_header"]


def app(store: RunStore | AsyncRunStore | str, run_classes: Iterable[type[Any]], *,
        auth: Auth | None = None, read_only: bool = False, diagram: Diagram | None = None,
        waiting: Iterable[str] = WAITING, cancel_event: str = "cancel",
        pool: int = 4, listeners: Iterable[Listener] = (),
        metrics: bool | Any = False) -> Starlette:
    """The console over `store` for the runs of `run_classes` (generated Run classes; runs
    of other specs are listed, not read). `store`: a URL, opened as an asynchronous store
    (`open_async_store`, a pool of `pool` connections) when the app starts and closed when it
    stops; an `AsyncRunStore` (the caller's to close); or a synchronous `RunStore`, then
    called in a worker thread, one call at a time.

    - `auth`: a callable given each request (`starlette.requests.HTTPConnection`), answering
      an `Identity` or None (401); sync or async. Built in: `basic_auth`,
      `basic_auth_from_env`, `trusted_header`. Without one, the console answers loopback
      clients only, as `local`. The identity is stored with each step it sends (`@by`).
    - `read_only`: no answers, no bulk cancel (403; the pages show no forms).
    - `diagram`: (run class, active states) -> SVG text (or None), drawn on the run page
      and embedded as it is; without it the page shows the state tree with the active
      states marked (`statechart runs serve` draws the compiler's diagram).
    - `waiting`: the tags and statuses that put a run in the inbox (default: `waiting`).
    - `cancel_event`: the event a bulk cancel sends (default: `cancel`).
    - `listeners`: told of each answer (`Answered`), and, for a store opened from a URL,
      of everything that store does (statechart_runtime.listeners; a store object given is
      the caller's: `store.listen` on it).
    - `metrics`: True (or a `statechart_runtime.metrics.PrometheusMetrics`): serve the
      Prometheus text exposition of the runs' metrics at `/metrics` (authenticated as the
      pages are; the `otel` extra), counted by its listener (added to `listeners`) and read
      from the store at each scrape (runs by status, overdue timers, the work queue).
    """
    run_classes = list(run_classes)
    prometheus: Any = None
    if metrics is True:
        from statechart_runtime.metrics import PrometheusMetrics

        prometheus = PrometheusMetrics(sorted({views.tables(c).name for c in run_classes}))
    elif metrics:
        prometheus = metrics
    listeners = (*listeners, *([prometheus.listener] if prometheus is not None else []))
    backend = ConsoleStore(store, size=pool, read_only=read_only, listeners=listeners)
    console = Console(backend, run_classes, read_only=read_only, diagram=diagram,
                      waiting=waiting, cancel_event=cancel_event, auth=auth,
                      listeners=listeners)

    async def problem(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Problem)
        if request.url.path.startswith(f"{request.scope.get('root_path', '')}/api/"):
            return api.problem_response(exc)
        return HTMLResponse(pages.TEMPLATES.get_template("error.html").render(
            base=request.scope.get("root_path", ""), nonce=request.scope["state"]["nonce"],
            problem=exc, who=None, read_only=read_only, can_write=False,
            auth=auth is not None, specs=sorted(console.classes)), status_code=exc.status)

    async def store_failed(request: Request, exc: Exception) -> Response:
        # A store error no call of the console answers itself (a read of an unreachable or
        # damaged store): a problem as any other, not a bare 500.
        assert isinstance(exc, StoreError)
        if isinstance(exc, StoreUnavailable | OutcomeUnknown):
            return await problem(request, Problem(503, "unavailable", str(exc)))
        return await problem(request, Problem(500, "store_error", str(exc)))

    async def unauthenticated(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Unauthenticated)
        return api.unauthenticated_response(exc)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await backend.open()
        try:
            yield
        finally:
            await backend.close()
            if metrics is True:  # made here: closed here
                prometheus.close()

    async def exposition(request: Request) -> Response:
        await identify(auth, request)
        await backend.refresh(prometheus.gauges)
        from prometheus_client import CONTENT_TYPE_LATEST

        return Response(prometheus.text(), media_type=CONTENT_TYPE_LATEST)

    scrape = [Route("/metrics", exposition)] if prometheus is not None else []

    static = StaticFiles(directory=Path(__file__).parent / "static")
    return Starlette(routes=[*scrape, *api.routes(console), *pages.routes(console),
                             Mount("/static", static, name="static")],
                     middleware=[Middleware(SecurityHeaders)], lifespan=lifespan,
                     exception_handlers={Problem: problem, StoreError: store_failed,
                                         Unauthenticated: unauthenticated})
