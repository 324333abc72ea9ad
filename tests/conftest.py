"""Fixtures shared by the run store's tests: a PostgreSQL server (tests/pg_server.py), an
empty store on each backend, a generated module whose events conflict."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import psycopg
import pytest
from codegen_support import checked_text, generate
from hypothesis import HealthCheck, settings
from pg_server import URL_VARIABLE, Server, available
from store_support import TICKET, TICKET_MODULE, AsyncAsSync, Backend, import_path

from statechart_runtime.store import BACKENDS

# Input generation and examples run slower when the suite shares a loaded machine (CI, other
# jobs): a property's examples are checked however long they take, never failed for time.
settings.register_profile("suite", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("suite")


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """The URL of a PostgreSQL server: $STATECHART_TEST_POSTGRES_URL (`.ci/run` sets it; a
    developer may point it at a server of their own), else a throwaway server started here.
    With neither, the PostgreSQL tests fail in CI (CI set) and are skipped elsewhere."""
    url = os.environ.get(URL_VARIABLE)
    if url:
        yield url
        return
    reason = available()
    if reason is not None:
        message = (f"no PostgreSQL server: {URL_VARIABLE} is not set and one cannot be "
                   f"started ({reason})")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    server = Server.start(fsync=False)  # fsync off: the tests do not cut the power
    yield server.url
    server.stop()


@pytest.fixture
def own_postgres() -> Iterator[Server]:
    """A throwaway server of this test's own, to restart (never a developer's server)."""
    reason = available()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"cannot start a PostgreSQL server: {reason}")
        pytest.skip(f"cannot start a PostgreSQL server: {reason}")
    server = Server.start(fsync=False)
    yield server
    server.stop()


def _fresh_sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield Backend("sqlite", f"sqlite:///{tmp_path}/runs.db")


def _fresh_postgres(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from _schema_of_its_own(request.getfixturevalue("postgres_server_url"))


# How the backend-neutral suite gets an empty store of each backend module of the registry
# (statechart_runtime.store.BACKENDS). A backend added there without an entry here fails
# every store test until it has one: no backend goes untested.
FRESH_STORES = {"statechart_runtime.store.sqlite": _fresh_sqlite,
                "statechart_runtime.store.postgres": _fresh_postgres}


# The run store's conformance suite (tests/test_store*.py) runs through both APIs: the
# synchronous store, and the asynchronous one (`open_async_store`, its coroutines awaited
# on a loop of the tests': store_support.AsyncAsSync). The other tests that take `backend`
# run through the synchronous API.
CONFORMANCE = "test_store"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    modules = sorted({backend.module for backend in BACKENDS.values()})
    apis = ("sync", "async") if metafunc.module.__name__.startswith(CONFORMANCE) \
        else ("sync",)
    metafunc.parametrize(
        "backend", [(module, api) for module in modules for api in apis], indirect=True,
        ids=[module.rpartition(".")[2] + ("" if api == "sync" else "-async")
             for module in modules for api in apis])


@pytest.fixture
def backend(request: pytest.FixtureRequest, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    """An empty store on each backend of the registry: a new SQLite file, a new schema of its
    own on the PostgreSQL server (so that tests never see each other's runs); through the
    asynchronous API too (the test module's `open_store` opens an asynchronous store)."""
    module, api = request.param
    fresh = FRESH_STORES.get(module)
    if fresh is None:
        pytest.fail(f"the store backend {module} has no entry in tests/conftest.py's "
                    "FRESH_STORES: say how the tests get an empty store of it")
    if api == "async":
        only = request.node.get_closest_marker("sync_only")
        if only is not None:
            pytest.skip(f"the synchronous driver only: {only.args[0]}")
        monkeypatch.setattr(request.module, "open_store", AsyncAsSync)
    stores = fresh(request, tmp_path)
    yield next(stores)
    try:
        if api == "async":
            AsyncAsSync.close_opened()  # before the schema they use is dropped
    finally:
        yield from stores  # the empty store's own teardown


@pytest.fixture
def pg_backend(postgres_server_url: str) -> Iterator[Backend]:
    """An empty store on PostgreSQL only (for what only a server does: lose a connection)."""
    yield from _schema_of_its_own(postgres_server_url)


def _schema_of_its_own(server: str) -> Iterator[Backend]:
    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in server else "?"
    yield Backend("postgres", f"{server}{separator}options=-csearch_path%3D{schema}")
    with psycopg.connect(server, autocommit=True) as db:
        db.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(scope="session")
def ticket_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = checked_text(TICKET)
    assert spec is not None
    path = tmp_path_factory.mktemp("ticket") / f"{TICKET_MODULE}.py"
    path.write_bytes(generate(spec)["generated/ticket.py"])
    return path


@pytest.fixture(scope="session")
def ticket(ticket_path: Path) -> ModuleType:
    return import_path(ticket_path, TICKET_MODULE)
