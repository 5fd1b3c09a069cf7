"""Rate limits: one token bucket, used for a player's moves, a socket's messages and the rooms
an address may create.

A bucket holds up to ``burst`` tokens and refills at ``rate`` a second; each action takes one.
Time is passed in (a monotonic clock's seconds), so the same code serves the event loop's clock
and tests.
"""

from __future__ import annotations


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
