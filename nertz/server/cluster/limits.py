"""The service's limits kept in Redis, shared by every process (:class:`RedisLimits`).

Each operation is one Lua script, so that checking a limit and counting against it are one
atomic step whichever process asks. Time is Redis's own clock (``TIME``), so processes on
machines whose clocks disagree still share one bucket.

Keys, all under one prefix (``nertz:`` unless told otherwise):

- ``rate:{name}:{key}``: a token bucket (hash ``tokens``, ``at``), expiring once it would be
  full again, so idle keys cost nothing; an IPv6 key's /48 has one too
  (``rate:{name}/48:{site}``: :func:`~nertz.server.limits.site_key`), taken from in the same
  step;
- ``bar:{key}``: a barred key, expiring with its bar;
- ``procs``: every live process (sorted set, scored by the end of its lease in milliseconds);
- ``held:{process}``: the sockets one process holds, per scope (hash ``scope`` -> count; an
  IPv6 scope's /48 counted beside it), expiring with the process's lease.

A socket count is the sum over the live processes' hashes. A process renews its lease every
third of :data:`LEASE_MS`; one that dies (SIGKILL, a lost machine) stops renewing, and the next
count anyone takes drops its hash: its sockets stop counting within a lease, not never. A
process cut off from Redis for longer than a lease writes its counts back when it renews.

When Redis cannot be reached the limits let everything through (and log it): refusing every
player because the limit store is down would stop the game, which the limits exist to protect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from nertz.server.limits import (
    SITE_SHARE,
    Limits,
    Rate,
    count_in,
    counted_as,
    site_key,
    site_rate,
    uncount_in,
)

log = logging.getLogger("nertz.limits")

LEASE_MS = 15_000
"""How long a process's socket counts outlive its last renewal (it renews three times as
often): a crashed process's sockets stop counting within this."""

_NOW_MS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tokens = {}
local wait = 0
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[2 * i])
  local burst = tonumber(ARGV[2 * i + 1])
  local b = redis.call('HMGET', key, 'tokens', 'at')
  local n = burst
  if b[1] then
    n = math.min(burst, tonumber(b[1]) + math.max(0, now - tonumber(b[2])) * rate)
  end
  tokens[i] = n
  if n < 1 then
    wait = math.max(wait, math.max(1, math.ceil((1 - n) / rate)))
  end
end
if wait > 0 then
  return wait
end
if ARGV[1] == '1' then
  for i, key in ipairs(KEYS) do
    local rate = tonumber(ARGV[2 * i])
    local burst = tonumber(ARGV[2 * i + 1])
    local n = tokens[i] - 1
    redis.call('HSET', key, 'tokens', tostring(n), 'at', tostring(now))
    redis.call('PEXPIRE', key, math.ceil((burst - n) / rate * 1000) + 1000)
  end
end
return 0
"""
"""KEYS: the buckets (a key's, and its site's: :func:`~nertz.server.limits.site_key`). ARGV:
1 to take (0 to look), then tokens a second and burst for each bucket. All or nothing: returns
0 (allowed, one taken from each) or the whole seconds to wait (nothing taken)."""

HOLD = _NOW_MS + """
local mine = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not mine or tonumber(mine) <= now then
  return -1
end
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for _, p in ipairs(dead) do
  if p ~= ARGV[1] then
    redis.call('DEL', ARGV[3] .. p)
    redis.call('ZREM', KEYS[1], p)
  end
end
local procs = redis.call('ZRANGE', KEYS[1], 0, -1)
for i = 4, #ARGV, 2 do
  local cap = tonumber(ARGV[i + 1])
  if cap > 0 then
    local total = 0
    for _, p in ipairs(procs) do
      if p ~= ARGV[1] then
        total = total + tonumber(redis.call('HGET', ARGV[3] .. p, ARGV[i]) or 0)
      end
    end
    total = total + tonumber(redis.call('HGET', KEYS[2], ARGV[i]) or 0)
    if total >= cap then
      return 0
    end
  end
end
for i = 4, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[2], ARGV[i], 1)
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]))
return 1
"""
"""KEYS: the live processes, this process's counts. ARGV: process id, lease ms, prefix of the
processes' counts, then scope, cap pairs (a scope's, and its site's:
:func:`~nertz.server.limits.site_key`), each counted only if none is at its cap. Drops dead
processes' counts; returns 1 when counted, 0 when refused, -1 (nothing counted) when this
process's own lease has lapsed: it must renew first, writing its tally back, or its sockets
would be undercounted from then on."""

COUNT = _NOW_MS + """
local total = 0
for _, p in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')) do
  total = total + tonumber(redis.call('HGET', ARGV[1] .. p, ARGV[2]) or 0)
end
return total
"""
"""KEYS: the live processes. ARGV: prefix of their counts, scope. The live processes' sum."""

LET_GO = """
for _, scope in ipairs(ARGV) do
  if redis.call('HINCRBY', KEYS[1], scope, -1) <= 0 then
    redis.call('HDEL', KEYS[1], scope)
  end
end
return 1
"""
"""KEYS: this process's counts. ARGV: the scopes (a scope, and its site's)."""

RENEW = _NOW_MS + """
if redis.call('EXISTS', KEYS[2]) == 0 and #ARGV > 2 then
  redis.call('HSET', KEYS[2], unpack(ARGV, 3))
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]))
return 1
"""
"""KEYS: the live processes, this process's counts. ARGV: process id, lease ms, then scope,
count pairs: this process's own tally, written back if Redis lost it (a lease that lapsed)."""


class RedisLimits(Limits):
    """:class:`~nertz.server.limits.Limits` in Redis at ``url``, shared by every process
    given the same URL and ``prefix``."""

    def __init__(self, url: str, prefix: str = "nertz:", lease_ms: int = LEASE_MS,
                 client: aioredis.Redis | None = None) -> None:
        self.prefix = prefix
        self.lease_ms = lease_ms
        self.process = uuid.uuid4().hex
        self._own_client = client is None
        self.redis: aioredis.Redis = client if client is not None else aioredis.Redis.from_url(
            url, socket_timeout=5.0, socket_connect_timeout=5.0)
        self.procs_key = f"{prefix}procs"
        self.held_prefix = f"{prefix}held:"
        self.held_key = self.held_prefix + self.process
        self.mine: dict[str, int] = {}
        """This process's own tally per scope (what it writes back after a lapse)."""
        self._take = self.redis.register_script(TAKE)
        self._hold = self.redis.register_script(HOLD)
        self._count = self.redis.register_script(COUNT)
        self._let_go = self.redis.register_script(LET_GO)
        self._renew = self.redis.register_script(RENEW)
        self._renewing: asyncio.Task[None] | None = None
        self._warned = 0.0

    def _down(self, exc: Exception, what: str) -> None:
        # Once a minute at most: a Redis outage would otherwise log on every socket.
        now = time.monotonic()
        if now - self._warned > 60.0:
            self._warned = now
            log.warning("limits: Redis unreachable (%s) while %s: letting it through", exc,
                        what)

    async def _bucket(self, rate: Rate, key: str, take: bool) -> int:
        if rate.per_minute <= 0:
            return 0
        keys = [f"{self.prefix}rate:{rate.name}:{key}"]
        args: list[Any] = [int(take), rate.per_minute / 60.0, rate.per_minute]
        site = site_key(key)
        if site is not None:
            wide = site_rate(rate)
            keys.append(f"{self.prefix}rate:{wide.name}:{site}")
            args += [wide.per_minute / 60.0, wide.per_minute]
        try:
            wait = await self._take(keys=keys, args=args)
        except RedisError as exc:
            self._down(exc, f"checking {rate.name}")
            return 0
        return int(wait)

    async def take(self, rate: Rate, key: str) -> int:
        """See :meth:`Limits.take`."""
        return await self._bucket(rate, key, True)

    async def wait(self, rate: Rate, key: str) -> int:
        """See :meth:`Limits.wait`."""
        return await self._bucket(rate, key, False)

    async def hold(self, scope: str, cap: int) -> bool:
        """See :meth:`Limits.hold`."""
        scopes = counted_as(scope)
        caps: list[Any] = [scope, cap]
        if len(scopes) > 1:
            caps += [scopes[1], cap * SITE_SHARE]
        try:
            counted = -1
            for _ in range(2):
                counted = await self._hold(
                    keys=[self.procs_key, self.held_key],
                    args=[self.process, self.lease_ms, self.held_prefix, *caps])
                if counted != -1:
                    break
                await self.renew()
            if counted == -1:
                raise RedisError("this process's lease would not hold")
        except RedisError as exc:
            self._down(exc, "counting a socket")
            counted = 1
        if counted:
            count_in(self.mine, scope)
        return bool(counted)

    async def let_go(self, scope: str) -> None:
        """See :meth:`Limits.let_go`."""
        uncount_in(self.mine, scope)
        try:
            await self._let_go(keys=[self.held_key], args=list(counted_as(scope)))
        except RedisError as exc:
            self._down(exc, "letting a socket go")

    async def held(self, scope: str) -> int:
        """See :meth:`Limits.held`."""
        return int(await self._count(keys=[self.procs_key], args=[self.held_prefix, scope]))

    async def bar(self, key: str, seconds: float) -> None:
        """See :meth:`Limits.bar`."""
        try:
            await self.redis.set(f"{self.prefix}bar:{key}", b"1", px=max(1, int(seconds * 1000)))
        except RedisError as exc:
            self._down(exc, "barring")

    async def barred(self, key: str) -> float:
        """See :meth:`Limits.barred`."""
        try:
            left = await self.redis.pttl(f"{self.prefix}bar:{key}")
        except RedisError as exc:
            self._down(exc, "checking a bar")
            return 0.0
        return max(0, int(left)) / 1000.0

    async def renew(self) -> None:
        """Extend this process's lease (and write its tally back if Redis lost it)."""
        pairs: list[Any] = [x for scope, n in self.mine.items() for x in (scope, n)]
        await self._renew(keys=[self.procs_key, self.held_key],
                          args=[self.process, self.lease_ms, *pairs])

    async def _keep_renewing(self) -> None:
        while True:
            await asyncio.sleep(self.lease_ms / 3000.0)
            try:
                await self.renew()
            except RedisError as exc:
                self._down(exc, "renewing the socket lease")

    async def start(self) -> None:
        """Check that Redis answers, take the lease and keep it renewed."""
        try:
            await self.redis.ping()
            await self.renew()
        except RedisError as exc:
            raise RuntimeError(f"limits: cannot reach Redis: {exc}") from exc
        self._renewing = asyncio.create_task(self._keep_renewing())

    async def close(self) -> None:
        """Stop renewing and let go of every socket this process held."""
        if self._renewing is not None:
            self._renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewing
            self._renewing = None
        with contextlib.suppress(RedisError):
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.delete(self.held_key)
                pipe.zrem(self.procs_key, self.process)
                await pipe.execute()
        self.mine.clear()
        if self._own_client:
            await self.redis.aclose()
