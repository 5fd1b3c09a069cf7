"""The rooms this process owns: creating, finding, restoring them, and the store beneath.

Today one process owns every room. The hub is the seam where ownership will be shared out over
several processes (each room owned by exactly one; the others forward to it over Redis): every
table can already be rebuilt from its stored log on any process (:meth:`Hub.get` does exactly
that for a room not in memory).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Any

from nertz.rules import Rules
from nertz.server.live import LiveRoom
from nertz.server.room.table import Table
from nertz.server.store import Store

log = logging.getLogger("nertz.hub")

LATENCY_SECONDS = 3.0
"""How often every room hears its seats' latencies."""

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""Join codes avoid letters and digits that read alike (0/O, 1/I)."""


class Hub:
    """Every live room of this process, by room id."""

    def __init__(
        self, store: Store, start_bots: bool = True, deal_seed: int | None = None
    ) -> None:
        self.store = store
        self.rooms: dict[str, LiveRoom] = {}
        self.start_bots = start_bots
        self.deal_seed = deal_seed
        """Deal every room's matches from this seed (``nertz serve --deal-seed``), if set."""
        self._lock = asyncio.Lock()
        self._ticker: asyncio.Task[None] | None = None

    async def restore_all(self) -> int:
        """Bring back every room that was live when the server stopped; returns how many.
        A room that cannot be rebuilt is logged and left out: it must not stop the others."""
        for row in await self.store.live_rooms():
            try:
                await self.get(row.id)
            except Exception:
                log.exception("room %s could not be restored", row.id)
        return len(self.rooms)

    @property
    def tables(self) -> dict[str, Table]:
        """Every live room's table, by room id."""
        return {key: room.table for key, room in self.rooms.items()}

    async def create(self, rules: Rules, seats: int) -> LiveRoom:
        """A new room with a fresh id and join code."""
        for _ in range(20):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))
            if await self.store.find_room(code) is None:
                break
        table = await Table.create(self.store, rules, seats, secrets.token_hex(8), code)
        return self._adopt(table)

    async def get(self, key: str) -> LiveRoom | None:
        """A room by id or join code, rebuilt from its log if this process does not hold it."""
        room = self.rooms.get(key)
        if room is not None and not room.table.broken:
            return room
        async with self._lock:
            row = await self.store.find_room(key)
            if row is None:
                return None
            room = self.rooms.get(row.id)
            if room is not None and not room.table.broken:
                return room
            if room is not None:
                # A broken table: stop it and let its queued writes settle before reading.
                room.close()
                await room.settled()
            entries = await self.store.load_log(row.id)
            table = await Table.restore(
                self.store, row.id, row.code, Rules.from_spec(row.rules), row.seats, entries
            )
            room = self._adopt(table)
            room.start_seated_bots()
            log.info("room %s restored from %d log entries", row.id, len(entries))
            return room

    def _adopt(self, table: Table) -> LiveRoom:
        table.deal_seed = self.deal_seed
        room = LiveRoom(table, start_bots=self.start_bots)
        self.rooms[table.id] = room
        if self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick())
        return room

    async def _tick(self) -> None:
        # Each seat's latency, to everyone, every few seconds: one timer for all rooms.
        while True:
            await asyncio.sleep(LATENCY_SECONDS)
            for room in list(self.rooms.values()):
                room.send_latency()

    async def close(self) -> None:
        """Stop every table (rooms stay stored)."""
        if self._ticker is not None:
            self._ticker.cancel()
        for room in self.rooms.values():
            room.close()
        for room in self.rooms.values():
            await room.settled()
        self.rooms.clear()

    def stats(self) -> dict[str, Any]:
        """Counts for health checks and benchmarks."""
        return {
            "rooms": len(self.rooms),
            "sockets": sum(len(r.fanout.sinks) for r in self.rooms.values()),
            "commits": self.store.commits,
        }
