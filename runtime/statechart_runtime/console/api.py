"""The console's JSON API (documented by `openapi.DOCUMENT`, served at /api/openapi.json):
the runs list, one run (its `revision` also as the ETag), its history, and answers
(`POST /api/runs/{id}/events/{event}`: `Idempotency-Key` is the store's idempotency key,
`If-Match` the revision the answer was given for). The pages use the same `core.Console`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import unquote

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from statechart_runtime.console import openapi
from statechart_runtime.console.auth import Identity, Unauthenticated, identify
from statechart_runtime.console.core import Console, Problem, Query
from statechart_runtime.console.routing import SentPathRoute
from statechart_runtime.errors import BadPosition, StoreError
from statechart_runtime.store import Change

log = logging.getLogger("statechart_runtime.console")
# /api/changes: how often the stream reads the store for new steps, and how long it stays
# silent at most (a comment line keeps proxies from closing an idle stream).
CHANGES_POLL = 0.5
KEEP_ALIVE = 15.0


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse(data, status_code=status, headers=headers)


def problem_response(exc: Problem) -> Response:
    headers = {"ETag": f'"{exc.run["revision"]}"'} if exc.run is not None else None
    return _json(exc.as_json(), exc.status, headers)


def unauthenticated_response(exc: Unauthenticated) -> Response:
    headers = {"WWW-Authenticate": exc.challenge} if exc.challenge else None
    return _json({"error": "unauthenticated", "message": str(exc)}, 401, headers)


def if_match(header: str | None) -> int | None:
    """The revision of an `If-Match` header (`"7"`, `W/"7"` or `7`); `*` is any revision."""
    if header is None or header.strip() == "*":
        return None
    text = header.strip().removeprefix("W/").strip('"')
    if not text.isdecimal():
        raise Problem(422, "invalid", f"If-Match: expected a run's revision (\"7\"), got "
                      f"{header!r}", field="If-Match")
    return int(text)


def change_json(change: Change) -> dict[str, Any]:
    return {"position": change.position, "run_id": change.run_id, "index": change.index,
            "event": change.event, "source": change.source, "target": change.target,
            "at": change.at.isoformat().replace("+00:00", "Z"), "values": change.values}


def _event(change: Change) -> str:
    """A server-sent event of a step: its position as the event's id (a reconnecting
    EventSource sends it back as Last-Event-ID, and the stream goes on after it)."""
    return f"id: {_event_id(change.position)}\nevent: step\ndata: " \
        f"{json.dumps(change_json(change))}\n\n"


def _event_id(position: str) -> str:
    """A position as an event's id: a run id may hold any character, and a line break (or
    NUL) would end the id line and make the rest fields of the event. Percent-encoded
    (`%` too): `unquote` gives the position back from Last-Event-ID."""
    return position.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A") \
        .replace("\0", "%00")


def routes(console: Console) -> list[SentPathRoute]:
    auth = console.auth

    async def who(request: Request) -> Identity:
        return await identify(auth, request)

    async def runs(request: Request) -> Response:
        await who(request)
        return _json(await console.list_runs(Query.of(request.query_params)))

    async def run(request: Request) -> Response:
        await who(request)
        found = await console.run(request.path_params["run_id"])
        return _json(found, headers={"ETag": f'"{found["revision"]}"'})

    async def history(request: Request) -> Response:
        await who(request)
        page = request.query_params.get("page", "0")
        if not page.isdecimal():
            raise Problem(422, "invalid", "page: expected a whole number", field="page")
        return _json(await console.history(request.path_params["run_id"], int(page)))

    async def answer(request: Request) -> Response:
        sender = await who(request)
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        body = await request.body()
        # JSON only, an empty body too: a form or text/plain POST needs no CORS preflight, so
        # another site's page could send one with the user's credentials (CSRF).
        if kind != "application/json":
            raise Problem(415, "unsupported", "send the values as a JSON object "
                          "(Content-Type: application/json)")
        try:
            values = json.loads(body) if body else {}
        except ValueError as exc:
            raise Problem(422, "invalid", f"the body is not JSON: {exc}") from None
        if not isinstance(values, dict):
            raise Problem(422, "invalid", "the body must be a JSON object of the event's "
                          "values")
        done = await console.answer(
            sender, request.path_params["run_id"], request.path_params["event"], values,
            key=request.headers.get("idempotency-key") or None,
            if_revision=if_match(request.headers.get("if-match")))
        return _json(done, headers={"ETag": f'"{done["revision"]}"'})

    async def changes(request: Request) -> Response:
        """The steps of a spec's runs (of one run, with `run_id`) as they commit, as
        server-sent events, from `after` (or Last-Event-ID; none: from now)."""
        await who(request)
        spec = request.query_params.get("spec", "")
        run_class = console.run_class(spec)
        if run_class is None:
            raise Problem(422, "invalid", f"spec: the console has no spec `{spec}` (it has: "
                          f"{', '.join(sorted(console.classes)) or 'none'})", field="spec")
        only = request.query_params.get("run_id")
        resumed = request.headers.get("last-event-id")  # an event's id: _event_id
        after = unquote(resumed) if resumed else request.query_params.get("after")
        try:  # the first read here: a bad position is a 422, not a broken stream
            position, first = await console.store.changes(run_class, after or None)
        except BadPosition as exc:
            raise Problem(422, "invalid", str(exc), field="after") from None

        async def stream() -> AsyncIterator[str]:
            nonlocal position
            found, quiet = first, 0.0
            while True:
                for change in found:
                    if only is None or change.run_id == only:
                        quiet = 0.0
                        yield _event(change)
                if len(found) < 100:
                    await anyio.sleep(CHANGES_POLL)
                    quiet += CHANGES_POLL
                    if quiet >= KEEP_ALIVE:
                        quiet = 0.0
                        yield ": still here\n\n"
                try:
                    position, found = await console.store.changes(run_class, position)
                except StoreError as exc:  # the client reconnects, from its last event
                    log.warning("/api/changes: the store failed, the stream ends: %s", exc)
                    return

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store",
                                          "X-Accel-Buffering": "no"})

    async def schema(request: Request) -> Response:
        return _json(openapi.DOCUMENT)

    return [SentPathRoute("/api/openapi.json", schema),
            SentPathRoute("/api/runs", runs),
            SentPathRoute("/api/changes", changes),
            SentPathRoute("/api/runs/{run_id:path}/history", history),
            SentPathRoute("/api/runs/{run_id:path}/events/{event}", answer,
                          methods=["POST"]),
            SentPathRoute("/api/runs/{run_id:path}", run)]
