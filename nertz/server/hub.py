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
from nertz.server import bots
from nertz.server.store import Store
from nertz.server.table import Table

log = logging.getLogger("nertz.hub")

LATENCY_SECONDS = 3.0
"""How often every room hears its seats' latencies."""

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""Join codes avoid letters and digits that read alike (0/O, 1/I)."""


class Hub:
    """Every live table of this process, by room id."""

    def __init__(
        self, store: Store, start_bots: bool = True, deal_seed: int | None = None
    ) -> None:
        self.store = store
        self.tables: dict[str, Table] = {}
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
        return len(self.tables)

    async def create(self, rules: Rules, seats: int,
                     same_deal: tuple[str, int | str] | None = None) -> Table:
        """A new room with a fresh id and join code (``same_deal``: see :meth:`Table.create`)."""
        for _ in range(20):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))
            if await self.store.find_room(code) is None:
                break
        table = await Table.create(self.store, rules, seats, secrets.token_hex(8), code,
                                   same_deal)
        self._adopt(table)
        return table

    async def get(self, key: str) -> Table | None:
        """A room by id or join code, rebuilt from its log if this process does not hold it."""
        table = self.tables.get(key)
        if table is not None and not table.broken:
            return table
        async with self._lock:
            row = await self.store.find_room(key)
            if row is None:
                return None
            table = self.tables.get(row.id)
            if table is not None and not table.broken:
                return table
            if table is not None:
                # A broken table: stop it and let its queued writes settle before reading.
                table.close()
                await table._drain()
            entries = await self.store.load_log(row.id)
            table = await Table.restore(
                self.store, row.id, row.code, Rules.from_spec(row.rules), row.seats, entries
            )
            self._adopt(table)
            for player in list(table.players.values()):
                if player.bot is not None and table.bot_starter is not None:
                    table.bot_starter(table, player)
            log.info("room %s restored from %d log entries", row.id, len(entries))
            return table

    def _adopt(self, table: Table) -> None:
        if self.start_bots:
            table.bot_starter = bots.start_bot
        table.deal_seed = self.deal_seed
        self.tables[table.id] = table
        if self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        # Each seat's latency, to everyone, every few seconds: one timer for all rooms.
        while True:
            await asyncio.sleep(LATENCY_SECONDS)
            for table in list(self.tables.values()):
                table.send_latency()

    async def close(self) -> None:
        """Stop every table (rooms stay stored)."""
        if self._ticker is not None:
            self._ticker.cancel()
        for table in self.tables.values():
            table.close()
        for table in self.tables.values():
            await table._drain()
        self.tables.clear()

    def stats(self) -> dict[str, Any]:
        """Counts for health checks and benchmarks."""
        return {
            "rooms": len(self.tables),
            "sockets": sum(len(t.sinks) for t in self.tables.values()),
            "commits": self.store.commits,
        }
