"""Snapshots (issue 10, item 5), on SQLite and PostgreSQL: a table rebuilt from its newest
snapshot and the entries after it is the table its whole log rebuilds, reading a bounded part
of the log; a former owner cannot write a snapshot; a resent action id gets its first answer
across a snapshot and a restart; finished matches' replays stay whole; the migration."""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine
from test_server_store import picture

from nertz.bots.base import Observation
from nertz.bots.basic import GreedyBot
from nertz.moves import Move
from nertz.rules import Rules
from nertz.server import protocol
from nertz.server.room.bots import RoomSeat
from nertz.server.room.lobby import Player
from nertz.server.room.messages import SENDER, Ack, Effects, Rejected
from nertz.server.room.snapshot import FORMAT
from nertz.server.room.table import Table
from nertz.server.store import MIGRATIONS, Fenced, LogEntry, Store, normalise_url

pytestmark = pytest.mark.anyio

SPEC = {"preset": "pagat", "rounds": 5, "nertz_pile_size": 5, "call": "auto"}
"""Five short rounds a match (five-card Nertz piles, called as a pile empties)."""

DEALS = ("start", "next")


async def until_phase(table: Table, *phases: str) -> None:
    """Wait (polled, generous deadline) for the room's clock to bring one of ``phases``."""
    for _ in range(3000):
        if table.phase in phases:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the table stayed {table.phase}, not {phases}")


class Seats:
    """Two people at a table of their own, played by greedy bots' choices through
    :meth:`Table.handle` with action ids, as a client's moves are."""

    def __init__(self, table: Table, people: list[Player]) -> None:
        self.table = table
        self.people = people
        self.bots: dict[int, GreedyBot] = {}
        self.sent = 0
        self.answers: dict[str, Any] = {}
        """Each action id's answer, as its sender got it."""

    @classmethod
    async def open(cls, store: Store, every: int, epoch: int | None = None) -> Seats:
        room = secrets.token_hex(8)
        if epoch is not None:
            assert await store.fence(room, epoch)
        table = await Table.create(store, Rules.from_spec(SPEC), 2, room, room[:8].upper(),
                                   fair_races=False, epoch=epoch)
        table.snapshot_every = every
        ann, _, _ = table.join("Ann")
        bob, _, _ = table.join("Bob")
        seats = cls(table, [ann, bob])
        await seats.command(ann, protocol.Start(0))
        return seats

    async def command(self, player: Player, message: protocol.ClientMessage) -> list[Any]:
        fx = self.table.handle(player, message)
        if fx.committed is not None:
            await fx.committed
        await self.table.settled()
        return [s.message for s in fx.sends if s.to == SENDER]

    async def move(self, player: Player, text: str | None = None) -> str:
        """One play of ``player`` (its bot's choice unless ``text``): its action id."""
        table = self.table
        assert table.round is not None and player.seat is not None
        if text is None:
            bot = self.bots.get(player.seat)
            if bot is None:
                bot = self.bots[player.seat] = GreedyBot()
                bot.start(player.seat, table.rules)
            move = bot.decide(Observation.from_round(table.round, player.seat, table.now_t()))
            text = "STUCK" if move is None else str(move)
        self.sent += 1
        aid = f"{player.name}-{self.sent}"
        player.moves.tokens = 10.0  # not the throttle under test
        answers = await self.command(player, protocol.Play(aid, text))
        assert answers, f"no answer to {aid}"
        self.answers[aid] = answers[0]
        return aid

    async def play(self, moves: int | None = None) -> None:
        """Play ``moves`` moves (None: until the round is over), taking turns."""
        await until_phase(self.table, "playing")
        made = 0
        while self.table.phase == "playing" and (moves is None or made < moves):
            await self.move(self.people[made % 2])
            made += 1
        if moves is None:
            await until_phase(self.table, "round_over", "match_over")

    async def next_round(self) -> None:
        self.bots = {}
        host = self.people[0]
        if self.table.phase == "match_over":
            await self.command(host, protocol.Rematch())
        else:
            await self.command(host, protocol.NextRound(0))
        await until_phase(self.table, "playing")


async def rebuilds(store: Store, table: Table) -> tuple[Table, Table, int]:
    """The table rebuilt from its whole log, and from its snapshot with the entries after it;
    and how many entries that second rebuild read."""
    whole = await store.load_log(table.id)
    full = await Table.restore(store, table.id, table.code, table.rules, 2, whole)
    snapshot, entries = await store.load_room(table.id, FORMAT)
    fast = await Table.restore(store, table.id, table.code, table.rules, 2, entries,
                               snapshot=snapshot)
    return full, fast, len(entries)


def last_deal(entries: list[LogEntry]) -> int:
    return max(e.seq for e in entries if e.kind in DEALS)


async def test_a_rebuild_from_the_snapshot_is_the_whole_logs_and_reads_a_bounded_part(
        store: Store) -> None:
    every = 40
    seats = await Seats.open(store, every)
    table = seats.table
    # Two matches of five rounds; halfway through each round and at its end, the rebuilds
    # are compared with the live table and the entries read are counted.
    checks = 0
    for match in range(2):
        for rnd in range(5):
            if match or rnd:
                await seats.next_round()
            for moves in (6, None):
                await seats.play(moves)
                full, fast, read = await rebuilds(store, table)
                try:
                    assert picture(fast) == picture(full) == picture(table)
                    assert fast.host == table.host and fast.seq == full.seq == table.seq
                finally:
                    full.close()
                    fast.close()
                whole = await store.load_log(table.id)
                # At most the entries since the round's deal and fewer than ``every`` before.
                assert read <= table.seq - last_deal(whole) + every - 1
                checks += 1
        assert table.phase == "match_over"
        await table.settled()
        # The finished match's replay is whole, and is what both rebuilds hold.
        assert table.match_id is not None and table.recorder is not None
        saved = await store.get_match(table.match_id)
        assert saved == json.loads(json.dumps(table.recorder.file.to_json()))
    whole = await store.load_log(table.id)
    snapshot, entries = await store.load_room(table.id, FORMAT)
    assert snapshot is not None and snapshot.seq > 0 and snapshot.epoch is None
    assert len(entries) < len(whole) / 4, (len(entries), len(whole))
    assert [e.seq for e in entries] == list(range(snapshot.seq, table.seq))
    assert entries[0].kind in DEALS
    assert len(await store.room_matches(table.id)) == 2
    assert checks == 20
    table.close()


async def test_a_resent_action_gets_its_first_answer_across_a_snapshot_and_a_restart(
        store_url: str) -> None:
    store = await Store.open(store_url)
    seats = await Seats.open(store, every=1)
    table = seats.table
    ann, bob = seats.people
    await seats.play(8)
    refused = await seats.move(ann, "Q-Z")  # a person's refusal is stored as its answer
    await seats.play()
    first_round = dict(seats.answers)
    await seats.next_round()  # the deal stores a snapshot: round one is in it, not after it
    await seats.play(6)
    assert isinstance(seats.answers[refused], Rejected)
    assert sum(isinstance(a, Ack) for a in first_round.values()) >= 8
    seq = table.seq
    table.close()
    await store.close()

    store = await Store.open(store_url)  # a restart: nothing but the database
    try:
        snapshot, entries = await store.load_room(table.id, FORMAT)
        assert snapshot is not None
        read_ids = {e.data.get("id") for e in entries}
        assert not read_ids & set(first_round), "round one's entries were read again"
        rebuilt = await Table.restore(store, table.id, table.code, table.rules, 2, entries,
                                      snapshot=snapshot)
        again = Seats(rebuilt, [rebuilt.players[ann.id], rebuilt.players[bob.id]])
        for aid, answer in seats.answers.items():
            player = again.people[0] if aid.startswith("Ann") else again.people[1]
            # The same text again: the answer it first got (its update's version included),
            # and nothing applied or stored a second time.
            text = answer.move if isinstance(answer, Ack) else "Q-Z"
            assert await again.command(player, protocol.Play(aid, text)) == [answer], aid
        assert rebuilt.seq == seq
        rebuilt.close()
    finally:
        await store.close()


async def test_a_former_owner_cannot_write_a_snapshot(store: Store) -> None:
    room = secrets.token_hex(8)
    await store.create_room(room, room[:8].upper(), "pagat", 2)
    assert await store.fence(room, 1)
    await store.append(room, 0, "created", {}, epoch=1)
    assert await store.fence(room, 2)  # another process took the room
    with pytest.raises(Fenced):
        await store.append(room, 1, "next", {}, epoch=1, snapshot=(FORMAT, {"stale": True}))
    snapshot, entries = await store.load_room(room, FORMAT)
    assert snapshot is None and [e.seq for e in entries] == [0]
    await store.append(room, 1, "next", {}, epoch=2, snapshot=(FORMAT, {"fresh": True}))
    snapshot, entries = await store.load_room(room, FORMAT)
    assert snapshot is not None and snapshot.data == {"fresh": True} and snapshot.epoch == 2
    assert [e.seq for e in entries] == [1]
    # A snapshot of another form (another version's) is passed over: the whole log is read.
    snapshot, entries = await store.load_room(room, FORMAT + 1)
    assert snapshot is None and [e.seq for e in entries] == [0, 1]


async def test_a_table_fenced_at_a_deal_stores_neither_the_deal_nor_its_snapshot(
        store: Store) -> None:
    seats = await Seats.open(store, every=1, epoch=1)
    table = seats.table
    await seats.play()
    assert table.phase == "round_over"
    before, _ = await store.load_room(table.id, FORMAT)
    assert await store.fence(table.id, 2)  # a newer owner, while this one thinks it owns it
    table.handle(seats.people[0], protocol.NextRound(0))
    await table.settled()
    assert table.broken
    after, entries = await store.load_room(table.id, FORMAT)
    assert after == before
    # The refused deal (and what followed it in memory) is not in the log.
    assert entries[-1].kind == "close" and entries[-1].seq < table.seq - 1
    assert [e.kind for e in await store.load_log(table.id)][-1] == "close"
    table.close()


def _migrate(sync_conn: Any, action: str, revision: str) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = sync_conn
    getattr(command, action)(cfg, revision)


async def test_the_migration_adds_snapshots_to_a_stored_room(store_url: str) -> None:
    engine = create_async_engine(normalise_url(store_url))
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_migrate, "upgrade", "0004")
            await conn.execute(sa.text(
                "INSERT INTO room_log (room_id, seq, kind, data, at) "
                "VALUES ('old', 0, 'created', '{}', 1.0), ('old', 1, 'joined', '{}', 2.0)"))
        store = await Store.open(store_url)  # applies 0005
        try:
            snapshot, entries = await store.load_room("old", FORMAT)
            assert snapshot is None and [e.kind for e in entries] == ["created", "joined"]
            await store.append("old", 2, "start", {}, snapshot=(FORMAT, {"s": 1}))
            snapshot, entries = await store.load_room("old", FORMAT)
            assert snapshot is not None and snapshot.seq == 2 and len(entries) == 1
        finally:
            await store.close()
        async with engine.begin() as conn:
            await conn.run_sync(_migrate, "downgrade", "0004")
            names = await conn.run_sync(lambda c: set(sa.inspect(c).get_table_names()))
            assert "room_snapshots" not in names and "room_log" in names
            await conn.run_sync(_migrate, "upgrade", "head")
            version = (await conn.execute(sa.text("SELECT version_num FROM alembic_version")))
            assert version.scalar() == "0007"
    finally:
        await engine.dispose()


def test_a_bots_new_driver_never_reuses_its_predecessors_action_ids() -> None:
    # A seat's answers outlive its driver (a snapshot keeps them, and a rebuild makes a new
    # driver): ids numbered from 1 again came back as another move's, refused as reused.
    sent: list[str] = []

    class Host:
        changed = asyncio.Event()

        def submit(self, player: Player, message: Any) -> Effects:
            sent.append(message.id)
            return Effects()

    bot = Player("bot-1", "Greedy bot 2", None, 1, bot="greedy")

    async def main() -> None:
        for _ in range(2):  # the driver before a rebuild, and the one after
            seat = RoomSeat(Host(), bot)  # type: ignore[arg-type]
            await seat.play(Move.parse("T"))
            await seat.play(Move.parse("T"))

    asyncio.run(main())
    assert len(set(sent)) == 4 and all(protocol.valid_id(i) for i in sent), sent
