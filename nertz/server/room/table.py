"""One room's table: the single owner that applies every action, as a reducer over its log.

A :class:`Table` takes commands one at a time, in arrival order, on the event loop (each
command's check-and-apply is synchronous, so nothing interleaves). Its surface is one call,
:meth:`Table.handle` ``(player, message) -> Effects``: what to send to whom, once the command's
log entries are ``committed``. Every change is an entry of the room's log, made by
:meth:`Table._log`: it applies the entry with :meth:`Table._apply` (the same code that rebuilds
a table from its stored log on any process, live moves included) and queues it to the store.
Nobody sees, nor is acknowledged, an action that is not durable: the fan-out
(:mod:`nertz.server.edge.fanout`) sends a command's messages only after its commit.

Changes that no command makes (a countdown ending, a call's grace running out, a seat falling
vacant) come from the room's :class:`~nertz.server.room.clock.Clock`; their effects go to the
callback given to :meth:`Table.connect`. Every message about the table is built from
:mod:`nertz.views` (:mod:`nertz.server.room.messages`), and every seat sees the same face-up
cards, so a table update is one broadcast for everyone; versions number the broadcasts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Any

import msgspec

from nertz.cards import Card
from nertz.errors import IllegalMoveError, LostRace, NotationError, race_lost
from nertz.events import CardsMoved
from nertz.moves import OP_CALL, OP_TO_FOUNDATION, Move
from nertz.replay import Race
from nertz.rules import Rules
from nertz.server import protocol
from nertz.server.room.core import Emit
from nertz.server.room.entries import Entries
from nertz.server.room.gestures import Gestures
from nertz.server.room.lobby import Player, token_hash
from nertz.server.room.messages import (
    SENDER,
    Ack,
    CommandError,
    Effects,
    Pong,
    RaceWon,
    Rejected,
    Send,
    Stamp,
)
from nertz.server.room.phase import Phase
from nertz.server.room.races import (
    CAP_MS,
    SLACK_MS,
    Flag,
    Reply,
    Waiting,
    compensation,
    wall_ms,
)
from nertz.server.room.rounds import Rounds
from nertz.server.room.seating import Seating
from nertz.server.room.snapshot import FORMAT as SNAPSHOT_FORMAT
from nertz.server.room.snapshot import restore as restore_state
from nertz.server.store import LogEntry, Snapshot, Store, StoreError

log = logging.getLogger("nertz.table")


class Table(Rounds, Seating, Gestures, Entries):
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
            await table.archive.ensure_saved(table.match_id, table.recorder.file.to_json(),
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

    def _heard_from(self, player: Player, stamp: Stamp) -> None:
        """What a command says of its seat's clock: its round trip, and that nothing it sends
        from now on was sent before this."""
        if stamp.rtt_ms is not None:
            player.rtt_measured = player.rtt = stamp.rtt_ms
        sent = stamp.arrived_ms - compensation(stamp.rtt_ms)
        if sent > self._heard.get(player.id, 0.0):
            self._heard[player.id] = sent

    def _command(self, player: Player, msg: protocol.ClientMessage, stamp: Stamp,
                 reply: Reply | None) -> None:
        if isinstance(msg, protocol.Play):
            self._play(player, msg.id, msg.move, stamp, reply)
        elif isinstance(msg, protocol.Pong):
            pass  # the edge measured it; its stamp (taken in :meth:`handle`) is the news
        elif isinstance(msg, protocol.Ping):
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



    # ------------------------------------------------------------------ play

    def _play(self, player: Player, action_id: str, text: str, stamp: Stamp,
              reply: Reply | None) -> None:
        """A move from ``player``: applied through the log, then acknowledged; in arrival
        order, except that under fair races a contested play waits for plays sent before it
        (:meth:`_needs_order`), and the seat's later moves wait behind it.

        A repeated ``action_id`` gets the first answer again. Rejections (illegal, a lost race,
        too fast, no round) go to the sender only and change nothing.
        """
        if (not isinstance(action_id, str) or not 1 <= len(action_id) <= 64
                or not action_id.isprintable()):
            # Ids are echoed in answers and kept in the log: no control or format characters
            # that could garble a terminal, a log line or the page.
            raise CommandError("bad_id", "an action id is 1 to 64 printable characters")
        seen = player.answers.get(action_id)
        if seen is not None:
            self._send(SENDER, seen)  # after the first one's commit, like the first answer
            return
        for queue in self._waiting.values():
            for w in queue:
                if w.player_id == player.id and w.action_id == action_id:
                    w.reply = reply  # resent while it waits: answered here once decided
                    return
        self._check_alive()
        if player.seat is None:
            raise CommandError("not_seated", "spectators cannot play")
        if player.bot is None:
            self._throttle(player)
        if (self.round is not None and self.phase is Phase.PLAYING and self.fair_races
                and not self._replaying):
            seat_queue = self._waiting.get(player.seat)
            waiting = Waiting(player.id, player.seat, action_id, str(text), stamp, reply,
                              self._wait_seq)
            self._wait_seq += 1
            if seat_queue:
                seat_queue.append(waiting)  # the seat's own moves keep their order
                return
            if self._needs_order(player.seat, str(text)):
                self._order(waiting)
                return
        self._play_now(player, action_id, text, stamp)

    def _play_now(self, player: Player, action_id: str, text: str, stamp: Stamp) -> None:
        """Apply (or refuse) a move now."""
        assert player.seat is not None
        if self.round is not None and self.phase in (Phase.ROUND_OVER, Phase.MATCH_OVER):
            # A move that crossed the round's end (another seat's call, a blocked table): too
            # late, like a lost race; a refusal, not an error of the client's.
            self._refuse(player, Rejected(action_id, str(text)[:32], "the round is over"))
            return
        if self.round is None or self.phase is not Phase.PLAYING:
            raise CommandError("no_round", "no round is being played")
        # The server knows which partner this player is; a client's claim counts for nothing.
        hand = self.hand_of(player)
        t = self.now_t()
        try:
            move = Move.parse(text, self.rules.call_word)
            entry: dict[str, Any] = {"p": player.id, "s": player.seat, "h": hand,
                                     "m": str(move), "t": t}
            if player.bot is None:
                entry["id"] = action_id  # bots number their actions afresh in each process
                entry["v"] = self.version + 1  # the update broadcast just below
                # When it arrived (round ms) and the round trip then: the automation flag's
                # figures, and what a fair race went by.
                entry["a"] = round(t - (wall_ms() - stamp.arrived_ms), 1)
                if stamp.rtt_ms is not None:
                    entry["r"] = round(stamp.rtt_ms, 1)
            # Checked by applying it: refused, it changes nothing and nothing is stored.
            events = self._log("move", entry)
        except (IllegalMoveError, NotationError) as exc:
            race = None
            reason = exc.reason if isinstance(exc, IllegalMoveError) else str(exc)
            if isinstance(exc, LostRace):
                card = self._race_card(player.seat, move)
                margin = exc.margin_ms
                step = self._step_sent.get(exc.foundation - 1)
                if self.fair_races and step is not None and step[0] == exc.winner:
                    # Ordered by when each was sent: the margin is of the send times.
                    mine = stamp.arrived_ms - compensation(stamp.rtt_ms)
                    margin = max(0, round(mine - step[1]))
                    # The engine's text gave the margin of arrival; say the one the race went by.
                    reason = race_lost(exc.foundation, exc.winner, margin)
                race = {"winner": exc.winner, "foundation": exc.foundation,
                        "margin_ms": margin, "card": str(card), "loser": player.seat,
                        "winner_name": self.lobby.seat_name(exc.winner)}
                self._race(Race(t, exc.winner, player.seat, card, exc.foundation, margin))
            self._refuse(player, Rejected(action_id, str(text)[:32], reason, race))
            return
        for e in events:
            if isinstance(e, CardsMoved) and e.dst == "F":
                sent = stamp.arrived_ms - compensation(stamp.rtt_ms)
                self._step_sent[e.foundation - 1] = (player.seat, sent)
        self._broadcast(self._update(player.seat, str(move), t, events))
        ack = Ack(action_id, str(move), t, self.version)
        player.remember(action_id, ack)
        self._send(SENDER, ack)
        if player.bot is None and not any(f.player == player.id for f in self.flags):
            verdict = self.watch.verdict(player.id)
            if verdict is not None:
                why, plays, median, cv = verdict
                self._log("flag", Flag(player.seat, player.id, player.name, why, plays,
                                       median, cv).to_json())
                self._broadcast_lobby()
        self._after_change()

    def _needs_order(self, seat: int, text: str) -> bool:
        """Whether a move must wait its turn by send time: a foundation play another seat could
        answer now (it shows a card that fits the same step), or a call while plays wait."""
        rnd = self.round
        assert rnd is not None
        try:
            move = Move.parse(text, self.rules.call_word)
        except NotationError:
            return False
        if move.op == OP_CALL:
            return any(self._waiting.values())
        if move.op != OP_TO_FOUNDATION:
            return False
        if not rnd.can_play(seat, move, self.now_t()):
            return False  # refused, or a race already lost: decided now
        if self._rivals(seat, move):
            return True
        self.hold_stats.decided_at_once += 1
        return False

    def _rivals(self, seat: int, move: Move) -> list[int]:
        """The other seats that show a card fitting the foundation step ``move`` (a legal play
        of ``seat``) goes to."""
        rnd = self.round
        assert rnd is not None
        card = self._race_card(seat, move)
        if move.foundation:
            fi = move.foundation - 1
        else:
            fi = rnd.foundation_for(card)
            if fi < 0:
                return []  # it starts a new foundation: nobody races for that
        # Asked on every contested play: only a pile top that can fit the step at all (a
        # joker while the foundation takes any card, else its suit and one of the ranks it
        # needs, as the engine checks) is put to the engine, whose refusals cost a raise each.
        f = rnd.foundations[fi]
        needs, suit = f.needs, f.suit
        rivals = []
        for o in range(rnd.seats):
            if o == seat:
                continue
            tab = rnd.tableaus[o]
            tops = [("N", tab.nertz), ("W", tab.waste)]
            tops += [(str(k + 1), pile) for k, pile in enumerate(tab.work)]
            for src, pile in tops:
                if not pile:
                    continue
                top = pile[-1]
                fits = bool(needs) if top.rank == 0 else top.suit == suit and top.rank in needs
                if fits and rnd.can_play(o, f"{src}-F{fi + 1}"):
                    rivals.append(o)
                    break
        return rivals

    def _order(self, w: Waiting) -> None:
        """``w`` waits its turn: decided once no play sent before it can still arrive."""
        w.ordered = True
        w.deadline_ms = w.sent_ms + CAP_MS
        self._waiting.setdefault(w.seat, deque()).append(w)

    def _wake_at(self, w: Waiting) -> float | None:
        """When ``w`` can be decided (wall ms), or None: now. Each other seat either has been
        heard from since (its socket is in order: nothing it sends later was sent sooner), or
        has had its compensation's time to be heard; never later than the cap."""
        now = wall_ms()
        if now >= w.deadline_ms:
            return None
        rnd = self.round
        if rnd is None or self.phase is not Phase.PLAYING:
            return None
        try:
            move = Move.parse(w.text, self.rules.call_word)
        except NotationError:
            return None
        if move.op == OP_TO_FOUNDATION:
            if not rnd.can_play(w.seat, move, self.now_t()):
                return None
            rivals = self._rivals(w.seat, move)
        else:
            rivals = [o for o in range(rnd.seats) if o != w.seat]
        wake = 0.0
        for p in self.players.values():
            if p.seat not in rivals or self._heard.get(p.id, 0.0) >= w.sent_ms:
                continue
            until = w.sent_ms + compensation(p.rtt_measured) + SLACK_MS
            if now < until:
                wake = max(wake, until)
        return min(wake, w.deadline_ms) if wake else None

    def _arm(self, delay: float) -> None:
        if self._wait_timer is not None:
            self.clock.cancel(self._wait_timer)
        self._wait_timer = self.clock.schedule(delay, self._release)

    def _release(self) -> None:
        """Decide the waiting plays whose turn has come, in order of their send times."""
        self._wait_timer = None
        while not self.broken and not self.closed:
            heads = [q[0] for q in self._waiting.values() if q]
            if not heads:
                break
            w = min(heads, key=lambda h: (h.sent_ms, h.order))
            wake = self._wake_at(w)
            if wake is not None:
                self._arm(max(0.0, wake - wall_ms()) / 1000)
                return
            self._decide(w)
        self._waiting = {seat: q for seat, q in self._waiting.items() if q}
        drained, self._drained = self._drained, []
        for fut in drained:
            if not fut.done():
                fut.set_result(None)

    def _decide(self, w: Waiting) -> None:
        """Apply the waiting play ``w`` (its turn has come), then the moves its seat sent after
        it, up to one that must wait its own turn."""
        queue = self._waiting[w.seat]
        queue.popleft()
        self.hold_stats.held.append(wall_ms() - w.stamp.arrived_ms)
        self._answer(w)
        while queue:
            nxt = queue[0]
            if (self.round is not None and self.phase is Phase.PLAYING
                    and self._needs_order(nxt.seat, nxt.text)):
                nxt.ordered = True  # now its seat's first: it waits its own turn
                nxt.deadline_ms = nxt.sent_ms + CAP_MS
                return
            queue.popleft()
            self._answer(nxt)

    def _answer(self, w: Waiting) -> None:
        """Apply (or refuse) a move that waited, its answers sent on the road it came by."""
        player = self.players.get(w.player_id)
        if player is None or player.seat is None:
            return  # gone meanwhile: nothing to apply, nobody to tell

        def run() -> None:
            try:
                self._check_alive()
                self._play_now(player, w.action_id, w.text, w.stamp)
            except CommandError as exc:
                self._send(SENDER, exc.to_message(w.action_id))

        fx = self._run(run)
        if w.reply is not None:
            w.reply(fx)
            return
        # No socket waits for it (a bot's): its answers go to the player's sockets.
        fx.sends = [Send(player.id, s.message) if s.to == SENDER else s for s in fx.sends]
        self._hold(fx)

    def _refuse(self, player: Player, answer: Rejected) -> None:
        """Answer a move that changes nothing, and remember the answer for its id."""
        if player.bot is None:
            # Stored like a move, so that a resent id gets this answer even after a restart,
            # never a second try that might now be applied.
            self._log("rejected", {"p": player.id, "id": answer.id,
                                   "a": msgspec.to_builtins(answer)})
        else:
            player.remember(answer.id, answer)
        self._send(SENDER, answer)

    def _race_card(self, seat: int, move: Move) -> Card:
        """The card a seat tried to play (its move was refused, so it is still on its pile)."""
        assert self.round is not None
        tab = self.round.tableaus[seat]
        if move.src == "N":
            return tab.nertz[-1]
        if move.src == "W":
            return tab.waste[-1]
        return tab.work[move.work_src][-1]

    def _race(self, race: Race) -> None:
        """A contested play: into the race log (a log entry, then the match's replay file), and
        the winning seat is told (the loser hears it in its ``rejected``)."""
        self._log("race", race.to_json())
        told = RaceWon(race.loser, self.lobby.seat_name(race.loser), race.foundation,
                       str(race.card), race.margin_ms)
        for p in list(self.players.values()):
            if p.seat == race.winner and p.bot is None:
                self._send(p.id, told)


__all__ = ["CommandError", "Effects", "Phase", "Player", "StoreError", "Table", "token_hash"]
