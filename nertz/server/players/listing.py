"""Public rooms: the rooms their creator asked to list, for anyone to find and join.

Only rooms created with ``"public": true`` are listed (``public_rooms``); every other room stays
reachable only by its link or code. A listed room shows while it is open and, where this
process holds it, while it is in its lobby with a seat free.

One address may have at most :data:`PER_LISTER` listed rooms open at once, so that nobody can
push everyone else's rooms off the list (which shows the newest :data:`LISTED`). The list keeps
a hash of the address that listed each room (:func:`lister_key`), not the address as written
(the server's own table: a hash of an address can be reversed by trying every address).
"""

from __future__ import annotations

import hashlib
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

PER_LISTER: Final = 5
"""Listed rooms one address may have open at once."""

SCANNED: Final = 1000
"""Listed rooms one listing looks through at most for :data:`LISTED` one may join (rooms
in play or full are passed over)."""

BATCH: Final = 100
"""Listed rooms read from the database at a time."""


class ListingRefused(ValueError):
    """One address has :data:`PER_LISTER` listed rooms open already."""


def lister_key(address: str) -> str:
    """What the list keeps of the address that listed a room: enough to count its rooms,
    not the address itself."""
    return hashlib.sha256(b"nertz public rooms\0" + address.encode()).hexdigest()

LocalRoom = Callable[[str], Any]
"""This process's live room by id, or None (the hub's ``rooms.get``)."""


class Listing:
    """The public rooms, in the database."""

    def __init__(self, db: Store, local: LocalRoom) -> None:
        self.db = db
        self.local = local

    async def check(self, address: str) -> None:
        """Refuse (:class:`ListingRefused`) when ``address`` has :data:`PER_LISTER` listed
        rooms open: asked before the room is made."""
        query = (sa.select(sa.func.count()).select_from(public_rooms)
                 .join(rooms, public_rooms.c.room_id == rooms.c.id)
                 .where(public_rooms.c.lister == lister_key(address))
                 .where(rooms.c.status != "closed")
                 .where(public_rooms.c.listed_at >= time.time() - LISTED_FOR))
        async with self.db.connection() as conn:
            held = (await conn.execute(query)).scalar_one()
        if held >= PER_LISTER:
            raise ListingRefused(f"your address has {PER_LISTER} public rooms open already: "
                                 "make this one private (share its link), or wait until one "
                                 "of them closes")

    async def add(self, room_id: str, address: str) -> None:
        """List a room that ``address`` made."""
        async with self.db.transaction() as conn:
            await conn.execute(public_rooms.insert().values(
                room_id=room_id, listed_at=time.time(), lister=lister_key(address)))

    async def rooms(self) -> list[dict[str, Any]]:
        """The listed rooms one may join now, newest first (at most :data:`LISTED`)."""
        query = (sa.select(rooms.c.id, rooms.c.code, rooms.c.rules, rooms.c.seats,
                           public_rooms.c.listed_at)
                 .join(public_rooms, public_rooms.c.room_id == rooms.c.id)
                 .where(rooms.c.status != "closed")
                 .where(public_rooms.c.listed_at >= time.time() - LISTED_FOR)
                 .order_by(public_rooms.c.listed_at.desc(), public_rooms.c.room_id))
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        for offset in range(0, SCANNED, BATCH):
            async with self.db.connection() as conn:
                rows = list(await conn.execute(query.limit(BATCH).offset(offset)))
            for r in rows:
                if r.id in seen:
                    continue  # a room listed between two reads shifts the rows by one
                seen.add(r.id)
                entry = self._joinable(r)
                if entry is not None:
                    out.append(entry)
                    if len(out) == LISTED:
                        return out
            if len(rows) < BATCH:
                break
        return out

    def _joinable(self, r: Any) -> dict[str, Any] | None:
        """A listed room's entry, or None where this process holds it and it is in play or
        full (another process's rooms are listed as the database has them)."""
        phase = seated = None
        live = self.local(r.id)
        if live is not None:
            table = live.table
            seated = sum(1 for p in table.players.values() if p.seat is not None)
            if str(table.phase) != "lobby" or seated >= table.seats:
                return None
            phase = str(table.phase)
        rules = Rules.from_spec(json.loads(r.rules))
        return {"room": r.id, "code": r.code, "preset": preset_name(rules),
                "family": family(rules), "seats": r.seats, "listed_at": r.listed_at,
                "phase": phase, "seated": seated}


__all__ = ["LISTED", "LISTED_FOR", "PER_LISTER", "SCANNED", "Listing", "ListingRefused",
           "lister_key"]
