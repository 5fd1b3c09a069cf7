"""The server's CPU per applied move on a repeatable in-process workload (no network, no clients).

``bench/server_load.py`` measures the real thing (sockets, many processes) but on a shared
2-core machine its figures move with the load. This script drives the server's own hot path,
the part that runs for every move, on a script of moves fixed by seeds:

- the edge: each command arrives as JSON text, decoded by :func:`nertz.server.protocol.decode`;
- the room: :meth:`LiveRoom.handle <nertz.server.live.LiveRoom.handle>` (the table applies the move
  through its log, builds the update and the ack);
- the store: every entry group-committed to a real SQLite file (the ``nertz serve`` default);
- the fan-out: each room's four sockets are real :class:`~nertz.server.edge.connection.Connection`
  writers over a stand-in WebSocket that only turns the text frame into bytes (the framing and
  the kernel's send are left out: the load test measures those).

First the script is made: R rooms of four seats (people, as the load test's clients are), each
move chosen by the greedy bot on the live round, rounds and matches rolling on. Then the same
script is replayed on fresh rooms of a fresh database (``--replays`` times), each room's
commands in order, each sent once the one before is committed (a client waiting for its ack),
the rooms side by side so that their entries share commits as they do under load. Only the
replays are timed: CPU seconds of the whole process (the store's thread included) per move.

Latency-fair races are off here (``fair_races``: their waits run on the wall clock, which would
make the script's timing depend on the machine); everything else is the path of a live move.

Instruction counts, the figure that does not move with the load: run under callgrind once with
``--replays 1`` and once with ``--replays 2``; the difference is one replay's instructions::

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/server_cpu.py --replays 1
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/server_cpu.py --replays 2

(``--instructions`` does this itself and prints instructions per move.) For a profile of the
replays alone: ``NERTZ_CALLGRIND=1 valgrind --tool=callgrind --instr-atstart=no python
bench/server_cpu.py --replays 1``, then ``callgrind_annotate --inclusive=yes``.

    python bench/server_cpu.py --rooms 16 --moves 3000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nertz.bots import Observation  # noqa: E402
from nertz.bots.registry import find_bot  # noqa: E402
from nertz.rules import PRESETS  # noqa: E402
from nertz.server import protocol  # noqa: E402
from nertz.server.bus.local import LocalBus  # noqa: E402
from nertz.server.edge.connection import Connection  # noqa: E402
from nertz.server.limits import TokenBucket  # noqa: E402
from nertz.server.live import LiveRoom  # noqa: E402
from nertz.server.room.lobby import Player  # noqa: E402
from nertz.server.room.messages import Ack, Stamp  # noqa: E402
from nertz.server.room.phase import Phase  # noqa: E402
from nertz.server.room.races import wall_ms  # noqa: E402
from nertz.server.room.table import Table  # noqa: E402
from nertz.server.store import Store  # noqa: E402

SEATS = 4


class StandInSocket:
    """What :class:`Connection` writes to: a WebSocket's ASGI ``send`` that keeps nothing but a
    count."""

    def __init__(self) -> None:
        self.frames = 0
        self.bytes = 0

    async def __call__(self, message: dict[str, Any]) -> None:
        """A text frame: encoded, as the WebSocket library does, then dropped (a close:
        nothing to close)."""
        if message["type"] == "websocket.send":
            self.frames += 1
            self.bytes += len(message["text"].encode())

    def send_now(self, data: bytes) -> bool:
        """A text frame written at once, as the server's own WebSocket protocol writes every
        frame of an open socket (:meth:`SocketProtocol.send_text_now
        <nertz.server.edge.socket_protocol.SocketProtocol.send_text_now>`): counted, dropped."""
        self.frames += 1
        self.bytes += len(data)
        return True


@dataclass
class Seat:
    """One person at a room: the player, their socket."""

    player: Player
    conn: Connection
    ws: StandInSocket


@dataclass
class Room:
    """One room of the workload."""

    live: LiveRoom
    seats: list[Seat]
    script: list[tuple[int, str]] = field(default_factory=list)
    """(seat, command as JSON text); seat -1 with ``next``/``rematch`` for the host's."""
    acked: int = 0


async def open_room(store: Store, bus: LocalBus, index: int, seed: int) -> Room:
    """A room of four people, each with a socket, every move throttle lifted (the script sends
    as fast as the server answers: the cost per move is what is measured, not a pace)."""
    rules = PRESETS["pagat"]
    table = await Table.create(store, rules, SEATS, f"cpu{index:04d}x{seed}", f"C{index:04d}{seed}")
    table.deal_seed = seed * 10_000 + index
    table.fair_option = False
    live = LiveRoom(table, bus, start_bots=False)
    seats = []
    for k in range(SEATS):
        player, _token = await live.join(f"P{index}.{k}", False)
        player.moves = TokenBucket(1e9, 1e9)
        ws = StandInSocket()
        conn = Connection(ws, send_now=ws.send_now)
        live.attach(conn, player, None)
        seats.append(Seat(player, conn, ws))
    return Room(live, seats)


async def wait_phase(table: Table, *phases: Phase) -> None:
    """Wait (polling) until the table is in one of ``phases``."""
    while table.phase not in phases:
        await asyncio.sleep(0.001)


async def send(room: Room, seat: int, text: str) -> bool:
    """One command from ``seat`` (-1: the host) as the edge hands it over; waits for its
    commit like a client waiting for its answer. True when it was an applied move."""
    s = room.seats[max(0, seat)]
    msg = protocol.decode(text.encode())
    fx = room.live.handle(s.player, msg, s.conn, Stamp(wall_ms()))
    if fx.committed is not None:
        await fx.committed
    applied = any(isinstance(x.message, Ack) for x in fx.sends)
    room.acked += applied
    return applied


async def roll_on(room: Room, record: bool) -> None:
    """Between rounds: the host deals the next round (or asks for a rematch)."""
    table = room.live.table
    await wait_phase(table, Phase.ROUND_OVER, Phase.MATCH_OVER)
    text = (json.dumps({"type": "rematch"}) if table.phase is Phase.MATCH_OVER
            else json.dumps({"type": "next_round", "countdown_ms": 0}))
    if record:
        room.script.append((-1, text))
    await send(room, -1, text)
    await wait_phase(table, Phase.PLAYING)


async def record_room(room: Room, moves: int) -> None:
    """Play ``moves`` moves with greedy bots, keeping each command in the room's script."""
    table = room.live.table
    bots = [find_bot("greedy")() for _ in range(SEATS)]
    start = json.dumps({"type": "start", "countdown_ms": 0})
    room.script.append((-1, start))
    await send(room, -1, start)
    await wait_phase(table, Phase.PLAYING)
    started = None
    turn = 0
    ids = 0
    idle = 0
    while room.acked < moves:
        rnd = table.round
        assert rnd is not None
        if table.phase is not Phase.PLAYING or rnd.ended:
            await roll_on(room, True)
            continue
        if started is not rnd:
            started = rnd
            for k, bot in enumerate(bots):
                bot.start(k, table.rules, f"{table.id}:{table.match_number}:{k}")
        seat = turn % SEATS
        turn += 1
        move = bots[seat].decide(Observation.from_round(rnd, seat, table.now_t()))
        if move is None:
            idle += 1
            if idle > 8 * SEATS:
                raise SystemExit(f"room {table.id}: no seat has a move")
            continue
        idle = 0
        ids += 1
        text = json.dumps({"type": "play", "id": f"m{ids}", "move": str(move)})
        room.script.append((seat, text))
        await send(room, seat, text)


async def replay_room(room: Room, script: list[tuple[int, str]]) -> None:
    """Send a recorded script again, waiting between rounds as it was recorded."""
    table = room.live.table
    for seat, text in script:
        if seat < 0:
            kind = json.loads(text)["type"]
            if kind != "start":
                await wait_phase(table, Phase.ROUND_OVER, Phase.MATCH_OVER)
            await send(room, -1, text)
            await wait_phase(table, Phase.PLAYING)
        else:
            await send(room, seat, text)


@dataclass
class Figures:
    """One replay's cost."""

    moves: int
    cpu_s: float
    wall_s: float
    commits: int
    frames: int
    bytes: int


async def run(rooms: int, moves: int, replays: int, seed: int) -> tuple[list[Figures], int]:
    """Record the script, then replay it ``replays`` times; the figures of each replay."""
    with tempfile.TemporaryDirectory(prefix="nertz-cpu-") as folder:
        store = await Store.open(f"sqlite:///{folder}/record.db")
        bus = LocalBus()
        recorded = [await open_room(store, bus, i, seed) for i in range(rooms)]
        await asyncio.gather(*(record_room(r, moves // rooms) for r in recorded))
        for r in recorded:
            await r.live.settled()
            r.live.close()
        await store.close()
        figures = []
        for n in range(replays):
            store = await Store.open(f"sqlite:///{folder}/replay{n}.db")
            fresh = [await open_room(store, bus, i, seed) for i in range(rooms)]
            await asyncio.sleep(0.05)  # the joins' messages out before the clock starts
            gc.collect()
            commits0 = store.commits
            _collect(True)
            cpu0, wall0 = time.process_time(), time.perf_counter()
            await asyncio.gather(*(replay_room(r, old.script)
                                   for r, old in zip(fresh, recorded, strict=True)))
            for r in fresh:
                await r.live.settled()
            await asyncio.sleep(0)  # the last writes reach the stand-in sockets
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            _collect(False)
            figures.append(Figures(sum(r.acked for r in fresh), cpu, wall,
                                   store.commits - commits0,
                                   sum(s.ws.frames for r in fresh for s in r.seats),
                                   sum(s.ws.bytes for r in fresh for s in r.seats)))
            for r in fresh:
                r.live.close()
            await store.close()
        return figures, sum(r.acked for r in recorded)


def _collect(on: bool) -> None:
    """Under ``valgrind --tool=callgrind --instr-atstart=no`` with ``NERTZ_CALLGRIND=1``: count
    instructions only over the replays (``callgrind_control -i``), for a profile of them."""
    if os.environ.get("NERTZ_CALLGRIND"):
        subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(os.getpid())],
                       capture_output=True, check=False)


def instructions(argv: list[str]) -> float:
    """Instructions of one replay per move, from two callgrind runs (1 and 2 replays)."""
    counts = []
    moves = 0
    for replays in (1, 2):
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               sys.executable, __file__, *argv, "--replays", str(replays), "--json"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True,
                             env=os.environ | {"PYTHONHASHSEED": "0"})
        found = re.search(r"Collected : (\d+)", out.stderr)
        if found is None:
            raise SystemExit(f"no instruction count from callgrind:\n{out.stderr[-2000:]}")
        counts.append(int(found.group(1)))
        moves = json.loads(out.stdout.strip().splitlines()[-1])["replays"][0]["moves"]
    return (counts[1] - counts[0]) / max(1, moves)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=16, help="rooms side by side (default 16)")
    parser.add_argument("--moves", type=int, default=3000,
                        help="moves of the script, all rooms together (default 3000)")
    parser.add_argument("--replays", type=int, default=3, help="timed replays (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print only the JSON")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per move under callgrind (slow: minutes)")
    args = parser.parse_args(argv)
    if args.rooms < 1 or args.moves < args.rooms or args.replays < 1:
        parser.error("--rooms and --replays must be at least 1, --moves at least --rooms")
    if args.instructions:
        passed = ["--rooms", str(args.rooms), "--moves", str(args.moves), "--seed", str(args.seed)]
        per_move = instructions(passed)
        print(json.dumps({"instructions_per_move": round(per_move), "rooms": args.rooms,
                          "moves": args.moves}))
        return 0
    gc.set_threshold(100_000, 50, 1000)  # as the server runs (nertz serve)
    with contextlib.suppress(ImportError):
        import uvloop  # what uvicorn runs the server on when it is installed

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    figures, recorded = asyncio.run(run(args.rooms, args.moves, args.replays, args.seed))
    best = min(figures, key=lambda f: f.cpu_s / max(1, f.moves))
    report = {
        "rooms": args.rooms,
        "recorded_moves": recorded,
        "cpu_ms_per_move_best": round(best.cpu_s * 1000 / max(1, best.moves), 4),
        "replays": [{"moves": f.moves, "cpu_s": round(f.cpu_s, 3), "wall_s": round(f.wall_s, 3),
                     "cpu_ms_per_move": round(f.cpu_s * 1000 / max(1, f.moves), 4),
                     "moves_per_commit": round(f.moves / max(1, f.commits), 1),
                     "frames_per_move": round(f.frames / max(1, f.moves), 2),
                     "bytes_per_move": round(f.bytes / max(1, f.moves))}
                    for f in figures],
        "load_average": os.getloadavg()[0],
    }
    if not args.json:
        for f in report["replays"]:
            print(f"replay: {f['moves']} moves, {f['cpu_ms_per_move']:.3f} CPU ms/move, "
                  f"{f['moves_per_commit']} moves/commit, {f['frames_per_move']} frames/move, "
                  f"{f['bytes_per_move']} bytes/move")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
