"""Load test of ``nertz serve``: N rooms of four network bots at ``expert`` speed on loopback.

Starts a real ``nertz serve`` process on a free port with a temporary SQLite database, opens N
rooms, seats four :class:`~nertz.net.netbot.NetworkBot` clients in each (every one a real WebSocket
from this process, all on one event loop), starts every room and lets them play for S seconds.
Rounds roll on: each room's host deals the next round and asks for a rematch when a match ends,
so the load stays steady. Prints one JSON object::

    {"rooms": N, "clients": 4N, "moves_per_second": ..., "rtt_ms": {"p50": ..., "p99": ...},
     "errors": 0, "server_rss_mb": ...}

``rtt_ms`` is move sent -> ack received, over the measured window. ``errors`` counts protocol
errors (any ``error`` message, ``too_fast`` included), rejections that no other seat's play
explains (lost races and moves made stale by another seat's play are normal traffic, reported
as ``races`` and ``stale``), dropped connections and moves never answered. Extra fields say
where the time went: the server's CPU share, this process's CPU share and event-loop lag (if the
bench itself is saturated, its lag shows up in the round trips), and the ping round trips.

    python bench/server_load.py --rooms 200 --seconds 60 --json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import multiprocessing
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nertz.net.client import Client, MoveResult  # noqa: E402
from nertz.net.netbot import NetworkBot  # noqa: E402

SEATS = 4


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server_process(port: int, quiet: bool = True) -> Iterator[subprocess.Popen[bytes]]:
    """``nertz serve`` on ``port`` with a fresh SQLite file; stopped (and the file removed) on
    exit."""
    folder = tempfile.mkdtemp(prefix="nertz-load-")
    db = f"sqlite:///{folder}/load.db"
    cmd = [sys.executable, "-m", "nertz.cli", "serve", "--port", str(port), "--db", db,
           # Every room and socket comes from this one address.
           "--rooms-per-minute", "0", "--sockets-per-address", "0"]
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=out)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


async def wait_healthy(base: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Wait until ``GET /healthz`` answers."""
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(timeout=2.0) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit(f"server_load: the server exited with {proc.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if (await http.get(base + "/healthz")).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise SystemExit("server_load: the server did not start")


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB, from /proc."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """A process's user + system CPU seconds, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu() -> float:
    """CPU seconds the whole machine has spent busy (every core), from /proc/stat."""
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + parts[4]
    return (sum(parts[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def percentile(samples: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``samples`` (nearest rank); 0 for none."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


@dataclass
class Tally:
    """What the bots report while the window is open."""

    measuring: bool = False
    acked: int = 0
    rtts: list[float] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)

    def on_answer(self, result: MoveResult, expected: bool) -> None:
        """Every move's answer, from every bot."""
        if not self.measuring:
            return
        if result.ok:
            self.acked += 1
            self.rtts.append(result.rtt_ms)
        elif not expected:
            self.unexpected.append(f"{result.move}: {result.code or ''} {result.error}")


async def open_room(base: str, http: httpx.AsyncClient, index: int, tally: Tally,
                    level: str, bot: str, rules: Any) -> list[NetworkBot]:
    """One room with four clients, each driven by a bot; the host starts it when all sit."""
    options: dict[str, Any] = {"ping_interval": 5.0, "http": http}
    host = await Client.create_room(base, f"Host {index}", rules, SEATS, **options)
    clients = [host]
    for k in range(1, SEATS):
        clients.append(await Client.join(base, f"Bot {index}.{k}", room=host.room_id,
                                         **options))
    for c in clients:
        await c.connect()
    rng = random.Random(index)
    return [
        NetworkBot(c, bot, level, countdown_ms=rng.randrange(500, 2000), pause_s=1.0,
                   seed=f"{index}:{k}", on_answer=tally.on_answer)
        for k, c in enumerate(clients)
    ]


async def lag_probe(samples: list[float], stop: asyncio.Event) -> None:
    """How late this process's event loop wakes up (a saturated bench inflates round trips)."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        t = loop.time()
        await asyncio.sleep(0.05)
        samples.append((loop.time() - t - 0.05) * 1000)


async def drive(base: str, indexes: list[int], seconds: float, level: str, bot: str,
                rules: Any, ready: Callable[[], None], go: Callable[[], Awaitable[None]],
                say: Callable[[str], None]) -> dict[str, Any]:
    """One client process's share: open these rooms, wait for ``go``, measure, report."""
    tally = Tally()
    limits = httpx.Limits(max_connections=20, max_keepalive_connections=20)
    async with httpx.AsyncClient(timeout=30.0, limits=limits) as http:
        bots: list[NetworkBot] = []
        tasks: list[asyncio.Task[None]] = []
        sem = asyncio.Semaphore(10)

        async def one(i: int) -> None:
            async with sem:
                room = await open_room(base, http, i, tally, level, bot, rules)
            bots.extend(room)
            tasks.extend(asyncio.create_task(b.run()) for b in room)

        await asyncio.gather(*(one(i) for i in indexes))
        say(f"{len(bots)} clients connected; waiting for every room to start")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(
            b.client.phase not in ("playing", "round_over", "match_over") for b in bots[::SEATS]
        ):
            await asyncio.sleep(0.2)
        ready()
        await go()
        lags: list[float] = []
        stop = asyncio.Event()
        probe = asyncio.create_task(lag_probe(lags, stop))
        errors_before = sum(len(b.stats.errors) for b in bots)
        cpu0 = time.process_time()
        races0 = sum(b.stats.races for b in bots)
        stale0 = sum(b.stats.stale for b in bots)
        tally.measuring = True
        await asyncio.sleep(seconds)
        tally.measuring = False
        cpu = time.process_time() - cpu0
        stop.set()
        await probe
        errors = [e for b in bots for e in b.stats.errors][errors_before:]
        dropped = sum(b.client.reconnects for b in bots) + sum(1 for b in bots if b.client.closed)
        part = {
            "clients": len(bots),
            "acked": tally.acked,
            "rtts": tally.rtts,
            "problems": errors + tally.unexpected
            + ([f"{dropped} dropped connections"] if dropped else []),
            "errors": len(errors) + len(tally.unexpected) + dropped,
            "races": sum(b.stats.races for b in bots) - races0,
            "stale": sum(b.stats.stale for b in bots) - stale0,
            "rounds": sum(b.stats.rounds for b in bots[::SEATS]),
            "cpu": cpu,
            "lags": lags,
            "pings": [r for b in bots for r in b.client.rtts],
        }
        for b in bots:
            b.stop()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(b.client.close() for b in bots), return_exceptions=True)
    return part


def _worker(base: str, indexes: list[int], seconds: float, level: str, bot: str, rules: Any,
            ready: Any, go: Any, out: Any) -> None:
    """A client process: its rooms on its own event loop (the bench needs more than one core)."""
    _use_uvloop()

    async def main() -> dict[str, Any]:
        async def wait_go() -> None:
            await asyncio.to_thread(go.wait)

        return await drive(base, indexes, seconds, level, bot, rules, ready.release, wait_go,
                           lambda _text: None)

    out.put(asyncio.run(main()))


async def run(rooms: int, seconds: float, port: int, level: str, bot: str, rules: Any,
              verbose: bool, procs: int = 2) -> dict[str, Any]:
    """The whole benchmark; returns the report."""
    base = f"http://127.0.0.1:{port}"

    def say(text: str) -> None:
        if verbose:
            print(f"server_load: {text}", file=sys.stderr, flush=True)

    with server_process(port) as proc:
        await wait_healthy(base, proc)
        procs = max(1, min(procs, rooms))
        say(f"server pid {proc.pid} on {base}; opening {rooms} rooms from {procs} processes")
        ctx = multiprocessing.get_context("spawn")
        ready = ctx.Semaphore(0)
        go = ctx.Event()
        out = ctx.Queue()
        shares = [list(range(rooms))[p::procs] for p in range(procs)]
        workers = [ctx.Process(target=_worker, args=(base, share, seconds, level, bot, rules,
                                                     ready, go, out), daemon=True)
                   for share in shares]
        for w in workers:
            w.start()
        for _ in workers:
            await asyncio.to_thread(ready.acquire)
        say(f"measuring for {seconds:g} s")
        server_cpu0, wall0, machine0 = cpu_seconds(proc.pid), time.monotonic(), machine_cpu()
        go.set()
        parts = [await asyncio.to_thread(out.get) for _ in workers]
        wall = time.monotonic() - wall0 - 0.0
        server_cpu = cpu_seconds(proc.pid) - server_cpu0
        bench_cpu = sum(p["cpu"] for p in parts)
        others_cpu = machine_cpu() - machine0 - server_cpu - bench_cpu
        rss = rss_mb(proc.pid)
        for w in workers:
            w.join(timeout=30)
    wall = max(wall, seconds)
    rtts = [r for p in parts for r in p["rtts"]]
    lags = [x for p in parts for x in p["lags"]]
    pings = [x for p in parts for x in p["pings"]]
    acked = sum(p["acked"] for p in parts)
    report: dict[str, Any] = {
        "rooms": rooms,
        "clients": sum(p["clients"] for p in parts),
        "moves_per_second": round(acked / seconds, 1),
        "rtt_ms": {"p50": round(percentile(rtts, 0.50), 2),
                   "p99": round(percentile(rtts, 0.99), 2),
                   "max": round(max(rtts, default=0.0), 2)},
        "errors": sum(p["errors"] for p in parts),
        "server_rss_mb": round(rss, 1),
        "seconds": round(seconds, 1),
        "moves": acked,
        "races": sum(p["races"] for p in parts),
        "stale": sum(p["stale"] for p in parts),
        "rounds_finished": sum(p["rounds"] for p in parts),
        "server_cpu": round(server_cpu / wall, 2),
        "bench_cpu": round(bench_cpu / seconds, 2),
        "bench_processes": len(parts),
        # Other processes on the machine (CPU cores' worth): the figures are only as clean
        # as this is small.
        "others_cpu": round(max(0.0, others_cpu) / wall, 2),
        "cores": os.cpu_count(),
        "bench_loop_lag_ms": {"p50": round(percentile(lags, 0.5), 2),
                              "p99": round(percentile(lags, 0.99), 2)},
        "ping_ms": {"p50": round(percentile(pings, 0.5), 2),
                    "p99": round(percentile(pings, 0.99), 2)},
        "level": level,
        "bot": bot,
    }
    problems = [x for p in parts for x in p["problems"]]
    if problems:
        report["error_samples"] = problems[:10]
    return report


def _use_uvloop() -> None:
    # The clients measure round trips: keep their own collector pauses out of the figures, as
    # the server does.
    gc.set_threshold(100_000, 50, 1000)
    with contextlib.suppress(ImportError):
        import uvloop  # the server runs on uvloop too (uvicorn picks it when installed)

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--port", type=int, default=0, help="server port (default: a free one)")
    parser.add_argument("--json", action="store_true", help="print only the JSON report")
    parser.add_argument("--level", default="expert", help="bot speed level (default expert)")
    parser.add_argument("--bot", default="greedy", help="bot (default greedy: cheap to run)")
    parser.add_argument("--rules", default="pagat", help="preset name or JSON rules object")
    parser.add_argument("--procs", type=int, default=2,
                        help="client processes (default 2: the clients need a core too)")
    args = parser.parse_args(argv)
    rules: Any = json.loads(args.rules) if args.rules.lstrip().startswith("{") else args.rules
    port = args.port or free_port()
    _use_uvloop()
    report = asyncio.run(run(args.rooms, args.seconds, port, args.level, args.bot, rules,
                             verbose=not args.json, procs=args.procs))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
