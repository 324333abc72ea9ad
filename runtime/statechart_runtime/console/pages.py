"""The console's pages (Jinja2 templates, htmx for polling; no build step): the runs list,
a run (timeline, diagram, timers, answer forms), the inbox, and bulk cancel. Forms are plain
POSTs (they work without scripts), protected by the double-submit CSRF cookie; an answer
carries the revision the page showed (a run that moved on meanwhile is a 409 page that says
so) and an idempotency key made when the page was drawn (a form sent twice applies once).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from statechart_runtime.chart.values import SENT_BY
from statechart_runtime.console import views
from statechart_runtime.console.auth import Identity, identify
from statechart_runtime.console.core import Console, Problem, Query
from statechart_runtime.console.routing import SentPathRoute
from statechart_runtime.console.security import csrf_ok, csrf_token, set_csrf_cookie

TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True, undefined=jinja2.StrictUndefined)
TEMPLATES.filters["q"] = lambda params: urlencode(params)
TEMPLATES.filters["path"] = lambda text: quote(str(text), safe="")
# Form fields that are the console's own, never an event's value (nor a sender: `@by`).
_OWN = frozenset({"_csrf", "_revision", "_key", "_back", "_confirm", SENT_BY})


def form_values(fields: list[dict[str, Any]], form: FormData) -> dict[str, Any]:
    """An event's values from a form, typed as the spec's fields say; an empty optional
    field is not sent. A value that is not of its type is a 422 naming the field."""
    out: dict[str, Any] = {}
    known = {f["name"]: f for f in fields}
    for name, raw in form.multi_items():
        if name in _OWN or not isinstance(raw, str):
            continue
        field = known.get(name)
        if field is None:
            raise Problem(422, "invalid", f"{name}: not a value of this event", field=name)
        text = raw.strip()
        if not text and not field["required"]:
            continue
        kind = field["type"]
        try:
            if kind == "integer":
                out[name] = int(text)
            elif kind == "number":
                out[name] = float(text)
            elif kind == "boolean":
                out[name] = text.lower() in ("true", "on", "1", "yes")
            elif kind == "json":  # a `json` field: JSON text in the form
                out[name] = json.loads(text)
            else:
                out[name] = raw
        except ValueError:
            raise Problem(422, "invalid", f"{name}: expected a {kind}, got {raw!r}",
                          field=name) from None
    return out


def routes(console: Console) -> list[SentPathRoute]:
    auth = console.auth

    def render(request: Request, template: str, status: int = 200, **data: Any) -> Response:
        who: Identity | None = data.pop("who", None)
        context = {"base": request.scope.get("root_path", ""),
                   "nonce": request.scope["state"]["nonce"], "csrf": csrf_token(request),
                   "who": who, "read_only": console.read_only,
                   "can_write": who is not None and who.can_write and not console.read_only,
                   "auth": auth is not None, "specs": sorted(console.classes), **data}
        response = HTMLResponse(TEMPLATES.get_template(template).render(context),
                                status_code=status)
        set_csrf_cookie(request, response)
        return response

    async def home(request: Request) -> Response:
        return RedirectResponse(f"{request.scope.get('root_path', '')}/runs", 303)

    async def runs(request: Request) -> Response:
        who = await identify(auth, request)
        query = Query.of(request.query_params)
        try:
            listed = await console.list_runs(query)
            problem = None
        except Problem as exc:
            listed, problem = {"runs": [], "counts": {}, "counts_at_least": [], "next": None,
                              "now": None}, exc
        template = "runs_table.html" if request.query_params.get("fragment") else "runs.html"
        return render(request, template, 422 if problem else 200, who=who, query=query,
                      listed=listed, problem=problem,
                      statuses=console.statuses(query.spec))

    async def run_page(request: Request, problem: Problem | None = None,
                       who: Identity | None = None) -> Response:
        who = who or await identify(auth, request)
        run_id = request.path_params["run_id"]
        page = request.query_params.get("page", "0")
        found = await console.run(run_id)
        history = await console.history(run_id, int(page) if page.isdecimal() else 0)
        run_class = console.run_class(found["spec"])
        svg = tree = None
        if run_class is not None and found["configuration"]:
            active = tuple(found["configuration"])
            svg = await console.diagram_svg(run_class, active)
            if svg is None:
                tree = list(views.state_tree(run_class, set(active)))
        done = request.query_params.get("done")
        return render(request, "run.html", problem.status if problem else 200, who=who,
                      run=found, history=history, svg=svg, tree=tree, problem=problem,
                      done=done, key=uuid.uuid4().hex)

    async def run(request: Request) -> Response:
        try:
            return await run_page(request)
        except Problem as exc:
            return render(request, "error.html", exc.status,
                          who=await identify(auth, request), problem=exc)

    async def live(request: Request) -> Response:
        """A fragment for polling: nothing while the run is at the page's revision, else
        a note that it moved on (the page's forms are left as they are: an answer from
        them is then refused, saying so)."""
        await identify(auth, request)
        stored = await console.store.stored_run(request.path_params["run_id"])
        seen = request.query_params.get("revision", "")
        if stored is None or str(stored.revision) == seen:
            return HTMLResponse("")
        return render(request, "moved.html", stored=stored,
                      states=views.innermost(console.run_class(stored.spec), stored.states))

    async def answer(request: Request) -> Response:
        who = await identify(auth, request)
        form = await request.form()
        run_id = request.path_params["run_id"]
        event = request.path_params["event"]
        back = form.get("_back")
        try:
            if not csrf_ok(request, form.get("_csrf")):
                raise Problem(403, "forbidden", "the form's CSRF token is missing or stale: "
                              "reload the page and answer again")
            found = await console.run(run_id)
            fields = next((e["fields"] for e in found["accepted_events"]
                           if e["event"] == event), None)
            if fields is None and found["record"] is not None:
                fields = views.event_fields(console.run_class(found["spec"]), event)
            revision = str(form.get("_revision", ""))
            key = form.get("_key")
            await console.answer(who, run_id, event, form_values(fields or [], form),
                                 key=key if isinstance(key, str) and key else None,
                                 if_revision=int(revision) if revision.isdecimal() else None)
        except Problem as exc:
            if back == "inbox":
                return await inbox_page(request, who, exc)
            if exc.status == 404 and exc.code == "not_found":
                return render(request, "error.html", 404, who=who, problem=exc)
            return await run_page(request, exc, who)
        base = request.scope.get("root_path", "")
        target = f"{base}/inbox?{urlencode({'done': event, 'run': run_id})}" \
            if back == "inbox" else f"{base}/runs/{quote(run_id, safe='')}?done={quote(event)}"
        return RedirectResponse(target, 303)

    async def inbox_page(request: Request, who: Identity,
                         problem: Problem | None = None) -> Response:
        spec = request.query_params.get("spec") or None
        return render(request, "inbox.html", problem.status if problem else 200, who=who,
                      inbox=await console.inbox(spec), problem=problem,
                      done=request.query_params.get("done"),
                      done_run=request.query_params.get("run"), spec=spec,
                      key=uuid.uuid4().hex)

    async def inbox(request: Request) -> Response:
        return await inbox_page(request, await identify(auth, request))

    async def cancel(request: Request) -> Response:
        who = await identify(auth, request)
        if request.method == "GET":
            query = Query.of(request.query_params)
            try:
                preview = await console.bulk_preview(query)
                problem = None
            except Problem as exc:
                preview, problem = None, exc
            return render(request, "cancel.html", problem.status if problem else 200,
                          who=who, query=query, preview=preview, problem=problem, result=None)
        form = await request.form()
        query = Query.of({k: v for k, v in form.items() if isinstance(v, str)
                          and not k.startswith("_")})
        try:
            if not csrf_ok(request, form.get("_csrf")):
                raise Problem(403, "forbidden", "the form's CSRF token is missing or stale: "
                              "reload the page")
            preview = await console.bulk_preview(query)
            values = form_values(preview["fields"], _only(form, {f["name"] for f in
                                                                 preview["fields"]}))
            result = await console.bulk_cancel(who, query, values)
            problem = None
        except Problem as exc:
            preview, result, problem = None, None, exc
        return render(request, "cancel.html", problem.status if problem else 200, who=who,
                      query=query, preview=preview, problem=problem, result=result)

    return [SentPathRoute("/", home), SentPathRoute("/runs", runs),
            SentPathRoute("/inbox", inbox),
            SentPathRoute("/cancel", cancel, methods=["GET", "POST"]),
            SentPathRoute("/runs/{run_id:path}/live", live),
            SentPathRoute("/runs/{run_id:path}/events/{event}", answer, methods=["POST"]),
            SentPathRoute("/runs/{run_id:path}", run)]


def _only(form: FormData, names: set[str]) -> FormData:
    return FormData([(k, v) for k, v in form.multi_items() if k in names])
