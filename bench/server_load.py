"""Load test of ``nertz serve``: N rooms of four network bots at ``expert`` speed on loopback.

Starts a real ``nertz serve`` process on a free port with a temporary SQLite database (or a
fresh PostgreSQL database with ``--pg``), opens N rooms, seats four
:class:`~nertz.net.netbot.NetworkBot` clients in each (every one a real WebSocket from this
process, all on one event loop: the load generator is one cheap process unless ``--procs``
says otherwise), starts every room and lets them play for S seconds. Rounds roll on: each
room's host deals the next round and asks for a rematch when a match ends, so the load stays
steady.

``--workers N`` runs the same load twice from one command, first on a one-worker server, then
on ``nertz serve --workers N --redis URL --db POSTGRES`` (both on one fresh PostgreSQL database
and Redis), and prints both side by side: round trips, moves a second, errors, and the server's
CPU milliseconds per applied move summed over all its processes (the figure that does not
depend on how busy the machine is), with the load generator's own CPU beside it. ``--rooms-n``
gives the N-worker server more rooms, to show how many more it carries.

``rtt_ms`` is move sent -> ack received, over the measured window. ``errors`` counts protocol
errors (any ``error`` message, ``too_fast`` included), rejections that no other seat's play
explains (lost races and moves made stale by another seat's play are normal traffic, reported
as ``races`` and ``stale``), dropped connections and moves never answered. Extra fields say
where the time went: the server's CPU share, this process's CPU share and event-loop lag (if the
bench itself is saturated, its lag shows up in the round trips), the ping round trips, and the
machine's load average as the window opened and closed (on a shared machine, report it beside
every figure).

    python bench/server_load.py --rooms 200 --seconds 60
    python bench/server_load.py --rooms 100 --rooms-n 160 --workers 2 --seconds 30

The table goes to stdout, then the JSON (``--json``: the JSON only; one object for one server,
``{"runs": [...]}`` for two).
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
from concurrent.futures import ThreadPoolExecutor
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


def serve_command(port: int, db: str, workers: int = 1, redis: str | None = None,
                  redis_prefix: str | None = None, extra: tuple[str, ...] = ()) -> list[str]:
    """The ``nertz serve`` command line for one run (``workers`` > 1: the multi-process
    server, which needs ``redis`` and a shared database; ``redis_prefix`` keeps its keys
    apart from anyone else's on that Redis; ``extra``: more of its options, as given)."""
    cmd = [sys.executable, "-m", "nertz.cli", "serve", "--port", str(port), "--db", db,
           # Every room and socket comes from this one address.
           "--rooms-per-minute", "0", "--sockets-per-address", "0"]
    if workers != 1 or redis is not None:
        cmd += ["--workers", str(workers)]
    if redis is not None:
        cmd += ["--redis", redis]
    if redis_prefix is not None:
        cmd += ["--redis-prefix", redis_prefix]
    return cmd + list(extra)


def serve_options() -> str:
    """``nertz serve --help`` of this checkout (which options it has)."""
    out = subprocess.run([sys.executable, "-m", "nertz.cli", "serve", "--help"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    return out.stdout


def drop_redis_keys(url: str, prefix: str) -> None:
    """Remove every key under ``prefix`` (what one run left in a shared Redis)."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=5)
    try:
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i:i + 500])
    finally:
        client.close()


@contextlib.contextmanager
def server_process(port: int, quiet: bool = True, db: str | None = None, workers: int = 1,
                   redis: str | None = None, redis_prefix: str | None = None,
                   extra: tuple[str, ...] = ()) -> Iterator[subprocess.Popen[bytes]]:
    """``nertz serve`` on ``port``: on ``db``, or a fresh SQLite file (removed on exit);
    stopped on exit (its workers with it), and its keys removed from Redis."""
    folder = tempfile.mkdtemp(prefix="nertz-load-")
    cmd = serve_command(port, db or f"sqlite:///{folder}/load.db", workers, redis, redis_prefix,
                        extra)
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=out)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            for pid in reversed(process_tree(proc.pid)):
                with contextlib.suppress(OSError):
                    os.kill(pid, 9)
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)
        if redis is not None and redis_prefix is not None:
            drop_redis_keys(redis, redis_prefix)


@contextlib.contextmanager
def pg_database(admin: str) -> Iterator[str]:
    """A fresh PostgreSQL database made through ``admin`` (a URL of a database the bench may
    connect to), dropped on exit; yields its URL."""
    import asyncpg  # type: ignore[import-untyped]

    name = f"nertz_load_{os.getpid()}_{random.randrange(1 << 30)}"

    async def run(sql: str) -> None:
        conn = await asyncpg.connect(admin, timeout=5)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    def run_sync(sql: str) -> None:
        # Its own thread: the caller may already be inside an event loop.
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, run(sql)).result()

    run_sync(f'CREATE DATABASE "{name}"')
    try:
        yield admin.rsplit("/", 1)[0] + "/" + name
    finally:
        run_sync(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def wait_healthy(base: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Wait until ``GET /healthz`` answers."""
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(timeout=2.0) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit(f"nertz serve exited with {proc.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if (await http.get(base + "/healthz")).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise SystemExit("nertz serve did not start")


class CpuBudget:
    """Each server process held to a share of one core by a cgroup of its own (the CPU
    controller's quota, over a 10 ms period so that a throttled worker stalls briefly).

    On a 2-core machine the load generator, PostgreSQL and Redis share the cores with the
    server: a second worker then takes CPU from the clients driving it, and cannot show what
    it would carry on a core of its own. Budgeted, every worker gets the same small share, the
    machine keeps room for the rest, and one worker against N shows what N workers' CPU buys
    (``--server-cores``). Needs root and the cgroup CPU controller (v2, or v1's ``cpu``)."""

    PERIOD_US = 10_000
    """The quota's period in microseconds: short, so that a worker that spent its share
    waits at most the rest of 10 ms."""

    def __init__(self, cores: float) -> None:
        self.cores = cores
        """Each process's share of a core (the command line checked it)."""
        self.groups: list[Path] = []
        self.root, self.v2 = self._find_root()

    @staticmethod
    def _find_root() -> tuple[Path, bool]:
        unified = Path("/sys/fs/cgroup")
        controllers = unified / "cgroup.controllers"
        if controllers.exists() and "cpu" in controllers.read_text().split():
            return unified, True
        legacy = Path("/sys/fs/cgroup/cpu")
        if (legacy / "cpu.cfs_quota_us").exists():
            return legacy, False
        raise SystemExit("server_load: --server-cores needs the cgroup CPU controller "
                         "(/sys/fs/cgroup with cpu, or /sys/fs/cgroup/cpu)")

    def hold(self, pid: int) -> None:
        """Put ``pid`` (with its threads) into a new group held to the budget."""
        group = self.root / f"nertz-load-{os.getpid()}-{len(self.groups)}"
        try:
            group.mkdir()
            quota = max(1000, int(self.cores * self.PERIOD_US))
            if self.v2:
                (group / "cpu.max").write_text(f"{quota} {self.PERIOD_US}")
            else:
                (group / "cpu.cfs_period_us").write_text(str(self.PERIOD_US))
                (group / "cpu.cfs_quota_us").write_text(str(quota))
            self.groups.append(group)
            (group / "cgroup.procs").write_text(str(pid))
        except OSError as exc:
            raise SystemExit(f"server_load: --server-cores could not set up {group}: {exc} "
                             "(it needs root)") from exc

    async def hold_workers(self, pid: int, workers: int, timeout: float = 60.0) -> None:
        """Hold each serving process of the server at ``pid`` to the budget, once all
        ``workers`` are up: the one process, or each worker that uvicorn's supervisor spawned
        (the supervisor and its resource tracker only watch, and stay outside)."""
        deadline = time.monotonic() + timeout
        while True:
            serving = [pid] if workers == 1 else [p for p in process_tree(pid)
                                                   if _spawned_worker(p)]
            if len(serving) == workers:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"server_load: found {len(serving)} of {workers} workers")
            await asyncio.sleep(0.1)
        for p in serving:
            self.hold(p)

    def release(self) -> None:
        """Remove the groups (their processes have exited, or go back to the root group)."""
        for group in self.groups:
            with contextlib.suppress(OSError):
                for pid in (group / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        (self.root / "cgroup.procs").write_text(pid)
            with contextlib.suppress(OSError):
                group.rmdir()
        self.groups.clear()


def _spawned_worker(pid: int) -> bool:
    """Whether ``pid`` is a worker uvicorn's supervisor spawned (multiprocessing's spawn)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"spawn_main" in f.read()
    except OSError:
        return False


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB, from /proc."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _stat(pid: int) -> list[str]:
    # The fields after the command name (which may hold spaces and parentheses).
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int, reaped: bool = False) -> float:
    """A process's user + system CPU seconds, from /proc (``reaped``: with those of its
    children that have exited and been waited for)."""
    fields = _stat(pid)
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process descended from it (parents before children), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                children.setdefault(int(_stat(int(entry))[1]), []).append(int(entry))
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children.get(p, ()))
    return tree


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and all its descendants, living or exited: the server's whole
    cost however many worker processes it runs."""
    total = 0.0
    for p in process_tree(pid):
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += cpu_seconds(p, reaped=True)
    return total


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its descendants, in MB."""
    total = 0.0
    for p in process_tree(pid):
        with contextlib.suppress(OSError):
            total += rss_mb(p)
    return total


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
    # An idle connection is dropped after 2 s, before the server's keep-alive timeout
    # (uvicorn's 5 s) closes it: with both at 5 s, a join sent on a pooled connection as the
    # server closed it failed with ``ReadError`` (about one run in eight under load), which
    # httpx does not retry (``bench/soak.py`` met the same).
    limits = httpx.Limits(max_connections=20, max_keepalive_connections=20,
                          keepalive_expiry=2.0)
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


@dataclass
class Setup:
    """What every phase of one run shares: the load and where the server keeps its state."""

    rooms: int
    seconds: float
    level: str
    bot: str
    rules: Any
    procs: int = 1
    db: str | None = None
    redis: str | None = None
    verbose: bool = True
    quiet_server: bool = True
    profile: str | None = None
    """Record the server's stacks over the window into this file (py-spy's raw format)."""
    compared: bool = False
    """Whether two servers run (1 and N workers) in this run."""
    prefixes: bool = False
    """Whether ``nertz serve`` takes ``--redis-prefix`` (each run keeps its own keys)."""
    server_cores: float | None = None
    """Each server process held to this share of a core (:class:`CpuBudget`), or free."""
    server_args: tuple[str, ...] = ()
    """More options for every ``nertz serve`` of the run (``--server-arg``)."""

    def say(self, text: str) -> None:
        """A progress line on stderr (unless only the JSON is wanted)."""
        if self.verbose:
            print(f"server_load: {text}", file=sys.stderr, flush=True)


async def phase(setup: Setup, workers: int, rooms: int) -> dict[str, Any]:
    """One server (``workers`` processes) under ``rooms`` rooms of load; its report."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    redis = setup.redis
    prefix = f"nertz-load-{os.getpid()}-{workers}:" if redis and setup.prefixes else None
    budget = CpuBudget(setup.server_cores) if setup.server_cores is not None else None
    with contextlib.ExitStack() as stack:
        if budget is not None:
            # Left last: the groups are removed once the server's processes have exited.
            stack.callback(budget.release)
        proc = stack.enter_context(server_process(port, setup.quiet_server, setup.db, workers,
                                                  redis, prefix, setup.server_args))
        await wait_healthy(base, proc)
        held = 0
        if budget is not None:
            await budget.hold_workers(proc.pid, workers)
            held = len(budget.groups)
            setup.say(f"each of the {workers} server process(es) held to "
                      f"{budget.cores:g} of a core")
        setup.say(f"{workers} worker(s), server pid {proc.pid} on {base}; opening {rooms} rooms")
        if setup.procs <= 1:
            parts, wall, server_cpu, others_cpu = await _in_process(setup, base, proc, rooms,
                                                                    workers)
        else:
            parts, wall, server_cpu, others_cpu = await _in_processes(setup, base, proc, rooms)
        rss = tree_rss_mb(proc.pid)
        server_procs = len(process_tree(proc.pid))
    seconds = setup.seconds
    rtts = [r for p in parts for r in p["rtts"]]
    lags = [x for p in parts for x in p["lags"]]
    pings = [x for p in parts for x in p["pings"]]
    acked = sum(p["acked"] for p in parts)
    bench_cpu = sum(p["cpu"] for p in parts)
    report: dict[str, Any] = {
        "workers": workers,
        "rooms": rooms,
        "clients": sum(p["clients"] for p in parts),
        "moves_per_second": round(acked / seconds, 1),
        "rtt_ms": {"p50": round(percentile(rtts, 0.50), 2),
                   "p99": round(percentile(rtts, 0.99), 2),
                   "max": round(max(rtts, default=0.0), 2)},
        "errors": sum(p["errors"] for p in parts),
        # The figure that does not depend on how busy the machine is: every server
        # process's CPU over the window, per move the server applied.
        "server_cpu_ms_per_move": round(server_cpu * 1000 / max(1, acked), 3),
        "server_cpu": round(server_cpu / wall, 2),
        "server_processes": server_procs,
        "server_rss_mb": round(rss, 1),
        "bench_cpu_ms_per_move": round(bench_cpu * 1000 / max(1, acked), 3),
        "bench_cpu": round(bench_cpu / seconds, 2),
        "bench_processes": len(parts),
        "seconds": round(seconds, 1),
        "moves": acked,
        "races": sum(p["races"] for p in parts),
        "stale": sum(p["stale"] for p in parts),
        "rounds_finished": sum(p["rounds"] for p in parts),
        # Other processes on the machine (CPU cores' worth): the figures are only as clean
        # as this is small.
        "others_cpu": round(max(0.0, others_cpu) / wall, 2),
        "cores": os.cpu_count(),
        # The machine's 1-minute load average as the window opened and closed: a shared
        # machine's figures are only worth as much as this is low.
        "load_average": parts[0].get("load_average", []),
        "bench_loop_lag_ms": {"p50": round(percentile(lags, 0.5), 2),
                              "p99": round(percentile(lags, 0.99), 2)},
        "ping_ms": {"p50": round(percentile(pings, 0.5), 2),
                    "p99": round(percentile(pings, 0.99), 2)},
        "level": setup.level,
        "bot": setup.bot,
        "server_cores_each": setup.server_cores,
        "server_args": list(setup.server_args),
        "server_processes_held": held,
    }
    problems = [x for p in parts for x in p["problems"]]
    if problems:
        report["error_samples"] = problems[:10]
    return report


async def _in_process(setup: Setup, base: str, proc: subprocess.Popen[bytes],
                      rooms: int, workers: int) -> tuple[list[dict[str, Any]], float, float, float]:
    """Every client on this process's event loop: the cheapest load generator."""
    marks: dict[str, float] = {}
    spy: list[subprocess.Popen[bytes]] = []
    # One file per server when two are compared: FILE.1w and FILE.2w.
    profile_path = f"{setup.profile}.{workers}w" if setup.compared else (setup.profile or "")

    def ready() -> None:
        setup.say(f"measuring for {setup.seconds:g} s")
        if setup.profile:
            spy.append(start_profile(profile_path, proc.pid, setup.seconds))
        marks.update(cpu=tree_cpu(proc.pid), wall=time.monotonic(), machine=machine_cpu(),
                     bench=time.process_time(), load=os.getloadavg()[0])

    async def go() -> None:
        return None

    part = await drive(base, list(range(rooms)), setup.seconds, setup.level, setup.bot,
                       setup.rules, ready, go, setup.say)
    for p in spy:
        await asyncio.to_thread(p.wait)
        setup.say(f"server stacks in {profile_path}")
    wall = max(time.monotonic() - marks["wall"], setup.seconds)
    server_cpu = tree_cpu(proc.pid) - marks["cpu"]
    others = machine_cpu() - marks["machine"] - server_cpu - (time.process_time()
                                                              - marks["bench"])
    part["load_average"] = [round(marks["load"], 2), round(os.getloadavg()[0], 2)]
    return [part], wall, server_cpu, others


def start_profile(path: str, pid: int, seconds: float) -> subprocess.Popen[bytes]:
    """py-spy sampling the server (and its workers) for ``seconds`` into ``path``: only the
    thread holding the GIL, so the samples are CPU spent in Python, not waiting."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        raise SystemExit("server_load: --profile needs py-spy (pip install py-spy)")
    return subprocess.Popen([spy, "record", "--gil", "--subprocesses", "-r", "200", "-f", "raw",
                             "-o", path, "-p", str(pid), "-d", str(max(1, int(seconds)))],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def _in_processes(setup: Setup, base: str, proc: subprocess.Popen[bytes],
                        rooms: int) -> tuple[list[dict[str, Any]], float, float, float]:
    """The clients spread over ``setup.procs`` processes (when one core cannot drive them)."""
    procs = max(1, min(setup.procs, rooms))
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Semaphore(0)
    go = ctx.Event()
    out = ctx.Queue()
    shares = [list(range(rooms))[p::procs] for p in range(procs)]
    workers = [ctx.Process(target=_worker, args=(base, share, setup.seconds, setup.level,
                                                 setup.bot, setup.rules, ready, go, out),
                           daemon=True)
               for share in shares]
    for w in workers:
        w.start()
    for _ in workers:
        await asyncio.to_thread(ready.acquire)
    setup.say(f"measuring for {setup.seconds:g} s")
    server_cpu0, wall0, machine0 = tree_cpu(proc.pid), time.monotonic(), machine_cpu()
    load0 = os.getloadavg()[0]
    go.set()
    parts = [await asyncio.to_thread(out.get) for _ in workers]
    parts[0]["load_average"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
    wall = max(time.monotonic() - wall0, setup.seconds)
    server_cpu = tree_cpu(proc.pid) - server_cpu0
    others = machine_cpu() - machine0 - server_cpu - sum(p["cpu"] for p in parts)
    for w in workers:
        w.join(timeout=30)
    return parts, wall, server_cpu, others


async def run(rooms: int, seconds: float, port: int, level: str, bot: str, rules: Any,
              verbose: bool, procs: int = 1) -> dict[str, Any]:
    """One server process under ``rooms`` rooms of load; its report (``port`` is ignored: a
    free one is taken)."""
    del port
    setup = Setup(rooms, seconds, level, bot, rules, procs=procs, verbose=verbose)
    return await phase(setup, 1, rooms)


ROWS: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("rooms", lambda r: str(r["rooms"])),
    ("clients", lambda r: str(r["clients"])),
    ("moves/s", lambda r: f"{r['moves_per_second']:.0f}"),
    ("rtt p50 ms", lambda r: f"{r['rtt_ms']['p50']:.1f}"),
    ("rtt p99 ms", lambda r: f"{r['rtt_ms']['p99']:.1f}"),
    ("errors", lambda r: str(r["errors"])),
    ("server CPU ms/move", lambda r: f"{r['server_cpu_ms_per_move']:.3f}"),
    ("server cores", lambda r: f"{r['server_cpu']:.2f}"),
    ("server processes", lambda r: str(r["server_processes"])),
    ("server RSS MB", lambda r: f"{r['server_rss_mb']:.0f}"),
    ("bench CPU ms/move", lambda r: f"{r['bench_cpu_ms_per_move']:.3f}"),
    ("bench cores", lambda r: f"{r['bench_cpu']:.2f}"),
    ("bench loop lag p50 ms", lambda r: f"{r['bench_loop_lag_ms']['p50']:.0f}"),
    ("other load, cores", lambda r: f"{r['others_cpu']:.2f}"),
    ("load average", lambda r: " to ".join(f"{x:.1f}" for x in r["load_average"])),
    ("CPU budget, cores each", lambda r: f"{r['server_cores_each'] or 'none'}"),
]


def side_by_side(reports: list[dict[str, Any]]) -> str:
    """The phases' figures as a table, one column per server."""
    heads = [f"{r['workers']} worker{'s' if r['workers'] != 1 else ''}" for r in reports]
    width = max(len(name) for name, _ in ROWS)
    cols = [max(len(h), *(len(fmt(r)) for _, fmt in ROWS)) for h, r in zip(heads, reports,
                                                                             strict=True)]
    lines = [" " * width + "".join(f"  {h:>{c}}" for h, c in zip(heads, cols, strict=True))]
    for name, fmt in ROWS:
        lines.append(f"{name:<{width}}" + "".join(f"  {fmt(r):>{c}}"
                                                  for r, c in zip(reports, cols, strict=True)))
    return "\n".join(lines)


async def compare(setup: Setup, workers: int, rooms_n: int) -> list[dict[str, Any]]:
    """1 worker, then ``workers`` workers (under ``rooms_n`` rooms), on the same database and
    Redis, one after the other."""
    reports = [await phase(setup, 1, setup.rooms)]
    if workers > 1:
        reports.append(await phase(setup, workers, rooms_n))
    return reports


def _use_uvloop() -> None:
    # The clients measure round trips: keep their own collector pauses out of the figures, as
    # the server does.
    gc.set_threshold(100_000, 50, 1000)
    with contextlib.suppress(ImportError):
        import uvloop  # the server runs on uvloop too (uvicorn picks it when installed)

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def run_to_end(main: Awaitable[list[dict[str, Any]]], grace: float = 5.0) -> list[dict[str, Any]]:
    """Run ``main`` on a fresh event loop; then give the tasks it left behind (hundreds of
    clients' readers and pingers) ``grace`` seconds to finish once cancelled, and leave
    without them. ``asyncio.run`` waited for every one: under heavy load some never ended, and
    the run hung after measuring, its figures never printed."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main)
    finally:
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.wait(left, timeout=grace))
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="also run an N-process server under the same load (needs "
                             "--redis and PostgreSQL) and print both side by side")
    parser.add_argument("--rooms-n", type=int, default=None, metavar="R",
                        help="rooms for the N-worker server (default: --rooms, the same load)")
    parser.add_argument("--redis", default=None, metavar="URL",
                        help="Redis for the multi-process server (default "
                             "redis://127.0.0.1:6379/0 with --workers above 1)")
    parser.add_argument("--pg", default=None, metavar="ADMIN_URL",
                        help="make a fresh PostgreSQL database through this URL for the run "
                             "(default with --workers above 1: "
                             "postgresql://postgres@127.0.0.1:5432/postgres)")
    parser.add_argument("--json", action="store_true", help="print only the JSON report")
    parser.add_argument("--level", default="expert", help="bot speed level (default expert)")
    parser.add_argument("--bot", default="greedy", help="bot (default greedy: cheap to run)")
    parser.add_argument("--rules", default="pagat", help="preset name or JSON rules object")
    parser.add_argument("--procs", type=int, default=1,
                        help="client processes (default 1: every client on one event loop)")
    parser.add_argument("--profile", default=None, metavar="FILE",
                        help="record the server's CPU stacks over the window into FILE "
                             "(py-spy's raw format; FILE.1w and FILE.Nw with --workers; one "
                             "process of clients only)")
    parser.add_argument("--server-cores", type=float, default=None, metavar="C",
                        help="hold each server process (each worker) to C of a core with a "
                             "cgroup (needs root): on a machine whose cores the load generator "
                             "shares, shows what each added worker's CPU carries")
    parser.add_argument("--server-output", action="store_true",
                        help="let the server print to this terminal")
    parser.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                        help="one more option for nertz serve, as given (repeatable; e.g. "
                             "--server-arg=--no-handoff to relay every socket)")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, not {args.workers}")
    if args.server_cores is not None and not 0 < args.server_cores <= (os.cpu_count() or 1):
        parser.error(f"--server-cores must be above 0 and at most the machine's "
                     f"{os.cpu_count()} cores, not {args.server_cores:g}")
    rules: Any = json.loads(args.rules) if args.rules.lstrip().startswith("{") else args.rules
    redis = args.redis
    pg = args.pg
    options = serve_options()
    if args.workers > 1:
        if "--workers" not in options:
            parser.error("this nertz serve has no --workers option yet: the multi-process "
                         "server is not in this checkout")
        redis = redis or "redis://127.0.0.1:6379/0"
        pg = pg or "postgresql://postgres@127.0.0.1:5432/postgres"
    _use_uvloop()
    setup = Setup(args.rooms, args.seconds, args.level, args.bot, rules, procs=args.procs,
                  redis=redis, verbose=not args.json, quiet_server=not args.server_output,
                  profile=args.profile, prefixes="--redis-prefix" in options,
                  compared=args.workers > 1, server_cores=args.server_cores,
                  server_args=tuple(args.server_arg))
    with contextlib.ExitStack() as stack:
        if pg is not None:
            setup.db = stack.enter_context(pg_database(pg))
        reports = run_to_end(compare(setup, args.workers, args.rooms_n or args.rooms))
    if args.json:
        print(json.dumps(reports[0] if len(reports) == 1 else {"runs": reports}))
    else:
        print(side_by_side(reports))
        print(json.dumps(reports[0] if len(reports) == 1 else {"runs": reports}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
