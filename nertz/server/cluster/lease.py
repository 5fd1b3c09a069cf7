"""Who owns a room: a lease per room in Redis, with a time to live and an epoch.

A room has at most one owner at a time: the process holding its lease. The owner renews its
leases every :data:`RENEW_SECONDS`; a lease not renewed for :data:`LEASE_SECONDS` (its owner
died, hung or lost Redis) may be taken by any other process, which then rebuilds the room from
its log. Every take draws a new epoch (a fencing token, one counter per room that only grows):
the store refuses log appends made under an older one (:meth:`nertz.server.store.Store.fence`),
so a former owner that wakes up after a pause can never fork the log, however long it slept.

Three Redis keys under the service's prefix hold every lease: ``owner`` (a hash, room to
``"<process> <epoch>"``), ``expiry`` (a sorted set, room to the millisecond its lease runs out,
on Redis's own clock: the processes' clocks never have to agree) and ``epochs`` (a hash, room to
its newest epoch). Each change is one Lua script, so it is atomic. The expiry set is also how
orphans are found: :meth:`Leases.expired` lists the rooms whose owner stopped renewing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from redis.asyncio import Redis

LEASE_SECONDS: Final = 2.0
"""How long a lease lasts unless renewed: the longest a dead owner's rooms wait for a new one
(plus up to :data:`RENEW_SECONDS` until someone looks)."""

RENEW_SECONDS: Final = 0.5
"""How often an owner renews its leases (and how often a process looks for orphaned rooms)."""

_ACQUIRE: Final = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local room, me, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local holder = redis.call('HGET', KEYS[1], room)
local expiry = tonumber(redis.call('ZSCORE', KEYS[2], room) or '0')
if holder then
  local process, epoch = string.match(holder, '^(%S+) (%d+)$')
  if process == me then
    redis.call('ZADD', KEYS[2], ms + ttl, room)
    return {1, epoch, me}
  end
  if expiry > ms then
    return {0, epoch, process}
  end
end
local epoch = redis.call('HINCRBY', KEYS[3], room, 1)
redis.call('HSET', KEYS[1], room, me .. ' ' .. epoch)
redis.call('ZADD', KEYS[2], ms + ttl, room)
return {1, tostring(epoch), me}
"""

_RENEW: Final = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl = tonumber(ARGV[1])
local lost = {}
for i = 2, #ARGV, 2 do
  local room, mine = ARGV[i], ARGV[i + 1]
  if redis.call('HGET', KEYS[1], room) == mine then
    redis.call('ZADD', KEYS[2], ms + ttl, room)
  else
    table.insert(lost, room)
  end
end
return lost
"""

_RELEASE: Final = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
return 0
"""

_ABANDON: Final = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('ZADD', KEYS[2], 0, ARGV[1])
  return 1
end
return 0
"""

_FORGET: Final = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or ms) < ms then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
return 0
"""

_EXPIRED: Final = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ms, 'LIMIT', 0, tonumber(ARGV[1]))
"""


@dataclass(frozen=True, slots=True)
class Claim:
    """The answer to :meth:`Leases.acquire`: whether this process owns the room now, under
    which epoch, and who the owner is."""

    owned: bool
    epoch: int
    owner: str


class Leases:
    """The room leases of one service (one Redis key prefix), seen from one process."""

    def __init__(self, redis: Redis, prefix: str, process: str,
                 ttl: float = LEASE_SECONDS) -> None:
        if " " in process:
            raise ValueError(f"a process name has no spaces: {process!r}")
        self.redis = redis
        self.process = process
        self.ttl_ms = int(ttl * 1000)
        self._owner = prefix + "owner"
        self._expiry = prefix + "expiry"
        self._epochs = prefix + "epochs"
        self._acquire: Any = redis.register_script(_ACQUIRE)
        self._renew: Any = redis.register_script(_RENEW)
        self._release: Any = redis.register_script(_RELEASE)
        self._expired: Any = redis.register_script(_EXPIRED)
        self._abandon: Any = redis.register_script(_ABANDON)
        self._forget: Any = redis.register_script(_FORGET)

    async def acquire(self, room_id: str) -> Claim:
        """Take the room's lease if it is free or ran out (a new epoch), keep it if it is
        ours (the same epoch); else say who holds it."""
        owned, epoch, owner = await self._acquire(
            keys=[self._owner, self._expiry, self._epochs],
            args=[room_id, self.process, self.ttl_ms])
        return Claim(bool(owned), int(epoch), _text(owner))

    async def renew(self, held: dict[str, int]) -> list[str]:
        """Renew the leases of ``held`` (room to the epoch it is held under); returns the rooms
        whose lease another process has taken meanwhile (this process must let them go)."""
        if not held:
            return []
        args: list[Any] = [self.ttl_ms]
        for room_id, epoch in held.items():
            args += [room_id, f"{self.process} {epoch}"]
        lost = await self._renew(keys=[self._owner, self._expiry], args=args)
        return [_text(room) for room in lost]

    async def release(self, room_id: str, epoch: int) -> bool:
        """Give the room's lease up (it left memory); False if it was not ours any more."""
        done = await self._release(keys=[self._owner, self._expiry],
                                   args=[room_id, f"{self.process} {epoch}"])
        return bool(done)

    async def abandon(self, room_id: str, epoch: int) -> bool:
        """Let the lease run out now, keeping the room listed (this process is stopping while
        the room is live): another process takes it over at once."""
        done = await self._abandon(keys=[self._owner, self._expiry],
                                   args=[room_id, f"{self.process} {epoch}"])
        return bool(done)

    async def forget(self, room_id: str) -> bool:
        """Drop a lease that ran out for a room nobody should take over (it closed)."""
        done = await self._forget(keys=[self._owner, self._expiry], args=[room_id])
        return bool(done)

    async def owner(self, room_id: str) -> tuple[str, int] | None:
        """The process holding the room's lease and its epoch (even if it ran out and nobody
        has taken it yet), or None if nobody holds it."""
        holder = await self.redis.hget(self._owner, room_id)
        if holder is None:
            return None
        process, epoch = _text(holder).split(" ")
        return process, int(epoch)

    async def owners(self, room_ids: list[str]) -> dict[str, str | None]:
        """The process holding each room's lease (None: nobody), in one round trip."""
        if not room_ids:
            return {}
        holders = await self.redis.hmget(self._owner, room_ids)
        return {room: None if h is None else _text(h).split(" ")[0]
                for room, h in zip(room_ids, holders, strict=True)}

    async def expired(self, limit: int = 100) -> list[str]:
        """Rooms whose lease ran out without being given up: their owner is gone."""
        rooms = await self._expired(keys=[self._expiry], args=[limit])
        return [_text(room) for room in rooms]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
