"""The cluster layer's parts on the real Redis and database: leases with epochs, the store's
fencing of a former owner's appends, the relay between two processes' inboxes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from cluster_support import REDIS, drop_prefix, new_prefix
from redis.asyncio import Redis

from nertz.server.cluster import Leases, Node, Relay, RelayError
from nertz.server.cluster.placement import Placement
from nertz.server.cluster.remote import RemoteSocket
from nertz.server.room.archive import MatchArchive
from nertz.server.store import Fenced, Store, StoreError

pytestmark = pytest.mark.anyio


@pytest.fixture
async def redis() -> AsyncIterator[tuple[Redis, str]]:
    """The test Redis and a key prefix of this test's own (dropped afterwards)."""
    client = Redis.from_url(REDIS)
    try:
        await client.ping()
    except Exception as exc:  # pragma: no cover - CI starts Redis
        import os

        if os.environ.get("CI"):
            raise
        pytest.skip(f"Redis is not reachable at {REDIS}: {exc}")
    prefix = new_prefix()
    try:
        yield client, prefix
    finally:
        await drop_prefix(prefix)
        await client.aclose()


async def test_lease_epochs_grow_and_only_the_holder_renews(redis: tuple[Redis, str]) -> None:
    client, prefix = redis
    # A lease long enough that a busy machine's stall between two steps below cannot let it run
    # out before the test lets it (which then takes as long).
    a = Leases(client, prefix, "a", ttl=3.0)
    b = Leases(client, prefix, "b", ttl=3.0)
    first = await a.acquire("r1")
    assert first.owned and first.epoch == 1 and first.owner == "a"
    again = await a.acquire("r1")
    assert again.owned and again.epoch == 1  # the holder keeps its epoch
    refused = await b.acquire("r1")
    assert not refused.owned and refused.owner == "a"
    assert await a.renew({"r1": 1}) == []
    assert await a.expired() == []
    # Not renewed: the lease runs out, is listed as orphaned, and b takes it, epoch 2.
    while "r1" not in await b.expired():
        await asyncio.sleep(0.05)
    taken = await b.acquire("r1")
    assert taken.owned and taken.epoch == 2 and taken.owner == "b"
    assert await a.renew({"r1": 1}) == ["r1"]  # a learns it lost the room
    assert not await a.release("r1", 1)
    assert await b.owner("r1") == ("b", 2)
    assert await b.abandon("r1", 2)
    assert "r1" in await a.expired()  # abandoned: taken over at once
    assert (await a.acquire("r1")).epoch == 3
    assert await a.release("r1", 3)
    assert await a.owner("r1") is None and await a.expired() == []
    assert (await b.acquire("r1")).epoch == 4  # epochs never go back


async def test_store_refuses_appends_from_an_older_epoch(store_url: str) -> None:
    store = await Store.open(store_url)
    try:
        for room in ("r1", "r2"):
            await store.create_room(room, room.upper(), {"preset": "pagat"}, 2)
        assert await store.fence("r1", 1) and await store.fence("r2", 1)
        await store.append("r1", 0, "created", {}, epoch=1)
        assert await store.fence("r1", 2)  # a new owner
        assert not await store.fence("r1", 1)  # the old one cannot come back
        # One batch: r1's stale entry is refused, r2's (current epoch) is stored.
        stale = store.append_nowait("r1", 1, "joined", {"x": 1}, epoch=1)
        fine = store.append_nowait("r2", 0, "created", {}, epoch=1)
        results = await asyncio.gather(stale, fine, return_exceptions=True)
        assert isinstance(results[0], Fenced) and results[1] is None
        # The stale owner's later entries are refused too (no gap, no fork) ...
        with pytest.raises(StoreError):
            await store.append("r1", 2, "joined", {"x": 2}, epoch=1)
        # ... and the new owner, having read the log, goes on from it.
        entries = await store.load_log("r1")
        assert [e.seq for e in entries] == [0]
        await store.append("r1", 1, "joined", {"x": 3}, epoch=2)
        assert [e.data for e in await store.load_log("r1")] == [{}, {"x": 3}]
        assert await store.epoch("r1") == 2 and await store.epoch("nope") is None
        # Appends without an epoch (one process alone) are not fenced.
        await store.append("r1", 2, "joined", {"x": 4})
        # One batch of all three kinds: a stale epoch refused, a current one and one without
        # an epoch stored.
        await store.create_room("r3", "R3", {"preset": "pagat"}, 2)
        mixed = await asyncio.gather(
            store.append_nowait("r1", 3, "joined", {"x": 5}, epoch=1),
            store.append_nowait("r2", 1, "joined", {"x": 6}, epoch=1),
            store.append_nowait("r3", 0, "created", {}),
            return_exceptions=True)
        assert isinstance(mixed[0], Fenced) and mixed[1] is None and mixed[2] is None
        assert [e.data for e in await store.load_log("r2")] == [{}, {"x": 6}]
        assert [e.seq for e in await store.load_log("r3")] == [0]
    finally:
        await store.close()


async def test_a_fenced_owner_saves_no_replay_of_a_match_its_log_lacks(store_url: str) -> None:
    """A former owner whose closing entries are refused (fenced) must not store the match's
    replay: the log does not hold its end, and the new owner closes and saves it from the log
    (seen in the chaos test as the new owner's save refused as a duplicate)."""
    store = await Store.open(store_url)
    try:
        await store.create_room("r1", "R1", {"preset": "pagat"}, 2)
        assert await store.fence("r1", 1) and await store.fence("r1", 2)
        archive = MatchArchive(store, "r1")
        refused = store.append_nowait("r1", 0, "close", {"t": 1}, epoch=1)
        await archive.save_after([refused], "m1", {"format": "nertz-replay/1"}, 0)
        assert await store.get_match("m1") is None
        await store.load_log("r1")  # the new owner reads the log, then goes on from it
        stored = store.append_nowait("r1", 0, "close", {"t": 1}, epoch=2)
        await archive.save_after([stored], "m1", {"format": "nertz-replay/1"}, 0)
        assert await store.get_match("m1") == {"format": "nertz-replay/1"}
    finally:
        await store.close()


async def test_relay_carries_messages_in_order_and_calls(redis: tuple[Redis, str]) -> None:
    client, prefix = redis
    a = Relay(client, prefix, "a")
    b = Relay(client, prefix, "b")
    heard: list[dict[str, object]] = []
    b.handler = heard.append

    async def double(args: dict[str, object]) -> object:
        n = args["n"]
        assert isinstance(n, int)
        if n < 0:
            raise RelayError("negative", 400)
        return {"twice": 2 * n}

    b.calls["double"] = double
    await a.start()
    await b.start()
    try:
        for i in range(50):
            a.send("b", {"k": "frame", "i": i, "data": b"\x00bytes"})
        async with asyncio.timeout(60):
            while len(heard) < 50:
                await asyncio.sleep(0.01)
        assert [m["i"] for m in heard] == list(range(50))
        assert heard[0]["data"] == b"\x00bytes"
        assert await a.call("b", "double", {"n": 21}) == {"twice": 42}
        with pytest.raises(RelayError, match="negative") as err:
            await a.call("b", "double", {"n": -1})
        assert err.value.status == 400
        with pytest.raises(RelayError, match="did not answer"):
            await a.call("nobody", "double", {"n": 1}, timeout=0.3)
    finally:
        await a.close()
        await b.close()


async def test_relay_comes_back_after_redis_drops_its_connections(
        redis: tuple[Redis, str]) -> None:
    """The relay's own connections (its inbox and its publisher) are cut by Redis: the inbox
    subscribes again and the publisher connects again, and messages flow as before (a message
    sent while the inbox was away is lost, as pub/sub loses it for a dead process)."""
    client, prefix = redis
    a = Relay(client, prefix, f"a{prefix}")
    b = Relay(client, prefix, f"b{prefix}")
    heard: list[dict[str, object]] = []
    b.handler = heard.append
    await a.start()
    await b.start()

    async def heard_all(n: int) -> None:
        async with asyncio.timeout(60):
            while len(heard) < n:
                await asyncio.sleep(0.01)

    async def relay_clients() -> list[tuple[str, str]]:
        listed = await client.execute_command("CLIENT", "LIST")
        text = listed.decode() if isinstance(listed, bytes) else str(listed)
        found = []
        for line in text.splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            if fields.get("name", "").startswith("nertz-relay:") and prefix in fields["name"]:
                found.append((fields["id"], fields["name"]))
        return found

    try:
        a.send(b.process, {"k": "frame", "i": 0})
        await heard_all(1)
        named = await relay_clients()
        assert {n.rsplit(":", 1)[1] for _, n in named} == {"inbox", "out"}
        for client_id, _ in named:
            await client.execute_command("CLIENT", "KILL", "ID", client_id)
        # The inbox listens again (its subscription is back), then messages flow again.
        async with asyncio.timeout(60):
            while (await client.execute_command("PUBSUB", "NUMSUB", b.inbox(b.process)))[1] < 1:
                await asyncio.sleep(0.05)
        sent = 1
        async with asyncio.timeout(60):
            while len(heard) < 2:
                a.send(b.process, {"k": "frame", "i": sent})
                sent += 1
                await asyncio.sleep(0.05)
        assert [m["i"] for m in heard] == sorted(m["i"] for m in heard)
    finally:
        await a.close()
        await b.close()


async def test_an_idle_inbox_keeps_listening_past_the_socket_timeout(
        redis: tuple[Redis, str], caplog: pytest.LogCaptureFixture) -> None:
    """A process's inbox may hear nothing for a long time: the Redis client's socket timeout
    must not end its subscription (listening again would lose what came meanwhile)."""
    _, prefix = redis
    client = Redis.from_url(REDIS, socket_timeout=0.3)
    a = Relay(client, prefix, "a")
    b = Relay(client, prefix, "b")
    heard: list[dict[str, object]] = []
    b.handler = heard.append
    await a.start()
    await b.start()
    try:
        with caplog.at_level("WARNING", logger="nertz.relay"):
            await asyncio.sleep(1.2)  # four socket timeouts of silence
            a.send("b", {"k": "frame", "i": 1})
            async with asyncio.timeout(30):
                while not heard:
                    await asyncio.sleep(0.01)
        assert heard == [{"k": "frame", "i": 1}]
        assert not [r for r in caplog.records if "inbox lost" in r.getMessage()]
    finally:
        await a.close()
        await b.close()
        await client.aclose()


async def test_new_rooms_go_to_the_live_process_owning_fewest(
        redis: tuple[Redis, str]) -> None:
    """Placement: the fewest rooms wins, a tie stays with the asking process, every pick
    counts at once (a burst spreads out before the next beats), a silent process gets none,
    and alone a process places rooms on itself."""
    client, prefix = redis
    a, b, c = (Placement(client, prefix, name) for name in ("a", "b", "c"))
    assert await a.pick() == "a"  # nobody has beaten yet
    await a.beat(5)
    await b.beat(2)
    assert await a.pick() == "b"
    assert await a.pick() == "b"  # b now counts 3
    await c.beat(4)
    # a 5, b 4, c 4: a tie between b and c goes to the asker when it is one of them.
    assert await c.pick() == "c"
    # a 5, b 4, c 5: b; then all at 5 and a asks: a; then b and c at 5 (the first to beat
    # first): b; c; all at 6: a; b.
    assert [await a.pick() for _ in range(6)] == ["b", "a", "b", "c", "a", "b"]
    # b and c stop beating: only a is alive once the beats are older than ALIVE_SECONDS.
    await client.zadd(prefix + "beats", {"b": 0, "c": 0})
    assert {await b.pick() for _ in range(3)} == {"a"}


async def test_node_connect_names_an_unreachable_redis() -> None:
    from nertz.server.cluster import ClusterError

    with pytest.raises(ClusterError, match=r"Redis is not reachable at redis://127\.0\.0\.1:1/0"):
        await Node.connect("redis://127.0.0.1:1/0")


def test_redis_replies_are_parsed_by_hiredis() -> None:
    """The relay's messages and every Redis reply are parsed in C: ``hiredis`` is a
    dependency (``redis[hiredis]``), and redis-py uses it whenever it is installed."""
    import redis.utils
    from redis.asyncio.connection import DefaultParser

    assert redis.utils.HIREDIS_AVAILABLE
    assert "Hiredis" in DefaultParser.__name__


async def test_sockets_held_by_a_process_that_died_are_dropped(
        redis: tuple[Redis, str]) -> None:
    """A process relaying a room's sockets to its owner is SIGKILLed: it says no goodbye, so
    the owner drops those sockets once the process stops beating (left, they would count
    against their players' socket limits for good and keep their seats taken). A process
    that still beats keeps its sockets, and the frames a holder relays carry its latest
    figure for the client's network round trip."""
    _client, prefix = redis
    owner = await Node.connect(REDIS, prefix, "owner")
    opened: list[tuple[str, RemoteSocket]] = []
    owner.on_socket = lambda room, sock: opened.append((room, sock))
    owner.held["room1"] = 1
    try:
        for holder in ("dead", "alive"):
            owner._handle({"k": "open", "room": "room1", "sock": f"{holder}/s", "from": holder,
                           "addr": "203.0.113.9", "rtt": 250.0})
        await owner.placement.beat(1)
        await Placement(_client, prefix, "alive").beat(0)
        await _client.zadd(prefix + "beats", {"dead": 0})  # silent since long ago
        (_, dead), (_, alive) = opened
        assert dead.network is not None and dead.network() == 250.0
        owner._handle({"k": "frame", "room": "room1", "sock": "alive/s",
                       "env": {"type": "websocket.receive", "text": "{}", "rtt": 0.4}})
        assert alive.network is not None and alive.network() == 0.4  # no longer 250
        await owner._round()
        assert set(owner.remote) == {"alive/s"}
        assert dead.closed and (await dead.receive())["type"] == "websocket.disconnect"
        assert not alive.closed
        # From a process that cannot measure the network: bounded by the slack alone.
        owner.held["room1"] = 1  # (the round gave up the lease this test never took)
        owner._handle({"k": "open", "room": "room1", "sock": "alive/t", "from": "alive",
                       "addr": "203.0.113.9", "rtt": None})
        unmeasured = opened[-1][1]
        assert unmeasured.network is not None and unmeasured.network() is None
    finally:
        await owner.close()
