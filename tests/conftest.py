"""Fixtures shared by the run store's tests: a PostgreSQL server (tests/pg_server.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from pg_server import URL_VARIABLE, Server, available


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
