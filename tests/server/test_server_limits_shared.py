"""Limits that hold for the whole service, kept in the real Redis (127.0.0.1:6379, or
``NERTZ_TEST_REDIS``): two limiters standing for two processes share rates, socket counts and
bars; a killed process's sockets stop counting once its lease lapses; a lapsed lease is written
back; what counts while it plays (rooms of bots alone) is let go once it stops; two servers
given the same Redis refuse together what one would (rooms of bots alone playing included, which
stop counting when their round ends, or when their process is killed), and so do the workers
of ``nertz serve --workers 2``.
Every test has its own key prefix and removes its keys."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import redis.asyncio as aioredis
from _support import stop_process
from cluster_support import Proc
from server_support import (
    WAIT,
    Person,
    ask,
    create_room,
    hello,
    join,
    live_server,
    wait_for,
    wait_phase,
)
from starlette.testclient import TestClient, WebSocketTestSession
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

import nertz.server.edge.app as app_module
from nertz.server.cluster import Leases
from nertz.server.cluster.limits import RedisLimits
from nertz.server.edge.app import create_app
from nertz.server.limits import (
    SITE_SHARE,
    HeldWhile,
    Limits,
    MemoryLimits,
    Rate,
    address_key,
    site_key,
)

REDIS = os.environ.get("NERTZ_TEST_REDIS", "redis://127.0.0.1:6379/0")


@pytest.fixture
def prefix() -> Iterator[str]:
    """A key prefix of this test's own; its keys are removed afterwards."""
    try:
        sync = redis.Redis.from_url(REDIS, socket_connect_timeout=2)
        sync.ping()
    except redis.RedisError as exc:  # pragma: no cover - CI starts Redis
        pytest.skip(f"no Redis at {REDIS}: {exc}")
    name = f"nertz-test-{uuid.uuid4().hex[:12]}:"
    try:
        yield name
    finally:
        keys = list(sync.scan_iter(match=name + "*"))
        if keys:
            sync.delete(*keys)
        assert not list(sync.scan_iter(match=name + "*"))
        sync.close()


@pytest.fixture
async def pair(prefix: str) -> AsyncIterator[tuple[RedisLimits, RedisLimits]]:
    """Two limiters on one Redis and prefix: two processes of one service."""
    a, b = RedisLimits(REDIS, prefix), RedisLimits(REDIS, prefix)
    await a.start()
    await b.start()
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()


@pytest.mark.anyio
async def test_two_processes_share_one_rate(pair: tuple[RedisLimits, RedisLimits]) -> None:
    a, b = pair
    rooms = Rate("rooms", 3)
    # The burst is three in all, whichever process is asked.
    assert [await a.take(rooms, "10.0.0.1"), await b.take(rooms, "10.0.0.1"),
            await a.take(rooms, "10.0.0.1")] == [0, 0, 0]
    assert await b.take(rooms, "10.0.0.1") >= 1
    assert await a.wait(rooms, "10.0.0.1") >= 1
    # Another address, another limit, another bucket: untouched.
    assert await b.take(rooms, "10.0.0.2") == 0
    assert await b.take(Rate("bad_tokens", 3), "10.0.0.1") == 0
    # No limit: always allowed.
    assert await a.take(Rate("rooms", 0), "10.0.0.1") == 0


@pytest.mark.anyio
async def test_a_refusal_says_when_to_come_back(pair: tuple[RedisLimits, RedisLimits]) -> None:
    a, _b = pair
    slow = Rate("rooms", 1)  # one a minute: a refusal waits about a minute
    assert await a.take(slow, "x") == 0
    wait = await a.take(slow, "x")
    assert 55 <= wait <= 60


@pytest.mark.anyio
async def test_two_processes_share_socket_caps(pair: tuple[RedisLimits, RedisLimits]) -> None:
    a, b = pair
    assert await a.hold("address 10.0.0.1", 2)
    assert await b.hold("address 10.0.0.1", 2)
    assert not await a.hold("address 10.0.0.1", 2)
    assert not await b.hold("address 10.0.0.1", 2)
    assert await a.held("address 10.0.0.1") == 2
    await a.let_go("address 10.0.0.1")
    assert await b.hold("address 10.0.0.1", 2)
    assert await b.held("address 10.0.0.1") == 2
    # No cap: counted all the same.
    assert await a.hold("address 10.0.0.1", 0)
    assert await b.held("address 10.0.0.1") == 3


@pytest.mark.anyio
async def test_two_processes_share_what_counts_while_it_plays(
        pair: tuple[RedisLimits, RedisLimits]) -> None:
    a, b = pair
    playing = {"r1", "r2", "r3", "r4", "r5"}
    on_a, on_b = HeldWhile(a, playing.__contains__), HeldWhile(b, playing.__contains__)
    scope = "bot rooms 10.0.0.1"
    assert await on_a.take(scope, "r1", 3)
    assert await on_a.take(scope, "r1", 3)  # a room counts once, however often it is started
    assert await on_b.take(scope, "r2", 3)
    assert await on_a.take(scope, "r3", 3)
    assert await b.held(scope) == 3
    # Three in all, whichever process asks.
    assert not await on_b.take(scope, "r4", 3)
    assert not await on_a.take(scope, "r4", 3)
    # A room of A's stops playing: once A looks (its sweep), B may start one more.
    playing.discard("r3")
    await on_a.sweep()
    assert await b.held(scope) == 2 and on_a.by_scope[scope] == {"r1"}
    assert await on_b.take(scope, "r4", 3)
    # A process looks at its own first when its scope asks for one more.
    playing.discard("r1")
    assert await on_a.take(scope, "r5", 3)
    assert on_a.by_scope[scope] == {"r5"} and await b.held(scope) == 3
    # Another address has its own three.
    assert await on_a.take("bot rooms 10.0.0.2", "r4", 3)


@pytest.mark.anyio
async def test_bars_hold_everywhere(pair: tuple[RedisLimits, RedisLimits]) -> None:
    a, b = pair
    await a.bar("room1 name bob", 30.0)
    assert 25.0 < await b.barred("room1 name bob") <= 30.0
    assert await b.barred("room1 name alice") == 0.0


@pytest.mark.anyio
async def test_a_lapsed_lease_writes_its_sockets_back(prefix: str) -> None:
    a, b = RedisLimits(REDIS, prefix), RedisLimits(REDIS, prefix)
    await a.start()
    await b.start()
    try:
        assert await a.hold("address 10.0.0.9", 0)
        assert await a.hold("address 10.0.0.9", 0)
        # A's lease lapsed (paused, cut off from Redis): the others forgot its sockets.
        await a.redis.delete(a.held_key)
        assert await b.held("address 10.0.0.9") == 0
        await a.renew()
        assert await b.held("address 10.0.0.9") == 2
        # Lapsed altogether (its lease gone too): its next socket brings the tally back first.
        await a.redis.delete(a.held_key)
        await a.redis.zrem(a.procs_key, a.process)
        assert await b.held("address 10.0.0.9") == 0
        assert await a.hold("address 10.0.0.9", 0)
        assert await b.held("address 10.0.0.9") == 3
    finally:
        await a.close()
        await b.close()


HOLDER_LEASE_MS = 5000
"""The holder's lease: long enough that a busy machine starving the live holder does not let it
lapse before the test has seen its sockets counted."""

HOLDER = """
import asyncio, sys
from nertz.server.cluster import Leases
from nertz.server.cluster.limits import RedisLimits
from nertz.server.limits import HeldWhile

async def main() -> None:
    limits = RedisLimits(sys.argv[1], sys.argv[2], lease_ms=int(sys.argv[3]))
    await limits.start()
    for _ in range(3):
        assert await limits.hold("address 10.0.0.7", 0)
    rooms = HeldWhile(limits, lambda room: True)  # playing with bots alone for good
    for room in ("r1", "r2", "r3"):
        assert await rooms.take("bot rooms 10.0.0.7", room, 3)
    print("held", flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


@pytest.mark.anyio
async def test_a_killed_process_stops_counting(prefix: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, REDIS, prefix, str(HOLDER_LEASE_MS)],
                            stdout=subprocess.PIPE, cwd=Path(__file__).resolve().parents[2])
    other = RedisLimits(REDIS, prefix)
    await other.start()
    try:
        assert proc.stdout is not None
        assert (await asyncio.to_thread(proc.stdout.readline)).strip() == b"held"
        assert await other.held("address 10.0.0.7") == 3
        assert not await other.hold("address 10.0.0.7", 3)
        rooms = HeldWhile(other, lambda room: True)
        assert await other.held("bot rooms 10.0.0.7") == 3
        assert not await rooms.take("bot rooms 10.0.0.7", "r4", 3)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        # Its lease lapses unrenewed: its sockets and its rooms of bots no longer count.
        deadline = time.monotonic() + 60
        while await other.held("address 10.0.0.7") and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert await other.held("address 10.0.0.7") == 0
        assert await other.held("bot rooms 10.0.0.7") == 0
        assert await other.hold("address 10.0.0.7", 1)
        assert await rooms.take("bot rooms 10.0.0.7", "r4", 3)
        # ... and the dead process's tally is gone from Redis, not only ignored.
        keys = [k async for k in other.redis.scan_iter(match=other.held_prefix + "*")]
        assert keys == [other.held_key.encode()]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        await other.close()


@pytest.mark.anyio
async def test_closing_lets_every_socket_go(pair: tuple[RedisLimits, RedisLimits]) -> None:
    a, b = pair
    assert await a.hold("player r1 p1", 8)
    await a.close()
    assert await b.held("player r1 p1") == 0


@pytest.mark.anyio
async def test_unreachable_redis_is_named_and_lets_play_go_on() -> None:
    gone = RedisLimits("redis://127.0.0.1:1/0")
    with pytest.raises(RuntimeError, match="cannot reach Redis"):
        await gone.start()
    # Once running, an outage lets everything through rather than refusing everyone.
    assert await gone.take(Rate("rooms", 1), "x") == 0
    assert await gone.hold("address x", 1)
    await gone.close()


@pytest.mark.anyio
async def test_memory_limits_behave_alike() -> None:
    mem = MemoryLimits()
    rooms = Rate("rooms", 2)
    assert [await mem.take(rooms, "a"), await mem.take(rooms, "a")] == [0, 0]
    assert await mem.take(rooms, "a") >= 1 and await mem.wait(rooms, "a") >= 1
    assert await mem.hold("s", 1) and not await mem.hold("s", 1)
    await mem.let_go("s")
    assert await mem.held("s") == 0
    await mem.bar("k", 600.0)  # long: a stalled machine still finds it barred
    assert 0.0 < await mem.barred("k") <= 600.0
    playing = {"r1", "r2"}
    rooms = HeldWhile(mem, playing.__contains__)
    assert await rooms.take("bot rooms a", "r1", 1) and await rooms.take("bot rooms a", "r1", 1)
    assert not await rooms.take("bot rooms a", "r2", 1)
    playing.discard("r1")
    assert await rooms.take("bot rooms a", "r2", 1)
    assert await mem.held("bot rooms a") == 1


def test_two_servers_share_the_limits_of_one(prefix: str, tmp_path: Path) -> None:
    apps = [create_app(f"sqlite:///{tmp_path / f'{n}.db'}", rooms_per_minute=3,
                       sockets_per_address=1, max_sockets=0,
                       limits=RedisLimits(REDIS, prefix))
            for n in ("a", "b")]
    with ExitStack() as stack:
        bases = [stack.enter_context(live_server(app)) for app in apps]
        # Rooms per address: three in all, across both servers.
        made = [httpx.post(bases[n % 2] + "/api/rooms", json={"seats": 2}) for n in range(3)]
        assert [r.status_code for r in made] == [201, 201, 201]
        refused = httpx.post(bases[1] + "/api/rooms", json={"seats": 2})
        assert refused.status_code == 429 and "Retry-After" in refused.headers
        # Sockets per address: one in all; the second, on the other server, is refused.
        rooms = [made[0].json()["room"], made[1].json()["room"]]
        urls = [b.replace("http://", "ws://") + f"/ws/{r}" for b, r in zip(bases, rooms,
                                                                             strict=True)]
        first = stack.enter_context(connect(urls[0]))
        with pytest.raises(InvalidStatus) as info:
            connect(urls[1]).close()
        assert info.value.response.status_code == 429
        assert b"one address" in info.value.response.body
        first.close()
        # Once the first has closed (as its server sees it), the other server lets one in.
        deadline = time.monotonic() + 60
        while True:
            try:
                stack.enter_context(connect(urls[1]))
                break
            except InvalidStatus:
                assert time.monotonic() < deadline, "the freed socket was not given back"
                time.sleep(0.05)


def bots_alone_room(client: TestClient, stack: ExitStack, absent: str | None = None
                    ) -> tuple[str, WebSocketTestSession, Person | None]:
    """A two-seat room whose host watches (spectator) and whose seats are bots, or one a bot
    and one ``absent``'s, who joined and has not connected; the host's socket, said hello;
    the absent person."""
    ann = create_room(client, seats=2)
    ws = stack.enter_context(client.websocket_connect(f"/ws/{ann.room}"))
    assert hello(ws, ann.token)["type"] == "state"
    ws.send_json({"type": "assign", "player": ann.player, "seat": None})
    seated = join(client, ann.room, absent) if absent is not None else None
    if seated is None:
        ws.send_json({"type": "add_bot"})
    ws.send_json({"type": "add_bot"})
    return ann.room, ws, seated


@pytest.mark.usefixtures("fast_bots")
def test_two_servers_share_the_rooms_of_bots_alone(prefix: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # Looked at often, so that the test waits little for a room that stopped to be let go.
    monkeypatch.setattr(app_module, "BOT_ROOMS_SWEEP_SECONDS", 0.05)
    start = {"type": "start", "countdown_ms": 0}
    scope = "bot rooms testclient"  # both servers' clients come from one address
    # On "still", bots never move: its rounds stay at play for as long as the test needs.
    # On "fast", bots play at a few milliseconds a card: its rounds end of themselves.
    still = create_app(f"sqlite:///{tmp_path / 'still.db'}", start_bots=False,
                       limits=RedisLimits(REDIS, prefix))
    fast = create_app(f"sqlite:///{tmp_path / 'fast.db'}", limits=RedisLimits(REDIS, prefix))
    with ExitStack() as stack:
        s = stack.enter_context(TestClient(still))
        f = stack.enter_context(TestClient(fast))

        def held() -> int:
            assert f.portal is not None
            return int(f.portal.call(fast.state.limits.held, scope))

        # Three rooms of bots alone playing on one server (in the third, Bob's seat plays
        # nothing: he has no socket open)...
        bob = None
        for absent in (None, None, "Bob"):
            _room, ws, bob = bots_alone_room(s, stack, absent)
            ws.send_json(start)
            wait_phase(ws, "playing")
        assert bob is not None and held() == 3
        # ... and the other server refuses a fourth, as the first does.
        _room, on_fast, _ = bots_alone_room(f, stack)
        refused = ask(on_fast, start)
        assert refused["type"] == "error" and refused["code"] == "too_many_bot_rooms", refused
        assert "at most 3 at once" in refused["message"]
        _room, fourth, _ = bots_alone_room(s, stack)
        assert ask(fourth, start)["code"] == "too_many_bot_rooms"
        # Bob connects: a person plays in the third room, so it no longer counts, and its
        # server lets it go.
        with s.websocket_connect(f"/ws/{bob.room}") as bob_ws:
            assert hello(bob_ws, bob.token)["type"] == "state"
            wait_for(lambda: held() == 2, WAIT, 0.01,
                     "a room where a person plays still counted")
            # The other server may start its room now (its round ends of itself, fast bots,
            # after a countdown that counts as play: long enough that the round cannot end
            # before the next two checks, however slow the machine).
            on_fast.send_json({"type": "start", "countdown_ms": 5000})
            wait_phase(on_fast, "countdown")
            assert held() == 3
            assert ask(fourth, start)["code"] == "too_many_bot_rooms"
            # Once its round is over, it stops counting for both.
            wait_phase(on_fast, "round_over")
            wait_for(lambda: held() == 2, WAIT, 0.01,
                     "a room whose round was over still counted")
            fourth.send_json(start)
            wait_phase(fourth, "playing")
            assert held() == 3


def test_a_multi_process_server_holds_its_limits_as_one(prefix: str, pg_url: str) -> None:
    help_text = subprocess.run([sys.executable, "-m", "nertz.cli", "serve", "--help"],
                               capture_output=True, text=True, check=False).stdout
    if "--workers" not in help_text:
        pytest.skip("this nertz serve has no --workers yet")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "nertz.cli", "serve", "--port", str(port), "--workers", "2",
           "--redis", REDIS, "--db", pg_url, "--rooms-per-minute", "3",
           "--sockets-per-address", "2"]
    if "--redis-prefix" in help_text:
        cmd += ["--redis-prefix", prefix]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120  # two fresh processes import and migrate
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        # Each request reaches either worker: three rooms in all, then refused.
        made = [httpx.post(base + "/api/rooms", json={"seats": 2}, timeout=10)
                for _ in range(3)]
        assert [r.status_code for r in made] == [201, 201, 201]
        assert httpx.post(base + "/api/rooms", json={"seats": 2}, timeout=10).status_code == 429
        url = base.replace("http://", "ws://") + f"/ws/{made[0].json()['room']}"
        with ExitStack() as stack:
            for _ in range(2):
                stack.enter_context(connect(url))
            for _ in range(4):  # whichever worker takes it
                with pytest.raises(InvalidStatus) as info:
                    connect(url).close()
                assert info.value.response.status_code == 429
    finally:
        stop_process(proc, group=True)


def _messages(ws: Any, timeout: float = WAIT) -> Iterator[dict[str, Any]]:
    """The messages a real socket receives (several may share a frame, a line each), failing
    the test if none comes within ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        text = ws.recv(timeout=max(0.0, deadline - time.monotonic()))
        for line in str(text).split("\n"):
            yield json.loads(line)


def _phase_or_error(ws: Any, *phases: str) -> dict[str, Any]:
    """The first error to this socket, or the first message showing the room in ``phases``."""
    for m in _messages(ws):
        room = m.get("room")
        if m["type"] == "error" or (isinstance(room, dict) and room.get("phase") in phases):
            return m
    raise AssertionError("unreachable")


def test_the_processes_of_a_service_share_the_rooms_of_bots_alone(prefix: str, pg_url: str,
                                                                   tmp_path: Path) -> None:
    """``nertz serve`` processes on one Redis and database, each room's host connected through
    the process that does not own it (relayed, as between machines): three rooms of bots alone
    an address in all, and a killed owner's stop counting once its lease lapses."""
    procs = [Proc(pg_url, prefix, tmp_path / f"proc{n}.log", handoff=False) for n in range(2)]
    scope = "bot rooms 127.0.0.1"

    async def count() -> int:
        limits = RedisLimits(REDIS, prefix)  # never started: holds nothing of its own
        try:
            return await limits.held(scope)
        finally:
            await limits.redis.aclose()

    async def owner_of(room: str) -> str:
        redis = aioredis.Redis.from_url(REDIS)
        try:
            held = await Leases(redis, prefix, "test").owner(room)
        finally:
            await redis.aclose()
        assert held is not None, f"nobody owns {room}"
        return held[0]

    def held() -> int:
        return asyncio.run(count())

    def owner(room: str) -> Proc:
        """The process holding the room's lease (a process's name carries its pid)."""
        name = asyncio.run(owner_of(room))
        return next(p for p in procs if p.proc is not None and f"-{p.proc.pid}-" in name)

    def room_of_absent_people(stack: ExitStack, via_owner: bool) -> tuple[str, Proc, Any]:
        """A room whose two seats are held by people who never connect (they play nothing:
        a room of bots alone whose round never ends), its owner, and its host's socket said
        hello (the host watches), through its owner or through the other process."""
        made = httpx.post(procs[0].url + "/api/rooms", json={"seats": 2, "name": "Ann"},
                          timeout=WAIT)
        assert made.status_code == 201, made.text
        ann = made.json()
        own = owner(ann["room"])
        through = own if via_owner else next(p for p in procs if p is not own)
        ws = stack.enter_context(connect(through.url.replace("http://", "ws://")
                                         + f"/ws/{ann['room']}", open_timeout=WAIT))
        ws.send(json.dumps({"type": "hello", "token": ann["token"]}))
        assert next(_messages(ws))["type"] == "state"
        ws.send(json.dumps({"type": "assign", "player": ann["player"], "seat": None}))
        for m in _messages(ws):  # her seat is free before the others join
            room = m.get("room")
            if isinstance(room, dict) and all(p["seat"] is None for p in room["players"]):
                break
        for name in ("Bob", "Cat"):
            joined = httpx.post(procs[0].url + f"/api/rooms/{ann['room']}/join",
                                json={"name": name}, timeout=WAIT)
            assert joined.status_code == 200 and joined.json()["seat"] is not None, joined.text
        return ann["room"], own, ws

    start = json.dumps({"type": "start", "countdown_ms": 0})
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.wait_ready(180)
        with ExitStack() as stack:
            counted = []
            for _ in range(3):
                room, own, ws = room_of_absent_people(stack, via_owner=False)
                ws.send(start)
                assert _phase_or_error(ws, "playing")["type"] != "error"
                counted.append((room, own))
            assert held() == 3
            # A fourth, on either process, is refused.
            _fourth, survivor, host = room_of_absent_people(stack, via_owner=True)
            host.send(start)
            refused = _phase_or_error(host, "countdown", "playing")
            assert refused["code"] == "too_many_bot_rooms", refused
            # The other process dies with rooms of bots alone counted: once its lease lapses,
            # only the survivor's count.
            dead = next((p for _room, p in counted if p is not survivor), None)
            assert dead is not None, "every room went to one process: placement spreads them"
            dead.kill()
            left = sum(p is survivor for _room, p in counted)
            deadline = time.monotonic() + 60
            while held() != left:
                assert time.monotonic() < deadline, "a dead process's rooms still counted"
                time.sleep(0.1)
            host.send(start)
            assert _phase_or_error(host, "countdown", "playing")["type"] != "error"
            assert held() == left + 1
    finally:
        for p in procs:
            p.stop()


@pytest.fixture(params=["memory", "redis"])
async def one_limits(request: pytest.FixtureRequest, prefix: str) -> AsyncIterator[Any]:
    """The limits of one process, in memory and in Redis."""
    limits: MemoryLimits | RedisLimits = (MemoryLimits() if request.param == "memory"
                                          else RedisLimits(REDIS, prefix))
    await limits.start()
    try:
        yield limits
    finally:
        await limits.close()


def _net64(site: int, net: int) -> str:
    """The limits key of a client in /64 number ``net`` of the /48 number ``site``."""
    return address_key(f"2001:db8:{site:x}:{net:x}::1")


@pytest.mark.anyio
async def test_the_64s_of_one_48_share_a_wider_allowance(one_limits: Limits) -> None:
    # One holder of a /48 has 65,536 /64s: each its own allowance would be no limit. Its /64s
    # share SITE_SHARE /64s' worth.
    rooms = Rate("rooms", 2)
    allowed = [await one_limits.take(rooms, _net64(1, n)) for n in range(SITE_SHARE)
               for _ in range(2)]
    assert allowed == [0] * (2 * SITE_SHARE)
    assert await one_limits.take(rooms, _net64(1, SITE_SHARE)) >= 1
    assert await one_limits.wait(rooms, _net64(1, SITE_SHARE + 1)) >= 1
    # Another /48 has its own; so has an IPv4 address, and a player.
    assert await one_limits.take(rooms, _net64(2, 0)) == 0
    assert await one_limits.take(rooms, "192.0.2.1") == 0
    assert await one_limits.take(rooms, "p0123456789abcdef") == 0
    # Whatever the rate: its /48 gets SITE_SHARE times it, its buckets apart from others'.
    wide = Rate("uploads", 1)
    assert [await one_limits.take(wide, _net64(1, n)) for n in range(SITE_SHARE)] == [0] * 16
    assert await one_limits.take(wide, _net64(1, 99)) >= 1


@pytest.mark.anyio
async def test_the_sockets_of_one_48_share_a_wider_cap(one_limits: Limits) -> None:
    cap = 2
    scopes = [f"address {_net64(1, n)}" for n in range(SITE_SHARE + 1)]
    assert all([await one_limits.hold(s, cap) for s in scopes[:-1] for _ in range(cap)])
    assert not await one_limits.hold(scopes[-1], cap)  # the /48 is full
    assert await one_limits.hold(f"address {_net64(2, 0)}", cap)  # another /48 is not
    site = site_key(scopes[0])
    assert site == "address 2001:db8:1::/48" and site == site_key(scopes[-1])
    assert await one_limits.held(site) == SITE_SHARE * cap
    # A socket that closes makes room in its /48 again (its site is let go with it).
    await one_limits.let_go(scopes[0])
    assert await one_limits.held(site) == SITE_SHARE * cap - 1
    assert await one_limits.hold(scopes[-1], cap)
    assert not await one_limits.hold(scopes[-1], cap)  # full again
    # A /64's own cap holds as before.
    assert not await one_limits.hold(scopes[1], cap)
    # Holding with no cap counts the site too, and letting go uncounts it: nothing is left.
    await one_limits.hold(f"bot rooms {_net64(5, 1)}", 0)
    await one_limits.let_go(f"bot rooms {_net64(5, 1)}")
    assert await one_limits.held(str(site_key(f"bot rooms {_net64(5, 1)}"))) == 0


def test_a_site_is_the_48_of_a_64_key() -> None:
    assert site_key("2001:db8:1:2::/64") == "2001:db8:1::/48"
    assert site_key("address 2001:db8:1:2::/64") == "address 2001:db8:1::/48"
    assert site_key("bot rooms 2001:db8:1:ffff::/64") == "bot rooms 2001:db8:1::/48"
    for key in ("192.0.2.1", "address 192.0.2.1", "::1", "p0123", "player r1 abc", "x/64",
                "address 10.0.0.0/64"):
        assert site_key(key) is None, key
