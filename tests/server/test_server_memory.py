"""What a room keeps in memory stays bounded however long it lives (issue 8 item 12: the soak's
server grew with every room that came and went)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

import nertz.server.hub as hub_module
from nertz.bots import GreedyBot, Observation
from nertz.rules import Rules
from nertz.server import protocol
from nertz.server.edge import fanout as fanout_module
from nertz.server.edge.fanout import HISTORY, HISTORY_BYTES, Fanout
from nertz.server.hub import Hub
from nertz.server.live import LiveRoom
from nertz.server.room.lobby import Player
from nertz.server.room.messages import EVERYONE, CaughtUp, Effects, Pong, Send
from nertz.server.room.phase import Phase
from nertz.server.store import Store
from nertz.views import view


class ListSink:
    """A socket that keeps what it is sent."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        pass


def broadcast(fanout: Fanout, version: int, size: int) -> None:
    """One broadcast of about ``size`` bytes, committed at once."""
    message = Pong(id="x" * size, sent=version, server=0)
    fanout.publish(Effects([Send(EVERYONE, message, version)]))


def test_the_history_is_bounded_in_bytes_and_keeps_the_newest() -> None:
    fanout = Fanout()
    for v in range(1, HISTORY + 1):
        broadcast(fanout, v, 2000)  # 512 updates of 2 KB: a megabyte if kept by count only
    kept = [v for v, _ in fanout.history]
    assert sum(len(data) for _, data in fanout.history) <= HISTORY_BYTES
    assert kept == list(range(HISTORY - len(kept) + 1, HISTORY + 1))  # the newest, in order
    assert len(kept) >= HISTORY_BYTES // 2100
    # One broadcast larger than the whole bound is still kept (the newest always is).
    broadcast(fanout, HISTORY + 1, 2 * HISTORY_BYTES)
    assert [v for v, _ in fanout.history] == [HISTORY + 1]
    # Small broadcasts are still kept by count.
    for v in range(HISTORY + 2, 3 * HISTORY):
        broadcast(fanout, v, 10)
    assert len(fanout.history) == HISTORY


def test_a_client_behind_the_kept_history_gets_the_whole_state() -> None:
    fanout = Fanout()
    last = 200
    for v in range(1, last + 1):
        broadcast(fanout, v, 2000)
    oldest = fanout.history[0][0]
    assert oldest > 2

    def whole() -> Pong:
        return Pong(id="whole", sent=0, server=0)

    def caught_up() -> CaughtUp:
        return CaughtUp(v=last, you=None)

    near, far = ListSink(), ListSink()
    fanout.catch_up(near, oldest - 1, last, whole, caught_up)
    fanout.catch_up(far, oldest - 2, last, whole, caught_up)
    assert len(near.sent) == last - oldest + 2 and near.sent[-1] == protocol.encode(caught_up())
    assert far.sent == [protocol.encode(whole())]


def test_the_history_count_bound_is_read_at_run_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests shrink it (test_server_ws): the bound is read when a broadcast is kept.
    monkeypatch.setattr(fanout_module, "HISTORY", 4)
    fanout = Fanout()
    for v in range(1, 10):
        broadcast(fanout, v, 10)
    assert [v for v, _ in fanout.history] == [6, 7, 8, 9]


def test_rooms_that_fell_idle_together_close_in_one_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Idle rooms leave memory together and are marked closed in one transaction: closed one
    by one, each waiting its write behind the busy log's, rooms fell idle faster than they left
    memory and the soak's server kept growing."""
    monkeypatch.setattr(hub_module, "LATENCY_SECONDS", 0.02)

    async def main() -> tuple[int, list[str]]:
        store = await Store.open(f"sqlite:///{tmp_path / 'idle.db'}")
        hub = Hub(store, start_bots=False, idle_seconds=3600)
        try:
            ids = [(await hub.create(Rules.from_spec("pagat"), 2)).id for _ in range(30)]
            writes = 0
            transaction = store.transaction

            def counted() -> Any:
                nonlocal writes
                writes += 1
                return transaction()

            monkeypatch.setattr(store, "transaction", counted)
            hub.idle_seconds = 0.0  # every room is idle at the next turn of the hub's timer
            deadline = time.monotonic() + 30
            while True:
                # Out of memory first, then marked closed: wait for both.
                rows = [await store.find_room(i) for i in ids]
                statuses = [row.status if row is not None else "gone" for row in rows]
                if not hub.rooms and statuses == ["closed"] * len(ids):
                    break
                assert time.monotonic() < deadline, f"{len(hub.rooms)} rooms never closed"
                await asyncio.sleep(0.02)
            return writes, statuses
        finally:
            await hub.close()
            await store.close()

    writes, statuses = asyncio.run(main())
    assert statuses == ["closed"] * 30
    assert writes == 1


def test_an_empty_room_between_matches_keeps_no_broadcasts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A room nobody is in, with no match being played, forgets its catch-up history at the
    hub's next turn (it waits out its idle time holding nothing for nobody); a room with a
    socket keeps it, and a socket coming back to the emptied room gets the whole state."""
    monkeypatch.setattr(hub_module, "LATENCY_SECONDS", 0.02)

    async def main() -> tuple[int, list[str]]:
        store = await Store.open(f"sqlite:///{tmp_path / 'quiet.db'}")
        hub = Hub(store, start_bots=False)
        try:
            rooms, sinks = [], []
            for i in range(2):
                room = await hub.create(Rules.from_spec("pagat"), 2)
                host, _ = await room.join(f"Host {i}", False)
                sink = ListSink()
                room.attach(sink, host, None)
                await room.join(f"Guest {i}", False)  # a broadcast (the room changed)
                rooms.append(room)
                sinks.append(sink)
            await asyncio.gather(*(r.settled() for r in rooms))
            assert all(r.fanout.history for r in rooms)
            quiet, busy = rooms
            quiet.detach(sinks[0])
            deadline = time.monotonic() + 30
            while quiet.fanout.history:
                assert time.monotonic() < deadline, "the empty room kept its history"
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.1)  # a few more turns of the hub's timer
            back = ListSink()
            host = next(p for p in quiet.table.players.values() if p.name == "Host 0")
            quiet.attach(back, host, 1)
            while not back.sent:
                assert time.monotonic() < deadline, "nothing came back"
                await asyncio.sleep(0.02)
            return len(busy.fanout.history), [json.loads(data)["type"] for data in back.sent]
        finally:
            await hub.close()
            await store.close()

    busy, kinds = asyncio.run(main())
    assert busy > 0
    assert kinds[0] == "state"


def test_a_room_someone_came_back_to_while_it_was_closing_stays(tmp_path: Path) -> None:
    """Idle rooms close once the hub has its turn (its lock, which a rebuild may hold): a room
    someone came back to meanwhile is left out, open, with its socket."""

    async def main() -> tuple[bool, bool, str]:
        store = await Store.open(f"sqlite:///{tmp_path / 'back.db'}")
        hub = Hub(store, start_bots=False, idle_seconds=3600)
        try:
            room = await hub.create(Rules.from_spec("pagat"), 2)
            host, _ = await room.join("Host", False)
            await hub._lock.acquire()
            closing = asyncio.create_task(hub.close_rooms([room]))
            deadline = time.monotonic() + 30
            while not getattr(hub._lock, "_waiters", None):  # the close waits its turn
                assert time.monotonic() < deadline, "the close never waited for the lock"
                await asyncio.sleep(0.01)
            room.attach(ListSink(), host, None)
            hub._lock.release()
            await closing
            row = await store.find_room(room.id)
            return room.id in hub.rooms, room.open, row.status if row is not None else "gone"
        finally:
            await hub.close()
            await store.close()

    assert asyncio.run(main()) == (True, True, "open")


async def play_out(room: LiveRoom, host: Player) -> None:
    """The host plays its seat greedily (the bots play theirs) until the match is over."""
    sink = ListSink()
    room.attach(sink, host, None)
    for _ in range(3):
        room.handle(host, protocol.AddBot(level="expert", bot="greedy"), sink)
    room.handle(host, protocol.Start(countdown_ms=0), sink)
    bot, n = GreedyBot(), 0
    table = room.table
    deadline = time.monotonic() + 120
    while table.phase is not Phase.MATCH_OVER:
        assert time.monotonic() < deadline, f"the match never ended ({table.phase})"
        await asyncio.sleep(0.01)
        if table.round is None or table.phase is not Phase.PLAYING or host.seat is None:
            continue
        n += 1
        bot.start(host.seat, table.rules, n)
        choice = bot.decide(Observation.from_view(view(table.round, host.seat).to_json(),
                                                  table.rules))
        room.handle(host, protocol.Play(id=f"h{n}", move="T" if choice is None else str(choice)),
                    sink)
    room.detach(sink)


def test_a_finished_room_nobody_is_in_rests_out_of_memory_then_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast_bots: None
) -> None:
    """A room whose match is over, with nobody in it, leaves memory after REST_SECONDS but stays
    open: someone coming back rebuilds it from its log. Left alone for its idle time, it is
    marked closed (and the hub forgets it)."""
    monkeypatch.setattr(hub_module, "LATENCY_SECONDS", 0.02)
    monkeypatch.setattr(hub_module, "REST_SECONDS", 0.05)

    async def main() -> list[Any]:
        store = await Store.open(f"sqlite:///{tmp_path / 'rest.db'}")
        hub = Hub(store, idle_seconds=3600)
        seen: list[Any] = []
        try:
            room = await hub.create(Rules.from_spec(
                {"preset": "pagat", "rounds": 1, "nertz_pile_size": 6}), 4)
            host, _ = await room.join("Host", False)
            await play_out(room, host)
            deadline = time.monotonic() + 30
            while room.id in hub.rooms:
                assert time.monotonic() < deadline, "the finished room stayed in memory"
                await asyncio.sleep(0.02)
            row = await store.find_room(room.id)
            seen.append(row.status if row is not None else "gone")
            back = await hub.get(room.id)  # someone came back: rebuilt from its log
            seen.append(None if back is None else back.table.phase)
            assert back is not None
            while back.id in hub.rooms:  # left alone again
                assert time.monotonic() < deadline, "the rebuilt room stayed in memory"
                await asyncio.sleep(0.02)
            hub.idle_seconds = 0.0
            while hub._resting:
                assert time.monotonic() < deadline, "the resting room never closed"
                await asyncio.sleep(0.02)
            row = await store.find_room(room.id)
            seen.append(row.status if row is not None else "gone")
            seen.append(await hub.get(room.id))
            return seen
        finally:
            await hub.close()
            await store.close()

    assert asyncio.run(main()) == ["open", Phase.MATCH_OVER, "closed", None]
