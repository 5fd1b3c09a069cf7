"""A room live on this process: its table (the owner) wired to its fan-out (the sockets).

:class:`LiveRoom` is the one place where the two meet: a socket's command goes to
:meth:`Table.handle <nertz.server.room.table.Table.handle>`, and the effects it returns (and the
clock's) go over the :class:`~nertz.server.bus.Bus` to the
:class:`~nertz.server.edge.fanout.Fanout`. It also runs the room's bots,
each through an in-process :class:`~nertz.server.room.bots.RoomSeat`; they wait while nobody
has been connected for :data:`BOTS_WAIT_SECONDS`. When rooms are owned
across processes, the bus carries the same two calls (commands in, effects out) between a
room's owner and the sockets' process.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection

from nertz.bots.driver import BotDriver
from nertz.server import protocol
from nertz.server.bus import Bus
from nertz.server.edge.fanout import Fanout, Sink
from nertz.server.room.bots import RoomSeat
from nertz.server.room.lobby import Player
from nertz.server.room.messages import CommandError, Effects, Stamp
from nertz.server.room.table import Table

log = logging.getLogger("nertz.bots")

BOTS_WAIT_SECONDS = 30.0
"""How long a room's bots play on with nobody connected (no socket, seated or watching, on any
process): then they wait until someone comes. A round nobody sees is not played out for nobody
(a host who set bots going and left would have them play on uncounted), and a person whose
connection dropped finds the round where the bots left it. As long as a host's absence
(:data:`~nertz.server.room.lobby.HOST_AWAY_SECONDS`): a reload or a lost signal is shorter."""


class LiveRoom:
    """One room's table and sockets, and its bots' tasks."""

    def __init__(self, table: Table, bus: Bus, start_bots: bool = True) -> None:
        self.table = table
        self.bus = bus
        self.fanout = Fanout()
        self.start_bots = start_bots
        self.tasks: set[asyncio.Task[None]] = set()
        self.joined_from: dict[str, str] = {}
        """The address each person here joined from, by player id (this process's memory:
        what the edge's per-address cap and a kick's bar read; a rebuilt room starts empty)."""
        self.empty_since: float | None = time.monotonic()
        """Since when nobody is connected (:func:`time.monotonic`), None while someone is: the
        hub closes a room empty too long, and the bots wait in one empty a while. A room
        (new, or rebuilt after its owner died) starts empty until its first socket comes."""
        table.on_bot = self.start_bot
        bus.subscribe(table.id, self.fanout)
        table.connect(self._publish)

    def _publish(self, fx: Effects, sender: Sink | None = None) -> None:
        self.bus.publish(self.table.id, fx, sender)

    @property
    def id(self) -> str:
        """The room's id."""
        return self.table.id

    @property
    def open(self) -> bool:
        """Taking commands: neither closed nor waiting to be rebuilt from its log."""
        return not (self.table.closed or self.table.broken)

    # ------------------------------------------------------------------ sockets

    def attach(self, sink: Sink, player: Player | None, since: int | None) -> None:
        """A socket joins: bring it up to date from ``since`` or send the whole state."""
        self.fanout.attach(sink, player.id if player is not None else None)
        if self.empty_since is not None:
            self.empty_since = None
            # Waiting bots wake: a watcher with no seat brings no broadcast that would.
            self.fanout.wake()
        self.resync(sink, player, since)
        self._publish(self.table.connected(player))

    def resync(self, sink: Sink, player: Player | None, since: int | None) -> None:
        """Answer a ``sync``: the missed broadcasts, or the whole state (the socket stays
        attached: nothing changes for the others, so nothing is broadcast)."""
        table = self.table
        self.fanout.catch_up(sink, since, table.version, lambda: table.snapshot(player),
                             lambda: table.caught_up(player))

    def detach(self, sink: Sink) -> None:
        """A socket closed. The seat waits for its player to come back."""
        pid = self.fanout.detach(sink)
        if not self.fanout.sinks and self.empty_since is None:
            self.empty_since = time.monotonic()
        if pid is not None:
            self._publish(self.table.disconnected(self.table.players.get(pid)))

    @property
    def unwatched(self) -> bool:
        """Whether nobody has been connected for :data:`BOTS_WAIT_SECONDS`: the bots wait."""
        since = self.empty_since
        return since is not None and time.monotonic() - since >= BOTS_WAIT_SECONDS

    @property
    def changed(self) -> asyncio.Event:
        """Set at the next broadcast (what the room's bots wait on)."""
        return self.fanout.changed

    def handle(self, player: Player, message: protocol.ClientMessage,
               sender: Sink | None, stamp: Stamp | None = None) -> Effects:
        """One command from ``player`` on socket ``sender``, with the edge's ``stamp`` (when
        it arrived, the socket's round trip); its answers go back there, now or, for a play
        that waits its turn (fair races), once decided."""
        fx = self.table.handle(player, message, stamp,
                               lambda later: self._publish(later, sender))
        self._publish(fx, sender)
        return fx

    def submit(self, player: Player, message: protocol.ClientMessage) -> Effects:
        """A command with no socket to answer (a bot's): handled and its effects sent on."""
        return self.handle(player, message, None)

    async def join(self, name: str, spectator: bool,
                   reclaim: Collection[str] = ()) -> tuple[Player, str]:
        """Add a person once the join is stored: the player and their seat token (``reclaim``:
        see :meth:`Table.join <nertz.server.room.people.People.join>`)."""
        player, token, fx = self.table.join(name, spectator, reclaim)
        self._publish(fx)
        if fx.committed is not None:
            await asyncio.gather(fx.committed, return_exceptions=True)
        return player, token

    async def end_seats(self, player_ids: Collection[str], why: str = "sign_out") -> None:
        """End these people's seat tokens (their player signed out: :meth:`Table.end_seats
        <nertz.server.room.people.People.end_seats>`), once stored; raises
        :class:`~nertz.server.room.messages.CommandError` if the room could not store it (a
        rebuilt table would know the tokens again)."""
        fx = self.table.end_seats(player_ids, why)
        self._publish(fx)
        if fx.committed is not None:
            await asyncio.gather(fx.committed, return_exceptions=True)
        if self.table.broken:
            raise CommandError("unavailable", "the room could not store the sign-out")

    def send_latency(self) -> None:
        """Every seat's latency, to everyone (unversioned: a passing measure, not state)."""
        if self.fanout.sinks:
            self.fanout.send_now(self.table.latency())

    # ------------------------------------------------------------------ lifetime

    def start_bot(self, player: Player) -> None:
        """Start a bot's driver task (kept here so it is not collected)."""
        if not self.start_bots or player.bot is None or player.level is None:
            return
        driver = BotDriver(RoomSeat(self, player), player.bot, player.level,
                           f"{self.table.id}:{player.id}")
        task = asyncio.get_running_loop().create_task(driver.run(), name=f"bot-{player.id}")
        self.tasks.add(task)
        task.add_done_callback(self._bot_done)

    def start_seated_bots(self) -> None:
        """Start a driver for every bot in the room (after a restore)."""
        for player in list(self.table.players.values()):
            if player.bot is not None:
                self.start_bot(player)

    def _bot_done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("table %s: bot stopped: %r", self.table.id, task.exception())

    def close(self) -> None:
        """Stop the table's timers, bots and sockets (the room stays stored)."""
        self.table.close()
        for task in list(self.tasks):
            task.cancel()
        self.bus.unsubscribe(self.table.id, self.fanout)
        self.fanout.close()

    async def settled(self) -> None:
        """Wait until everything the table logged is committed (or failed)."""
        await self.table.settled()
