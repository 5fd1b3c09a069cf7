"""Room lifetime (issue 8 item 4): a room with nobody connected closes after a while (out of
memory, marked closed; its finished matches stay downloadable), and a start restores only live
rooms, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from server_support import create_room, hello, hub_of, in_loop, recv
from starlette.testclient import TestClient

import nertz.server.hub as hub_module
from nertz.server.edge.app import create_app
from nertz.server.store import Store, room_log

ROOT = Path(__file__).resolve().parents[2]


def wait_for(condition: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_an_empty_room_closes_and_its_matches_stay(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub_module, "LATENCY_SECONDS", 0.05)
    replay = json.loads((ROOT / "examples" / "demo.nertz.json").read_text())
    with TestClient(create_app(db_url, room_idle_seconds=0.5)) as client:
        hub = hub_of(client)
        quiet_room = create_room(client)
        busy = create_room(client)
        in_loop(client, hub.store.save_match, "m" * 16, quiet_room.room, replay, 0)
        with client.websocket_connect(f"/ws/{quiet_room.room}") as ws:
            hello(ws, quiet_room.token)
        with client.websocket_connect(f"/ws/{busy.room}") as ws:
            hello(ws, busy.token)
            wait_for(lambda: quiet_room.room not in hub.rooms)
            time.sleep(1.0)  # twice the idle time, with the host's socket open
            assert busy.room in hub.rooms
            ws.send_json({"type": "ping", "id": "p", "sent": 0})
            while recv(ws)["type"] != "pong":
                pass
        shown = client.get(f"/api/rooms/{quiet_room.room}")
        assert shown.status_code == 200
        assert shown.json()["phase"] == "closed" and shown.json()["matches"] == ["m" * 16]
        assert client.get(f"/api/matches/{'m' * 16}/replay").status_code == 200
        joined = client.post(f"/api/rooms/{quiet_room.room}/join", json={"name": "Cy"})
        assert joined.status_code == 410 and "closed" in joined.json()["error"]
        with client.websocket_connect(f"/ws/{quiet_room.room}") as ws:
            assert recv(ws)["code"] == "room_closed"
        assert quiet_room.room not in hub.rooms  # asking did not bring it back
        row = in_loop(client, hub.store.find_room, quiet_room.room)
        assert row.status == "closed"


def test_a_start_restores_only_live_rooms(store_url: str) -> None:
    with TestClient(create_app(store_url)) as client:
        rooms = [create_room(client).room for _ in range(3)]
        stale = rooms[0]

        async def age() -> None:
            # The stale room's last entry is from two hours ago.
            store: Store = hub_of(client).store
            async with store.engine.begin() as conn:
                await conn.execute(room_log.update().where(room_log.c.room_id == stale)
                                   .values(at=time.time() - 7200))

        in_loop(client, age)
    with TestClient(create_app(store_url, room_idle_seconds=3600)) as client:
        hub = hub_of(client)
        # (The PostgreSQL database is shared with other tests: look at this test's rooms.)
        assert set(rooms[1:]) <= set(hub.rooms) and stale not in hub.rooms
        assert in_loop(client, hub.store.find_room, stale).status == "closed"
        assert client.get(f"/api/rooms/{stale}").json()["phase"] == "closed"
        assert client.get(f"/api/rooms/{rooms[1]}").json()["phase"] == "lobby"


def test_closing_finds_rooms_by_their_last_entry(store_url: str) -> None:
    async def main() -> tuple[int, list[str]]:
        store = await Store.open(store_url)
        try:
            now = time.time()
            for rid, at in (("old0000000000001", now - 5000), ("new0000000000001", now)):
                await store.create_room(rid, rid[:6].upper() + rid[-1], "pagat", 2)
                await store.append(rid, 0, "created", {"rules": "pagat", "seats": 2})
                async with store.engine.begin() as conn:
                    await conn.execute(room_log.update().where(room_log.c.room_id == rid)
                                       .values(at=at))
            closed = await store.close_idle_rooms(now - 1000)
            live = [r.id for r in await store.live_rooms()
                    if r.id in ("old0000000000001", "new0000000000001")]
            return closed, live
        finally:
            async with store.engine.begin() as conn:
                for table in ("rooms", "room_log"):
                    key = "id" if table == "rooms" else "room_id"
                    await conn.execute(sa.text(f"DELETE FROM {table} WHERE {key} IN "
                                               "('old0000000000001', 'new0000000000001')"))
            await store.close()

    closed, live = asyncio.run(main())
    assert closed >= 1 and live == ["new0000000000001"]
