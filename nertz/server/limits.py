"""Rate limits: one token bucket, used for a player's moves, a socket's messages, the rooms an
address may create and the unknown tokens it may try; and the caps on open sockets.

A bucket holds up to ``burst`` tokens and refills at ``rate`` a second; each action takes one.
Time is passed in (a monotonic clock's seconds), so the same code serves the event loop's clock
and tests.

The limits that must hold for the whole service (rooms an address creates, unknown tokens it
tries, sockets an address or a player holds, rooms of bots alone an address has playing
(:class:`HeldWhile`), kicked players barred from their room) go through :class:`Limits`:
:class:`MemoryLimits` keeps them in this process (``nertz serve``, one process);
``nertz.server.cluster.limits.RedisLimits`` keeps them in Redis, shared by every process of a
multi-process service. Per-socket and per-player move allowances stay local: a
socket lives in one process, and a room's moves are all handled by its one owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import functools
import gc
import ipaddress
import logging
import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from starlette.requests import HTTPConnection


log = logging.getLogger("nertz.limits")

IPV6_PREFIX = 64
"""The bits of an IPv6 address that name one client for the limits: a home or a phone gets
a whole /64 (2**64 addresses), so one address of it would be no limit at all."""


@functools.lru_cache(maxsize=4096)
def address_key(host: str) -> str:
    """The key of a client's limits: an IPv4 address as it is (an IPv4-mapped IPv6 address
    as its IPv4), an IPv6 address as its /64 network, anything else (a Unix socket's, a test
    client's name) as it is."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and not ip.is_loopback:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, IPV6_PREFIX), strict=False))
    return str(ip)


SITE_PREFIX = 48
"""The bits of an IPv6 network that name one site: the most a home, office or campus is given
(a /48 holds 65,536 /64s). The limits per address hold per /64 and, :data:`SITE_SHARE` times
over, per /48: one holder of many /64s gets a few addresses' allowance, not one per /64."""

SITE_SHARE = 16
"""How many /64s' allowance one /48 gets, in every limit per address: room for a household's
or an office's few networks (and a mobile carrier's neighbours in one /48) to play apart,
where 65,536 would be no limit."""


@functools.lru_cache(maxsize=4096)
def site_key(key: str) -> str | None:
    """The wider key a limit also counts ``key`` under: for a key (or scope) that ends with
    an IPv6 /64 network as :func:`address_key` writes it (``address 2001:db8:0:1::/64``), the
    same with that network's /48 (``address 2001:db8::/48``); None for any other key (an
    IPv4 address is one address; a player is one player)."""
    head, space, last = key.rpartition(" ")
    if not last.endswith(f"/{IPV6_PREFIX}") or ":" not in last:
        return None
    try:
        network = ipaddress.IPv6Network(last)
    except ValueError:
        return None
    return head + space + str(network.supernet(new_prefix=SITE_PREFIX))


def counted_as(key: str) -> tuple[str, ...]:
    """The keys one holding of ``key`` is counted under: ``key`` itself, and its IPv6 /48's
    (:func:`site_key`) where it has one."""
    site = site_key(key)
    return (key,) if site is None else (key, site)


def room_for(counts: Mapping[str, int], key: str, cap: int) -> bool:
    """Whether ``key`` may hold one more under ``cap`` (0: no cap), and its site one more under
    :data:`SITE_SHARE` times it (see :func:`counted_as`)."""
    if not cap:
        return True
    keys = counted_as(key)
    return counts.get(keys[0], 0) < cap and all(
        counts.get(k, 0) < cap * SITE_SHARE for k in keys[1:])


def count_in(counts: dict[str, int], key: str) -> None:
    """One more holding of ``key`` in ``counts``, under each key it counts as."""
    for k in counted_as(key):
        counts[k] = counts.get(k, 0) + 1


def uncount_in(counts: dict[str, int], key: str) -> None:
    """One less holding of ``key`` in ``counts``; a key at none is forgotten, so a table holds
    only keys that hold something."""
    for k in counted_as(key):
        left = counts.get(k, 0) - 1
        if left > 0:
            counts[k] = left
        else:
            counts.pop(k, None)


def client_address(conn: HTTPConnection) -> str:
    """The client's address as the limits key it (:func:`address_key`): the key of every
    per-address limit (behind a trusted proxy, the address it names: the server in front
    rewrites the peer before the app sees it)."""
    return address_key(conn.client.host) if conn.client else "?"


class TokenBucket:
    """``burst`` actions at once, then ``rate`` a second on average."""

    __slots__ = ("at", "burst", "rate", "tokens")

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.at: float | None = None

    def take(self, now: float) -> bool:
        """Take one token; False (and nothing taken) when the bucket is empty."""
        if self.at is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True

    def full(self, now: float) -> bool:
        """Whether the bucket would be full by ``now`` (nothing to remember about it)."""
        if self.at is None:
            return True
        return self.tokens + (now - self.at) * self.rate >= self.burst


class KeyedLimit:
    """A :class:`TokenBucket` per key (a client address): ``per_minute`` a minute after a
    first burst of as many; 0 means no limit. Full buckets are forgotten, so the table of keys
    stays small."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self.buckets: dict[str, TokenBucket] = {}

    def allow(self, key: str, now: float) -> bool:
        """Take one token for ``key``; False when it has none left."""
        if self.per_minute <= 0:
            return True
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = TokenBucket(self.per_minute / 60.0, self.per_minute)
        allowed = bucket.take(now)
        if len(self.buckets) > 10_000:
            self.buckets = {k: b for k, b in self.buckets.items() if not b.full(now)}
        return allowed

    def retry_after(self, key: str, now: float) -> int:
        """Whole seconds until ``key`` has a token again (0 if it has one now): the
        ``Retry-After`` of a refusal."""
        bucket = self.buckets.get(key)
        if self.per_minute <= 0 or bucket is None or bucket.at is None:
            return 0
        tokens = min(bucket.burst, bucket.tokens + (now - bucket.at) * bucket.rate)
        return 0 if tokens >= 1.0 else math.ceil((1.0 - tokens) / bucket.rate)


TRIM_PEAK = 256
"""Sockets open at a peak worth giving memory back after (fewer cost little)."""


def give_back_memory(trim: bool = True, deep: bool = True) -> None:
    """Collect garbage cycles, then (``trim``) return the C allocator's free pages to the
    system (glibc's ``malloc_trim``; elsewhere only the collection). The server's libraries
    leave some cycles behind (exceptions and their frames, a rating's, a query's) that the
    server's lazy collector (``nertz serve`` collects young objects rarely) would keep for
    long, and the allocator keeps freed pages for reuse: after a flood of sockets the process
    would stay at its peak size for good. The trim walks the whole heap (40 to 140 ms at 200
    rooms, every room waiting): worth it only when much was freed, not while the rooms there
    are keep playing.

    What survives a collection is frozen (:func:`gc.freeze`): no later collection walks it but
    a ``deep`` one, which thaws everything first. Most of a server's objects live long (its
    sockets, rooms and libraries), and walking them all paused every room: at 200 rooms a
    collection of only what came since the last one took 30 to 75 ms of CPU where a whole walk
    took 150 to 350. A cycle among frozen objects that becomes garbage waits for the next deep
    collection; a closed socket and a room that left memory leave none (they are freed by
    reference counting: ``tests/server/test_server_lifetime.py``)."""
    if deep:
        gc.unfreeze()
    gc.collect()
    gc.freeze()
    if not trim:
        return
    malloc_trim = _malloc_trim()
    if malloc_trim is not None:
        malloc_trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, looked up once (None elsewhere): each look-up ran
    ``ldconfig`` and left the library's handle in a cycle."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


class InFlight:
    """Work in progress counted per key (a client address) and in total, each capped (0: no
    cap): how a costly kind of request (a replay played through) keeps one address from
    holding every place, and its waiting line bounded. Per process; a key with nothing in
    flight is forgotten at once."""

    def __init__(self, per_key: int, total: int) -> None:
        self.per_key = per_key
        self.total = total
        self.count = 0
        self.by_key: dict[str, int] = {}

    def take(self, key: str) -> str | None:
        """Count one more for ``key``; or, when a cap is reached, count nothing and say which:
        ``"key"`` (``key`` has :attr:`per_key` in flight) or ``"total"``."""
        held = self.by_key.get(key, 0)
        if self.per_key and held >= self.per_key:
            return "key"
        if self.total and self.count >= self.total:
            return "total"
        self.by_key[key] = held + 1
        self.count += 1
        return None

    def give_back(self, key: str) -> None:
        """One counted by :meth:`take` for ``key`` is done."""
        held = self.by_key.get(key, 0)
        if held <= 1:
            self.by_key.pop(key, None)
        else:
            self.by_key[key] = held - 1
        self.count = max(0, self.count - 1)


class SocketCaps(InFlight):
    """Open sockets counted per client address and in total, each capped (0: no cap).

    A socket is counted from its handshake until it closes; an address with no socket open is
    forgotten at once, so the table holds only addresses with sockets open."""

    def __init__(self, per_address: int, total: int) -> None:
        super().__init__(per_address, total)
        self.peak = 0
        """The most sockets open at once since memory was last given back."""

    @property
    def open(self) -> int:
        """Sockets open now."""
        return self.count

    @property
    def by_address(self) -> dict[str, int]:
        """Sockets open now per address (only addresses with some)."""
        return self.by_key

    def acquire(self, address: str) -> str | None:
        """Count one more socket for ``address``; or, when a cap is reached, count nothing and
        return the refusal (which names the cap)."""
        refused = self.take(address)
        if refused == "key":
            return (f"too many sockets from one address: at most {self.per_key} "
                    "open at once")
        if refused is not None:
            return f"the server is full: at most {self.total} sockets open at once"
        self.peak = max(self.peak, self.count)
        return None

    def release(self, address: str) -> bool:
        """A socket counted by :meth:`acquire` closed. True when the sockets open have fallen
        to a quarter of their peak since the last such moment (a peak of at least
        :data:`TRIM_PEAK`): the time to give their memory back (:func:`give_back_memory`)."""
        self.give_back(address)
        if self.peak >= TRIM_PEAK and self.count <= self.peak // 4:
            self.peak = self.count
            return True
        return False


@dataclass(frozen=True, slots=True)
class Rate:
    """A named rate limit per key: ``per_minute`` actions a minute after a first burst of as
    many (0: no limit). The name keeps the buckets of different limits apart."""

    name: str
    per_minute: int


def site_rate(rate: Rate) -> Rate:
    """The limit a whole /48 is held to under ``rate`` (:func:`site_key`): :data:`SITE_SHARE`
    times its allowance, in buckets of their own."""
    return Rate(f"{rate.name}/{SITE_PREFIX}", rate.per_minute * SITE_SHARE)


class Limits(ABC):
    """The limits that hold for the whole service: rates per key, sockets held per scope (an
    address, a player), keys barred for a while. Every method is a coroutine, as a shared
    backend asks another server."""

    @abstractmethod
    async def take(self, rate: Rate, key: str) -> int:
        """Take one action of ``rate`` for ``key``: 0 when allowed, else the whole seconds
        until one would be (nothing taken): the ``Retry-After`` of the refusal. A key in an
        IPv6 /48 (:func:`site_key`) also takes from its site's allowance (:func:`site_rate`),
        all or nothing."""

    @abstractmethod
    async def wait(self, rate: Rate, key: str) -> int:
        """Whole seconds until ``key`` may act under ``rate`` again (0: now), taking nothing."""

    @abstractmethod
    async def hold(self, scope: str, cap: int) -> bool:
        """Count one more socket in ``scope`` unless ``cap`` (0: none) are held already;
        True when counted. Every True is matched by one :meth:`let_go`. A scope in an IPv6
        /48 (:func:`site_key`) is also counted in its site's, held to :data:`SITE_SHARE`
        times ``cap``."""

    @abstractmethod
    async def let_go(self, scope: str) -> None:
        """A socket counted by :meth:`hold` in ``scope`` closed."""

    @abstractmethod
    async def held(self, scope: str) -> int:
        """Sockets counted in ``scope`` now (for tests and the operator)."""

    @abstractmethod
    async def bar(self, key: str, seconds: float) -> None:
        """Bar ``key`` for ``seconds`` from now."""

    @abstractmethod
    async def barred(self, key: str) -> float:
        """Seconds ``key`` stays barred (0: it is not)."""

    async def start(self) -> None:  # noqa: B027 - a backend with nothing to start keeps this
        """Begin (connect, start renewing what must be renewed); called once at start-up."""

    async def close(self) -> None:  # noqa: B027 - a backend with nothing to free keeps this
        """Stop; what this process held is let go."""


class MemoryLimits(Limits):
    """:class:`Limits` kept in this process's memory: right for one process, and the default."""

    def __init__(self) -> None:
        self.rates: dict[str, KeyedLimit] = {}
        self.holds: dict[str, int] = {}
        self.until: dict[str, float] = {}

    def _limit(self, rate: Rate) -> KeyedLimit:
        limit = self.rates.get(rate.name)
        if limit is None or limit.per_minute != rate.per_minute:
            limit = self.rates[rate.name] = KeyedLimit(rate.per_minute)
        return limit

    def _buckets(self, rate: Rate, key: str) -> list[tuple[KeyedLimit, str]]:
        """The buckets an action of ``rate`` by ``key`` takes from: its own, and its site's
        (:func:`site_key`) at :data:`SITE_SHARE` times the rate."""
        buckets = [(self._limit(rate), key)]
        site = site_key(key)
        if site is not None:
            buckets.append((self._limit(site_rate(rate)), site))
        return buckets

    async def take(self, rate: Rate, key: str) -> int:
        """See :meth:`Limits.take`."""
        buckets, now = self._buckets(rate, key), time.monotonic()
        # All or nothing: a refusal by the site's bucket must not spend the key's token.
        wait = max(limit.retry_after(k, now) for limit, k in buckets)
        if wait:
            return wait
        for limit, k in buckets:
            limit.allow(k, now)
        return 0

    async def wait(self, rate: Rate, key: str) -> int:
        """See :meth:`Limits.wait`."""
        now = time.monotonic()
        return max(limit.retry_after(k, now) for limit, k in self._buckets(rate, key))

    async def hold(self, scope: str, cap: int) -> bool:
        """See :meth:`Limits.hold`."""
        if not room_for(self.holds, scope, cap):
            return False
        count_in(self.holds, scope)
        return True

    async def let_go(self, scope: str) -> None:
        """See :meth:`Limits.let_go`."""
        uncount_in(self.holds, scope)

    async def held(self, scope: str) -> int:
        """See :meth:`Limits.held`."""
        return self.holds.get(scope, 0)

    async def bar(self, key: str, seconds: float) -> None:
        """See :meth:`Limits.bar`."""
        now = time.monotonic()
        self.until[key] = now + seconds
        if len(self.until) > 10_000:
            self.until = {k: t for k, t in self.until.items() if t > now}

    async def barred(self, key: str) -> float:
        """See :meth:`Limits.barred`."""
        until = self.until.get(key)
        if until is None:
            return 0.0
        left = until - time.monotonic()
        if left <= 0:
            del self.until[key]
            return 0.0
        return left


class HeldWhile:
    """Things (rooms) counted against a cap per scope (an address) for as long as ``counts``
    says they still count: each through :meth:`Limits.hold`, as a socket is, so the cap holds
    for the whole service when the limits are shared, and a process that dies stops counting
    its things within its lease. What this process counted is its own to let go: a thing that
    no longer counts is let go when its scope asks for one more (here) and at every
    :meth:`sweep` (every few seconds, once started), so another process sees it counted no
    longer than that."""

    def __init__(self, limits: Limits, counts: Callable[[str], bool]) -> None:
        self.limits = limits
        self.counts = counts
        """Whether a thing counted here still counts (False: let it go)."""
        self.by_scope: dict[str, set[str]] = {}
        """What this process counted, per scope (only scopes with some)."""
        self._sweeping: asyncio.Task[None] | None = None

    async def take(self, scope: str, thing: str, cap: int) -> bool:
        """Count ``thing`` in ``scope`` unless ``cap`` (0: none) others count there already,
        anywhere; True when it counts (or did already, here)."""
        await self._drop(scope)
        if thing in self.by_scope.get(scope, ()):
            return True
        if not await self.limits.hold(scope, cap):
            return False
        held = self.by_scope.setdefault(scope, set())
        if thing in held:  # counted meanwhile, by another command for it: once is enough
            await self.limits.let_go(scope)
        else:
            held.add(thing)
        return True

    async def _drop(self, scope: str) -> None:
        held = self.by_scope.get(scope)
        if held is None:
            return
        # Forgotten here before anything is awaited: a sweep and a take at once let go once.
        gone = [thing for thing in held if not self.counts(thing)]
        held.difference_update(gone)
        if not held:
            del self.by_scope[scope]
        for _ in gone:
            await self.limits.let_go(scope)

    async def sweep(self) -> None:
        """Let go of everything counted here that no longer counts."""
        for scope in list(self.by_scope):
            await self._drop(scope)

    async def _keep_sweeping(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await self.sweep()
            except Exception:  # the next sweep tries again; the counts must not stop dropping
                log.exception("limits: sweeping what no longer counts failed")

    def start(self, every: float) -> None:
        """Sweep every ``every`` seconds until :meth:`close`."""
        self._sweeping = asyncio.create_task(self._keep_sweeping(every))

    async def close(self) -> None:
        """Stop sweeping (what is counted goes with the limits' own :meth:`Limits.close`)."""
        if self._sweeping is not None:
            self._sweeping.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeping
            self._sweeping = None
