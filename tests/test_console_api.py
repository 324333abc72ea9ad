"""The console's JSON API (statechart_runtime.console) over a real store, SQLite and
PostgreSQL: lists with filters, counts and cursors; a run with its revision as ETag and the
events it takes now; answers with the sender from authentication, idempotency keys, If-Match
(409 with the run as it is now), refusals (409 with the runtime's reason), field errors
(422), 401/403; the OpenAPI document names every route."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from console_support import agent_run, client, console_app, seed
from store_support import Backend

from statechart_runtime.console import trusted_header
from statechart_runtime.store import open_store


@pytest.fixture
def store(backend: Backend) -> Iterator[Any]:
    with open_store(backend.url) as opened:
        seed(opened)
        yield opened


def test_lists_filter_count_and_page(store: Any) -> None:
    api = client(console_app(store))
    listed = api.get("/api/runs", params={"spec": "agent_run"}).json()
    assert [r["run_id"] for r in listed["runs"]] == [
        "approve-later", "approve-overdue", "approve-soon", "busy-1", "busy-2", "gone",
        "needs-input"]
    assert listed["counts"] == {"cancelled": 1, "running": 2, "waiting": 4}
    waiting = api.get("/api/runs", params={"spec": "agent_run", "status": "waiting",
                                           "order": "due"}).json()
    assert [r["run_id"] for r in waiting["runs"]] == [
        "approve-overdue", "approve-soon", "approve-later", "needs-input"]
    assert waiting["runs"][0]["next_due_in"] == "overdue"
    assert waiting["runs"][1]["next_due_in"] == "in 10 min"
    assert waiting["runs"][3]["states"] == ["waiting_for_input"]
    # Counts are of the other conditions: every status stays a link.
    assert waiting["counts"] == listed["counts"]
    overdue = api.get("/api/runs", params={"due": "overdue"}).json()
    assert [r["run_id"] for r in overdue["runs"]] == ["approve-overdue"]
    tagged = api.get("/api/runs", params={"spec": "agent_run", "tag": "paused"}).json()
    assert len(tagged["runs"]) == 4
    inbox = api.get("/api/runs", params={"waiting": "1"}).json()
    assert len(inbox["runs"]) == 4
    nested = api.get("/api/runs", params={"state": "tool_call"}).json()
    assert nested["runs"] == []
    build = api.get("/api/runs", params={"spec": "deploy", "state": "testing"}).json()
    assert [r["states"] for r in build["runs"]] == [["testing", "waiting"]]
    # Pages by cursor: every run once.
    seen: list[str] = []
    params: dict[str, str] = {"limit": "3"}
    while True:
        page = api.get("/api/runs", params=params).json()
        seen += [r["run_id"] for r in page["runs"]]
        if page["next"] is None:
            break
        params["after"] = page["next"]
    assert sorted(seen) == seen and len(seen) == 8


@pytest.mark.parametrize(("params", "field"), [
    ({"spec": "agent_run", "state": "nowhere"}, "state"),
    ({"spec": "agent_run", "status": "sleeping"}, "status"),
    ({"tag": "nope"}, "tag"), ({"due": "tomorrow"}, "due"), ({"after": "garbage"}, "after"),
    ({"limit": "0"}, "limit")])
def test_a_bad_condition_is_a_422_naming_it(store: Any, params: dict[str, str],
                                            field: str) -> None:
    answer = client(console_app(store)).get("/api/runs", params=params)
    assert answer.status_code == 422
    assert answer.json()["field"] == field


def test_hostile_conditions_reach_sql_as_parameters(store: Any) -> None:
    api = client(console_app(store))
    for text in ("x' OR '1'='1", "'; DROP TABLE runs; --", "\"<script>"):
        assert api.get("/api/runs", params={"spec": text}).json()["runs"] == []
        assert api.get("/api/runs", params={"status": text}).status_code == 422  # checked
    assert len(api.get("/api/runs").json()["runs"]) == 8  # nothing was dropped


def test_a_run_with_its_revision_and_the_events_it_takes(store: Any) -> None:
    answer = client(console_app(store)).get("/api/runs/approve-soon")
    assert answer.status_code == 200
    run = answer.json()
    assert answer.headers["etag"] == f'"{run["revision"]}"'
    assert run["configuration"] == ["interrupted", "waiting_for_approval"]
    assert run["record"]["approvalId"] == "approval-approve-soon"
    assert [t["event"] for t in run["timers"]] == [
        "after.approvalDeadline.waiting_for_approval"]
    events = {e["event"]: e["fields"] for e in run["accepted_events"]}
    assert set(events) == {"approve", "deny", "cancel", "fail"}
    assert events["approve"] == [{"name": "approvedBy", "type": "string", "required": True,
                                  "enum": None}]
    busy = client(console_app(store)).get("/api/runs/busy-1").json()
    interrupt = next(e for e in busy["accepted_events"] if e["event"] == "interrupt")
    assert interrupt["fields"][0]["enum"] == ["approval", "human_review", "external_input",
                                              "risky_tool"]
    assert client(console_app(store)).get("/api/runs/nope").status_code == 404


def test_an_answer_is_stored_with_who_sent_it_once(store: Any) -> None:
    api = client(console_app(store))
    headers = {"Idempotency-Key": "approval-17", "If-Match": '"1"'}
    body = {"approvedBy": "ops", "@by": "mallory"}  # a forged sender is dropped
    done = api.post("/api/runs/approve-soon/events/approve", json=body, headers=headers)
    assert done.status_code == 200, done.text
    assert done.json()["applied"] and done.json()["states"] == ["resumed"]
    again = api.post("/api/runs/approve-soon/events/approve", json=body, headers=headers)
    assert again.status_code == 200 and not again.json()["applied"]
    steps = api.get("/api/runs/approve-soon/history").json()["steps"]
    assert steps[0]["event"] == "approve" and steps[0]["by"] == "alice"
    assert steps[0]["values"] == {"approvedBy": "ops"}
    assert [s["index"] for s in steps] == list(range(len(steps)))[::-1]
    # Back where it was interrupted (deep history): the history says where it went.
    api.post("/api/runs/approve-soon/events/proceed", json={})
    latest = api.get("/api/runs/approve-soon/history").json()["steps"][0]
    assert latest["event"] == "proceed" and latest["after"] == ["tool_call"]
    assert latest["by"] == "alice"


def test_an_answer_to_a_run_that_moved_on_is_a_409_with_the_run_now(store: Any) -> None:
    api = client(console_app(store))
    seen = api.get("/api/runs/approve-later").headers["etag"]
    store.fire(agent_run().AgentRun, "approve-later", "deny", cancelReason="too risky")
    late = api.post("/api/runs/approve-later/events/approve", json={"approvedBy": "x"},
                    headers={"If-Match": seen})
    assert late.status_code == 409
    problem = late.json()
    assert problem["error"] == "moved_on"
    assert problem["message"].startswith("the run moved on: it is now cancelled")
    assert problem["run"]["status"] == "cancelled"
    assert late.headers["etag"] == '"2"'


@pytest.mark.parametrize(("event", "body", "status", "error"), [
    ("approve", {}, 422, "invalid"),  # approvedBy is required
    ("approve", {"approvedBy": 7}, 422, "invalid"),
    ("approve", {"nonsense": "x"}, 422, "invalid"),
    ("proceed", {}, 409, "not_accepted"),  # not from waiting_for_approval
    ("after.approvalDeadline.waiting_for_approval", {}, 404, "no_event"),
    ("no_such_event", {}, 404, "no_event")])
def test_refusals(store: Any, event: str, body: dict[str, Any], status: int,
                  error: str) -> None:
    answer = client(console_app(store)).post(f"/api/runs/approve-soon/events/{event}",
                                             json=body)
    assert (answer.status_code, answer.json()["error"]) == (status, error), answer.text
    if error == "not_accepted":
        assert "no active state handles it" in answer.json()["message"]


def test_who_may_answer(store: Any) -> None:
    asgi = console_app(store)
    body = {"approvedBy": "x"}
    nobody = client(asgi, user=None).post("/api/runs/approve-soon/events/approve", json=body)
    assert nobody.status_code == 401 and nobody.headers["www-authenticate"].startswith("Basic")
    wrong = client(asgi, user=None)
    wrong.auth = ("alice", "not her password")
    assert wrong.get("/api/runs").status_code == 401
    reader = client(asgi, user="reader")
    assert reader.get("/api/runs").status_code == 200
    assert reader.post("/api/runs/approve-soon/events/approve", json=body).status_code == 403
    frozen = client(console_app(store, read_only=True))
    assert frozen.post("/api/runs/approve-soon/events/approve", json=body).status_code == 403
    form = client(asgi).post("/api/runs/approve-soon/events/approve",
                             content="approvedBy=x",
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415


def test_without_auth_only_loopback_clients_and_a_trusted_header_only_from_the_proxy(
        store: Any) -> None:
    open_console = console_app(store, auth=None)
    assert client(open_console, user=None).get("/api/runs").status_code == 200
    assert client(open_console, host="10.1.2.3", user=None).get("/api/runs").status_code == 401
    proxied = console_app(store, auth=trusted_header("X-Forwarded-User",
                                                     proxies=["10.0.0.1"]))
    via_proxy = client(proxied, host="10.0.0.1", user=None)
    done = via_proxy.post("/api/runs/approve-soon/events/approve", json={"approvedBy": "x"},
                          headers={"X-Forwarded-User": "dana@example.com"})
    assert done.status_code == 200
    steps = via_proxy.get("/api/runs/approve-soon/history",
                          headers={"X-Forwarded-User": "dana@example.com"}).json()["steps"]
    assert steps[0]["by"] == "dana@example.com"
    past_proxy = client(proxied, host="10.9.9.9", user=None)
    assert past_proxy.get("/api/runs", headers={"X-Forwarded-User": "eve"}).status_code == 401


def test_the_openapi_document_names_every_route(store: Any) -> None:
    api = client(console_app(store))
    document = api.get("/api/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    assert set(document["paths"]) == {"/api/runs", "/api/changes", "/api/runs/{run_id}",
                                      "/api/runs/{run_id}/history",
                                      "/api/runs/{run_id}/events/{event}"}


def test_the_console_mounts_under_a_path(store: Any) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    outer = Starlette(routes=[Mount("/console", console_app(store))])
    api = client(outer)
    assert api.get("/console/api/runs").json()["counts"]["waiting"] == 4
    page = api.get("/console/runs/approve-soon")
    assert page.status_code == 200
    assert 'href="/console/static/console.css"' in page.text
    assert 'action="/console/runs/approve-soon/events/approve"' in page.text


def test_security_headers(store: Any) -> None:
    page = client(console_app(store)).get("/runs")
    csp = page.headers["content-security-policy"]
    nonce = csp.split("'nonce-")[1].split("'")[0]
    assert f'nonce="{nonce}"' in page.text
    assert "unsafe-inline" not in csp and "default-src 'none'" in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert client(console_app(store)).get("/runs").headers["content-security-policy"] != csp


def test_history_pages_of_a_long_run(store: Any) -> None:
    ar = agent_run()
    start = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    run = ar.AgentRun(run_id="long", clock=lambda: start)
    run.triage()
    run.start()
    for i in range(60):
        run.send("call_tool", toolCallId=f"t-{i}")
        run.send("tool_result")
    store.create(run)
    api = client(console_app(store))
    first = api.get("/api/runs/long/history").json()
    assert (first["total"], first["pages"]) == (122, 3)
    assert [s["index"] for s in first["steps"]][:2] == [121, 120]
    assert first["steps"][0]["after"] == ["reasoning"]
    last = api.get("/api/runs/long/history", params={"page": "2"}).json()
    assert [s["index"] for s in last["steps"]] == [21 - i for i in range(22)]
    assert api.get("/api/runs/long/history", params={"page": "3"}).status_code == 422


def test_an_answer_that_is_not_json_is_refused_even_empty(store: Any) -> None:
    """A form or text/plain POST needs no CORS preflight, so another site's page could send
    one with the user's credentials: the API takes JSON only, an empty body too."""
    api = client(console_app(store))
    for headers in ({"Content-Type": "text/plain"}, {}):
        sent = api.post("/api/runs/approve-soon/events/cancel", content=b"", headers=headers)
        assert (sent.status_code, sent.json()["error"]) == (415, "unsupported"), sent.text
    assert api.get("/api/runs/approve-soon").json()["status"] == "waiting"


@pytest.mark.parametrize("page", ["²", "-1", "x"])
def test_a_page_number_that_is_no_whole_number_is_a_422(store: Any, page: str) -> None:
    api = client(console_app(store))
    got = api.get("/api/runs/approve-soon/history", params={"page": page})
    assert (got.status_code, got.json()["error"]) == (422, "invalid")
    assert client(console_app(store)).get("/runs/approve-soon",
                                          params={"page": page}).status_code == 200


def test_a_failing_store_is_a_problem_not_a_bare_500(tmp_path: Any) -> None:
    """A store error that no call answers itself (here: every read of a store that was
    closed under the console) is the API's JSON problem with the store's message, and an
    error page; the console keeps answering."""
    from console_support import client as web_client

    opened = open_store(tmp_path / "runs.db")
    seed(opened)
    web = web_client(console_app(opened))
    opened.close()
    for path in ("/api/runs", "/api/runs/approve-soon", "/api/runs/approve-soon/history"):
        failed = web.get(path)
        assert failed.status_code == 500, path
        assert failed.json()["error"] == "store_error"
        assert "runs.db" in failed.json()["message"]
    page = web.get("/runs/approve-soon")
    assert page.status_code == 500 and "text/html" in page.headers["content-type"]
    assert "runs.db" in page.text
    answer = web.post("/api/runs/approve-soon/events/approve", json={"approvedBy": "x"})
    assert answer.json()["error"] in ("refused", "store_error"), answer.text


def test_an_answer_the_store_cannot_write_is_the_store_error_not_a_refusal(
        tmp_path: Any) -> None:
    """A store that fails on the answer's write (here: opened read-only under a console that
    was not told) is the store's error (500 `store_error`, saying so), not a 409 `refused`
    as if the answer were wrong; a refusal of the answer stays a 409."""
    from console_support import client as web_client

    seed(open_store(tmp_path / "runs.db"))
    web = web_client(console_app(open_store(tmp_path / "runs.db", read_only=True)))
    failed = web.post("/api/runs/approve-soon/events/approve", json={"approvedBy": "x"})
    assert (failed.status_code, failed.json()["error"]) == (500, "store_error"), failed.text
    assert "read-only" in failed.json()["message"]
    store = open_store(tmp_path / "runs.db")
    web = web_client(console_app(store))
    body = {"approvedBy": "x"}
    done = web.post("/api/runs/approve-soon/events/approve", json=body,
                    headers={"Idempotency-Key": "k"})
    assert done.status_code == 200
    other = web.post("/api/runs/approve-soon/events/deny", json={"cancelReason": "no"},
                     headers={"Idempotency-Key": "k"})  # the key of another answer
    assert (other.status_code, other.json()["error"]) == (409, "refused"), other.text
