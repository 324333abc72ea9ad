"""What the console's tests share: runs of agent_run (waiting for approval with deadlines,
or elsewhere) and of a spec with parallel regions, stored in a real store; the console app
with the compiler's diagram; a TestClient from a loopback or a remote address."""

from __future__ import annotations

import datetime as dt
import functools
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

from store_support import import_path

from statechart.cli import runs_serve
from statechart.codegen.in_memory import run_class
from statechart.linter import check_file
from statechart_runtime.console import app, basic_auth

ROOT = Path(__file__).resolve().parents[1]
USERS = {"alice": "wonderland", "bob": "builder", "reader": "only-reads"}


def agent_run() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


@functools.cache
def specs() -> dict[str, Any]:
    found = {}
    for path in (ROOT / "specs" / "agent_run.yaml", ROOT / "tests" / "golden" / "parallel"
                 / "spec.yaml"):
        spec = check_file(str(path)).spec
        assert spec is not None
        found[spec.name] = spec
    return found


@functools.cache
def deploy_class() -> type[Any]:
    return run_class(specs()["deploy"])


def diagram(run_cls: type[Any], active: tuple[str, ...]) -> str | None:
    """The diagram `statechart runs serve` draws."""
    return runs_serve._diagram(specs(), run_cls, active)


def waiting(ar: ModuleType, run_id: str, deadline: dt.datetime, *, approval: bool = True,
            at: dt.datetime | None = None) -> Any:
    """A run waiting for approval (or for input) from `at`, its approval due at
    `deadline`."""
    clock = (lambda: at) if at is not None else None
    run = ar.AgentRun(run_id=run_id, clock=clock)
    run.triage()
    run.start()
    run.send("call_tool", toolCallId="tool-1")
    run.send("interrupt", interruptReason="approval")
    if approval:
        run.await_approval(approvalId=f"approval-{run_id}", approvalDeadline=deadline)
    else:
        run.await_input()
    return run


def seed(store: Any, now: dt.datetime | None = None) -> None:
    """Runs of agent_run: three waiting for approval (due in 2 h, in 10 min, overdue), one
    waiting for input, two running, one cancelled; and one deploy run in both regions."""
    ar = agent_run()
    now = now or dt.datetime.now(dt.UTC)
    hour = dt.timedelta(hours=1)
    store.create(waiting(ar, "approve-later", now + 2 * hour))
    store.create(waiting(ar, "approve-soon", now + dt.timedelta(minutes=10, seconds=30)))
    store.create(waiting(ar, "approve-overdue", now - hour, at=now - 2 * hour))
    store.create(waiting(ar, "needs-input", now, approval=False))
    for name in ("busy-1", "busy-2"):
        run = ar.AgentRun(run_id=name)
        run.triage()
        run.start()
        store.create(run)
    gone = ar.AgentRun(run_id="gone")
    gone.cancel(cancelReason="not needed")
    store.create(gone)
    deploy = deploy_class()(run_id="deploy-1")
    deploy.send("begin")
    deploy.send("compiled")
    store.create(deploy)


def console_app(store: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("auth", basic_auth(USERS, readers=["reader"]))
    return app(store, [agent_run().AgentRun, deploy_class()], diagram=diagram, **kwargs)


def client(asgi: Any, *, host: str = "127.0.0.1", user: str | None = "alice") -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's note on httpx's successor
        from starlette.testclient import TestClient

        test = TestClient(asgi, client=(host, 50000), follow_redirects=False)
    if user is not None:
        test.auth = (user, USERS[user])
    return test
