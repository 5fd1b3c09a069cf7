"""Fixtures for the server tests: an in-process app on a fresh SQLite file, fast bots, a fresh
PostgreSQL database, the anyio backend."""

from __future__ import annotations

import asyncio
import os
import secrets
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from nertz.bots import SPEEDS, SpeedProfile
from nertz.server.edge.app import create_app
from nertz.server.store import Store

PG_ADMIN = os.environ.get("NERTZ_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
"""A PostgreSQL database the tests may connect to, to create (and drop) their own."""


def pytest_configure(config: pytest.Config) -> None:
    # Starlette's TestClient warns that it will move to httpx2; nothing for these tests to do.
    config.addinivalue_line("filterwarnings", "ignore::DeprecationWarning:starlette.testclient")
    config.addinivalue_line("filterwarnings", "ignore:Using `httpx` with `starlette.testclient`")


@pytest.fixture
def anyio_backend() -> str:
    """The server is asyncio code."""
    return "asyncio"


@pytest.fixture
def fast_bots(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every room speed level plays at a few milliseconds a card (tests, not people)."""
    for name in ("beginner", "casual", "skilled", "expert"):
        monkeypatch.setitem(SPEEDS, name, SpeedProfile(name, 4.0, 2.0))


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """A fresh SQLite database file."""
    return f"sqlite:///{tmp_path / 'nertz.db'}"


@pytest.fixture
def client(db_url: str) -> Iterator[TestClient]:
    """The app in-process, started (lifespan run) on a fresh database."""
    with TestClient(create_app(db_url)) as c:
        yield c


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database ``nertz_test_<random>`` of this test's own, dropped
    afterwards: no test sees the rooms (or restores, or takes over the rooms) of another.

    Skipped when PostgreSQL cannot be reached, unless ``CI`` is set: there it must run.
    """
    import asyncpg  # type: ignore[import-untyped]

    name = f"nertz_test_{secrets.token_hex(6)}"
    admin = PG_ADMIN

    async def run(sql: str) -> None:
        # A busy CI machine can be slow to accept a connection: a hang guard, not a target.
        conn = await asyncpg.connect(admin, timeout=30)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    try:
        asyncio.run(run(f'CREATE DATABASE "{name}"'))
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL is not reachable at {admin}: {exc}")
    base = admin.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store database, once on SQLite and once on PostgreSQL (via :func:`pg_url`)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[Store]:
    """An open :class:`Store` on :func:`store_url`'s database, closed after the test."""
    s = await Store.open(store_url)
    try:
        yield s
    finally:
        await s.close()
