"""The console in a real browser: Debian's chromium driven by playwright against
`statechart_runtime.console` served by uvicorn over a SQLite store (the pages' scripts run
under their Content-Security-Policy). Approving a waiting run, an answer from a stale page,
the list's filters, the highlighted diagram of a nested and a parallel configuration, the
inbox's deadlines. `UPDATE_SCREENSHOTS=1` writes the screenshots docs/console.md shows.

chromium: `apt-get install chromium` (`playwright install` cannot download a browser on
these machines); CI installs it (.ci/run). Without it these tests are skipped, except in CI.
The browser is launched through playwright's API with `executable_path`, not through the
pytest-playwright plugin, whose session hooks would also join the pytest runs that other
tests start in-process.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import ROOT, USERS, agent_run, console_app, seed

from statechart_runtime.store import open_store

CHROMIUM = "/usr/bin/chromium"
HIGHLIGHT = "#d6336c"  # statechart.render.style.HIGHLIGHT
SHOTS = ROOT / "docs" / "console"
# Playwright's sync API runs an event loop in the test's thread, where these tests seed and
# read their store with the sync API: the store's warning is right in general and moot here
# (the loop drives only the browser; the console's server runs in a thread of its own).
pytestmark = pytest.mark.filterwarnings("ignore::statechart_runtime.store.BlockingInEventLoop")

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        pytest.fail(f"no {CHROMIUM}: apt-get install chromium", pytrace=False)
    pytest.skip(f"no {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")


# The browser tests run one after another on one worker (the xdist group, with `--dist
# loadgroup` in pyproject.toml), and the browser lives for this module only: playwright's
# synchronous API marks its event loop as running in this thread while it is up, which the
# synchronous store rightly warns about in any test that would run beside it.
pytestmark = [pytestmark, pytest.mark.xdist_group("browser")]


# The browser, launched with playwright's own API (pytest-playwright's plugin would also join
# every pytest run that the other tests start in this process).
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = sync_api.sync_playwright().start()
    launched = driver.chromium.launch(
        executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                        "--disable-background-networking",
                                        "--disable-component-update", "--disable-sync"])
    yield launched
    launched.close()
    driver.stop()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  http_credentials={"username": "alice",
                                                    "password": USERS["alice"]})
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


class Served:
    def __init__(self, url: str, store: Any) -> None:
        self.url = url
        self.store = store


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    import uvicorn

    store = open_store(tmp_path / "runs.db")
    seed(store)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(console_app(str(tmp_path / "runs.db")),
                                           host="127.0.0.1", port=port, log_level="warning",
                                           timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the console did not start"
        time.sleep(0.02)
    yield Served(f"http://127.0.0.1:{port}", store)
    server.should_exit = True
    thread.join(10)
    store.close()


def shot(page: Any, name: str, tmp_path: Path) -> None:
    """A screenshot: into docs/console/ with UPDATE_SCREENSHOTS=1, else a temporary one."""
    folder = SHOTS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=False)


def no_script_errors(page: Any) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def test_approve_a_waiting_run(page: Any, served: Served, tmp_path: Path) -> None:
    errors = no_script_errors(page)
    page.goto(f"{served.url}/runs/approve-soon")
    assert page.locator("#status").inner_text() == "waiting"
    assert page.locator("#timers").inner_text().startswith("in 10 min")
    shot(page, "run.png", tmp_path)
    form = page.locator('form[data-event="approve"]')
    form.locator('input[name="approvedBy"]').fill("ops lead")
    form.locator("button").click()
    page.wait_for_url("**/runs/approve-soon?done=approve")
    assert "approve applied: the run is now resumed" in page.locator("#done").inner_text()
    first = page.locator("#timeline tbody tr").first
    assert first.locator("td").nth(2).inner_text() == "approve"
    assert first.locator("td.by").inner_text() == "alice"
    assert "approvedBy=ops lead" in first.inner_text()
    assert errors == []  # htmx ran under the CSP: no violation, no error


def test_an_answer_from_a_stale_page(page: Any, served: Served, tmp_path: Path) -> None:
    page.goto(f"{served.url}/runs/approve-later")
    # Someone else denies it meanwhile.
    served.store.fire(agent_run().AgentRun, "approve-later", "deny", cancelReason="too risky",
                      **{"@by": "bob"})
    form = page.locator('form[data-event="approve"]')
    form.locator('input[name="approvedBy"]').fill("ops lead")
    form.locator("button").click()
    problem = page.locator("#problem")
    problem.wait_for()
    assert problem.inner_text().startswith("the run moved on: it is now cancelled")
    assert page.locator("#status").inner_text() == "cancelled"
    assert page.locator("#timeline td.by").first.inner_text() == "bob"
    shot(page, "stale.png", tmp_path)


def test_the_filters(page: Any, served: Served, tmp_path: Path) -> None:
    page.goto(f"{served.url}/runs")
    assert page.locator("#runs-table tbody tr").count() == 8
    page.select_option('select[name="spec"]', "agent_run")
    page.select_option('select[name="status"]', "waiting")
    page.locator("#filters button").click()
    page.wait_for_url("**status=waiting**")
    assert page.locator("#runs-table tbody tr").count() == 4
    assert page.locator('#counts a[data-status="running"]').inner_text() == "running 2"
    # The view is in the URL: a count is a link to its view.
    page.locator('#counts a[data-status="running"]').click()
    page.wait_for_url("**status=running**")
    rows = page.locator("#runs-table tbody tr")
    assert [rows.nth(i).get_attribute("data-run") for i in range(rows.count())] == [
        "busy-1", "busy-2"]
    assert page.locator('select[name="spec"]').input_value() == "agent_run"
    page.select_option('select[name="status"]', "waiting")
    page.select_option('select[name="order"]', "due")
    page.locator("#filters button").click()
    page.wait_for_url("**order=due**")
    rows = page.locator("#runs-table tbody tr")
    assert [rows.nth(i).get_attribute("data-run") for i in range(rows.count())] == [
        "approve-overdue", "approve-soon", "approve-later", "needs-input"]
    assert "overdue" in rows.first.inner_text()
    shot(page, "runs.png", tmp_path)


HIGHLIGHTED = f"""() => [...document.querySelectorAll('#diagram g.node, #diagram g.cluster')]
    .filter(g => g.querySelector('[stroke="{HIGHLIGHT}"]'))
    .map(g => g.querySelector('title').textContent.replace(/^cluster_/, '')).sort()"""


def test_the_diagram_highlights_a_nested_and_a_parallel_configuration(
        page: Any, served: Served, tmp_path: Path) -> None:
    page.goto(f"{served.url}/runs/approve-soon")
    assert page.evaluate(HIGHLIGHTED) == ["interrupted", "waiting_for_approval"]
    page.goto(f"{served.url}/runs/deploy-1")
    assert page.evaluate(HIGHLIGHTED) == ["approvals", "build", "rollout", "testing",
                                          "waiting"]
    assert page.locator("#states").inner_text() == "testing, waiting"
    page.locator("#diagram").screenshot(path=str(
        (SHOTS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path)
        / "parallel.png"))


def test_the_inbox_deadlines(page: Any, served: Served, tmp_path: Path) -> None:
    page.goto(f"{served.url}/inbox")
    runs = page.locator("article.waiting")
    assert [runs.nth(i).get_attribute("data-run") for i in range(runs.count())] == [
        "approve-overdue", "approve-soon", "approve-later", "needs-input"]
    deadlines = [runs.nth(i).locator(".deadline span").first.inner_text()
                 for i in range(runs.count())]
    assert deadlines[0] == "overdue" and deadlines[1] == "in 10 min"
    assert deadlines[2] in ("in 1 h 59 min", "in 2 h") and deadlines[3].startswith("in 2")
    shot(page, "inbox.png", tmp_path)
    # Provide the input the last one waits for, from the inbox.
    form = runs.nth(3).locator('form[data-event="provide_input"]')
    form.locator('input[name="humanInput"]').fill("use the staging data")
    form.locator("button").click()
    page.wait_for_url("**/inbox?done=provide_input**")
    assert page.locator("article.waiting").count() == 3


def test_the_browser_is_the_chromium_on_the_machine(browser: Any) -> None:
    import subprocess
    # `Chromium 120.0.6099.224 built on Debian ...`: the version playwright reports must be
    # the one of the binary the tests name, not a browser playwright downloaded.
    printed = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True,
                             timeout=60).stdout.split()
    assert browser.version in printed, (browser.version, printed)


def test_the_run_page_hears_of_a_step_at_once(page: Any, served: Served) -> None:
    # The page's poll comes every 5 s; the step's event (/api/changes) brings the note in
    # well under that.
    errors = no_script_errors(page)
    page.goto(f"{served.url}/runs/approve-later")
    page.wait_for_timeout(500)  # the stream is open
    fired = time.monotonic()
    served.store.fire(agent_run().AgentRun, "approve-later", "deny", cancelReason="too risky")
    page.locator("#moved").wait_for(timeout=4_000)
    assert time.monotonic() - fired < 4
    assert "cancelled" in page.locator("#live").inner_text()
    assert errors == []


def _events(response: Any, count: int) -> list[dict[str, str]]:
    """The first `count` server-sent events of a stream, each as its fields."""
    events: list[dict[str, str]] = []
    fields: dict[str, str] = {}
    for line in response.iter_lines():
        if line.startswith(":"):
            continue
        if line:
            name, _, value = line.partition(": ")
            fields[name] = value
        elif fields:
            events.append(fields)
            fields = {}
            if len(events) == count:
                break
    return events


def test_the_changes_stream_goes_on_from_the_last_event(served: Served) -> None:
    import json

    import httpx

    auth = ("alice", USERS["alice"])
    url = f"{served.url}/api/changes"
    only = {"spec": "agent_run", "run_id": "approve-later"}
    with httpx.stream("GET", url, params=only, auth=auth, timeout=20) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        served.store.fire(agent_run().AgentRun, "approve-later", "deny",
                          cancelReason="too risky")
        [event] = _events(response, 1)
    step = json.loads(event["data"])
    assert (event["event"], event["id"]) == ("step", step["position"])
    assert (step["run_id"], step["event"], step["target"], step["values"]) == (
        "approve-later", "deny", "cancelled", {"cancelReason": "too risky"})
    # Reconnecting with the last event's id: the steps after it, none twice.
    served.store.fire(agent_run().AgentRun, "approve-soon", "approve", approvedBy="x")
    with httpx.stream("GET", url, params={"spec": "agent_run"}, auth=auth, timeout=20,
                      headers={"Last-Event-ID": event["id"]}) as response:
        [again] = _events(response, 1)
    assert json.loads(again["data"])["run_id"] == "approve-soon"
    assert httpx.get(url, params={"spec": "nope"}, auth=auth).status_code == 422
    bad = httpx.get(url, params={"spec": "agent_run", "after": "x"}, auth=auth)
    assert bad.status_code == 422 and "not a watch position" in bad.json()["message"]
    assert httpx.get(url, params=only).status_code == 401


def test_a_run_id_with_a_line_break_is_one_event_of_the_stream(served: Served) -> None:
    # A run id may hold any character; the event's id line carries it (in the position):
    # a line break there ended the id and put the rest of the run id into the event as
    # fields of its own (here a forged data line). Its Last-Event-ID goes on after it.
    import json

    import httpx

    auth = ("alice", USERS["alice"])
    url = f"{served.url}/api/changes"
    odd = 'odd\ndata: {"run_id": "forged"}\r'
    served.store.create(agent_run().AgentRun(run_id=odd))
    lines: list[str] = []
    with httpx.stream("GET", url, params={"spec": "agent_run"}, auth=auth,
                      timeout=20) as response:
        served.store.fire(agent_run().AgentRun, odd, "triage")
        for line in response.iter_lines():
            if line.startswith(":"):
                continue
            if not line and lines:
                break
            lines.append(line)
    assert [line.partition(": ")[0] for line in lines] == ["id", "event", "data"]
    event = {name: value for name, _, value in (line.partition(": ") for line in lines)}
    assert json.loads(event["data"])["run_id"] == odd
    served.store.fire(agent_run().AgentRun, odd, "start")
    with httpx.stream("GET", url, params={"spec": "agent_run"}, auth=auth, timeout=20,
                      headers={"Last-Event-ID": event["id"]}) as response:
        [again] = _events(response, 1)
    assert (json.loads(again["data"])["run_id"], json.loads(again["data"])["index"]) == (
        odd, 1)
