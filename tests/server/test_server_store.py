"""The store on SQLite and on PostgreSQL: migrations, group commit, the log, rebuilding a table
from its log, live rooms, finished matches."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import msgspec
import pytest
import sqlalchemy as sa
from server_support import until_playing

from nertz.rules import Rules
from nertz.server import protocol
from nertz.server.room.table import Table
from nertz.server.store import Store, StoreError

pytestmark = pytest.mark.anyio


def rid() -> str:
    return secrets.token_hex(8)


async def test_migrations_apply(store: Store, store_url: str) -> None:
    async with store.engine.connect() as conn:
        names = await conn.run_sync(lambda c: set(sa.inspect(c).get_table_names()))
        version = (await conn.execute(sa.text("SELECT version_num FROM alembic_version"))).scalar()
    assert {"rooms", "room_log", "matches", "alembic_version"} <= names
    assert version
    # Opening again applies nothing new and keeps the data.
    await store.create_room(room := rid(), room[:6].upper(), "pagat", 4)
    again = await Store.open(store_url)
    try:
        assert (await again.find_room(room)) is not None
    finally:
        await again.close()


async def test_group_commit_keeps_order(store: Store) -> None:
    rooms = [rid() for _ in range(5)]
    for r in rooms:
        await store.create_room(r, r[:8].upper(), "pagat", 2)
    before = store.commits
    futures = []
    for seq in range(60):
        for r in rooms:
            futures.append(store.append_nowait(r, seq, "move", {"m": f"{r[:2]}{seq}", "n": seq}))
        if seq % 20 == 0:
            await asyncio.sleep(0)  # let the writer take a batch meanwhile
    await asyncio.gather(*futures)
    assert all(f.done() and f.exception() is None for f in futures)
    assert store.commits - before < 60 * 5 / 4  # grouped, not one commit an entry
    for r in rooms:
        log = await store.load_log(r)
        assert [e.seq for e in log] == list(range(60))
        assert [e.data for e in log] == [{"m": f"{r[:2]}{s}", "n": s} for s in range(60)]
        assert all(e.kind == "move" for e in log)
        assert [e.at for e in log] == sorted(e.at for e in log)


async def test_log_round_trips(store: Store) -> None:
    room = rid()
    await store.create_room(room, room[:8].upper(), {"preset": "pagat", "work_piles": 5}, 3)
    data: list[dict[str, Any]] = [
        {"player": "p1", "name": "<b>Zoë</b> 🂡 \"q\"", "seat": None, "hand": 0},
        {"nested": {"a": [1, 2.5, None, True, "x"]}, "big": 2**48 + 1},
        {},
    ]
    for i, d in enumerate(data):
        await store.append(room, i, f"kind{i}", d)
    log = await store.load_log(room)
    assert [(e.seq, e.kind, e.data) for e in log] == [
        (i, f"kind{i}", d) for i, d in enumerate(data)
    ]
    row = await store.find_room(room[:8].lower())
    assert row is not None and row.id == room and row.seats == 3
    assert row.rules == {"preset": "pagat", "work_piles": 5}
    assert await store.load_log("nobody") == []
    assert await store.find_room("nobody") is None


async def test_a_refused_entry_holds_its_room_until_the_log_is_reloaded(store: Store) -> None:
    room, other = rid(), rid()
    await store.create_room(room, room[:8].upper(), "pagat", 2)
    await store.create_room(other, other[:8].upper(), "pagat", 2)
    await store.append(room, 0, "a", {})
    with pytest.raises(StoreError):
        await store.append(room, 0, "dup", {})  # the same place in the log twice
    # A later entry of that room would leave a gap in its log: refused too, until the room is
    # rebuilt from what is stored. Other rooms write on.
    with pytest.raises(StoreError):
        await store.append(room, 1, "b", {})
    await store.append(other, 0, "x", {})
    assert [e.kind for e in await store.load_log(room)] == ["a"]
    await store.append(room, 1, "b", {})
    assert [e.kind for e in await store.load_log(room)] == ["a", "b"]


async def test_live_rooms(store: Store) -> None:
    a, b = rid(), rid()
    await store.create_room(a, a[:8].upper(), "pagat", 2)
    await store.create_room(b, b[:8].upper(), "pagat", 2)
    await store.set_status(b, "closed")
    live = {r.id for r in await store.live_rooms()}
    assert a in live and b not in live


async def test_save_and_get_match(store: Store) -> None:
    room, m1, m2 = rid(), rid(), rid()
    replay = {"rules": "pagat", "players": ["Ann", "<i>Bob</i>"], "seed": 5, "rounds": []}
    await store.save_match(m1, room, replay, 1)
    await asyncio.sleep(0.01)
    await store.save_match(m2, room, replay, None)
    assert await store.get_match(m1) == replay
    assert await store.get_match("nope") is None
    assert list(await store.room_matches(room)) == [m1, m2]


def picture(table: Table) -> dict[str, Any]:
    """Everything a table holds that its log must rebuild."""
    rnd = table.round
    assert rnd is not None and table.match is not None and table.recorder is not None
    snap = msgspec.to_builtins(table.snapshot(None))
    snap["table"].pop("t")
    for p in snap["room"]["players"]:
        # When an absent person's seat falls vacant counts from the process's start (or the
        # join): a runtime clock, not something the log holds.
        p.pop("away_until", None)
    return {
        "snapshot": snap | {"v": None},
        "tableaus": [(t.nertz, t.work, t.down, t.stock, t.waste) for t in rnd.tableaus],
        "foundations": [(f.cards, f.owners, f.times) for f in rnd.foundations],
        "stuck": rnd.stuck,
        "totals": table.match.totals,
        "replay": table.recorder.file.to_json(),
        "players": {p.id: (p.name, p.token_hash, p.seat, p.hand, p.bot, p.level, p.ready)
                    for p in table.players.values()},
        "phase": table.phase,
        "last_t": table.last_t,
        # What a snapshot carries besides (tests/server/test_server_snapshots.py): every answer
        # a resent action id gets, the match's inner state, the automation watch.
        "answers": {p.id: [(aid, msgspec.to_builtins(a)) for aid, a in p.answers.items()]
                    for p in table.players.values()},
        "match": (table.match.seed, table.match.nertz_sizes, table.match.pot,
                  [(r.index, str(r.score.ended), r.score.caller,
                    [seat.to_json() for seat in r.score.seats], r.nertz_sizes, r.pot_in,
                    r.pot_out) for r in table.match.results]),
        "last_result": None if table.last_result is None else table.last_result.index,
        "watch": table.watch.to_json(),
        "flags": [f.to_json() for f in table.flags],
        "finished": list(table.archive.finished),
        "facts": (table.match_number, table.match_id, table.same_deal, table.fair_option,
                  table.countdown_ms, table.seq, table.rules.to_spec(), table.lobby.teams),
    }


async def test_table_rebuilt_from_its_log(store: Store) -> None:
    rules = Rules.from_spec({"preset": "pagat", "target_score": 1000})
    room = rid()
    table = await Table.create(store, rules, 3, room, room[:8].upper())
    ann, _, _ = table.join("Ann")
    bob, _, _ = table.join("Bob")
    cy, _, _ = table.join("Cy")
    table.handle(bob, protocol.Ready(True))
    table.handle(ann, protocol.Start(0))
    # The deal follows the countdown on the room's clock: wait for it, however busy the machine.
    await until_playing(table)
    assert table.round is not None
    people = [ann, bob, cy]
    for i in range(60):
        p = people[i % 3]
        assert p.seat is not None
        moves = table.round.legal_moves(p.seat)
        move = next((m for m in moves if str(m) not in ("NERTZ", "STUCK")), None)
        if table.round.ended is not None:
            break
        table.handle(p, protocol.Play(f"a{i}", str(move) if move else "T"))
        p.moves.tokens = 10.0  # not the throttle under test
        # A play another seat could answer waits out the fair-race window: let it be decided
        # before the next seat picks its move, or a busy machine turns later picks stale.
        await table.settled()
    # a rejection changes nothing, stores nothing
    table.handle(ann, protocol.Play("bad", "Q-Z"))
    await table.settled()
    assert table.round.moves_played > 20
    entries = await store.load_log(room)
    assert [e.seq for e in entries] == list(range(len(entries))) and len(entries) == table.seq
    rebuilt = await Table.restore(store, room, table.code, rules, 3, entries)
    assert picture(rebuilt) == picture(table)
    assert rebuilt.host == table.host and rebuilt.seq == table.seq
    table.close()
    rebuilt.close()


async def test_the_sqlite_writer_thread_answers_in_order_and_stops(tmp_path: Any) -> None:
    """The SQLite log writer's own thread (a queue there, ``call_soon_threadsafe`` back) runs
    calls one at a time in order, hands back results and exceptions, and is gone after
    ``close``; a writer never used closes without starting one."""
    import threading

    from nertz.server.log_writer import SqliteLogWriter

    SqliteLogWriter(str(tmp_path / "unused.db"), 1.0)  # never started: nothing to stop
    await SqliteLogWriter(str(tmp_path / "unused.db"), 1.0).close()
    writer = SqliteLogWriter(str(tmp_path / "w.db"), 1.0)
    seen: list[int] = []

    def note(n: int) -> int:
        assert threading.current_thread().name == "nertz-log"
        seen.append(n)
        return n * 2

    answers = await asyncio.gather(*(writer._call(lambda n=n: note(n)) for n in range(50)))
    assert answers == [n * 2 for n in range(50)] and seen == list(range(50))

    def fail() -> None:
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        await writer._call(fail)
    thread = writer._thread
    assert thread is not None and thread.is_alive()
    await writer.close()
    assert not thread.is_alive()


async def test_the_sqlite_writer_commits_on_the_loop_and_waits_for_a_lock_on_its_thread(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits go straight through on the event loop's thread (no writer thread is started
    for them); one that meets another process's write lock waits for it on the thread,
    without holding up the loop, and lands once the lock is let go; every
    ``CHECKPOINT_EVERY`` commits a checkpoint runs on the thread, the loop's own connection
    never making one."""
    import sqlite3

    from nertz.server import log_writer
    from nertz.server.log_writer import SqliteLogWriter

    path = str(tmp_path / "w.db")
    setup = sqlite3.connect(path, isolation_level=None)
    setup.execute("PRAGMA journal_mode=WAL")
    setup.executescript(
        "CREATE TABLE room_log (room_id TEXT, seq INTEGER, kind TEXT, data TEXT, at REAL);"
        "CREATE TABLE room_epochs (room_id TEXT PRIMARY KEY, epoch INTEGER);"
        "CREATE TABLE room_snapshots (room_id TEXT PRIMARY KEY, seq INTEGER, format INTEGER,"
        " epoch INTEGER, data TEXT, at REAL);"
        "INSERT INTO room_epochs VALUES ('r', 2);")
    monkeypatch.setattr(log_writer, "CHECKPOINT_EVERY", 3)
    hops: list[Any] = []  # what was sent to the writer's thread
    writer = SqliteLogWriter(path, 5.0)
    real_call = writer._call

    async def spying_call(fn: Any) -> Any:
        hops.append(fn)
        return await real_call(fn)

    writer._call = spying_call  # type: ignore[method-assign]
    try:
        assert await writer.commit([("r", 0, "move", "{}", 1.0)], {"r": 2}, []) == set()
        assert await writer.commit([("r", 1, "move", "{}", 1.0)], {"r": 1}, []) == {"r"}
        assert writer._thread is None and hops == []  # no hop for either
        # Another process takes the write lock: the next commit waits for it on the thread.
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        pending = asyncio.ensure_future(
            writer.commit([("r", 1, "move", "{}", 2.0)], {"r": 2}, []))
        ticks = 0
        while ticks < 20:  # the loop keeps turning meanwhile
            await asyncio.sleep(0.01)
            ticks += 1
        assert not pending.done() and writer._thread is not None
        other.execute("COMMIT")
        other.close()
        assert await pending == set()
        # Three commits so far: the third set off a checkpoint, on the thread.
        for _ in range(200):
            if len(hops) >= 2 and writer._checkpoint is None:
                break
            await asyncio.sleep(0.01)
        assert len(hops) == 2 and writer._checkpoint is None
        await writer.commit([("r", 2, "move", "{}", 3.0)], {"r": 2}, [])
        assert len(hops) == 2
        rows = setup.execute("SELECT seq FROM room_log ORDER BY seq").fetchall()
        assert rows == [(0,), (1,), (2,)]
        assert writer._here is not None
        assert writer._here.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    finally:
        await writer.close()
        setup.close()
