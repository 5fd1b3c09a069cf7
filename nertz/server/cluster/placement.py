"""Where a new room goes: the live process that owns the fewest rooms.

Which process a request reaches is the load balancer's choice, and it knows nothing of rooms: a
client's keep-alive connection, or uvicorn's workers sharing one listening socket (the kernel
tends to wake the same one), can bring every room's creation to one process. The room's owner
is the process that created it, so that process would run every table while the others only
pipe sockets to it. So a process asked to create a room first asks here which process should
own it (Colyseus places rooms by load the same way), and has it created there over the relay.

Every process beats every :data:`~nertz.server.cluster.lease.RENEW_SECONDS` with the number of
rooms it owns: a hash (``<prefix>load``, process to rooms) and a sorted set (``<prefix>beats``,
process to its last beat on Redis's clock). :meth:`Placement.pick` takes, in one script, the
process with the fewest rooms among those that beat within :data:`ALIVE_SECONDS`, and counts
the room to it at once, so that a burst of creations from many processes spreads out before
the next beats bring the true counts back.
"""

from __future__ import annotations

from typing import Any, Final

from redis.asyncio import Redis

from nertz.server.cluster.lease import LEASE_SECONDS

ALIVE_SECONDS: Final = LEASE_SECONDS
"""A process that has not beaten for this long gets no new rooms (the lease's time to live: a
process that stopped renewing is being taken over)."""

FORGET_SECONDS: Final = 30.0
"""A process silent for this long is dropped from the counts."""

_BEAT: Final = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ms, ARGV[1])
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ms - tonumber(ARGV[3]))
for _, process in ipairs(gone) do
  redis.call('HDEL', KEYS[1], process)
  redis.call('ZREM', KEYS[2], process)
end
return #gone
"""

_PICK: Final = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local alive = redis.call('ZRANGEBYSCORE', KEYS[2], ms - tonumber(ARGV[1]), '+inf')
local best, fewest = false, nil
for _, process in ipairs(alive) do
  local rooms = tonumber(redis.call('HGET', KEYS[1], process) or '0')
  if fewest == nil or rooms < fewest or (rooms == fewest and process == ARGV[2]) then
    best, fewest = process, rooms
  end
end
if best then
  redis.call('HINCRBY', KEYS[1], best, 1)
end
return best
"""
"""Ties go to the asking process (no relay hop), else to the first in the beats' order."""


_ALIVE: Final = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], ms - tonumber(ARGV[1]), '+inf')
"""


class Placement:
    """The service's room counts per process, seen from one process."""

    def __init__(self, redis: Redis, prefix: str, process: str) -> None:
        self.process = process
        self._load = prefix + "load"
        self._beats = prefix + "beats"
        self._beat: Any = redis.register_script(_BEAT)
        self._pick: Any = redis.register_script(_PICK)
        self._alive: Any = redis.register_script(_ALIVE)

    async def beat(self, rooms: int) -> None:
        """Say this process is alive and owns ``rooms`` rooms."""
        await self._beat(keys=[self._load, self._beats],
                         args=[self.process, rooms, int(FORGET_SECONDS * 1000)])

    async def alive(self, within: float) -> set[str]:
        """The processes that beat within the last ``within`` seconds (Redis's clock)."""
        found = await self._alive(keys=[self._beats], args=[int(within * 1000)])
        return {p.decode() if isinstance(p, bytes) else str(p) for p in found}

    async def pick(self) -> str:
        """The process that should own a new room (this one when no other is alive), counted
        to it now."""
        best = await self._pick(keys=[self._load, self._beats],
                                args=[int(ALIVE_SECONDS * 1000), self.process])
        if not best:
            return self.process
        return best.decode() if isinstance(best, bytes) else str(best)
