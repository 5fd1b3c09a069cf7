"""History: rating a finished match, and what a player's page, the leaderboard and an export
show.

When a room's match is saved the owning process rates it (:meth:`History.record`): the
``rated_matches`` row is its claim (inserted in the same transaction as every rating it moves,
so a match is rated exactly once whichever process gets there), each player's rating in the
match's family moves (:mod:`nertz.server.players.ratings`), and each player's part (place,
points, cards to the foundations, play time, races won, rating before and after) becomes a
``match_results`` row: the page's history and figures.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from nertz import replay
from nertz.server.players.ratings import NEW, Skill, bot_skill, display, family, preset_name, rate
from nertz.server.players.tables import match_results, rated_matches, ratings
from nertz.server.store import Store

log = logging.getLogger("nertz.players")

HISTORY_PAGE: Final = 50
"""Matches a player's page lists (newest first)."""

LEADERBOARD_SIZE: Final = 50
"""Players a leaderboard shows."""


@dataclass(frozen=True, slots=True)
class Sitter:
    """Someone at a seat when a match ended: a person (their profile, if the server knows
    them) or a bot at a speed level."""

    name: str
    profile: str | None = None
    bot: str | None = None
    level: str | None = None


Seating = Callable[[str], "list[list[Sitter]] | None"]
"""Who sat at each seat of a room's table now (room id -> seats), or None if this process
does not hold the room."""


@dataclass(frozen=True, slots=True)
class SeatFigures:
    """What one seat did in a match."""

    points: int
    place: int
    won: bool
    cards: int
    play_ms: int
    races_won: int


def figures(data: dict[str, Any]) -> list[SeatFigures]:
    """Each seat's figures, from a finished match's replay file (played through)."""
    file = replay.from_json(data)
    played = replay.run(file)
    seats = len(file.players)
    totals = list(played.match.totals)
    cards = [0] * seats
    races = [0] * seats
    play_ms = 0
    for record, rr in zip(file.rounds, played.rounds, strict=True):
        for s, score in enumerate(rr.result.score.seats):
            cards[s] += score.foundation_cards
        play_ms += max((m.t for m in record.moves), default=0)
        for race in record.races:
            races[race.winner] += 1
    winner = played.match.winner
    return [SeatFigures(totals[s], 1 + sum(t > totals[s] for t in totals),
                        winner == s, cards[s], play_ms, races[s]) for s in range(seats)]


class History:
    """Rated matches, ratings and players' parts in them, in the database."""

    def __init__(self, db: Store) -> None:
        self.db = db

    async def skills(self, profile_ids: Sequence[str], family_name: str) -> dict[str, Skill]:
        """The players' ratings in a family (a player with none has :data:`NEW`)."""
        out = {p: NEW for p in profile_ids}
        if not profile_ids:
            return out
        async with self.db.connection() as conn:
            result = await conn.execute(
                sa.select(ratings.c.profile_id, ratings.c.mu, ratings.c.sigma)
                .where(ratings.c.family == family_name)
                .where(ratings.c.profile_id.in_(list(profile_ids))))
            for r in result:
                out[r.profile_id] = Skill(r.mu, r.sigma)
        return out

    async def rated(self, match_id: str) -> dict[str, Any] | None:
        """A rated match as the results show it: family, preset, and per seat its people,
        points and rating change; None if the match was not rated."""
        if len(match_id) > 32:
            return None
        async with self.db.connection() as conn:
            row = (await conn.execute(sa.select(rated_matches)
                                      .where(rated_matches.c.match_id == match_id))).first()
        if row is None:
            return None
        return {"match": row.match_id, "room": row.room_id, "family": row.family,
                "preset": row.preset, "finished_at": row.finished_at,
                "seats": json.loads(row.seats)}

    async def record(self, match_id: str, room_id: str, data: dict[str, Any],
                     seats: list[list[Sitter]], known_seed: int | str | None = None) -> bool:
        """Rate a finished match (its replay file ``data``, ``seats``: who sat where); False
        when it is not rated (no known player at the table, an empty seat, rated already, or a
        deal the players could know: duplicate deal, or ``known_seed``, the seed of a match
        whose replay is public, dealt again)."""
        if not any(s.profile for seat in seats for s in seat):
            return False
        if len(seats) < 2 or any(not seat for seat in seats):
            return False
        held = [s.profile for seat in seats for s in seat if s.profile]
        if len(held) != len(set(held)):
            return False  # one player at two places: not a contest between players
        file = replay.from_json(data)
        if len(file.players) != len(seats):
            return False
        if file.rules.duplicate_deal:
            # Later rounds deal each seat the hand another seat played in the open: a seat that
            # kept the broadcasts knows its Nertz pile and much of its stock. Not a contest.
            return False
        if known_seed is not None and file.seed == known_seed:
            return False  # that match's replay shows every card
        figs = await asyncio.to_thread(figures, data)
        fam = family(file.rules)
        preset = preset_name(file.rules)
        for _attempt in range(3):
            try:
                return await self._record(match_id, room_id, fam, preset, file.players, seats,
                                          figs)
            except IntegrityError:
                # Rated meanwhile by another process, or a first rating of the same player
                # inserted by another match: look again.
                if await self.rated(match_id) is not None:
                    return False
        return False  # pragma: no cover - three clashes in a row

    async def _record(self, match_id: str, room_id: str, fam: str, preset: str,
                      names: list[str], seats: list[list[Sitter]],
                      figs: list[SeatFigures]) -> bool:
        now = time.time()
        people = sorted({s.profile for seat in seats for s in seat if s.profile})
        async with self.db.transaction() as conn:
            # The claim first: a second rating of this match fails here, before any change.
            await conn.execute(rated_matches.insert().values(
                match_id=match_id, room_id=room_id, family=fam, preset=preset,
                finished_at=now, seats="[]"))
            # Row locks (PostgreSQL; SQLite writes one at a time anyway) keep two matches
            # ending at once from both starting from the same old rating.
            result = await conn.execute(
                sa.select(ratings.c.profile_id, ratings.c.mu, ratings.c.sigma, ratings.c.matches)
                .where(ratings.c.family == fam).where(ratings.c.profile_id.in_(people))
                .with_for_update())
            old: dict[str, tuple[Skill, int]] = {
                r.profile_id: (Skill(r.mu, r.sigma), r.matches) for r in result}
            before = [[old[s.profile][0] if s.profile in old
                       else bot_skill(s.level) if s.bot else NEW for s in seat]
                      for seat in seats]
            after = rate(before, [f.points for f in figs])
            out_seats = []
            for i, seat in enumerate(seats):
                fig = figs[i]
                members = []
                for j, s in enumerate(seat):
                    new = before[i][j] if s.bot else after[i][j]
                    members.append({"name": s.name, "profile": s.profile, "bot": s.bot,
                                    "level": s.level,
                                    "rating_before": round(before[i][j].display, 1),
                                    "rating_after": round(new.display, 1)})
                    if s.profile is None:
                        continue
                    seen = old.get(s.profile)
                    if seen is None:
                        await conn.execute(ratings.insert().values(
                            profile_id=s.profile, family=fam, mu=new.mu, sigma=new.sigma,
                            matches=1, updated_at=now))
                    else:
                        await conn.execute(
                            ratings.update().where(ratings.c.profile_id == s.profile)
                            .where(ratings.c.family == fam)
                            .values(mu=new.mu, sigma=new.sigma, matches=seen[1] + 1,
                                    updated_at=now))
                    await conn.execute(match_results.insert().values(
                        match_id=match_id, profile_id=s.profile, family=fam, preset=preset,
                        finished_at=now, seat=i, place=fig.place, points=fig.points,
                        won=fig.won, cards=fig.cards, play_ms=fig.play_ms,
                        races_won=fig.races_won, rating_before=before[i][j].display,
                        rating_after=new.display))
                out_seats.append({"seat": i, "name": names[i], "points": fig.points,
                                  "place": fig.place, "won": fig.won, "players": members})
            await conn.execute(rated_matches.update()
                               .where(rated_matches.c.match_id == match_id)
                               .values(seats=json.dumps(out_seats)))
        return True

    # ------------------------------------------------------------------ what pages show

    async def ratings_of(self, profile_id: str) -> list[dict[str, Any]]:
        """A player's rating in every family they have played."""
        async with self.db.connection() as conn:
            result = await conn.execute(sa.select(ratings)
                                        .where(ratings.c.profile_id == profile_id)
                                        .order_by(ratings.c.family))
            return [{"family": r.family, "rating": round(display(r.mu, r.sigma), 1),
                     "mu": r.mu, "sigma": r.sigma, "matches": r.matches} for r in result]

    async def matches_of(self, profile_id: str, limit: int | None = HISTORY_PAGE
                         ) -> list[dict[str, Any]]:
        """A player's rated matches, newest first: date, rules, seats, result, rating change."""
        query = (sa.select(match_results, rated_matches.c.seats)
                 .join(rated_matches, rated_matches.c.match_id == match_results.c.match_id)
                 .where(match_results.c.profile_id == profile_id)
                 .order_by(match_results.c.finished_at.desc()))
        if limit is not None:
            query = query.limit(limit)
        async with self.db.connection() as conn:
            rows = list(await conn.execute(query))
        out = []
        for r in rows:
            seats = json.loads(r.seats)
            out.append({
                "match": r.match_id, "finished_at": r.finished_at, "preset": r.preset,
                "family": r.family, "seat": r.seat, "seats": [s["name"] for s in seats],
                "place": r.place, "points": r.points, "won": bool(r.won), "cards": r.cards,
                "play_ms": r.play_ms, "races_won": r.races_won,
                "rating_before": round(r.rating_before, 1),
                "rating_after": round(r.rating_after, 1),
                "change": round(r.rating_after - r.rating_before, 1),
                "replay": f"/?replay={r.match_id}",
            })
        return out

    async def figures_of(self, profile_id: str) -> list[dict[str, Any]]:
        """A player's figures per ruleset (preset): matches, win share, mean points, cards
        per minute, races won."""
        c = match_results.c
        query = (sa.select(c.preset, sa.func.count().label("n"),
                           sa.func.sum(sa.case((c.won, 1), else_=0)).label("wins"),
                           sa.func.avg(c.points).label("points"),
                           sa.func.sum(c.cards).label("cards"),
                           sa.func.sum(c.play_ms).label("ms"),
                           sa.func.sum(c.races_won).label("races"))
                 .where(c.profile_id == profile_id).group_by(c.preset).order_by(c.preset))
        async with self.db.connection() as conn:
            rows = list(await conn.execute(query))
        return [{"preset": r.preset, "matches": int(r.n),
                 "win_share": round(int(r.wins) / int(r.n), 3),
                 "mean_points": round(float(r.points), 1),
                 "cards_per_minute": round(int(r.cards) / (int(r.ms) / 60000), 1)
                 if int(r.ms) else 0.0,
                 "races_won": int(r.races)} for r in rows]

    async def leaderboard(self, family_name: str, limit: int = LEADERBOARD_SIZE
                          ) -> list[dict[str, Any]]:
        """The family's best players by displayed rating."""
        from nertz.server.players.tables import profiles

        shown = ratings.c.mu - 3 * ratings.c.sigma
        query = (sa.select(ratings, profiles.c.name, profiles.c.account)
                 .join(profiles, profiles.c.id == ratings.c.profile_id)
                 .where(ratings.c.family == family_name)
                 .order_by(shown.desc(), ratings.c.profile_id).limit(limit))
        async with self.db.connection() as conn:
            rows = list(await conn.execute(query))
        # ``guest``: a guest may take any name (an account's too), so the list says which is
        # which: a name on it is an account's only where it says so.
        return [{"rank": i + 1, "player": r.profile_id, "name": r.name,
                 "guest": r.account is None,
                 "rating": round(display(r.mu, r.sigma), 1), "matches": r.matches}
                for i, r in enumerate(rows)]

    async def forget(self, conn: Any, profile_id: str) -> None:
        """Delete a player's ratings and history rows (within the caller's transaction)."""
        await conn.execute(ratings.delete().where(ratings.c.profile_id == profile_id))
        await conn.execute(match_results.delete().where(match_results.c.profile_id == profile_id))


__all__ = ["HISTORY_PAGE", "LEADERBOARD_SIZE", "History", "SeatFigures", "Seating", "Sitter",
           "figures"]
