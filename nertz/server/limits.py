"""Rate limits: one token bucket, used for a player's moves, a socket's messages, the rooms an
address may create and the unknown tokens it may try; and the caps on open sockets.

A bucket holds up to ``burst`` tokens and refills at ``rate`` a second; each action takes one.
Time is passed in (a monotonic clock's seconds), so the same code serves the event loop's clock
and tests.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import math


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


def give_back_memory() -> None:
    """Collect garbage cycles, then return the C allocator's free pages to the system (glibc's
    ``malloc_trim``; elsewhere only the collection). A closed socket leaves cycles behind
    (tasks, exceptions and their frames) that the server's lazy collector (``nertz serve``
    collects young objects rarely) would keep for long, and the allocator keeps freed pages
    for reuse: after a flood of sockets the process would stay at its peak size for good."""
    gc.collect()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


class SocketCaps:
    """Open sockets counted per client address and in total, each capped (0: no cap).

    A socket is counted from its handshake until it closes; an address with no socket open is
    forgotten at once, so the table holds only addresses with sockets open."""

    def __init__(self, per_address: int, total: int) -> None:
        self.per_address = per_address
        self.total = total
        self.open = 0
        self.peak = 0
        self.by_address: dict[str, int] = {}

    def acquire(self, address: str) -> str | None:
        """Count one more socket for ``address``; or, when a cap is reached, count nothing and
        return the refusal (which names the cap)."""
        held = self.by_address.get(address, 0)
        if self.per_address and held >= self.per_address:
            return (f"too many sockets from one address: at most {self.per_address} "
                    "open at once")
        if self.total and self.open >= self.total:
            return f"the server is full: at most {self.total} sockets open at once"
        self.by_address[address] = held + 1
        self.open += 1
        self.peak = max(self.peak, self.open)
        return None

    def release(self, address: str) -> bool:
        """A socket counted by :meth:`acquire` closed. True when the sockets open have fallen
        to a quarter of their peak since the last such moment (a peak of at least
        :data:`TRIM_PEAK`): the time to give their memory back (:func:`give_back_memory`)."""
        held = self.by_address.get(address, 0)
        if held <= 1:
            self.by_address.pop(address, None)
        else:
            self.by_address[address] = held - 1
        self.open = max(0, self.open - 1)
        if self.peak >= TRIM_PEAK and self.open <= self.peak // 4:
            self.peak = self.open
            return True
        return False


class Barred:
    """Keys barred for a while (a kicked player's address and name, in their room); expired
    keys are forgotten, so the table stays small."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.until: dict[str, float] = {}

    def bar(self, key: str, now: float) -> None:
        """Bar ``key`` from ``now`` for :attr:`seconds`."""
        self.until[key] = now + self.seconds
        if len(self.until) > 10_000:
            self.until = {k: t for k, t in self.until.items() if t > now}

    def left(self, key: str, now: float) -> float:
        """Seconds ``key`` stays barred (0: it is not)."""
        until = self.until.get(key)
        if until is None:
            return 0.0
        if until <= now:
            del self.until[key]
            return 0.0
        return until - now
