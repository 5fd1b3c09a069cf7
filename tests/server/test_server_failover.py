"""Many ``nertz serve`` processes as one service, on the real Redis and PostgreSQL: clients
spread over them see the same game; an owner SIGKILLed or paused loses its rooms to another
process, which rebuilds them from the log, and play goes on with no acknowledged move lost or
applied twice (issue 10, item 7)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from _support import stop_process
from cluster_support import REDIS, Proc, Proxy, drop_prefix, new_prefix

from nertz.bots import SPEEDS, SpeedProfile
from nertz.net.client import Client, MoveResult
from nertz.net.netbot import NetworkBot
from nertz.server.cluster import Leases
from nertz.server.room.snapshot import EVERY_ENV
from nertz.server.store import Store

pytestmark = pytest.mark.anyio

SPEC = {"preset": "pagat", "rounds": 1, "nertz_pile_size": 5, "call": "auto"}
"""A short match: one round, five-card Nertz piles, called as a pile empties."""


SNAPSHOT_EVERY = 3
"""The processes' snapshots: at any deal 3 entries or more after the last one."""

BROADCASTS = ("room", "table", "update", "round_over")
"""The messages every socket of a room gets alike (numbered by ``v``)."""


@pytest.fixture
def quick_bots(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests' network bots play fast but under the server's 10 moves a second (a move
    refused as too fast is a turn lost, and these tests count every move)."""
    monkeypatch.setitem(SPEEDS, "expert", SpeedProfile("expert", 150.0, 60.0))


@dataclass
class Service:
    """Processes of one service (one Redis prefix, one database)."""

    db: str
    prefix: str
    logs: Path
    procs: list[Proc] = field(default_factory=list)
    handoff: bool = True
    """Its processes hand sockets to their room's owner (False: they relay every one, as
    processes on different machines do)."""

    def add(self) -> Proc:
        proc = Proc(self.db, self.prefix, self.logs / f"proc{len(self.procs)}.log",
                    self.handoff)
        self.procs.append(proc)
        return proc

    def restart(self, i: int) -> None:
        old = self.procs[i]
        old.kill()
        fresh = Proc(self.db, self.prefix, old.log, self.handoff)
        fresh.port, fresh.url = old.port, old.url  # the same address, as a restarted unit
        self.procs[i] = fresh
        fresh.start()

    async def owner(self, room_id: str) -> str | None:
        from redis.asyncio import Redis

        redis = Redis.from_url(REDIS)
        try:
            held = await Leases(redis, self.prefix, "test").owner(room_id)
        finally:
            await redis.aclose()
        return None if held is None else held[0]

    async def owner_proc(self, room_id: str) -> Proc:
        """The process holding the room's lease (a process's name carries its pid): where a
        room is created is placement's choice, not the creating request's."""
        owner = await self.owner(room_id)
        for p in self.procs:
            if owner is not None and p.proc is not None and f"-{p.proc.pid}-" in owner:
                return p
        raise AssertionError(f"no process of the service owns {room_id} ({owner})")


@pytest.fixture
def service(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    """A service with a Redis prefix of its own on the session's PostgreSQL database. Its
    processes store a snapshot at nearly every deal, so that their rebuilds (failover) start
    from one."""
    monkeypatch.setenv(EVERY_ENV, str(SNAPSHOT_EVERY))
    s = Service(pg_url, new_prefix(), tmp_path)
    try:
        yield s
    finally:
        for proc in s.procs:
            proc.stop()
        asyncio.run(drop_prefix(s.prefix))


READY_SECONDS = 180.0
"""How long a starting process may take to answer: about 2 s here, but a run starved of CPU
(the test niced beside un-niced work) took over 60 s once."""


def start(service: Service, n: int) -> list[Proc]:
    procs = [service.add() for _ in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.wait_ready(READY_SECONDS)
    return procs


async def until(check: Callable[[], Any], timeout: float, what: str) -> None:
    """Wait for ``check()`` to be true (polled), failing with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.05)


async def join(url: str, room: str, name: str, spectator: bool = False) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=30) as http:
        r = await http.post(f"{url}/api/rooms/{room}/join",
                            json={"name": name, "spectator": spectator})
        assert r.status_code == 200, r.text
        return dict(r.json())


async def create(url: str, name: str, seats: int = 2) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=30) as http:
        r = await http.post(f"{url}/api/rooms", json={"rules": SPEC, "seats": seats,
                                                      "name": name})
        assert r.status_code == 201, r.text
        return dict(r.json())


def client(url: str, joined: dict[str, Any], name: str) -> Client:
    return Client(url, joined["room"], joined["token"], player=joined.get("player"),
                  seat=joined.get("seat"), name=name, max_backoff=0.5)


@dataclass
class Game:
    """One room of two network bots: what each was told was applied."""

    room: str
    bots: list[NetworkBot]
    acked: list[str] = field(default_factory=list)

    def answer(self, result: MoveResult, _expected: bool) -> None:
        if result.ok:
            self.acked.append(result.id)


async def bot_game(host_url: str, seat_urls: tuple[str, str], matches: int = 1) -> Game:
    """A room created on ``host_url``; its two bots' sockets on ``seat_urls``."""
    ann = await create(host_url, "Ann")
    bob = await join(host_url, ann["room"], "Bob")
    game = Game(ann["room"], [])
    for url, joined, name in ((seat_urls[0], ann, "Ann"), (seat_urls[1], bob, "Bob")):
        c = client(url, joined, name)
        await c.connect(timeout=30)
        game.bots.append(NetworkBot(c, "greedy", "expert", matches=matches, countdown_ms=300,
                                    pause_s=0.1, on_answer=game.answer))
    return game


async def play(games: list[Game], timeout: float) -> None:
    tasks = [asyncio.create_task(b.run()) for g in games for b in g.bots]
    try:
        async with asyncio.timeout(timeout):
            await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        for g in games:
            for b in g.bots:
                await b.client.close()


async def explain_stall(service: Service, game: Game) -> None:
    """Print what a room that did not finish was doing: each bot's counts and view, the
    owner, the processes' lines about the room and the tail of its log (a stall seen once
    in CI is diagnosed from this output alone)."""
    before = [(b.client.version, b.stats.sent, b.stats.acked) for b in game.bots]
    await asyncio.sleep(3)
    print("over 3 s: (version, sent, acked)", before, "->",
          [(b.client.version, b.stats.sent, b.stats.acked) for b in game.bots])
    for bot in game.bots:
        c, s = bot.client, bot.stats
        print(c.name, c.phase, "closed", c.closed, "reconnects", c.reconnects, "pending",
              c.pending, "v", c.version, f"sent {s.sent} acked {s.acked} races {s.races} "
              f"stale {s.stale} unexpected {s.unexpected} rounds {s.rounds} "
              f"matches {s.matches}", s.errors[-3:], list(c.errors)[-3:])
        table = c.table or {}
        for tv in table.get("tableaus", ()):
            print("  seat", tv.get("seat"), "nertz", tv.get("nertz_count"), "top",
                  tv.get("nertz_top"), "stock", tv.get("stock_count"), "waste",
                  tv.get("waste_count"), tv.get("waste_top"), "work", tv.get("work"),
                  "stuck", tv.get("stuck"))
        print("  ended", table.get("ended"), "t", table.get("t"), "resets", c.mirror.resets,
              "foundations", [f.get("cards") for f in table.get("foundations", ())])
    print("owner", await service.owner(game.room))
    for proc in service.procs:
        print(proc.port, [line for line in proc.log.read_text().splitlines()
                          if game.room in line][-10:])
    store = await Store.open(service.db)
    try:
        entries = await store.load_log(game.room)
    finally:
        await store.close()
    print(len(entries), "log entries;", Counter(e.kind for e in entries))
    for e in entries[-25:]:
        print("  ", e.seq, e.kind, json.dumps(e.data)[:200])


async def check_log(db: str | Store, game: Game) -> list[dict[str, Any]]:
    """Every acknowledged move is in the log exactly once; the log has no gap. Returns the
    log's moves. (``db``: the database's URL, or a store open on it.)"""
    if isinstance(db, Store):
        entries = await db.load_log(game.room)
    else:
        store = await Store.open(db)
        try:
            entries = await store.load_log(game.room)
        finally:
            await store.close()
    assert [e.seq for e in entries] == list(range(len(entries)))
    moves = [e.data for e in entries if e.kind == "move"]
    logged = Counter(m["id"] for m in moves if "id" in m)
    assert all(n == 1 for n in logged.values()), "a move was applied twice"
    lost = [a for a in game.acked if logged[a] != 1]
    assert not lost, f"acknowledged moves missing from the log: {lost}"
    assert len(game.acked) == len(set(game.acked))
    kinds = Counter(e.kind for e in entries)
    assert kinds["close"] >= 1 and kinds["close"] == kinds["start"], "a match did not finish"
    return moves


@pytest.mark.parametrize("handoff", [False, True], ids=["relayed", "handed"])
async def test_three_processes_one_game(service: Service, quick_bots: None,
                                        handoff: bool) -> None:
    """Clients spread over three processes (the owner and two others) see the same
    broadcasts, in the order of the log: each socket relayed through Redis by the process it
    reached, as between machines, or handed whole to the owner, as on one machine."""
    service.handoff = handoff
    a, b, c = start(service, 3)
    ann = await create(a.url, "Ann")
    bob = await join(b.url, ann["room"], "Bob")  # relayed to the owner
    cat = await join(c.url, ann["room"], "Cat", spectator=True)
    async with httpx.AsyncClient() as http:
        infos = [(await http.get(f"{p.url}/api/rooms/{ann['code']}")).json() for p in (a, b, c)]
        # The players' ratings too, asked of the owner or not.
        rated = [(await http.get(f"{p.url}/api/rooms/{ann['room']}/ratings")) for p in (a, b, c)]
    assert infos[0] == infos[1] == infos[2] and len(infos[0]["players"]) == 3
    assert [r.status_code for r in rated] == [200, 200, 200], [r.text for r in rated]
    assert rated[0].json() == rated[1].json() == rated[2].json()
    assert len(rated[0].json()["players"]) == 3
    assert await service.owner(ann["room"]) is not None
    # Kept as text at once: the client's mirror goes on to change the dicts it was handed.
    seen: dict[str, list[tuple[int, str, dict[str, Any]]]] = {"Ann": [], "Bob": [], "Cat": []}

    def hear(name: str, m: dict[str, Any]) -> None:
        if m.get("type") in BROADCASTS:
            m = json.loads(json.dumps(m))
            if m["type"] == "table" and m.get("table"):
                m["table"].pop("seat", None)  # the client's own note of its seat
            seen[name].append((m["v"], json.dumps(m, sort_keys=True), json.loads(json.dumps(m))))

    game = Game(ann["room"], [])
    clients = {"Ann": client(b.url, ann, "Ann"), "Bob": client(c.url, bob, "Bob"),
               "Cat": client(a.url, cat, "Cat")}
    for name, cl in clients.items():
        cl.listeners.append(lambda m, name=name: hear(name, m))
        await cl.connect(timeout=30)
    watcher = clients.pop("Cat")
    game.bots = [NetworkBot(cl, "greedy", "expert", matches=1, countdown_ms=300, pause_s=0.1,
                            on_answer=game.answer) for cl in clients.values()]
    await play([game], 240)
    await until(lambda: watcher.phase == "match_over", 30, "the watcher to see the end")
    await watcher.close()
    moves = await check_log(service.db, game)
    assert moves and game.acked
    # The same broadcasts, the same order, over the versions all three saw.
    first = max(s[0][0] for s in seen.values())
    last = min(s[-1][0] for s in seen.values())
    assert last - first > 10
    cut = {n: [text for v, text, _ in s if first <= v <= last] for n, s in seen.items()}
    assert cut["Ann"] == cut["Bob"] == cut["Cat"]
    # Every client's moves are the log's moves, in the log's order.
    updates = [m["move"] for _, _, m in seen["Cat"] if m["type"] == "update"]
    assert updates == [m["m"] for m in moves][-len(updates):]


@pytest.mark.parametrize("mode", ["handed", "relayed", "owner-takes-none"])
async def test_a_socket_handed_to_the_owner_outlives_the_process_it_reached(
        service: Service, mode: str) -> None:
    """A socket that reaches a process of this machine not owning its room is handed to the
    owner whole: SIGKILL the process it reached, and the socket still works, with no
    reconnection. With handoff off (``--no-handoff``) the same socket is relayed, dies with
    that process, and its client reconnects (through the proxy, to the owner); so it is when
    the owner takes no sockets (the process reached tries, and relays instead)."""
    if mode == "owner-takes-none":
        service.handoff = False
        owner = start(service, 1)[0]  # alone: every room is its
        made = await create(owner.url, "Ann")
        service.handoff = True
        reached = start(service, 1)[0]
    else:
        service.handoff = mode == "handed"
        first, second = start(service, 2)
        made = await create(first.url, "Ann")
        owner = await service.owner_proc(made["room"])
        reached = second if owner is first else first
    assert await service.owner_proc(made["room"]) is owner
    proxy = Proxy([reached, owner])  # the first connection goes to ``reached``
    await proxy.start()
    ann = client(proxy.url, made, "Ann")
    try:
        await ann.connect(timeout=30)
        await until(lambda: ann.room is not None, 30, "the room's state")
        reached.kill()
        # A broadcast after the kill: a second player joins through the owner.
        await join(owner.url, made["room"], "Bob")
        await until(lambda: ann.room is not None and len(ann.room["players"]) == 2, 30,
                    "the join's broadcast")
        assert (ann.reconnects == 0) is (mode == "handed"), ann.reconnects
    finally:
        await ann.close()
        await proxy.close()


async def test_rooms_created_on_one_process_spread_over_all(service: Service) -> None:
    """Every room made through one process (as a keep-alive connection, or workers sharing a
    port, bring them): each goes to the live process owning the fewest, not all to the one
    asked; its creator is seated there and can play through either process."""
    a, b = start(service, 2)
    made = [await create(a.url, f"Host{i}") for i in range(8)]
    owners = Counter([await service.owner(m["room"]) for m in made])
    assert None not in owners and len(owners) == 2 and min(owners.values()) >= 2, owners
    for m in made:
        assert m["url"] == f"{a.url}/r/{m['code']}" and m["token"] and m["seat"] == 0
    for i, m in enumerate(made[:2]):
        for url in (a.url, b.url):
            c = client(url, m, f"Host{i}")
            await c.connect(timeout=30)
            await until(lambda c=c: c.room is not None, 30, "the room's state")
            assert c.phase == "lobby" and c.room is not None
            assert [p["name"] for p in c.room["players"]] == [f"Host{i}"]
            await c.close()


async def test_owner_killed_mid_match(service: Service, quick_bots: None) -> None:
    """SIGKILL the owner of a room in play: another process takes its lease within 3 s (plus
    this busy machine's slack), rebuilds it, and the match finishes with every acknowledged
    move stored once."""
    a, b, c = start(service, 3)
    proxy = Proxy([a, b, c])
    await proxy.start()
    try:
        game = await bot_game(a.url, (proxy.url, proxy.url))
        runner = asyncio.create_task(play([game], 240))
        await until(lambda: len(game.acked) >= 5, 60, "moves before the kill")
        owner = await service.owner(game.room)
        victim = service.procs.index(await service.owner_proc(game.room))
        service.procs[victim].kill()
        killed = time.monotonic()

        async def moved() -> bool:
            return await service.owner(game.room) not in (None, owner)

        await until(moved, 15, "another process to take the room")
        taken = time.monotonic() - killed
        print(f"room taken over {taken:.2f} s after the kill")
        await runner
        await check_log(service.db, game)
        # The new owner rebuilt the room from the snapshot its match's deal stored.
        rebuilt = [line for p in service.procs if p.port != a.port
                   for line in p.log.read_text().splitlines()
                   if f"room {game.room} restored from its snapshot" in line]
        assert rebuilt, "the room was not rebuilt from its snapshot"
    finally:
        await proxy.close()


async def test_paused_owner_is_fenced(service: Service, quick_bots: None) -> None:
    """SIGSTOP an owner past its lease: another process takes the room; SIGCONT: the old
    owner's writes are refused, it steps down, and the log has no fork."""
    a, b = start(service, 2)
    game = await bot_game(a.url, (b.url, b.url))
    runner = asyncio.create_task(play([game], 240))
    await until(lambda: len(game.acked) >= 5, 60, "moves before the pause")
    owner = await service.owner(game.room)
    a = await service.owner_proc(game.room)  # the one to pause, wherever the room was made
    a.signal(signal.SIGSTOP)

    async def moved() -> bool:
        return await service.owner(game.room) not in (None, owner)

    await until(moved, 15, "another process to take the room")
    # A join sent to the paused owner: on waking it either tries to store it (refused: its
    # epoch is old) or has already stepped down and relays it to the new owner.
    async with httpx.AsyncClient(timeout=30) as http:
        late = asyncio.create_task(http.post(f"{a.url}/api/rooms/{game.room}/join",
                                             json={"name": "Late", "spectator": True}))
        await asyncio.sleep(0.5)
        a.signal(signal.SIGCONT)
        answer = await late
    assert answer.status_code in (200, 503), answer.text
    await until(lambda: "stepped down" in a.log.read_text(), 30, "the old owner to step down")
    log_text = a.log.read_text()
    print(f"the late join: {answer.status_code}; refused writes: "
          f"{log_text.count('no longer the newest')}")
    if answer.status_code == 503:
        assert "no longer the newest" in log_text
    await runner
    await check_log(service.db, game)
    assert await service.owner(game.room) != owner


@pytest.mark.skipif(
    not os.environ.get("NERTZ_CHAOS"),
    reason="NERTZ_CHAOS=1 runs it (2 to 3 minutes). Out of the blocking run until the fix of its "
           "rare stall has a record (docs/cluster.md): .ci/run runs it apart, not blocking")
async def test_chaos(service: Service, quick_bots: None) -> None:
    """20 rooms of bots over three processes behind a proxy, playing match after match while
    a random process is SIGKILLed and restarted every 5 s for 60 s: every match finishes, and
    no acknowledged move is lost or applied twice. About 2 to 3 minutes on this machine."""
    start(service, 3)
    proxy = Proxy(service.procs)
    await proxy.start()
    rng = random.Random(10)
    try:
        games = [await bot_game(proxy.url, (proxy.url, proxy.url), matches=0)
                 for _ in range(20)]
        runner = asyncio.create_task(play(games, 900))
        began = time.monotonic()
        kills = 0
        while kills < 12:
            # Every 5 s on the clock, whatever state the processes are in: a process still
            # starting may be killed again, and all three may be down for a moment.
            await asyncio.sleep(max(0.0, began + 5 * (kills + 1) - time.monotonic()))
            assert not runner.done(), runner
            service.restart(rng.randrange(len(service.procs)))
            kills += 1
        for proc in service.procs:
            await asyncio.to_thread(proc.wait_ready, READY_SECONDS)
        # The hosts start no new match: each room plays out the one it is in.
        for game in games:
            game.bots[0].host_duties = False
        for game in games:
            host = game.bots[0].client
            try:
                await until(lambda host=host: host.phase == "match_over", 300,
                            f"room {game.room} to finish its match")
            except AssertionError:
                await explain_stall(service, game)
                raise
        for game in games:
            for bot in game.bots:
                bot.stop()
        await runner
        matches = 0
        store = await Store.open(service.db)
        try:
            for game in games:
                await check_log(store, game)
                matches += sum(b.stats.matches for b in game.bots[:1])
        finally:
            await store.close()
        logs = "".join(p.log.read_text() for p in service.procs)
        rebuilt = logs.count(" restored from ")
        from_snapshots = logs.count(" restored from its snapshot ")
        print(f"{kills} kills, {matches} matches, "
              f"{sum(len(g.acked) for g in games)} acknowledged moves, {rebuilt} rebuilds "
              f"({from_snapshots} from a snapshot)")
        assert from_snapshots, "no failover went through a snapshot"
    finally:
        await proxy.close()


def test_multi_process_serve_names_what_is_missing(capsys: pytest.CaptureFixture[str],
                                                   pg_url: str) -> None:
    """``--workers`` above 1 (or ``--redis``) refuses SQLite, an unreachable Redis and an
    unreachable database, naming each, before anything starts."""
    from nertz.server.serve import serve

    assert serve("127.0.0.1", 0, None, workers=2) == 2
    assert "needs a database they all share" in capsys.readouterr().out
    assert serve("127.0.0.1", 0, "sqlite:///x.db", redis=REDIS) == 2
    assert "--db postgresql://" in capsys.readouterr().out
    assert serve("127.0.0.1", 0, pg_url, workers=2, redis="redis://127.0.0.1:1/0") == 2
    assert "Redis is not reachable at redis://127.0.0.1:1/0" in capsys.readouterr().out
    nowhere = "postgresql://postgres@127.0.0.1:1/nertz"
    assert serve("127.0.0.1", 0, nowhere, workers=2) == 2
    assert f"the database is not reachable at {nowhere}" in capsys.readouterr().out
    assert serve("127.0.0.1", 0, None, workers=0) == 2
    assert "--workers must be at least 1" in capsys.readouterr().out


async def test_workers_share_one_port(service: Service, quick_bots: None) -> None:
    """``nertz serve --workers 2``: two processes on one port, one service: a room made on
    one is joined and played through whichever worker each connection reaches."""
    import subprocess
    import sys

    from cluster_support import ROOT, free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (service.logs / "workers.log").open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "nertz.cli", "serve", "--port", str(port), "--db", service.db,
         "--workers", "2", "--redis-prefix", service.prefix, "--rooms-per-minute", "0"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            async def up() -> bool:
                try:
                    return (await http.get(url + "/healthz")).status_code == 200
                except httpx.HTTPError:
                    return False

            await until(up, 90, "the workers to answer")
        games = [await bot_game(url, (url, url)) for _ in range(4)]
        await play(games, 240)
        for game in games:
            await check_log(service.db, game)
    finally:
        stop_process(proc)
        log.close()
