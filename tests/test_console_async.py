"""The console on the asynchronous store (statechart_runtime.console over open_async_store),
SQLite and PostgreSQL: given a URL it opens the store when the app starts and requests await
it (list, run page, answer, history); given an AsyncRunStore it uses that one and leaves it
open; a URL that cannot be opened fails the app's startup with the store's error."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import httpx
import pytest
from console_support import USERS, agent_run, console_app, seed
from store_support import Backend

from statechart_runtime.store import StoreError, open_async_store, open_store


def lifespan_client(asgi: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's note on httpx's successor
        from starlette.testclient import TestClient

        test = TestClient(asgi, client=("127.0.0.1", 50000), follow_redirects=False)
    test.auth = ("alice", USERS["alice"])
    return test


def test_a_url_opens_the_async_store_for_the_app_and_answers_through_it(
        backend: Backend) -> None:
    with open_store(backend.url) as store:
        seed(store)
    with lifespan_client(console_app(backend.url)) as api:  # the lifespan opens the store
        listed = api.get("/api/runs", params={"spec": "agent_run"}).json()
        assert "approve-soon" in [run["run_id"] for run in listed["runs"]]
        assert api.get("/runs/approve-soon").status_code == 200
        done = api.post("/api/runs/approve-soon/events/approve", json={"approvedBy": "ops"},
                        headers={"Idempotency-Key": "approval-17"})
        assert done.status_code == 200, done.text
        assert done.json()["applied"] and done.json()["states"] == ["resumed"]
        again = api.post("/api/runs/approve-soon/events/approve", json={"approvedBy": "ops"},
                         headers={"Idempotency-Key": "approval-17"})
        assert again.status_code == 200 and not again.json()["applied"]
        steps = api.get("/api/runs/approve-soon/history").json()["steps"]
        assert steps[0]["event"] == "approve" and steps[0]["by"] == "alice"
    with open_store(backend.url) as store:  # what the console wrote is in the store, once
        events = [row.event for row in store.history("approve-soon")]
        assert events.count("approve") == 1


def test_an_async_store_object_is_used_as_given_and_left_open(backend: Backend) -> None:
    with open_store(backend.url) as store:
        seed(store)

    async def scenario() -> None:
        async with open_async_store(backend.url) as store:
            transport = httpx.ASGITransport(app=console_app(store),
                                            client=("127.0.0.1", 50000))
            async with httpx.AsyncClient(transport=transport, base_url="http://console",
                                         auth=("alice", USERS["alice"])) as api:
                answer = await api.post("/api/runs/approve-soon/events/approve",
                                        json={"approvedBy": "ops"})
                assert answer.status_code == 200, answer.text
            head = await store.head(agent_run().AgentRun, "approve-soon")  # still open
            assert head.revision == answer.json()["revision"]

    asyncio.run(scenario())


def test_a_url_that_cannot_be_opened_fails_the_startup(tmp_path: Any) -> None:
    with pytest.raises(StoreError, match="unsupported store URL"), \
            lifespan_client(console_app("nosuch://x")):
        pass
