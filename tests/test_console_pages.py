"""The console's pages over a real SQLite store, through HTTP (the browser tests drive the
same pages in chromium): hostile run ids, record values and spec text appear escaped; forms
need the CSRF cookie's token; a forged sender in a form is ignored; a stale form is a 409
page that says where the run is now; bulk cancel previews its count, then cancels."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import agent_run, client, console_app, seed, waiting

from statechart.cli import runs_serve
from statechart.codegen.in_memory import run_class
from statechart.linter import check_file
from statechart_runtime.store import open_store

SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Any]:
    with open_store(tmp_path / "runs.db") as opened:
        seed(opened)
        yield opened


def _token(page: Any) -> str:
    found = re.search(r'name="_csrf" value="([^"]+)"', page.text)
    assert found, "the page has a form with a CSRF token"
    return found.group(1)


def test_hostile_run_ids_and_values_are_escaped(store: Any) -> None:
    import datetime as dt

    ar = agent_run()
    run = waiting(ar, IMG, dt.datetime(2030, 1, 1, tzinfo=dt.UTC), approval=False)
    store.create(run)
    store.fire(ar.AgentRun, IMG, "provide_input", humanInput=SCRIPT)
    web = client(console_app(store))
    for page in (web.get("/runs"), web.get("/runs", params={"state": "resumed"}),
                 web.get(f"/runs/{IMG}"), web.get("/inbox")):
        assert page.status_code == 200
        assert SCRIPT not in page.text and IMG not in page.text
    shown = web.get(f"/runs/{IMG}").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in shown
    assert "&lt;img src=x onerror=&#34;alert(2)&#34;&gt;" in shown
    # A hostile filter is shown back escaped too.
    assert IMG not in web.get("/runs", params={"tag": IMG}).text


def test_hostile_spec_text_stays_text_in_the_diagram(tmp_path: Path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(f"""statechart: odd
version: 1
description: '{SCRIPT} --> <!-- {IMG}'
initial: a
states:
  a:
    description: '</text></svg>{SCRIPT}'
    on: {{go: b}}
  b: {{final: true}}
""")
    spec = check_file(str(path)).spec
    assert spec is not None
    svg = runs_serve._diagram({"odd": spec}, run_class(spec), ("a",))
    assert svg is not None and svg.startswith("<svg")
    assert "<script" not in svg and "<img" not in svg and "onerror" not in svg.replace(
        "onerror=&quot;", "")


def test_a_form_needs_the_csrf_token_and_ignores_a_forged_sender(store: Any) -> None:
    web = client(console_app(store))
    page = web.get("/runs/approve-soon")
    form = {"approvedBy": "ops", "_revision": "1", "_key": "k-1", "@by": "mallory"}
    refused = web.post("/runs/approve-soon/events/approve", data=form)
    assert refused.status_code == 403 and "CSRF" in refused.text
    done = web.post("/runs/approve-soon/events/approve", data={**form, "_csrf": _token(page)})
    assert done.status_code == 303
    assert done.headers["location"] == "/runs/approve-soon?done=approve"
    after = web.get(done.headers["location"])
    assert "approve applied: the run is now resumed" in after.text
    steps = web.get("/api/runs/approve-soon/history").json()["steps"]
    assert steps[0]["by"] == "alice" and steps[0]["values"] == {"approvedBy": "ops"}
    # Sent twice (a double click, a reload): applied once.
    again = web.post("/runs/approve-soon/events/approve", data={**form, "_csrf": _token(page)})
    assert again.status_code == 303
    assert len(web.get("/api/runs/approve-soon/history").json()["steps"]) == len(steps)


def test_a_stale_form_says_where_the_run_is_now(store: Any) -> None:
    web = client(console_app(store))
    page = web.get("/runs/approve-later")
    store.fire(agent_run().AgentRun, "approve-later", "deny", cancelReason="too risky")
    late = web.post("/runs/approve-later/events/approve",
                    data={"approvedBy": "ops", "_revision": "1", "_key": "k",
                          "_csrf": _token(page)})
    assert late.status_code == 409
    assert "the run moved on: it is now cancelled (cancelled), revision 2" in late.text
    live = web.get("/runs/approve-later/live", params={"revision": "1"})
    assert "moved on since this page was drawn" in live.text
    assert web.get("/runs/approve-later/live", params={"revision": "2"}).text == ""


def test_bulk_cancel_previews_then_cancels(store: Any) -> None:
    web = client(console_app(store))
    preview = web.get("/cancel", params={"spec": "agent_run", "status": "waiting"})
    assert preview.status_code == 200
    assert re.search(r'id="preview-count">4<', preview.text)
    done = web.post("/cancel", data={"spec": "agent_run", "status": "waiting",
                                          "cancelReason": "cleanup", "_csrf": _token(preview)})
    assert done.status_code == 200, done.text
    # The overdue approval timed out first (its timer fires before the cancel): refused.
    assert "3 runs cancelled, 1 refused (not_accepted: 1)" in done.text
    counts = web.get("/api/runs", params={"spec": "agent_run"}).json()["counts"]
    assert counts == {"cancelled": 4, "failed": 1, "running": 2}
    steps = web.get("/api/runs/approve-soon/history").json()["steps"]
    assert (steps[0]["event"], steps[0]["by"]) == ("cancel", "alice")


def test_a_runtime_only_console_shows_the_state_tree(store: Any) -> None:
    from statechart_runtime.console import app

    web = client(app(store, [agent_run().AgentRun], auth=None), user=None)
    page = web.get("/runs/approve-soon")
    assert page.status_code == 200 and "<svg" not in page.text
    active = re.findall(r'class="depth-\d+ \w+ active" data-state="(\w+)"', page.text)
    assert active == ["interrupted", "waiting_for_approval"]
    # A run of a spec the console was not given: listed, its page says why it is bare.
    assert "deploy-1" in web.get("/runs").text
    assert "started without the spec `deploy`" in web.get("/runs/deploy-1").text


@pytest.mark.parametrize(("kind", "text", "value"), [
    ("json", '{"a": [1, 2, {"b": null}]}', {"a": [1, 2, {"b": None}]}),
    ("integer", "42", 42), ("number", "2.5", 2.5), ("boolean", "true", True),
    ("string", " kept as typed ", " kept as typed "),
])
def test_form_values_take_the_fields_types(kind: str, text: str, value: Any) -> None:
    from starlette.datastructures import FormData

    from statechart_runtime.console.pages import form_values

    fields = [{"name": "x", "type": kind, "required": True, "enum": None}]
    form = FormData([("x", text), ("_csrf", "t"), ("@by", "mallory")])
    assert form_values(fields, form) == {"x": value}


@pytest.mark.parametrize(("kind", "text"), [("json", "{not json"), ("integer", "4.5"),
                                            ("number", "many")])
def test_a_form_value_not_of_its_type_is_a_422_naming_it(kind: str, text: str) -> None:
    from starlette.datastructures import FormData

    from statechart_runtime.console.core import Problem
    from statechart_runtime.console.pages import form_values

    with pytest.raises(Problem) as caught:
        form_values([{"name": "x", "type": kind, "required": True, "enum": None}],
                    FormData([("x", text)]))
    assert (caught.value.status, caught.value.field) == (422, "x")


# Ids that name a fixed part of a path, or end with one, or hold escapes.
# (Not `a%2Fb`: starlette's TestClient decodes a path twice; `test_the_path_as_sent` has it.)
PATH_LIKE_IDS = ("cancel", "inbox", "x", "x/live", "x/history", "x/events/approve",
                 "x/events/approve/events/approve", "100%", "été/live", "/")


def test_every_run_id_reaches_its_own_page_and_api(tmp_path: Path) -> None:
    """A run id is one path segment (`/` sent as `%2F`): no id is taken for a fixed part of
    a path (`/runs/x%2Flive` is run `x/live`'s page, `/runs/x/live` run `x`'s live fragment),
    and the links the pages draw lead back to the run."""
    import datetime as dt
    from urllib.parse import quote

    ar = agent_run()
    with open_store(tmp_path / "runs.db") as opened:
        for run_id in PATH_LIKE_IDS:
            opened.create(waiting(ar, run_id, dt.datetime(2030, 1, 1, tzinfo=dt.UTC)))
        web = client(console_app(opened))
        for run_id in PATH_LIKE_IDS:
            path = quote(run_id, safe="")
            api = web.get(f"/api/runs/{path}")
            assert api.status_code == 200 and api.json()["run_id"] == run_id, run_id
            steps = web.get(f"/api/runs/{path}/history").json()
            assert steps["total"] == api.json()["steps"] > 0, run_id
            assert web.get(f"/runs/{path}/live",
                           params={"revision": api.json()["revision"]}).text == ""
            page = web.get(f"/runs/{path}")
            assert page.status_code == 200, run_id
            assert f"/runs/{path}/live?revision=" in page.text, run_id
            done = web.post(f"/api/runs/{path}/events/approve", json={"approvedBy": run_id},
                            headers={"If-Match": str(api.json()["revision"])})
            assert done.status_code == 200 and done.json()["applied"], (run_id, done.text)
            assert opened.history(run_id)[-1].values["approvedBy"] == run_id
        # Bulk cancel has a path of its own.
        assert web.get("/cancel", params={"spec": "agent_run"}).status_code == 200
        # Mounted in a service, the same.
        from starlette.applications import Starlette
        from starlette.routing import Mount

        mounted = client(Starlette(routes=[Mount("/console", console_app(opened))]))
        assert mounted.get("/console/api/runs/x%2Flive").json()["run_id"] == "x/live"
        assert "/console/runs/x%2Flive/live?" in mounted.get("/console/runs/x%2Flive").text


@pytest.mark.parametrize(("raw", "path", "sent"), [
    (b"/runs/x%2Flive", "/runs/x/live", "/runs/x%2Flive"),
    (b"/runs/x/live", "/runs/x/live", "/runs/x/live"),
    (b"/runs/a%252Fb/live", "/runs/a%2Fb/live", "/runs/a%252Fb/live"),
    (b"/runs/%C3%A9t%C3%A9%2fx", "/runs/\u00e9t\u00e9/x", "/runs/\u00e9t\u00e9%2Fx"),
    (b"/runs/100%25", "/runs/100%", "/runs/100%25"),
    (None, "/runs/100%/live", "/runs/100%25/live"),  # no raw_path: the path, `%` escaped
    (b"/elsewhere", "/runs/x", "/runs/x"),  # a raw_path that is not the path's: the path
])
def test_the_path_as_sent(raw: bytes | None, path: str, sent: str) -> None:
    """Routes match the path as sent: decoded but `%2F` and `%25`, which the run id (one
    segment) decodes after (as a server such as uvicorn gives `path` and `raw_path`)."""
    from urllib.parse import unquote

    from starlette.routing import Match

    from statechart_runtime.console.routing import SentPathRoute, sent_path

    scope = {"type": "http", "path": path, "method": "GET",
             **({} if raw is None else {"raw_path": raw})}
    assert sent_path(scope) == sent
    page, live = (SentPathRoute("/runs/{run_id:path}", lambda r: None),
                  SentPathRoute("/runs/{run_id:path}/live", lambda r: None))
    match, child = live.matches(scope)
    if match is Match.NONE:
        match, child = page.matches(scope)
    assert match is Match.FULL
    assert child["path_params"]["run_id"] == unquote(sent.removeprefix("/runs/")
                                                     .removesuffix("/live"))


def test_a_run_shows_its_work_items_with_each_attempt(tmp_path: Path) -> None:
    """The run page and the API list the run's work items (docs/work.md): who holds one,
    how each attempt ended; a value in an error is text, not markup."""
    ar = agent_run()
    store = open_store(tmp_path / "work.db")
    store.create(waiting(ar, "approve-soon", store.now() + dt.timedelta(hours=1)))
    store.create(ar.AgentRun(run_id="working"))
    for event in ("triage", "start"):
        store.fire(ar.AgentRun, "working", event)
    claim = store.claim_work(ar.AgentRun, owner="worker-1")
    store.complete_work(ar.AgentRun, claim, "call_tool", toolCallId="c-1")
    claim = store.claim_work(ar.AgentRun, owner="worker-2")
    store.fail_work(ar.AgentRun, claim, "<b>503</b> from the search API")
    claim = store.claim_work(ar.AgentRun, owner="worker-3",
                             now=store.now() + dt.timedelta(seconds=5))
    web = client(console_app(store))
    work = web.get("/api/runs/working").json()["work"]
    assert [(w["handler"], w["status"], w["owner"]) for w in work] == [
        ("reason", "ended", None), ("call_tool", "claimed", "worker-3")]
    assert [(a["owner"], a["result"]) for a in work[1]["history"]] == [
        ("worker-2", "failed"), ("worker-3", None)]
    page = web.get("/runs/working").text
    section = page[page.index('id="work"'):page.index("</ul>", page.index('id="work"'))]
    assert "ended by call_tool" in section
    assert "claimed by worker-3 until" in section
    assert "by worker-2: failed <small>(&lt;b&gt;503&lt;/b&gt; from the search API)" in section
    assert "by worker-3: running" in section
    other = web.get("/runs/approve-soon").text  # its items ended when it left their states
    assert "in tool_call: <span class=\"work-status\">ended, its state left by interrupt" \
        in other
