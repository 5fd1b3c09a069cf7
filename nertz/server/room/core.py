"""What one room's table holds: the state its log builds, and the facts read from it.

Every part of the table (:mod:`nertz.server.room.table` puts them together) works on this one
state: the lobby, the phase, the match and round being played with their replay recorder, the
room's clock and finished matches, the automation watch and flags, the plays waiting their
turn, and the log's own numbers (the next entry, the last broadcast). What the log records
changes only by applying its entries (:mod:`nertz.server.room.entries`), and a snapshot
(:mod:`nertz.server.room.snapshot`) captures it and puts it back; the rest (sockets, timers,
plays waiting their turn) is this process's own.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from nertz.engine import Round
from nertz.match import Match, RoundResult
from nertz.replay import Recorder
from nertz.rules import Rules
from nertz.server.room.archive import MatchArchive
from nertz.server.room.clock import Clock
from nertz.server.room.lobby import Lobby, Player
from nertz.server.room.messages import Effects
from nertz.server.room.phase import Phase
from nertz.server.room.races import Flag, HoldStats, ReactionWatch, Waiting
from nertz.server.store import Store

Emit = Callable[[Effects], None]
"""Where the effects of clock-driven changes go (the room's fan-out)."""


class TableCore:
    """What one room's table holds, and the facts read from it.

    The parts of :class:`~nertz.server.room.table.Table` build on it; a snapshot
    (:mod:`nertz.server.room.snapshot`) captures and restores it."""

    def __init__(
        self, store: Store, room_id: str, code: str, rules: Rules, seats: int
    ) -> None:
        self.store = store
        self.id = room_id
        self.code = code
        self.rules = rules
        self.lobby = Lobby(seats, rules.teams)
        self.phase = Phase.LOBBY
        self.match: Match | None = None
        self.round: Round | None = None
        self.recorder: Recorder | None = None
        self.match_id: str | None = None
        self.match_number = 0
        self.last_result: RoundResult | None = None
        self.archive = MatchArchive(store, room_id)
        self.clock = Clock(room_id)
        self.seq = 0
        """The next log entry's number."""
        self.snapshot_seq = 0
        """Where a rebuild starts reading the log: the entry the newest snapshot comes before."""
        self.version = 0
        """The last broadcast's number."""
        self.last_t = 0
        self.countdown_ms = 0
        self.broken = False
        self.closed = False
        self.epoch: int | None = None
        """The lease epoch this process owns the room under (many processes), stamped on every
        append so that the store refuses them once a newer owner has taken the room."""
        self.deal_seed: int | None = None
        """Set by ``nertz serve --deal-seed``: matches are dealt from it, not at random."""
        self.same_deal: tuple[str, int | str] | None = None
        """A "same deal" room: the finished match (id, seed) whose cards its first match deals."""
        self.on_bot: Callable[[Player], None] | None = None
        """Called with each bot the host seats (the room starts its driver)."""
        self._emit: Emit | None = None
        self._unsent: list[Effects] = []
        self._fx: Effects | None = None
        self._futs: list[asyncio.Future[Any]] = []
        self._pending: set[asyncio.Future[Any]] = set()
        self._vacancy_timer: asyncio.TimerHandle | None = None
        self._host_timer: asyncio.TimerHandle | None = None
        self._replaying = False
        self.fair_option: bool | None = None
        """Latency-fair races: on, off, or None (the default: on while a person is seated)."""
        self.hold_stats = HoldStats()
        self.watch = ReactionWatch()
        self.flags: list[Flag] = []
        """People of the current match marked as playing beyond any person."""
        self._waiting: dict[int, deque[Waiting]] = {}
        self._wait_seq = 0
        self._wait_timer: asyncio.TimerHandle | None = None
        self._drained: list[asyncio.Future[None]] = []
        self._heard: dict[str, float] = {}
        """Each player's latest command's estimated send time (wall ms)."""
        self._step_sent: dict[int, tuple[int, float]] = {}
        """Each foundation's last step: (seat, estimated send time in wall ms)."""
        self._rules_json: tuple[Rules, str | dict[str, Any], dict[str, Any]] | None = None
        """The rules the lobby shows, with their spec and options: worked out once (finding
        the shortest spec compares every preset), not at every lobby broadcast."""

    # ------------------------------------------------------------------ facts

    @property
    def players(self) -> dict[str, Player]:
        """Everyone in the room, by id."""
        return self.lobby.players

    @property
    def host(self) -> str | None:
        """The host's player id."""
        return self.lobby.host

    @property
    def seats(self) -> int:
        """How many seats the room has."""
        return self.lobby.seats

    def seat_player(self, seat: int, hand: int = 0) -> Player | None:
        """Who sits at ``seat`` (the partner ``hand`` under teams)."""
        return self.lobby.seat_player(seat, hand)

    def hand_of(self, player: Player) -> int | None:
        """Which half of its seat ``player`` plays (see :meth:`Lobby.hand_of`)."""
        return self.lobby.hand_of(player)

    def player_for_token(self, token: str) -> Player | None:
        """The person this token belongs to (the server decides who a client is)."""
        return self.lobby.player_for_token(token)

    def now_t(self) -> int:
        """Milliseconds since the round began, on the server's clock."""
        return self.clock.now_t()

    @property
    def fair_races(self) -> bool:
        """Whether races are ordered by when plays were sent: the room's option, or by default
        while any seat holds a person (rooms of bots alone race by arrival)."""
        if self.fair_option is not None:
            return self.fair_option
        return any(p.bot is None and p.seat is not None for p in self.players.values())


__all__ = ["Emit", "TableCore"]
