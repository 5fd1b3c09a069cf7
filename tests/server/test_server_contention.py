"""The store under contention (issue 8 item 12): a crowd of writers on SQLite waits its turn
instead of failing with "database is locked", and a store truly overloaded (no connection
free in time) is answered with 503 and ``Retry-After``, never 500, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from server_support import create_room, hub_of, in_loop
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.testclient import TestClient

import nertz.server.store as store_module
from nertz.rules import Rules
from nertz.server.edge.app import create_app
from nertz.server.hub import Hub
from nertz.server.store import Store

ROOMS = 120
MOVES_PER_ROOM = 8


async def crowd(url: str) -> list[str]:
    """ROOMS rooms created at once, each logging moves while the others are created and while
    the event loop is as busy as a loaded server's (each turn of the loop blocks a moment, so
    every transaction stays open across several turns); returns every failure."""
    store = await Store.open(url)
    hub = Hub(store, start_bots=False)
    failures: list[str] = []
    stop = asyncio.Event()

    async def busy_loop() -> None:
        while not stop.is_set():
            time.sleep(0.002)  # the tables' own work, holding the loop
            await asyncio.sleep(0)

    async def room(i: int) -> None:
        try:
            live = await hub.create(Rules.from_spec("pagat"), 4)
            for n in range(MOVES_PER_ROOM):
                await store.append(live.id, 1000 + n, "note", {"n": n, "room": i})
            await store.set_status(live.id, "closed")
        except Exception as exc:
            failures.append(f"{type(exc).__name__}: {exc}"[:200])

    hog = asyncio.create_task(busy_loop())
    try:
        await asyncio.gather(*(room(i) for i in range(ROOMS)))
    finally:
        stop.set()
        await hog
        await hub.close()
        await store.close()
    return failures


def test_a_crowd_of_writers_on_sqlite_waits_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite's own wait for its write lock made short: this process's writers must never need
    # it (they queue before asking SQLite), so a short one changes nothing unless they collide.
    monkeypatch.setattr(store_module, "SQLITE_BUSY_SECONDS", 0.05)
    failures = asyncio.run(crowd(f"sqlite:///{tmp_path / 'crowd.db'}"))
    assert failures == []


def test_an_overloaded_store_answers_503_with_retry_after(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One connection in the pool, and a short wait for it: holding it overloads the store.
    monkeypatch.setattr(store_module, "POOL_SIZE", 1)
    monkeypatch.setattr(store_module, "POOL_OVERFLOW", 0)
    monkeypatch.setattr(store_module, "POOL_TIMEOUT", 0.2)
    with TestClient(create_app(store_url), raise_server_exceptions=False) as client:
        ann = create_room(client)
        store = hub_of(client).store

        async def hold() -> AsyncConnection:
            return await store.engine.connect()

        held = in_loop(client, hold)
        try:
            made = client.post("/api/rooms", json={"rules": "pagat", "seats": 2})
            shown = client.get("/api/rooms/NOSUCH")
            # A route that queries the engine directly, not through the store.
            board = client.get("/api/leaderboard/pounce")
            with client.websocket_connect("/ws/nosuchroom") as ws:
                said = ws.receive_json()
        finally:
            in_loop(client, held.close)
        for answer in (made, shown, board):
            assert answer.status_code == 503, answer.text
            assert int(answer.headers["retry-after"]) >= 1
            assert "busy" in answer.json()["error"]
        assert said["code"] == "unavailable" and "busy" in said["message"]
        # Once a connection is free again, all is well.
        assert client.post("/api/rooms", json={"rules": "pagat", "seats": 2}).status_code == 201
        assert client.get(f"/api/rooms/{ann.room}").status_code == 200
