"""The room's own bots: the one bot loop (:mod:`nertz.bots.driver`) on an in-process seat.

A :class:`RoomSeat` is the driver's :class:`~nertz.bots.driver.SeatLink` at a table of this
process: it reads the live round as the bot's seat sees it, waits on the room's broadcasts, and
submits moves through :meth:`Table.handle <nertz.server.room.table.Table.handle>` like any
client's, so a bot is checked, stored and acknowledged as a person is.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Protocol

from nertz.bots import Observation
from nertz.bots.driver import Look, wait_event
from nertz.moves import Move
from nertz.server import protocol
from nertz.server.room.lobby import Player
from nertz.server.room.messages import Effects, Error
from nertz.server.room.phase import Phase
from nertz.server.room.table import Table


class BotHost(Protocol):
    """Where a room's bot plays: its table, the event its broadcasts set, and the door its
    commands go through (their effects sent on)."""

    table: Table

    @property
    def changed(self) -> asyncio.Event:
        """Set at the next broadcast."""

    @property
    def unwatched(self) -> bool:
        """Whether nobody has been connected for a while: the bots wait for someone."""

    def submit(self, player: Player, message: protocol.ClientMessage) -> Effects:
        """Handle a command with no socket to answer and send its effects on."""


class RoomSeat:
    """A bot's seat at a table of this process."""

    def __init__(self, host: BotHost, player: Player) -> None:
        self.host = host
        self.player = player
        self._seen = host.changed
        self._ids = 0
        # Each seat's answers outlive its driver (a snapshot keeps them): a driver that numbered
        # its ids from 1 again after a rebuild reused its predecessor's ids for other moves.
        self._prefix = f"b{secrets.token_hex(3)}-"

    def present(self) -> bool:
        """Whether the bot is still in the room and the room is open."""
        table = self.host.table
        return self.player.id in table.players and not table.closed

    def look(self) -> Look | None:
        """The live round as the seat sees it, or None while none is being played (or while
        nobody watches: see :attr:`BotHost.unwatched`)."""
        table = self.host.table
        self._seen = self.host.changed
        rnd, seat = table.round, self.player.seat
        if (table.phase is not Phase.PLAYING or rnd is None or seat is None or rnd.ended
                or self.host.unwatched):
            return None
        key = (f"{table.id}:{table.match_number}:"
               f"{len(table.match.results) if table.match else 0}")
        return Look(Observation.from_round(rnd, seat, table.now_t()), seat, table.rules, key,
                    table.hand_of(self.player))

    async def changed(self, timeout: float | None) -> None:
        """Wait for a broadcast after the last look."""
        await wait_event(self._seen, timeout)

    def still(self, look: Look) -> bool:
        """Whether the round the bot looked at is still the one being played."""
        table = self.host.table
        return table.round is look.obs.round and table.phase is Phase.PLAYING

    async def play(self, move: Move) -> bool:
        """Submit the move as the bot's player; False if refused as a command."""
        self._ids += 1
        fx = self.host.submit(self.player, protocol.Play(f"{self._prefix}{self._ids}", str(move)))
        return not any(isinstance(s.message, Error) for s in fx.sends)
