"""Latency-fair order at the table: whether a play must wait for plays sent before it, and
until when.

Under fair races (:mod:`nertz.server.room.races` has the rule and its figures) a contested play
(a foundation play another seat could answer now, or a call while plays wait) is not decided as
it arrives: it waits until no play sent before it can still arrive, each other seat either
heard from since it was sent or given its compensation's time, never longer than
:data:`~nertz.server.room.races.CAP_MS`. This module answers those questions from the table's
state; the plays themselves are applied, now or once their turn comes, by
:mod:`nertz.server.room.play`.
"""

from __future__ import annotations

from collections import deque

from nertz.cards import Card
from nertz.errors import NotationError
from nertz.moves import OP_CALL, OP_TO_FOUNDATION, Move
from nertz.server.room.core import TableCore
from nertz.server.room.lobby import Player
from nertz.server.room.messages import Stamp
from nertz.server.room.phase import Phase
from nertz.server.room.races import CAP_MS, SLACK_MS, Waiting, compensation, wall_ms


class FairOrder(TableCore):
    """A table's fair-race questions: what each seat was last heard to send, whether a play
    must wait its turn, who could answer it, when its turn comes."""

    def _heard_from(self, player: Player, stamp: Stamp) -> None:
        """What a command says of its seat's clock: its round trip, and that nothing it sends
        from now on was sent before this."""
        if stamp.rtt_ms is not None:
            player.rtt_measured = player.rtt = stamp.rtt_ms
        sent = stamp.arrived_ms - compensation(stamp.rtt_ms)
        if sent > self._heard.get(player.id, 0.0):
            self._heard[player.id] = sent

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

    def _race_card(self, seat: int, move: Move) -> Card:
        """The card a seat tried to play (its move was refused, so it is still on its pile)."""
        assert self.round is not None
        tab = self.round.tableaus[seat]
        if move.src == "N":
            return tab.nertz[-1]
        if move.src == "W":
            return tab.waste[-1]
        return tab.work[move.work_src][-1]

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


__all__ = ["FairOrder"]
