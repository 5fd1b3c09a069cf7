"""Quick match: ask for a ruleset and a seat count, get a seat at a table of players of
similar rating; bots fill the seats nobody took once the wait the player chose has passed.

The queue is a table (``quick_queue``), never one process's memory: any process may group
waiting players (:meth:`QuickMatch.matchmake`, run whenever a waiting player asks how it goes).
A grouping claims its rows with one atomic ``UPDATE ... WHERE status = 'waiting'`` and goes on
only if it claimed every one of them, so two processes never seat the same player twice. It
then makes the room, seats the players in the order they came, adds the bots, and leaves each
player's seat (room, player id, seat token) in their row until they collect it.

Whom a player is grouped with: anyone waiting for the same preset and seat count whose rating
is within :data:`BASE_RANGE` of theirs, a range that widens by :data:`WIDEN_PER_SECOND` for
every second they have waited.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import sqlalchemy as sa

from nertz.rules import PRESETS, Rules
from nertz.server import protocol
from nertz.server.players.identity import Identities, Profile
from nertz.server.players.ratings import BOT_RATINGS, display, family
from nertz.server.players.tables import quick_queue
from nertz.server.room.messages import CommandError
from nertz.server.store import Store

log = logging.getLogger("nertz.players")

BASE_RANGE: Final = 100.0
"""Display-rating points apart two players may be and still be grouped at once."""

WIDEN_PER_SECOND: Final = 10.0
"""How much the range widens for every second a player has waited."""

MAX_BOTS_AFTER: Final = 600.0
"""The longest wait for people a player may ask for before bots fill the table."""

BOT_KIND: Final = "greedy"
"""The bot that fills quick-match seats (its level follows the players' ratings)."""

QUEUE_EXPIRY: Final = 900.0
"""A waiting row older than this (its player stopped asking) is dropped."""

MakeRoom = Callable[[Rules, int], Awaitable[Any]]
"""Makes a live room (the hub's ``create``)."""


def bot_level(rating: float) -> str:
    """The bot speed level whose fixed rating is nearest a display rating."""
    return min(BOT_RATINGS, key=lambda level: abs(display(BOT_RATINGS[level], 1.0) - rating))


class QuickMatch:
    """The quick-match queue in the database, and the grouping of its players."""

    def __init__(self, db: Store, identities: Identities, make_room: MakeRoom,
                 clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.identities = identities
        self.make_room = make_room
        self.clock = clock

    async def enter(self, profile: Profile, preset: str, seats: int, bots_after: float,
                    rating: float) -> None:
        """Put ``profile`` in the queue (replacing any earlier ask of theirs)."""
        if preset not in PRESETS:
            raise ValueError(f"no preset {preset!r}: one of {', '.join(sorted(PRESETS))}")
        if not 2 <= seats <= 8:
            raise ValueError(f"seats must be 2 to 8, not {seats}")
        if not 0 <= bots_after <= MAX_BOTS_AFTER:
            raise ValueError(f"bots_after must be 0 to {MAX_BOTS_AFTER:g} seconds, "
                             f"not {bots_after:g}")
        async with self.db.transaction() as conn:
            await conn.execute(quick_queue.delete()
                               .where(quick_queue.c.profile_id == profile.id))
            await conn.execute(quick_queue.insert().values(
                profile_id=profile.id, name=profile.name, preset=preset,
                family=family(PRESETS[preset]), seats=seats, rating=rating,
                bots_after=bots_after, joined_at=self.clock(), status="waiting"))

    async def leave(self, profile_id: str) -> bool:
        """Take a waiting player out of the queue; False if they were not waiting."""
        async with self.db.transaction() as conn:
            result = await conn.execute(quick_queue.delete()
                                        .where(quick_queue.c.profile_id == profile_id)
                                        .where(quick_queue.c.status == "waiting"))
        return bool(result.rowcount)

    async def forget(self, profile_id: str) -> None:
        """A player signed out: their ask leaves the queue, waiting or matched, so nobody is
        grouped with a player who can no longer come (a matched seat not yet handed over is
        ended with their other seats). One being seated right now (``claimed``) is left to
        finish: its seat is a dropped one, which a bot takes in time."""
        async with self.db.transaction() as conn:
            await conn.execute(quick_queue.delete()
                               .where(quick_queue.c.profile_id == profile_id)
                               .where(quick_queue.c.status.in_(("waiting", "matched"))))

    async def status(self, profile_id: str) -> dict[str, Any] | None:
        """Where the player's ask stands (grouping the queue first): ``waiting`` with how
        long and the rating range, or ``matched`` with their seat (handed over once: the row
        goes); None if they are not in the queue."""
        row = await self._row(profile_id)
        if row is None:
            return None
        if row.status == "waiting":
            await self.matchmake(row.preset, row.seats)
            row = await self._row(profile_id)
            if row is None:  # pragma: no cover - left meanwhile
                return None
        if row.status == "matched":
            async with self.db.transaction() as conn:
                await conn.execute(quick_queue.delete()
                                   .where(quick_queue.c.profile_id == profile_id)
                                   .where(quick_queue.c.status == "matched"))
            return {"status": "matched", "room": row.room_id, "code": row.room_code,
                    "player": row.room_player, "token": row.seat_token}
        waited = max(0.0, self.clock() - row.joined_at)
        return {"status": "waiting", "preset": row.preset, "seats": row.seats,
                "waited": round(waited, 1), "range": BASE_RANGE + WIDEN_PER_SECOND * waited,
                "bots_after": row.bots_after}

    async def _row(self, profile_id: str) -> Any:
        async with self.db.connection() as conn:
            return (await conn.execute(sa.select(quick_queue)
                                       .where(quick_queue.c.profile_id == profile_id))).first()

    async def matchmake(self, preset: str, seats: int) -> int:
        """Group whoever can be grouped for ``preset`` and ``seats``; how many tables were
        made."""
        now = self.clock()
        async with self.db.transaction() as conn:
            await conn.execute(quick_queue.delete()
                               .where(quick_queue.c.status == "waiting")
                               .where(quick_queue.c.joined_at < now - QUEUE_EXPIRY))
        async with self.db.connection() as conn:
            waiting = list(await conn.execute(
                sa.select(quick_queue).where(quick_queue.c.status == "waiting")
                .where(quick_queue.c.preset == preset).where(quick_queue.c.seats == seats)
                .order_by(quick_queue.c.joined_at, quick_queue.c.profile_id)))
        made = 0
        taken: set[str] = set()
        for anchor in waiting:
            if anchor.profile_id in taken:
                continue
            waited = now - anchor.joined_at
            reach = BASE_RANGE + WIDEN_PER_SECOND * waited
            near = sorted((r for r in waiting if r.profile_id not in taken
                           and r.profile_id != anchor.profile_id
                           and abs(r.rating - anchor.rating) <= reach),
                          key=lambda r: (abs(r.rating - anchor.rating), r.joined_at))
            group = [anchor, *near[:seats - 1]]
            if len(group) < seats and waited < anchor.bots_after:
                continue
            if await self._seat(group, preset, seats):
                made += 1
            taken.update(r.profile_id for r in group)
        return made

    async def _seat(self, group: list[Any], preset: str, seats: int) -> bool:
        claim = secrets.token_hex(8)
        ids = [r.profile_id for r in group]
        async with self.db.transaction() as conn:
            result = await conn.execute(
                quick_queue.update().where(quick_queue.c.profile_id.in_(ids))
                .where(quick_queue.c.status == "waiting")
                .values(status="claimed", claim=claim))
            if result.rowcount != len(ids):
                # Someone else grouped one of them first (or they left): give back ours.
                await conn.execute(quick_queue.update().where(quick_queue.c.claim == claim)
                                   .values(status="waiting", claim=None))
                return False
        try:
            room = await self.make_room(PRESETS[preset], seats)
            seated = []
            for r in group:
                player, token = await self._join(room, r.name)
                await self.identities.seat(room.id, player.id, r.profile_id)
                seated.append((r.profile_id, player, token))
            host = seated[0][1]
            level = bot_level(sum(r.rating for r in group) / len(group))
            for _ in range(seats - len(group)):
                room.submit(host, protocol.AddBot(level=level, bot=BOT_KIND))
        except Exception:
            log.exception("quick match: could not seat %s", ids)
            async with self.db.transaction() as conn:
                await conn.execute(quick_queue.update().where(quick_queue.c.claim == claim)
                                   .values(status="waiting", claim=None))
            return False
        async with self.db.transaction() as conn:
            for profile_id, player, token in seated:
                await conn.execute(
                    quick_queue.update().where(quick_queue.c.profile_id == profile_id)
                    .where(quick_queue.c.claim == claim)
                    .values(status="matched", room_id=room.id, room_code=room.table.code,
                            room_player=player.id, seat_token=token))
        return True

    @staticmethod
    async def _join(room: Any, name: str) -> tuple[Any, str]:
        # Two people may share a name: the second takes a number.
        for n in range(1, 10):
            try:
                result: tuple[Any, str] = await room.join(
                    name if n == 1 else f"{name[:protocol.MAX_NAME - 3]} {n}", False)
                return result
            except CommandError as exc:
                if exc.code != "name_taken":
                    raise
        raise CommandError("name_taken", f"no free name like {name!r}")


__all__ = ["BASE_RANGE", "MAX_BOTS_AFTER", "QUEUE_EXPIRY", "WIDEN_PER_SECOND", "QuickMatch",
           "bot_level"]
