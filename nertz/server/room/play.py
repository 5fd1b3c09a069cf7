"""A seat's moves: checked, applied through the log and acknowledged, or refused; and, under
fair races, the plays that wait their turn, applied once it comes.

A move is applied in arrival order, except that under fair races a contested play waits for the
plays sent before it (:mod:`nertz.server.room.fair_order` says which and until when) and its
seat's later moves wait behind it. Refusals (illegal, a lost race, too fast, no round) go to
the sender only and change nothing; a person's are logged all the same, so that a resent action
id gets its first answer again, even after a restart (the same id with another move is an
error, ``reused_id``). A lost race is logged into the match's
replay and told to the winner too. Each applied move is broadcast as an update, may raise the
automation flag (:class:`~nertz.server.room.races.ReactionWatch`), and then the round's referee
has its say (:mod:`nertz.server.room.rounds`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from nertz.errors import IllegalMoveError, LostRace, NotationError, race_lost
from nertz.events import CardsMoved
from nertz.moves import Move
from nertz.replay import Race
from nertz.server import protocol
from nertz.server.room.fair_order import FairOrder
from nertz.server.room.lobby import Player
from nertz.server.room.messages import (
    PASSING,
    SENDER,
    Ack,
    CommandError,
    RaceSeen,
    RaceWon,
    Rejected,
    Send,
    Stamp,
)
from nertz.server.room.people import People
from nertz.server.room.phase import Phase
from nertz.server.room.races import CAP_MS, Flag, Reply, Waiting, compensation, wall_ms
from nertz.server.room.rounds import Rounds


class Play(Rounds, People, FairOrder):
    """A table's moves: applied now or in their fair turn, refused, raced."""

    # ------------------------------------------------------------------ a move now

    def _play(self, player: Player, action_id: str, text: str, stamp: Stamp,
              reply: Reply | None) -> None:
        """A move from ``player``: applied through the log, then acknowledged; in arrival
        order, except that under fair races a contested play waits for plays sent before it
        (:meth:`_needs_order`), and the seat's later moves wait behind it.

        A repeated ``action_id`` with the same move gets the first answer again; with another
        move it is an error (``reused_id``), so that the move is not dropped unsaid. Rejections
        (illegal, a lost race, too fast, no round) go to the sender only and change nothing.
        """
        if not protocol.valid_id(action_id):
            raise CommandError("bad_id", protocol.BAD_ID)
        seen = player.answers.get(action_id)
        if seen is not None:
            if isinstance(seen, Ack | Rejected):  # (the only answers remembered)
                self._check_resent(action_id, text, seen.move)
            self._send(SENDER, seen)  # after the first one's commit, like the first answer
            return
        for queue in self._waiting.values():
            for w in queue:
                if w.player_id == player.id and w.action_id == action_id:
                    self._check_resent(action_id, text, w.text)
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

    def _check_resent(self, action_id: str, text: str, first: str) -> None:
        """Refuse ``text`` under an ``action_id`` already used for the move ``first`` unless it
        is that move again. ``first`` is what the first answer names (an applied move's normal
        form, a refused one's text cut to 32 characters), so the text is compared both ways:
        a byte-identical resend always matches, and so does the same move written otherwise."""
        if text[:32] == first:
            return
        word = self.rules.call_word
        try:
            if str(Move.parse(text, word)) == str(Move.parse(first, word)):
                return
        except NotationError:
            pass  # one of them is no move, the other is not the same text: not a resend
        raise CommandError("reused_id", f"action id {action_id!r} was already used for the "
                                        f"move {first!r}, not {text[:32]!r}: give each move "
                                        "an id of its own")

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

    def _race(self, race: Race) -> None:
        """A contested play: into the race log (a log entry, then the match's replay file); the
        winning seat is told (the loser hears it in its ``rejected``), and everyone sees it
        happen, as at a real table (``race``: public cards only)."""
        self._log("race", race.to_json())
        loser_name = self.lobby.seat_name(race.loser)
        told = RaceWon(race.loser, loser_name, race.foundation, str(race.card), race.margin_ms)
        for p in list(self.players.values()):
            if p.seat == race.winner and p.bot is None:
                self._send(p.id, told)
        self._send(PASSING, RaceSeen(race.winner, self.lobby.seat_name(race.winner),
                                     race.loser, loser_name, race.foundation, str(race.card),
                                     race.margin_ms))

    # ------------------------------------------------------------------ plays waiting their turn

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


__all__ = ["Play"]
