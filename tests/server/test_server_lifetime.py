"""Room lifetime (issue 8 items 4 and 12, issue 10 item 7): a room with nobody connected closes
after a while (out of memory, marked closed; its finished matches stay downloadable), a start
restores only live rooms, on SQLite and PostgreSQL, and a thousand rooms that came and went leave
no memory behind."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import socket
import struct
import sys
import time
import weakref
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from server_support import create_room, hello, hub_of, in_loop, recv, wait_for
from starlette.testclient import TestClient

import nertz.server.hub as hub_module
from nertz.rules import Rules
from nertz.server import protocol
from nertz.server.edge.app import create_app
from nertz.server.hub import Hub
from nertz.server.serve import tune_gc
from nertz.server.store import Store, room_log

ROOT = Path(__file__).resolve().parents[2]


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


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB (printed only: too noisy to assert on)."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class QuietSink:
    """A connected person's socket that only counts what it is sent."""

    def __init__(self) -> None:
        self.sent = 0

    def send(self, data: bytes) -> None:
        self.sent += 1

    def close(self) -> None:
        pass


CHURN_RULES: dict[str, Any] = {"preset": "pagat", "rounds": 1, "nertz_pile_size": 6}
ROOM_KINDS = ("Table", "LiveRoom", "Fanout", "Round", "Lobby", "Clock", "RoomSeat")


async def play_briefly_and_leave(hub: Hub, i: int) -> None:
    """A room: two people, two bots, a round started and a few moves made; then everyone
    leaves (the room is abandoned: the hub closes it once it has been empty long enough)."""
    room = await hub.create(Rules.from_spec(CHURN_RULES), 4)
    host, _ = await room.join(f"Host {i}", False)
    guest, _ = await room.join(f"Guest {i}", False)
    sinks = (QuietSink(), QuietSink())
    room.attach(sinks[0], host, None)
    room.attach(sinks[1], guest, None)
    for _ in range(2):
        room.handle(host, protocol.AddBot(level="expert"), sinks[0])
    room.handle(host, protocol.Start(countdown_ms=0), sinks[0])
    for k in range(3):
        await asyncio.sleep(0.03)  # the bots play meanwhile
        room.handle(host, protocol.Play(id=f"h{k}", move="T"), sinks[0])
        room.handle(guest, protocol.Play(id=f"g{k}", move="T"), sinks[1])
    for sink in sinks:
        room.detach(sink)


async def churn(hub: Hub, rooms: int, at_once: int = 100) -> None:
    """``rooms`` rooms played briefly and abandoned, ``at_once`` at a time; returns once the
    hub has closed every one."""
    for first in range(0, rooms, at_once):
        await asyncio.gather(*(play_briefly_and_leave(hub, first + j)
                               for j in range(min(at_once, rooms - first))))
    # Generous: closing is batched but still waits its turn at the writer, and CI is busy.
    deadline = time.monotonic() + 300
    while hub.rooms:
        assert time.monotonic() < deadline, f"{len(hub.rooms)} rooms never closed"
        await asyncio.sleep(0.05)
    # The hub's timer still holds the last room it closed until its next turn.
    await asyncio.sleep(3 * hub_module.LATENCY_SECONDS)


def room_objects() -> Counter[str]:
    """The rooms' objects the collector can see (not counting the frozen ones)."""
    return Counter(name for o in gc.get_objects() if (name := type(o).__name__) in ROOM_KINDS)


def test_a_thousand_abandoned_rooms_leave_no_memory_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast_bots: None
) -> None:
    """Rooms created, played briefly and abandoned are closed by the hub; afterwards memory is
    where it was after a warm-up, with the collector tuned as ``nertz serve`` tunes it (old
    objects are almost never collected, so a closed room must not be left in cycles)."""
    monkeypatch.setattr(hub_module, "LATENCY_SECONDS", 0.05)
    thresholds = gc.get_threshold()

    async def main() -> tuple[dict[str, float], Counter[str], int]:
        store = await Store.open(f"sqlite:///{tmp_path / 'churn.db'}")
        hub = Hub(store, idle_seconds=0.2)
        try:
            await churn(hub, 200)  # warm-up: caches filled, the allocator at its working size
            gc.collect()
            gc.freeze()  # as the app does once started
            before = {"blocks": sys.getallocatedblocks(), "rss_mb": rss_mb(os.getpid())}
            await churn(hub, 1000)
            # No collection here: whatever a room left in cycles would still be counted.
            after = {"blocks": sys.getallocatedblocks(), "rss_mb": rss_mb(os.getpid())}
            print(f"memory after the warm-up: {before}; after 1000 rooms: {after}")
            return {"before": before["blocks"], "after": after["blocks"]}, room_objects(), \
                len(hub.rooms)
        finally:
            await hub.close()
            await store.close()

    tune_gc()
    try:
        blocks, left, live = asyncio.run(main())
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    assert live == 0
    assert left == Counter(), f"closed rooms still in memory: {dict(left)}"
    assert blocks["after"] <= blocks["before"] * 1.10, blocks


class Node:
    """A piece of cyclic garbage."""

    me: Node | None = None


def test_the_hub_collects_old_garbage_now_and_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The collector tuned as ``nertz serve`` tunes it hardly ever collects old objects, and the
    server's libraries leave cycles behind (closed connections, exceptions): the hub collects
    them every ``COLLECT_SECONDS``. (The automatic collector is off here: only the hub's
    collection can free the cycle.)"""
    monkeypatch.setattr(hub_module, "LATENCY_SECONDS", 0.02)
    monkeypatch.setattr(hub_module, "COLLECT_SECONDS", 0.1)

    async def main() -> bool:
        store = await Store.open(f"sqlite:///{tmp_path / 'gc.db'}")
        hub = Hub(store, start_bots=False)
        try:
            await hub.create(Rules.from_spec("pagat"), 2)  # the hub's timer runs from here
            node = Node()
            node.me = node
            ref = weakref.ref(node)
            del node
            deadline = time.monotonic() + 60
            while ref() is not None and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            return ref() is None
        finally:
            await hub.close()
            await store.close()

    gc.disable()
    try:
        assert asyncio.run(main())
    finally:
        gc.enable()


def test_the_hub_gives_pages_back_only_once_rooms_have_left_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The allocator's trim walks the whole heap (a pause for every room): while the same rooms
    play on it has nothing to give back; once a room has left memory it has."""
    monkeypatch.setattr(hub_module, "LATENCY_SECONDS", 0.02)
    monkeypatch.setattr(hub_module, "COLLECT_SECONDS", 0.05)
    trims: list[bool] = []
    monkeypatch.setattr(hub_module, "give_back_memory",
                        lambda trim=True, deep=True: trims.append(trim))

    async def until(count: int) -> None:
        deadline = time.monotonic() + 60
        while len(trims) < count:
            assert time.monotonic() < deadline, "the hub stopped collecting"
            await asyncio.sleep(0.01)

    async def main() -> tuple[list[bool], list[bool]]:
        store = await Store.open(f"sqlite:///{tmp_path / 'trim.db'}")
        hub = Hub(store, start_bots=False)
        try:
            room = await hub.create(Rules.from_spec("pagat"), 2)
            await hub.create(Rules.from_spec("pagat"), 2)
            await until(3)
            steady = list(trims)
            await hub.unload(room)
            await until(len(trims) + 2)  # one collection may have begun before the unload
            return steady, trims[len(steady):]
        finally:
            await hub.close()
            await store.close()

    steady, after = asyncio.run(main())
    assert not any(steady[1:]), steady  # the first may count the rooms made meanwhile
    assert any(after), after


async def until_true(seen: list[Any], done: Callable[[], bool]) -> None:
    """Wait until ``done()`` (at most 60 s; the collections ``seen`` so far in the failure)."""
    deadline = time.monotonic() + 60
    while not done():
        assert time.monotonic() < deadline, f"timed out: {seen}"
        await asyncio.sleep(0.01)


def test_what_outlives_a_collection_is_left_out_of_the_next_until_a_deep_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The minute's collection walks only what came since the last one: a cycle that was
    alive then (a socket open for a while, then closed) is freed by the next deep collection,
    which walks everything."""
    monkeypatch.setattr(hub_module, "LATENCY_SECONDS", 0.02)
    monkeypatch.setattr(hub_module, "COLLECT_SECONDS", 0.05)
    monkeypatch.setattr(hub_module, "DEEP_COLLECT_SECONDS", 0.5)
    monkeypatch.setattr(hub_module, "DEEP_COLLECT_GROWTH", 0.0)  # whatever the heap did
    real = hub_module.give_back_memory
    seen: list[tuple[bool, bool]] = []  # each collection: deep, and the cycle still alive after
    ref: list[weakref.ref[Node]] = []

    def spy(trim: bool = True, deep: bool = True) -> None:
        real(trim=False, deep=deep)
        seen.append((deep, bool(ref) and ref[0]() is not None))

    monkeypatch.setattr(hub_module, "give_back_memory", spy)

    async def main() -> None:
        store = await Store.open(f"sqlite:///{tmp_path / 'freeze.db'}")
        hub = Hub(store, start_bots=False)
        try:
            await hub.create(Rules.from_spec("pagat"), 2)  # the hub's timer runs from here
            node = Node()
            node.me = node
            ref.append(weakref.ref(node))
            # Alive through a collection that is not deep: frozen, then garbage.
            count = len(seen)
            await until_true(seen, lambda: any(not deep for deep, _ in seen[count:]))
            del node
            freed_from = len(seen)
            await until_true(seen, lambda: ref[0]() is None)
            after = seen[freed_from:]
            freed = next(i for i, (_, alive) in enumerate(after) if not alive)
            # Only a deep collection frees it: every one before it left it be.
            assert after[freed][0], after
            assert all(not deep for deep, _ in after[:freed]), after
        finally:
            await hub.close()
            await store.close()

    gc.disable()
    try:
        asyncio.run(main())
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_deep_collection_waits_until_the_frozen_heap_has_grown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deep collection walks every object (a pause for every room): while the server stays
    the same size there is nothing for it to find, so it is skipped however long that lasts;
    once the objects frozen since the last one have grown by a tenth, it comes."""
    monkeypatch.setattr(hub_module, "LATENCY_SECONDS", 0.02)
    monkeypatch.setattr(hub_module, "COLLECT_SECONDS", 0.05)
    monkeypatch.setattr(hub_module, "DEEP_COLLECT_SECONDS", 0.2)
    real = hub_module.give_back_memory
    seen: list[tuple[float, bool]] = []  # each collection: when, and whether it was deep

    def spy(trim: bool = True, deep: bool = True) -> None:
        real(trim=False, deep=deep)
        seen.append((time.monotonic(), deep))

    monkeypatch.setattr(hub_module, "give_back_memory", spy)

    async def main() -> tuple[list[bool], list[bool]]:
        store = await Store.open(f"sqlite:///{tmp_path / 'deep.db'}")
        hub = Hub(store, start_bots=False)
        try:
            await hub.create(Rules.from_spec("pagat"), 2)  # the hub's timer runs from here
            # Six collections at least, over three times the deep collection's interval, at
            # the same size (a collection walks the test's whole process: slow on a busy
            # machine).
            await until_true(seen, lambda: len(seen) >= 6 and seen[-1][0] - seen[0][0] > 0.6)
            steady = [deep for _, deep in seen]
            grown = [[] for _ in range(gc.get_freeze_count() // 4 + 1000)]
            count = len(seen)
            await until_true(seen, lambda: any(deep for _, deep in seen[count:]))
            del grown
            return steady, [deep for _, deep in seen[count:]]
        finally:
            await hub.close()
            await store.close()

    gc.disable()
    try:
        steady, after = asyncio.run(main())
    finally:
        gc.enable()
        gc.unfreeze()
    assert len(steady) >= 6 and not any(steady), steady
    assert after[-1], after


SERVER_MODULES = ("nertz.", "uvicorn.", "httptools.", "uvloop.", "starlette.", "fastapi.",
                  "sqlalchemy.", "aiosqlite.")
"""Where the server's own objects come from (the test's clients are in this process too:
what they leave to the collector is theirs, not the server's)."""


def server_garbage(garbage: list[Any]) -> Counter[str]:
    """The server's objects among what the collector found unreachable (frames and coroutines
    by their code's file)."""
    found: Counter[str] = Counter()
    for o in garbage:
        if isinstance(o, weakref.ProxyTypes):
            continue  # its referent may be gone: nothing to read
        code = getattr(o, "f_code", None) or getattr(o, "cr_code", None)
        if code is not None:
            where = code.co_filename
            if any(f"/{m.rstrip('.')}/" in where for m in SERVER_MODULES):
                found[f"{type(o).__name__} {code.co_qualname}"] += 1
            continue
        kind = type(o)
        if kind.__module__.startswith(SERVER_MODULES):
            found[f"{kind.__module__}.{kind.__qualname__}"] += 1
    return found


def test_closed_sockets_and_rooms_leaving_memory_are_freed_without_the_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``nertz serve`` collects old objects only now and then, and what outlived a collection
    only at a deep one: a socket that closes (normally, by the client vanishing, before its
    hello, refused) and a room that leaves memory must be freed by reference counting, no
    cycle of the server's left behind. With the collector off, on a real uvicorn server (the
    socket layer under the app: its HTTP and WebSocket protocols), every socket protocol,
    connection and room is freed once closed, and a collection then finds none of the
    server's objects."""
    from server_support import live_server
    from websockets.sync.client import connect

    import nertz.server.edge.app as app_module
    from nertz.server.edge.connection import Connection
    from nertz.server.edge.http_protocol import GuardedHttp
    from nertz.server.edge.socket_protocol import SocketProtocol
    from nertz.server.live import LiveRoom

    monkeypatch.setattr(hub_module, "LATENCY_SECONDS", 0.05)
    monkeypatch.setattr(hub_module, "give_back_memory", lambda trim=True, deep=True: None)
    monkeypatch.setattr(app_module, "give_back_memory", lambda trim=True, deep=True: None)
    alive: weakref.WeakSet[Any] = weakref.WeakSet()
    for kind in (GuardedHttp, SocketProtocol, Connection, LiveRoom):
        def made(self: Any, *args: Any, _init: Any = kind.__init__, **kwargs: Any) -> None:
            _init(self, *args, **kwargs)
            alive.add(self)

        monkeypatch.setattr(kind, "__init__", made)
    app = create_app(f"sqlite:///{tmp_path / 'cycles.db'}", start_bots=False,
                     room_idle_seconds=0.2)

    def rooms_played(base: str, count: int) -> None:
        ws_base = base.replace("http", "ws")
        for _ in range(count):
            with httpx.Client() as http:
                room = http.post(f"{base}/api/rooms", json={"rules": "pagat", "seats": 2,
                                                            "name": "Ann"}).json()
            url = f"{ws_base}/ws/{room['room']}"
            hello = json.dumps({"type": "hello", "token": room["token"], "pings": True})
            with connect(url) as ws:  # closed normally, after a few messages
                ws.send(hello)
                ws.send(json.dumps({"type": "ready"}))
                ws.send("not json")
                ws.send(json.dumps({"type": "ping", "id": "p"}))
                while '"pong"' not in str(ws.recv(timeout=10)):
                    pass
            with connect(url) as gone:  # the client vanishes: no close frame, a reset
                gone.send(hello)
                gone.recv(timeout=10)
                gone.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
                gone.socket.close()
            with connect(url) as gone:  # gone before its hello
                gone.socket.close()
            with connect(f"{ws_base}/ws/nosuchroom") as ws:  # refused by the app
                ws.recv(timeout=10)

    def settled() -> Counter[str]:
        """Once every room has closed and every socket is done: what is still alive."""
        wait_for(lambda: not hub.rooms and app.state.sockets.count == 0)
        time.sleep(0.2)  # the hub's timer lets go of the last closed room at its next turn
        with contextlib.suppress(AssertionError):
            wait_for(lambda: not alive, timeout=10)
        return Counter(type(o).__name__ for o in alive)

    gc.collect()
    gc.disable()
    try:
        with live_server(app) as base:
            hub = app.state.hub
            rooms_played(base, 1)  # warm-up: what is made once (imports, caches)
            wait_for(lambda: not hub.rooms and app.state.sockets.count == 0)
            time.sleep(0.2)
            gc.collect()
            alive.clear()
            gc.set_debug(gc.DEBUG_SAVEALL)
            rooms_played(base, 4)
            still = settled()
            gc.collect()
            left = server_garbage(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
        gc.unfreeze()
    assert still == Counter(), f"not freed once closed: {dict(still)}"
    assert left == Counter(), f"the server's objects in cycles: {dict(left)}"


def test_a_cut_socket_is_freed_without_the_collector() -> None:
    """A reader too far behind is cut (its writer task stopped while it waits on the
    socket): its connection is freed by reference counting, and closing it afterwards
    waits for nothing and raises nothing."""
    from server_support import StuckSocket

    from nertz.server.edge.connection import Connection

    async def main() -> tuple[bool, bool]:
        conn = Connection(StuckSocket())
        conn.send(b"first")  # the writer waits on it for good
        await asyncio.sleep(0)
        conn.cut()
        closer = conn.closer
        assert closer is not None
        await conn.finish()
        await closer
        cancelled = conn.task.cancelled()
        ref = weakref.ref(conn)
        del conn, closer
        return cancelled, ref() is None

    gc.collect()
    gc.disable()
    try:
        cancelled, freed = asyncio.run(main())
    finally:
        gc.enable()
    assert not cancelled
    assert freed
