"""Public rooms: the rooms their creator asked to list, for anyone to find and join.

Only rooms created with ``"public": true`` are listed (``public_rooms``); every other room stays
reachable only by its link or code. A listed room shows while it is open and, where this
process holds it, while it is in its lobby with a seat free.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, Final

import sqlalchemy as sa

from nertz.rules import Rules
from nertz.server.players.ratings import family, preset_name
from nertz.server.players.tables import public_rooms
from nertz.server.store import Store, rooms

LISTED: Final = 50
"""The most rooms one listing shows (the newest)."""

LISTED_FOR: Final = 24 * 3600.0
"""Seconds a room stays listed at most."""

LocalRoom = Callable[[str], Any]
"""This process's live room by id, or None (the hub's ``rooms.get``)."""


class Listing:
    """The public rooms, in the database."""

    def __init__(self, db: Store, local: LocalRoom) -> None:
        self.db = db
        self.local = local

    async def add(self, room_id: str) -> None:
        """List a room."""
        async with self.db.transaction() as conn:
            await conn.execute(public_rooms.insert().values(room_id=room_id,
                                                            listed_at=time.time()))

    async def rooms(self) -> list[dict[str, Any]]:
        """The listed rooms one may join now, newest first."""
        query = (sa.select(rooms.c.id, rooms.c.code, rooms.c.rules, rooms.c.seats,
                           public_rooms.c.listed_at)
                 .join(public_rooms, public_rooms.c.room_id == rooms.c.id)
                 .where(rooms.c.status != "closed")
                 .where(public_rooms.c.listed_at >= time.time() - LISTED_FOR)
                 .order_by(public_rooms.c.listed_at.desc()).limit(LISTED))
        async with self.db.connection() as conn:
            rows = list(await conn.execute(query))
        out = []
        for r in rows:
            rules = Rules.from_spec(json.loads(r.rules))
            entry: dict[str, Any] = {"room": r.id, "code": r.code, "preset": preset_name(rules),
                                     "family": family(rules), "seats": r.seats,
                                     "listed_at": r.listed_at, "phase": None, "seated": None}
            live = self.local(r.id)
            if live is not None:
                table = live.table
                seated = sum(1 for p in table.players.values() if p.seat is not None)
                if str(table.phase) != "lobby" or seated >= table.seats:
                    continue
                entry["phase"] = str(table.phase)
                entry["seated"] = seated
            out.append(entry)
        return out


__all__ = ["LISTED", "LISTED_FOR", "Listing"]
