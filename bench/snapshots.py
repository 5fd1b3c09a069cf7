"""What a room's rebuild reads and costs, from its whole log and from its newest snapshot.

    .venv/bin/python bench/snapshots.py [--matches 10] [--rounds 5] [--every 200] [--db URL]

One room of two people (greedy bots' choices, sent through ``Table.handle`` with action ids as
a client's moves are) plays ``--matches`` matches of ``--rounds`` short rounds on a fresh store
(a SQLite file in a temporary folder unless ``--db``), snapshotting every ``--every`` entries at
a deal. Then, mid-round, it rebuilds the room both ways and prints, for each: the log entries
read, the bytes read (the snapshot's JSON included), and the median CPU milliseconds of the
rebuild (``load`` plus ``Table.restore``, over 5 tries), and the largest snapshot's size and
the CPU time of taking it (:func:`nertz.server.room.snapshot.capture` plus JSON). CPU time of
this process, so a busy machine changes the figures less than wall time would; compare the two
rows of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nertz.bots.base import Observation
from nertz.bots.basic import GreedyBot
from nertz.rules import Rules
from nertz.server import protocol
from nertz.server.room.lobby import Player
from nertz.server.room.snapshot import FORMAT, capture
from nertz.server.room.table import Table
from nertz.server.store import Store


async def _until(table: Table, *phases: str) -> None:
    for _ in range(6000):
        if table.phase in phases:
            return
        await asyncio.sleep(0.005)
    raise RuntimeError(f"the table stayed {table.phase}")


async def _command(table: Table, player: Player, message: protocol.ClientMessage) -> None:
    fx = table.handle(player, message)
    if fx.committed is not None:
        await fx.committed
    await table.settled()


async def _play_round(table: Table, people: list[Player], moves: int | None = None) -> None:
    await _until(table, "playing")
    bots: dict[int, GreedyBot] = {}
    made = 0
    while table.phase == "playing" and (moves is None or made < moves):
        player = people[made % 2]
        assert table.round is not None and player.seat is not None
        bot = bots.get(player.seat)
        if bot is None:
            bot = bots[player.seat] = GreedyBot()
            bot.start(player.seat, table.rules)
        move = bot.decide(Observation.from_round(table.round, player.seat, table.now_t()))
        player.moves.tokens = 10.0
        await _command(table, player, protocol.Play(secrets.token_hex(4),
                                                    "STUCK" if move is None else str(move)))
        made += 1
    if moves is None:
        await _until(table, "round_over", "match_over")


async def run(url: str, matches: int, rounds: int, every: int) -> dict[str, object]:
    """Play the room, rebuild it both ways; the figures."""
    store = await Store.open(url)
    spec = {"preset": "pagat", "rounds": rounds, "nertz_pile_size": 5, "call": "auto"}
    rules = Rules.from_spec(spec)
    room = secrets.token_hex(8)
    table = await Table.create(store, rules, 2, room, room[:8].upper(), fair_races=False)
    table.snapshot_every = every
    ann, _, _ = table.join("Ann")
    bob, _, _ = table.join("Bob")
    people = [ann, bob]
    biggest, capture_ms = 0, 0.0
    for m in range(matches):
        for r in range(rounds):
            if r:
                await _command(table, ann, protocol.NextRound(0))
            elif m:
                await _command(table, ann, protocol.Rematch())
            else:
                await _command(table, ann, protocol.Start(0))
            await _play_round(table, people)
            began = time.process_time()
            size = len(json.dumps(capture(table), separators=(",", ":")))
            capture_ms = max(capture_ms, (time.process_time() - began) * 1000)
            biggest = max(biggest, size)
    await _command(table, ann, protocol.Rematch())
    await _play_round(table, people, 10)  # mid-round, as a failover finds most rooms

    async def whole() -> tuple[int, int]:
        entries = await store.load_log(room)
        rebuilt = await Table.restore(store, room, table.code, rules, 2, entries)
        rebuilt.close()
        return len(entries), sum(len(json.dumps(e.data)) for e in entries)

    async def part() -> tuple[int, int]:
        snapshot, entries = await store.load_room(room, FORMAT)
        rebuilt = await Table.restore(store, room, table.code, rules, 2, entries,
                                      snapshot=snapshot)
        rebuilt.close()
        extra = 0 if snapshot is None else len(json.dumps(snapshot.data))
        return len(entries), sum(len(json.dumps(e.data)) for e in entries) + extra

    rows: dict[str, object] = {}
    for name, how in (("whole log", whole), ("snapshot", part)):
        times = []
        for _ in range(5):
            began = time.process_time()
            entries, size = await how()
            times.append((time.process_time() - began) * 1000)
        rows[name] = {"entries": entries, "bytes": size,
                      "cpu_ms": round(statistics.median(times), 1)}
    table.close()
    await store.close()
    return {"log_entries": table.seq, "rows": rows, "largest_snapshot_bytes": biggest,
            "capture_cpu_ms_max": round(capture_ms, 2)}


def main() -> None:
    """Parse the options, run, print."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matches", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--every", type=int, default=200)
    ap.add_argument("--db", default=None, help="a store URL (default: a fresh SQLite file)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.matches < 1 or args.rounds < 1 or args.every < 1:
        ap.error("--matches, --rounds and --every are 1 or more")
    with tempfile.TemporaryDirectory() as folder:
        url = args.db or f"sqlite:///{Path(folder) / 'bench.db'}"
        out = asyncio.run(run(url, args.matches, args.rounds, args.every))
    if args.json:
        print(json.dumps(out))
        return
    print(f"a room of {args.matches} matches x {args.rounds} rounds: {out['log_entries']} "
          f"log entries; snapshots every {args.every} entries at a deal")
    rows = out["rows"]
    assert isinstance(rows, dict)
    print(f"{'rebuild from':<12} {'entries':>8} {'bytes':>9} {'cpu ms':>8}")
    for name, row in rows.items():
        print(f"{name:<12} {row['entries']:>8} {row['bytes']:>9} {row['cpu_ms']:>8}")
    print(f"largest snapshot {out['largest_snapshot_bytes']} bytes, taken in at most "
          f"{out['capture_cpu_ms_max']} ms of CPU")


if __name__ == "__main__":
    main()
