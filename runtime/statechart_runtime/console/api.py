"""The console's JSON API (documented by `openapi.DOCUMENT`, served at /api/openapi.json):
the runs list, one run (its `revision` also as the ETag), its history, and answers
(`POST /api/runs/{id}/events/{event}`: `Idempotency-Key` is the store's idempotency key,
`If-Match` the revision the answer was given for). The pages use the same `core.Console`.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from statechart_runtime.console import openapi
from statechart_runtime.console.auth import Identity, Unauthenticated, identify
from statechart_runtime.console.core import Console, Problem, Query
from statechart_runtime.console.routing import SentPathRoute


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

    async def schema(request: Request) -> Response:
        return _json(openapi.DOCUMENT)

    return [SentPathRoute("/api/openapi.json", schema),
            SentPathRoute("/api/runs", runs),
            SentPathRoute("/api/runs/{run_id:path}/history", history),
            SentPathRoute("/api/runs/{run_id:path}/events/{event}", answer,
                          methods=["POST"]),
            SentPathRoute("/api/runs/{run_id:path}", run)]
