"""Who is in a room and where they sit: players, seats, partner slots, names, tokens, the host.

The :class:`Lobby` holds the room's people as the log made them; the table changes it only by
applying log entries, and asks it who sits where, which half of a split seat a partner plays,
and whether a name or a bot may join.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Final

from nertz.bots import UnknownName, find_bot
from nertz.bots.driver import LIVE_LEVELS, level_problem
from nertz.server import protocol
from nertz.server.limits import TokenBucket
from nertz.server.room.messages import CommandError, ServerMessage

RECONNECT_SECONDS: Final = 300.0
"""How long a dropped player's seat waits for them before it counts as vacant."""
HOST_AWAY_SECONDS: Final = 30.0
"""How long the room waits for a host with no connection before someone connected hosts
instead: the room's next round, rematch and bots wait on the host, and nobody else may."""
MOVES_PER_SECOND: Final = 10.0
"""The fastest a human can play; faster actions are refused (token bucket, this burst)."""
POINTERS_PER_SECOND: Final = 10.0
"""The most pointer positions of one player the room passes on a second (more are dropped:
a pointer is a passing moment, the next one says where it is)."""
EMOTE_BURST: Final = 3
EMOTES_PER_SECOND: Final = 0.5
"""Quick reactions: a burst of :data:`EMOTE_BURST`, then one every two seconds."""
MAX_PEOPLE: Final = 64
"""The most people (and bots) one room takes."""

SERVER_LEVELS = LIVE_LEVELS
"""Speed levels a room may seat."""


def bot_name(level: str, seat: int) -> str:
    """The name a room gives its bot: ``Expert bot 2`` (its level and seat)."""
    return f"{level.title()} bot {seat + 1}"




def token_hash(token: str) -> str:
    """What the log keeps of a seat token: its SHA-256, never the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()


def bot_problem(bot: str, level: str) -> str | None:
    """Why ``bot`` at ``level`` cannot sit at a table, or None if it can."""
    try:
        find_bot(bot)
    except UnknownName as exc:
        return str(exc)
    return level_problem(level)


@dataclass(slots=True)
class Player:
    """Someone in the room: a person (with a token) or a bot; seated or spectating."""

    id: str
    name: str
    token_hash: str | None
    seat: int | None
    hand: int = 0
    bot: str | None = None
    level: str | None = None
    ready: bool = False
    # Runtime only, never logged: sockets open now, and when the last one closed.
    sockets: int = 0
    left_at: float | None = None
    away_until: float | None = None
    rtt: float | None = None
    """The round trip shown to the table: the server's measurement, else the client's claim."""
    rtt_measured: float | None = None
    """The server's own round-trip estimate (from the edge's stamps): what fair races use."""
    moves: TokenBucket = field(default_factory=lambda: TokenBucket(MOVES_PER_SECOND,
                                                                   MOVES_PER_SECOND))
    answers: OrderedDict[str, ServerMessage] = field(default_factory=OrderedDict)
    pointers: TokenBucket = field(default_factory=lambda: TokenBucket(POINTERS_PER_SECOND,
                                                                      POINTERS_PER_SECOND / 2))
    pointing: bool = False
    """A pointer of this player's was passed on and its drag has not ended."""
    emotes: TokenBucket = field(default_factory=lambda: TokenBucket(EMOTES_PER_SECOND,
                                                                    EMOTE_BURST))

    @property
    def vacant(self) -> bool:
        """A person gone longer than the reconnect window."""
        return (
            self.bot is None
            and self.sockets == 0
            and self.left_at is not None
            and time.monotonic() - self.left_at > RECONNECT_SECONDS
        )

    def went(self) -> None:
        """The person's last socket closed (or they joined without one): their seat waits
        :data:`RECONNECT_SECONDS` from now. ``away_until`` is that moment on the wall clock,
        for the others' countdown (``left_at`` the same on the monotonic clock, for timers)."""
        self.left_at = time.monotonic()
        self.away_until = time.time() + RECONNECT_SECONDS

    def came(self) -> None:
        """A socket of the person opened: nothing waits for them."""
        self.left_at = None
        self.away_until = None

    def remember(self, action_id: str, answer: ServerMessage) -> None:
        """Keep the answer to ``action_id``, so a resent action gets it again: every id of the
        match, rebuilt from the log after a restart (the table forgets them when a new match
        starts)."""
        self.answers[action_id] = answer

    def to_json(self) -> dict[str, Any]:
        """Public facts about the player (no token)."""
        return {
            "id": self.id,
            "name": self.name,
            "seat": self.seat,
            "hand": self.hand,
            "bot": self.bot,
            "level": self.level,
            "ready": self.ready,
            "connected": self.bot is not None or self.sockets > 0,
            "vacant": self.vacant,
            # When an away person's seat falls vacant (ms since the epoch): the server's
            # deadline, so every page counts down to the same moment.
            "away_until": (round(self.away_until * 1000)
                           if self.bot is None and self.sockets == 0
                           and self.away_until is not None else None),
        }


class Lobby:
    """The room's people by id, its host, and its seats (``seats`` of them; two partner slots
    each when ``teams`` is on, split when ``split``)."""

    def __init__(self, seats: int, teams: str = "off") -> None:
        self.seats = seats
        self.teams = teams
        self.players: dict[str, Player] = {}
        self.host: str | None = None

    # ------------------------------------------------------------------ changes (from the log)

    def add(self, player: Player) -> None:
        """Seat or seat-less, the player is in; the first person is the host."""
        self.players[player.id] = player
        if self.host is None and player.bot is None:
            self.host = player.id

    def remove(self, player_id: str | None) -> Player | None:
        """Take a player out; a host who leaves hands over to the next person."""
        p = self.players.pop(player_id, None) if player_id is not None else None
        if p is not None and self.host == p.id:
            self.host = next((q.id for q in self.players.values() if q.bot is None), None)
        return p

    # ------------------------------------------------------------------ questions

    def hands(self) -> tuple[int, ...]:
        """The partner slots of a seat: (0, 1) under team rules, else (0,)."""
        return (0, 1) if self.teams != "off" else (0,)

    def free_seat(self) -> tuple[int | None, int]:
        """The first empty seat and slot (a seat's first slot before any partner's)."""
        taken = {(p.seat, p.hand) for p in self.players.values() if p.seat is not None}
        for hand in self.hands():
            for seat in range(self.seats):
                if (seat, hand) not in taken and (hand == 0 or (seat, 0) in taken):
                    return seat, hand
        return None, 0

    def seat_player(self, seat: int, hand: int = 0) -> Player | None:
        """Who sits at ``seat`` (the partner ``hand`` under teams)."""
        for p in self.players.values():
            if p.seat == seat and p.hand == hand:
                return p
        return None

    def seat_name(self, seat: int) -> str:
        """What a seat is called: its people's names (``Ann & Bob``), else ``seat N``."""
        names = [p.name for p in self.players.values() if p.seat == seat]
        return " & ".join(names) if names else f"seat {seat + 1}"

    def hand_of(self, player: Player) -> int | None:
        """Which half of its seat's tableau ``player`` may play: its partner slot (0: the Nertz
        pile, 1: the stock and waste) under ``teams: split`` when the other slot is filled, else
        None (everything). A partner alone at a seat plays both halves, or it could never turn
        its stock (or never play its Nertz pile)."""
        if self.teams != "split" or player.seat is None:
            return None
        if self.seat_player(player.seat, 1 - player.hand) is None:
            return None
        return player.hand

    def player_for_token(self, token: str) -> Player | None:
        """The person this token belongs to (the server decides who a client is)."""
        digest = token_hash(token)
        for p in self.players.values():
            if p.token_hash is not None and secrets.compare_digest(p.token_hash, digest):
                return p
        return None

    def people(self) -> list[Player]:
        """Everyone who is not a bot."""
        return [p for p in self.players.values() if p.bot is None]

    # ------------------------------------------------------------------ checks (raise)

    def check_name(self, name: str) -> str:
        """The name as the room keeps it; refused when the room is full, or when it is a bot's
        or looks like someone's here already (:func:`protocol.names_clash`)."""
        clean = protocol.clean_name(name)
        if len(self.players) >= MAX_PEOPLE:
            raise CommandError("room_full", "this room has as many people as it takes")
        # By look too: "Expert bot 2" with a Cyrillic o (U+043E) would pass for the bot.
        if protocol.bot_like(clean):
            raise CommandError("name_taken", f"names like {clean!r} are the room's bots' names: "
                                             "pick another name")
        # Compared by look (Unicode TS 39 skeletons), so nobody passes for someone here.
        if any(protocol.names_clash(p.name, clean) for p in self.players.values()):
            raise CommandError("name_taken", f"someone here is already called {clean!r} "
                                             "or a name that looks like it: pick another name")
        return clean

    def check_seat(self, seat: int) -> None:
        """Refuse a seat number the room does not have."""
        if not 0 <= seat < self.seats:
            raise CommandError("bad_seat", f"there is no seat {seat + 1} (1 to {self.seats})")

    def check_bot(self, bot: str, level: str) -> None:
        """Refuse a bot or speed a room cannot seat."""
        problem = bot_problem(bot, level)
        if problem:
            raise CommandError("bad_bot", problem)

    def check_host(self, player: Player) -> None:
        """Refuse anyone but the host."""
        if player.id != self.host:
            raise CommandError("not_host", "only the host may do that")

    def find(self, player_id: str) -> Player:
        """The player with this id; refused when nobody here has it."""
        target = self.players.get(player_id)
        if target is None:
            raise CommandError("no_player", f"nobody with id {player_id!r} is in this room")
        return target
