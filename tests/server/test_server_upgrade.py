"""A rolling upgrade: a process meets a room whose log a newer version wrote (an entry kind, or
a field, it does not know). It must neither rebuild a different table nor write to the log: it
refuses the room with a logged error naming what it met, leaves its lease for a newer process
to take over, and answers clients a clear 503 (a socket, the ``error`` ``unavailable``)
instead of hanging or failing blankly. Written by planting such an entry in a real log."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from cluster_support import REDIS, drop_prefix, new_prefix
from server_support import create_room, hub_of, in_loop
from starlette.testclient import TestClient

from nertz.rules import PRESETS
from nertz.server.cluster import Node
from nertz.server.edge.app import create_app
from nertz.server.hub import Hub, OwnedElsewhere
from nertz.server.room.entries import ENTRY_FIELDS, UnknownEntry, check_entry
from nertz.server.room.table import Table
from nertz.server.store import Store

NEWER: dict[str, tuple[str, dict[str, Any]]] = {
    # A kind no version knows yet, and a known kind with a field no version wrote yet.
    "kind": ("seat_note", {"player": "PLAYER", "note": "back soon"}),
    "field": ("ready", {"player": "PLAYER", "ready": True, "until": 5}),
}


def _newer(which: str, player: str) -> tuple[str, dict[str, Any]]:
    kind, data = NEWER[which]
    return kind, {k: player if v == "PLAYER" else v for k, v in data.items()}


def test_every_entry_this_version_writes_is_known_and_others_are_not() -> None:
    check_entry("move", {"p": "a", "s": 0, "h": 0, "m": "S", "t": 5, "id": "1", "v": 3,
                         "a": 1.5, "r": 40.0})
    check_entry("begin", {})
    with pytest.raises(UnknownEntry, match="'seat_note'"):
        check_entry(*_newer("kind", "p1"))
    with pytest.raises(UnknownEntry, match="field\\(s\\) until of log entry kind 'ready'"):
        check_entry(*_newer("field", "p1"))
    # Every kind has its reducer, and every reducer its kind.
    assert {k for k in ENTRY_FIELDS} == {n[4:] for n in dir(Table) if n.startswith("_on_")}


@pytest.mark.parametrize("which", ["kind", "field"])
def test_a_room_a_newer_version_wrote_is_refused_clearly_and_left_unwritten(
        store_url: str, which: str, caplog: pytest.LogCaptureFixture) -> None:
    with TestClient(create_app(store_url)) as client:
        ann = create_room(client)
        hub = hub_of(client)
        room = hub.rooms[ann.room]
        in_loop(client, hub.unload, room)
        kind, data = _newer(which, ann.player)
        store: Store = hub.store
        seq = len(in_loop(client, store.load_log, ann.room))
        in_loop(client, store.append, ann.room, seq, kind, data)
        caplog.set_level(logging.ERROR, "nertz.hub")
        for _ in range(2):  # and again, without reading the log a second time
            r = client.get(f"/api/rooms/{ann.room}")
            assert r.status_code == 503, r.text
            assert "newer version of the server" in r.json()["error"]
            assert r.headers["Retry-After"] == "2"
        named = [rec.getMessage() for rec in caplog.records if rec.name == "nertz.hub"]
        assert len(named) == 1 and f"'{kind}'" in named[0] and ann.room in named[0], named
        if which == "field":
            assert "until" in named[0]
        # A socket is told, and closed: no hang.
        with client.websocket_connect(f"/ws/{ann.room}") as ws:
            m = ws.receive_json()
            assert m["type"] == "error" and m["code"] == "unavailable"
            assert "newer version" in m["message"]
        joined = client.post(f"/api/rooms/{ann.room}/join", json={"name": "Bob"})
        assert joined.status_code == 503
        # Nothing was written after the newer entry: the log is as the newer version left it.
        log = in_loop(client, store.load_log, ann.room)
        assert len(log) == seq + 1 and log[-1].kind == kind


@pytest.mark.anyio
async def test_an_older_process_leaves_the_room_to_a_newer_one(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes of one service (hubs with their own nodes, on one Redis and one
    PostgreSQL): the older one refuses the room and lets its lease run out at once; it does
    not take the room over as an orphan; the newer one does, and then the older one relays to
    it."""
    prefix = new_prefix()
    store = await Store.open(pg_url)
    old_node = await Node.connect(REDIS, prefix, "old")
    new_node = await Node.connect(REDIS, prefix, "new")
    old, new = Hub(store, start_bots=False, node=old_node), Hub(store, start_bots=False,
                                                               node=new_node)
    try:
        room = await new.create(PRESETS["pagat"], 2)
        player, _token = await room.join("Ann", False)
        await new.unload(room)
        kind, data = _newer("kind", player.id)
        await store.append(room.id, room.table.seq, kind, data)
        with pytest.raises(UnknownEntry, match="'seat_note'"):
            await old.get(room.id)
        assert room.id not in old_node.held and room.id not in old.rooms
        assert room.id in await old_node.leases.expired()  # run out, for a newer process
        await old.adopt(room.id)  # an orphan to the older process too: passed by
        assert room.id in await old_node.leases.expired()
        # The newer version knows the kind.
        monkeypatch.setitem(ENTRY_FIELDS, kind, frozenset(data))
        monkeypatch.setattr(Table, f"_on_{kind}", lambda self, data: None, raising=False)
        await new.adopt(room.id)
        assert room.id in new.rooms and room.id in new_node.held
        with pytest.raises(OwnedElsewhere) as elsewhere:
            await old.get(room.id)
        assert elsewhere.value.owner == "new"
    finally:
        await old.close()
        await new.close()
        await old_node.close()
        await new_node.close()
        await store.close()
        await drop_prefix(prefix)
