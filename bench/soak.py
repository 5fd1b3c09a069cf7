"""Soak test of ``nertz serve``: many clients for a long while on loopback, rooms coming and
going, reconnects, hostile clients; prints what held and what did not.

Starts a real ``nertz serve`` on a free loopback port with a temporary SQLite database (rooms
left empty close after ``--room-idle-minutes``, 1 here). Then, for ``--seconds``:

- ``--clients`` honest people, two to a room with two server bots (greedy, at ``expert``
  speed). Each
  pair plays a one-round match (a :class:`~nertz.net.client.Client` each, moves chosen by the
  greedy bot from the client's own view, at a person's pace), checks the match's replay scores
  as played (downloaded, replayed with :func:`nertz.replay.run`, compared with the result the
  clients were sent), leaves, and opens a new room: rooms come and go all the time. Now and
  then a person's connection is cut (the client reconnects with ``since``).
- one hostile client per ``--hostile-every`` honest ones, sending generated garbage to live
  rooms: not JSON, wrong fields, binary frames, oversize messages, unknown tokens, commands
  before hello.

Honest clients' errors are every ``error`` message they receive (by code) and every failure of
a client (a refused join, a connection that did not come back); ``http_5xx`` counts the server's
5xx answers to them (a 503 is overload, said with ``Retry-After``; a 500 is a bug). Honest
clients are as patient as a browser: a browser gives a WebSocket opening handshake 240 s
(Chromium's ``kHandshakeTimeoutIntervalInSeconds``) and an HTTP request minutes, and the page
waits for its state as long as the socket is open, so they wait :data:`PATIENCE` seconds for
each; a few seconds would count a loaded two-core machine, where this load generator shares
the cores with the server, as the server's failure. Memory is the server's resident
size, sampled every 5 s with the rooms open (made and not yet closed, as its log
says) and the machine's load: the first sample, the one at the end of the warm-up (the first
fifth of the run, :data:`WARM_UP_SHARE`), the last, and the verdict: ``flat`` is ``yes`` when
every sample after the warm-up is within :data:`FLAT_PCT` of the warm-up's. The same verdict
from the moment the rooms open first reached 90% of their usual number (the median of the
run's second half) is ``flat_once_rooms_steady``: on a loaded machine the load itself is still
growing at the end of the warm-up. The server's working set grows until the room population is
steady: every pair keeps a room in play, and an abandoned room, its match over, stays in memory
for ``REST_SECONDS`` (10) and open for a minute (``--room-idle-minutes 1``) before it closes.
Bounded: the run stops at ``--seconds`` (clients still playing are stopped), and everything is
on 127.0.0.1. Prints one JSON object.

    nice -n 10 python bench/soak.py --clients 800 --seconds 600
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The port and memory probes are server_load's: one definition for both benchmarks.
from bench.server_load import free_port, rss_mb, wait_healthy  # noqa: E402
from nertz import replay  # noqa: E402
from nertz.bots import GreedyBot, Observation  # noqa: E402
from nertz.net.client import Client, ClientError  # noqa: E402
from nertz.rules import Rules  # noqa: E402

RULES: dict[str, Any] = {"preset": "pagat", "rounds": 1, "nertz_pile_size": 6}
"""Short matches (one round, six-card Nertz piles), so that rooms come and go."""

MOVE_PAUSE = (0.4, 1.2)
"""Seconds a person waits between moves (a person's pace, well under the 10 a second limit)."""

DROP_CHANCE = 0.01
"""Chance, per move, that a person's connection is cut (the client reconnects)."""

PATIENCE = 240.0
"""Seconds an honest client waits for a handshake, an HTTP answer or the table: a browser's
patience (Chromium gives a WebSocket opening handshake 240 s)."""


@dataclass
class Tally:
    """What the run saw."""

    honest_errors: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    http_5xx: Counter[str] = field(default_factory=Counter)
    moves: int = 0
    rejected: int = 0
    reconnects: int = 0
    rooms: int = 0
    rooms_created: int = 0
    matches: int = 0
    replays_ok: int = 0
    replays_bad: list[str] = field(default_factory=list)
    hostile_sent: int = 0
    hostile_answers: Counter[str] = field(default_factory=Counter)
    live_rooms: list[str] = field(default_factory=list)


@contextlib.contextmanager
def server(port: int, clients: int,
           log: list[str]) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """``nertz serve`` on loopback with a fresh SQLite file, limits opened for one address,
    and the path of its log (a file: a pipe nobody reads would fill and stop the server),
    which ends up in ``log``."""
    folder = tempfile.mkdtemp(prefix="nertz-soak-")
    log_path = Path(folder) / "server.log"
    cmd = [sys.executable, "-m", "nertz.cli", "serve", "--host", "127.0.0.1",
           "--port", str(port), "--db", f"sqlite:///{folder}/soak.db",
           "--rooms-per-minute", "0", "--sockets-per-address", "0",
           "--max-sockets", str(max(4000, 2 * clients)), "--room-idle-minutes", "1"]
    with open(log_path, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
    try:
        yield proc, log_path
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.extend(log_path.read_text(errors="replace").splitlines())
        shutil.rmtree(folder, ignore_errors=True)


def watch_errors(client: Client, tally: Tally) -> None:
    """Count every ``error`` message an honest client receives."""
    def listen(msg: dict[str, Any]) -> None:
        if msg.get("type") == "error":
            tally.honest_errors[str(msg.get("code"))] += 1
    client.listeners.append(listen)


async def person(client: Client, rules: Rules, rng: random.Random, tally: Tally,
                 until: float) -> None:
    """Play this person's seat until the round ends (or time is up)."""
    bot = GreedyBot()
    n = 0
    while time.monotonic() < until:
        table = client.table
        if client.phase != "playing" or table is None or table.get("ended") is not None:
            if client.phase in ("round_over", "match_over"):
                return
            await client.wait_changed(0.5)
            continue
        seat = client.seat
        if seat is None:
            return
        n += 1
        bot.start(seat, rules, n)
        choice = bot.decide(Observation.from_view(table, rules))
        result = await client.play("T" if choice is None else str(choice), timeout=PATIENCE)
        tally.moves += 1
        if not result.ok and result.code is None:
            tally.rejected += 1  # a lost race or a card another seat moved: normal play
        if rng.random() < DROP_CHANCE:
            tally.reconnects += 1
            await client.drop_connection()
        await asyncio.sleep(rng.uniform(*MOVE_PAUSE))


async def check_replay(http: httpx.AsyncClient, base: str, result: dict[str, Any],
                       tally: Tally) -> None:
    """The match's replay, downloaded and replayed, scores as the clients were told."""
    match_id = result.get("match")
    if not match_id:
        tally.replays_bad.append("no match id in the final result")
        return
    r = await http.get(f"{base}/api/matches/{match_id}/replay", timeout=PATIENCE)
    if r.status_code >= 500:
        tally.http_5xx[f"GET replay: {r.status_code}"] += 1
    if r.status_code != 200:
        tally.replays_bad.append(f"{match_id}: HTTP {r.status_code}")
        return
    done = await asyncio.to_thread(replay.run, replay.loads(r.content))
    if done.rounds[-1].result.scores == result["scores"] and \
            list(done.match.totals) == result["totals"]:
        tally.replays_ok += 1
    else:
        tally.replays_bad.append(f"{match_id}: scores differ")


async def room_pair(base: str, index: int, tally: Tally, until: float) -> None:
    """Two people: a room, a match, its replay checked; then a new room, until time is up.
    Each person has an HTTP client of their own, as each has a browser: their own cookies
    (the player identity the server issues), their own connections."""
    async with person_http() as host_http, person_http() as guest_http:
        await pair_rooms(base, index, host_http, guest_http, tally, until)


def person_http() -> httpx.AsyncClient:
    """One person's HTTP client (a browser's: its own cookie jar, a browser's patience).

    An idle connection is dropped after 2 s, before the server's keep-alive timeout (uvicorn's
    5 s) closes it: a request sent on a connection the server is closing at that moment fails
    (``ReadError``), and where a browser then sends it again on a new connection, httpx does
    not."""
    return httpx.AsyncClient(limits=httpx.Limits(max_connections=4,
                                                 max_keepalive_connections=1,
                                                 keepalive_expiry=2.0),
                             timeout=PATIENCE)


async def pair_rooms(base: str, index: int, host_http: httpx.AsyncClient,
                     guest_http: httpx.AsyncClient, tally: Tally, until: float) -> None:
    """The pair's rooms, one after another, until time is up."""
    rng = random.Random(index)
    rules = Rules.from_spec(RULES)
    while time.monotonic() < until - 20:
        host: Client | None = None
        guest: Client | None = None
        try:
            host = await Client.create_room(base, f"Host {index}", rules=RULES, seats=4,
                                            http=host_http, ping_interval=None,
                                            open_timeout=PATIENCE)
            tally.rooms_created += 1
            guest = await Client.join(base, f"Guest {index}", room=host.room_id,
                                      http=guest_http,
                                      ping_interval=None, open_timeout=PATIENCE)
            for c in (host, guest):
                watch_errors(c, tally)
                await c.connect(PATIENCE)
            tally.rooms += 1
            tally.live_rooms.append(host.room_id)
            for _ in range(2):
                await host.add_bot(bot="greedy", level="expert")
            await host.wait_for(lambda c: len(c.room["players"]) == 4 if c.room else False,
                                PATIENCE)
            await host.start(countdown_ms=0)
            await asyncio.gather(person(host, rules, rng, tally, until),
                                 person(guest, rules, rng, tally, until))
            if time.monotonic() >= until:
                return
            await host.wait_for(lambda c: c.phase == "match_over", PATIENCE)
            result = host.result
            assert result is not None
            tally.matches += 1
            await check_replay(host_http, base, result, tally)
        except (ClientError, TimeoutError, OSError, AssertionError) as exc:
            status = getattr(exc, "status", None)
            if isinstance(status, int) and status >= 500:
                tally.http_5xx[f"{status}: {str(exc)[:60]}"] += 1
            if time.monotonic() < until:
                tally.failures[type(exc).__name__ + ": " + str(exc)[:60]] += 1
        finally:
            for who in (host, guest):
                if who is not None:
                    with contextlib.suppress(Exception):
                        await who.close()
            if host is not None:
                with contextlib.suppress(ValueError):
                    tally.live_rooms.remove(host.room_id)
        await asyncio.sleep(rng.uniform(0.5, 2.0))


def garbage(rng: random.Random) -> str | bytes:
    """One hostile frame."""
    kind = rng.randrange(8)
    if kind == 0:
        return "".join(rng.choice("{}[]\":,xyz019") for _ in range(rng.randrange(1, 200)))
    if kind == 1:
        return json.dumps({"type": rng.choice(["play", "kick", "start", "assign"]),
                           "id": "x", "zzz": rng.random()})
    if kind == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 100)))
    if kind == 3:
        return json.dumps({"type": "ping", "id": "y" * rng.randrange(4000, 9000)})
    if kind == 4:
        return json.dumps({"type": "hello", "token": f"guess-{rng.random()}"})
    if kind == 5:
        return json.dumps({"type": "start", "countdown_ms": -5})
    if kind == 6:
        return "[" * rng.randrange(1, 3000)
    return json.dumps({"type": "play", "id": rng.random(), "move": ["N-F"]})


async def hostile(base: str, index: int, tally: Tally, until: float) -> None:
    """Garbage to live rooms, at a few frames a second, reconnecting whenever cut off."""
    rng = random.Random(10_000 + index)
    ws_base = base.replace("http://", "ws://")
    while time.monotonic() < until - 5:
        room = rng.choice(tally.live_rooms) if tally.live_rooms else "nosuchroom"
        try:
            async with connect(f"{ws_base}/ws/{room}", open_timeout=10,
                               max_size=2**22) as ws:
                for _ in range(rng.randrange(5, 60)):
                    if time.monotonic() >= until - 5:
                        return
                    await ws.send(garbage(rng))
                    tally.hostile_sent += 1
                    with contextlib.suppress(TimeoutError):
                        for line in str(await asyncio.wait_for(ws.recv(), 2)).split("\n"):
                            tally.hostile_answers[json.loads(line).get("code", "?")] += 1
                    await asyncio.sleep(rng.uniform(0.1, 0.5))
        except Exception as exc:  # cut off (as it should be, now and then): come back
            tally.hostile_answers["closed:" + type(exc).__name__] += 1
            await asyncio.sleep(rng.uniform(0.5, 2.0))


Sample = tuple[float, float, int, float]
"""One look at the server: seconds since the start, resident MB, rooms open (made by
this run and not yet closed, as its log says), the machine's load average (1 minute)."""

WARM_UP_SHARE = 0.2
"""The warm-up is the run's first fifth (2 of 10 minutes): memory is judged after it."""

FLAT_PCT = 10.0
"""Memory is flat when every sample after the warm-up is within this of the first one."""


async def sample(pid: int, log_path: Path, tally: Tally, samples: list[Sample], start: float,
                 until: float) -> None:
    """The server's resident memory and rooms open every 5 s."""
    closed = 0
    with open(log_path, "rb") as log:
        while time.monotonic() < until:
            closed += sum(b"closed: nobody in it" in line for line in log.readlines())
            samples.append((round(time.monotonic() - start, 1), round(rss_mb(pid), 1),
                            tally.rooms_created - closed, round(os.getloadavg()[0], 1)))
            await asyncio.sleep(5)


def memory_verdict(samples: list[Sample], seconds: float) -> dict[str, Any]:
    """Resident memory at the start, at the end of the warm-up and at the end; whether it stayed
    flat (within :data:`FLAT_PCT`) after the warm-up."""
    warm = [rss for t, rss, _, _ in samples if t >= seconds * WARM_UP_SHARE]
    if not warm:
        return {"flat": "no samples after the warm-up"}
    # When the load itself became steady: the rooms open first reach 90% of their median
    # over the run's second half (a new room every match, an abandoned one for a minute).
    later = sorted(rooms for t, _, rooms, _ in samples if t >= seconds / 2)
    typical = later[len(later) // 2] if later else 0
    steady = [(t, rss) for t, rss, rooms, _ in samples
              if t >= seconds * WARM_UP_SHARE and rooms >= 0.9 * typical]
    steady_rss = [rss for t, rss in samples_from(samples, steady[0][0])] if steady else []
    return {
        "warm_up_s": round(seconds * WARM_UP_SHARE),
        "start": samples[0][1], "warm": warm[0], "end": warm[-1],
        "growth_after_warm_pct": round(100 * (warm[-1] / warm[0] - 1), 1),
        "min_after_warm": min(warm), "max_after_warm": max(warm),
        "flat": "yes" if flat(warm) else "no",
        "rooms_steady_from_s": steady[0][0] if steady else None,
        "rss_once_rooms_steady": [steady_rss[0], steady_rss[-1]] if steady_rss else None,
        "flat_once_rooms_steady": "yes" if steady_rss and flat(steady_rss) else "no",
    }


def samples_from(samples: list[Sample], start: float) -> list[tuple[float, float]]:
    """(seconds, resident MB) of the samples from ``start`` on."""
    return [(t, rss) for t, rss, _, _ in samples if t >= start]


def flat(rss: list[float]) -> bool:
    """Every figure within :data:`FLAT_PCT` of the first."""
    return all(abs(m / rss[0] - 1) * 100 <= FLAT_PCT for m in rss)


async def run(clients: int, seconds: float, hostile_every: int) -> dict[str, Any]:
    """The whole soak; returns the figures."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    tally = Tally()
    server_log: list[str] = []
    with server(port, clients, server_log) as (proc, log_path):
        await wait_healthy(base, proc, timeout=60.0)
        start = time.monotonic()
        until = start + seconds
        samples: list[Sample] = []
        # Sampled from the start: the ramp-up takes a while on a loaded machine.
        sampler = asyncio.create_task(sample(proc.pid, log_path, tally, samples, start, until))
        pairs = []
        for i in range(clients // 2):
            pairs.append(asyncio.create_task(room_pair(base, i, tally, until)))
            await asyncio.sleep(min(0.05, seconds / 20 / max(1, clients)))  # ramp up
        hostiles = [asyncio.create_task(hostile(base, i, tally, until))
                    for i in range(max(1, clients // hostile_every))]
        done, late = await asyncio.wait([*pairs, *hostiles, sampler],
                                        timeout=seconds + 90)
        for task in late:
            task.cancel()
        crashed = [repr(t.exception()) for t in done
                   if not t.cancelled() and t.exception() is not None]
        server_alive = proc.poll() is None
    return {
        "clients": clients, "seconds": seconds,
        "hostile_clients": max(1, clients // hostile_every),
        "honest_errors": dict(tally.honest_errors),
        "honest_failures": dict(tally.failures),
        "http_5xx": dict(tally.http_5xx),
        "moves": tally.moves, "rejected_moves": tally.rejected,
        "reconnects": tally.reconnects, "rooms": tally.rooms, "matches": tally.matches,
        "replays_scored_as_played": tally.replays_ok, "replays_wrong": tally.replays_bad[:10],
        "hostile_frames": tally.hostile_sent,
        "hostile_answers": dict(tally.hostile_answers.most_common(12)),
        "rss_mb": memory_verdict(samples, seconds),
        "samples_t_rss_rooms_load": samples,
        "tasks_crashed": crashed[:5],
        "server_alive_at_end": server_alive,
        "server_tracebacks": sum("Traceback" in line for line in server_log),
        "server_errors": [line[:160] for line in server_log
                          if " ERROR " in line or "Error:" in line][:8],
    }


def main() -> int:
    """Parse the arguments, run, print the JSON figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=800)
    p.add_argument("--seconds", type=float, default=600.0)
    p.add_argument("--hostile-every", type=int, default=50)
    p.add_argument("--out", default=None, help="also write the JSON here")
    args = p.parse_args()
    if args.clients < 2 or args.seconds < 30:
        p.error("at least 2 clients and 30 seconds")
    figures = asyncio.run(run(args.clients, args.seconds, args.hostile_every))
    text = json.dumps(figures, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
