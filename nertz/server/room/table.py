"""One room's table: the single owner that applies every action, as a reducer over its log.

A :class:`Table` takes commands one at a time, in arrival order, on the event loop (each
command's check-and-apply is synchronous, so nothing interleaves). Its surface is one call,
:meth:`Table.handle` ``(player, message) -> Effects``: what to send to whom, once the command's
log entries are ``committed``. Nobody sees, nor is acknowledged, an action that is not durable:
the fan-out (:mod:`nertz.server.edge.fanout`) sends a command's messages only after its commit.
Changes that no command makes (a countdown ending, a call's grace running out, a seat falling
vacant) come from the room's :class:`~nertz.server.room.clock.Clock`; their effects go to the
callback given to :meth:`Table.connect`.

This module builds a table (new, or rebuilt from its log), connects and closes it, and hands
each command to the part that holds it. A table is one object made of one class per concept,
each in a module of its own that inherits only the parts it calls, so the modules import one
way:

- :mod:`~nertz.server.room.core`: what a table holds, and the facts read from it;
- :mod:`~nertz.server.room.log`: the log every change goes through, and a command's effects;
- :mod:`~nertz.server.room.entries`: what each kind of log entry does, live and on a rebuild;
- :mod:`~nertz.server.room.broadcasts`: what the table tells (the room, a person's whole state,
  a move's update, a round's result), built from the public views;
- :mod:`~nertz.server.room.people`: joins, sockets, vacant seats, an absent host, pace;
- :mod:`~nertz.server.room.seating`: the seating commands (bots, kicks, seats, ready);
- :mod:`~nertz.server.room.gestures`: pointers and reactions, passed on and never logged;
- :mod:`~nertz.server.room.rounds`: a match's rounds, from the start to a round's close;
- :mod:`~nertz.server.room.fair_order`: whether a play waits for plays sent before it;
- :mod:`~nertz.server.room.play`: moves applied, refused, raced, or decided in their turn.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from nertz.rules import Rules
from nertz.server import protocol
from nertz.server.room.core import Emit
from nertz.server.room.entries import Entries, UnknownEntry, check_entry
from nertz.server.room.gestures import Gestures
from nertz.server.room.lobby import Player
from nertz.server.room.messages import SENDER, CommandError, Effects, Pong, Stamp
from nertz.server.room.phase import Phase
from nertz.server.room.play import Play
from nertz.server.room.races import Reply, wall_ms
from nertz.server.room.seating import Seating
from nertz.server.room.snapshot import FORMAT as SNAPSHOT_FORMAT
from nertz.server.room.snapshot import restore as restore_state
from nertz.server.store import LogEntry, Snapshot, Store


class Table(Play, Seating, Gestures, Entries):
    """The owner of one room. Build with :meth:`create` or :meth:`restore`."""

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def create(
        cls, store: Store, rules: Rules, seats: int, room_id: str, code: str,
        same_deal: tuple[str, int | str] | None = None, fair_races: bool | None = None,
        epoch: int | None = None,
    ) -> Table:
        """A new room, stored. ``same_deal`` (a finished match's id and deal seed) makes the
        room's first match deal that match's cards again: the "same deal" challenge.
        ``fair_races`` turns latency-fair races on or off (None: on while a person is seated).
        ``epoch``: see :attr:`epoch`."""
        table = cls(store, room_id, code, rules, seats)
        table.epoch = epoch
        spec = rules.to_spec()
        await store.create_room(room_id, code, spec, seats)
        data: dict[str, Any] = {"rules": spec, "seats": seats}
        if fair_races is not None:
            data["fair_races"] = fair_races
        if same_deal is not None:
            data["same_deal"] = {"match": same_deal[0], "seed": same_deal[1]}
        fx = table._run(lambda: table._log("created", data))
        if fx.committed is not None:
            await fx.committed
        return table

    @classmethod
    async def restore(
        cls, store: Store, room_id: str, code: str, rules: Rules, seats: int,
        entries: list[LogEntry], epoch: int | None = None, snapshot: Snapshot | None = None,
    ) -> Table:
        """Rebuild a room from its log, then pick up its clocks where they stopped
        (``epoch``: see :attr:`epoch`). With a ``snapshot`` (:meth:`Store.load_room`), the
        ``entries`` are those from the one it comes before: the same table, read in part."""
        table = cls(store, room_id, code, rules, seats)
        table.epoch = epoch
        if snapshot is not None:
            if snapshot.format != SNAPSHOT_FORMAT:
                raise ValueError(f"room {room_id}: a snapshot of form {snapshot.format}, "
                                 f"not {SNAPSHOT_FORMAT}")
            if not entries or entries[0].seq != snapshot.seq:
                raise ValueError(f"room {room_id}: the snapshot comes before entry "
                                 f"{snapshot.seq}, but the entries given start at "
                                 f"{entries[0].seq if entries else 'none'}")
            restore_state(table, snapshot.data)
            table.seq = table.snapshot_seq = snapshot.seq
        # Versions number one process's broadcasts, and a client may still hold one from the
        # process before: start above any it can have reached (that would take more than one
        # broadcast a millisecond), so an old ``since`` gets the whole state, never a history
        # that does not follow from it.
        table.version = int(time.time() * 1000)
        table._replaying = True
        for entry in entries:
            try:
                # Before anything is applied from it: a newer version's entry is refused whole.
                check_entry(entry.kind, entry.data)
            except UnknownEntry as exc:
                table.close()
                raise exc.at(room_id, entry.seq) from None
            table._apply(entry.kind, entry.data)
            table.seq = entry.seq + 1
        table._replaying = False
        table.clock.start_round(table.last_t)
        if table.phase is Phase.COUNTDOWN:
            table._schedule(table.countdown_ms / 1000, table._begin)
        elif table.phase is Phase.PLAYING and table.round is not None and table.round.ended:
            table._hold(table._run(table._after_end))
        if (table.phase is Phase.MATCH_OVER and table.match_id is not None
                and table.recorder is not None and table.match is not None):
            # Killed between closing the last round and saving the match: save it now.
            await table.archive.ensure_saved(table.match_id, table.recorder.to_json(),
                                             table.match.winner)
        return table

    def connect(self, emit: Emit) -> None:
        """Send the effects of clock-driven changes to ``emit`` (those made before now first)."""
        self._emit = emit
        unsent, self._unsent = self._unsent, []
        for fx in unsent:
            emit(fx)

    def close(self) -> None:
        """Stop the table's timers and saves (the room stays stored); a closed table calls
        nobody back."""
        self.closed = True
        self._waiting.clear()
        for fut in self._drained:
            if not fut.done():
                fut.set_result(None)
        self.clock.stop()
        self.archive.close()
        # Its room refers to it: dropping the callbacks (bound to the room) breaks the cycle,
        # so a closed room is freed at once rather than at a rare full collection.
        self.on_bot = None
        self._emit = None

    async def settled(self) -> None:
        """Wait until every play waiting its turn is decided and everything logged so far is
        committed (or failed)."""
        while any(self._waiting.values()) and not (self.closed or self.broken):
            drained = asyncio.get_running_loop().create_future()
            self._drained.append(drained)
            await drained
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    # ------------------------------------------------------------------ the one entry point

    def handle(self, player: Player, message: protocol.ClientMessage,
               stamp: Stamp | None = None, reply: Reply | None = None) -> Effects:
        """Apply one client message from ``player``: what to send to whom (a refusal is an
        ``error`` to the sender), to go out once ``committed``.

        ``stamp`` is the edge's envelope (arrival, round trip; None: arrived now, no round
        trip, as a bot's command). A play that must wait for plays sent before it (fair races)
        is decided later: its effects then go to ``reply`` (the sender's road), and this
        call's are empty."""
        action_id = getattr(message, "id", None)
        if not protocol.valid_id(action_id):
            action_id = None  # never echoed: the refusal says why, without it
        if stamp is None:
            stamp = Stamp(wall_ms())
        self._heard_from(player, stamp)

        def command() -> None:
            try:
                self._command(player, message, stamp, reply)
            except CommandError as exc:
                self._send(SENDER, exc.to_message(action_id))

        fx = self._run(command)
        if self._waiting and not self.closed:
            # This command may have been what a waiting play waited for: look once it is sent.
            self._arm(0.0)
        return fx

    def _command(self, player: Player, msg: protocol.ClientMessage, stamp: Stamp,
                 reply: Reply | None) -> None:
        if isinstance(msg, protocol.Play):
            self._play(player, msg.id, msg.move, stamp, reply)
        elif isinstance(msg, protocol.Pong):
            pass  # the edge measured it; its stamp (taken in :meth:`handle`) is the news
        elif isinstance(msg, protocol.Ping):
            if not protocol.valid_id(msg.id):
                raise CommandError("bad_id", protocol.BAD_ID)
            if msg.rtt is not None and 0 <= msg.rtt < 60_000 and player.rtt_measured is None:
                player.rtt = msg.rtt
            self._send(SENDER, Pong(msg.id, msg.sent, self.clock.loop_time() * 1000))
        elif isinstance(msg, protocol.Ready):
            self._set_ready(player, msg.ready)
        elif isinstance(msg, protocol.AddBot):
            self._add_bot(player, msg.seat, msg.bot, msg.level)
        elif isinstance(msg, protocol.Kick):
            self._kick(player, msg.player)
        elif isinstance(msg, protocol.Assign):
            self._assign(player, msg.player, msg.seat, msg.hand)
        elif isinstance(msg, protocol.Start):
            self._start(player, msg.countdown_ms)
        elif isinstance(msg, protocol.Rematch):
            self._start(player, 3000, rematch=True)
        elif isinstance(msg, protocol.NextRound):
            self._next_round(player, msg.countdown_ms)
        elif isinstance(msg, protocol.BotSeat):
            self._bot_seat(player, msg.seat, msg.bot, msg.level)
        elif isinstance(msg, protocol.Pointer):
            self._pointer(player, msg)
        elif isinstance(msg, protocol.Emote):
            self._emote(player, msg.emote)
        else:  # hello and sync belong to the socket edge
            raise CommandError("bad_message", f"{type(msg).__name__.lower()} is not a command "
                                              "for the table")


__all__ = ["Table"]
