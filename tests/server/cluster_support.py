"""For the multi-process tests: a Redis key prefix per test, ``nertz serve`` processes of one
service, and a plain TCP proxy in front of them (no sticky sessions, as in production)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
REDIS = os.environ.get("NERTZ_TEST_REDIS", "redis://127.0.0.1:6379/0")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def new_prefix() -> str:
    """A Redis key prefix no other test run uses."""
    return f"nertz-test-{secrets.token_hex(4)}:"


async def drop_prefix(prefix: str) -> None:
    """Delete every Redis key under ``prefix``."""
    from redis.asyncio import Redis

    redis = Redis.from_url(REDIS)
    try:
        keys = [k async for k in redis.scan_iter(match=prefix + "*")]
        if keys:
            await redis.delete(*keys)
    finally:
        await redis.aclose()


class Proc:
    """One ``nertz serve`` process of the service, on its own port."""

    def __init__(self, db: str, prefix: str, log: Path, handoff: bool = True) -> None:
        self.db = db
        self.handoff = handoff
        """Hand sockets to the room's owner on this machine (False: relay them all, as
        between machines)."""
        self.prefix = prefix
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "nertz.cli", "serve", "--port", str(self.port),
                 "--db", self.db, "--redis", REDIS, "--redis-prefix", self.prefix,
                 "--rooms-per-minute", "0", "--sockets-per-address", "0",
                 *([] if self.handoff else ["--no-handoff"])],
                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )

    def wait_ready(self, timeout: float = 60.0) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nertz serve exited {self.proc.returncode}: "
                                   f"{self.log.read_text()[-3000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"nertz serve did not answer within {timeout} s")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush, leases left to run out."""
        if self.alive:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


class Proxy:
    """A plain TCP proxy: each connection goes to the next backend that accepts it (round
    robin), as a load balancer without sticky sessions would send it."""

    def __init__(self, backends: list[Proc]) -> None:
        self.backends = backends
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._next = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            upstream = None
            for _ in range(len(self.backends) * 3):
                backend = self.backends[self._next % len(self.backends)]
                self._next += 1
                try:
                    upstream = await asyncio.wait_for(
                        asyncio.open_connection("127.0.0.1", backend.port), 2)
                    break
                except (OSError, TimeoutError):
                    continue
            if upstream is None:
                writer.close()
                return
            up_reader, up_writer = upstream
            await asyncio.gather(_copy(reader, up_writer), _copy(up_reader, writer))
        finally:
            self._tasks.discard(task)
            writer.close()


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()
