"""The two simple bots: ``random`` (any legal move) and ``greedy`` (a priority list with judgement).

``greedy`` plays a contested foundation play first (a card another seat shows too:
:func:`nertz.bots.races.urgent_play`), then :func:`nertz.bots.heuristic.strong_move`: the Nertz
top first (to a foundation, onto a work pile), contested foundation plays before others, runs
moved to empty a pile or to uncover a card that plays, and the waste put onto a work pile only
when it helps. When that list
is empty it turns the stock; after a whole pass through it with nothing to play it relaxes the
waste rule for a pass, then declares ``STUCK`` (:class:`~nertz.bots.idle.IdleSense`: judged
from what the seat has seen, never from the engine's look at hidden cards).
"""

from __future__ import annotations

from nertz.bots.base import Bot, Observation
from nertz.bots.heuristic import play_on, strong_move
from nertz.bots.idle import IdleSense
from nertz.bots.races import foundation_plays, urgent_play
from nertz.moves import TURN, Kind, Move
from nertz.rules import Rules


class RandomBot(Bot):
    """Any legal move, uniformly (declarations and the call included)."""

    name = "random"

    def decide(self, obs: Observation) -> Move | None:
        """A uniformly random legal move; None once the round is over."""
        moves = obs.legal_moves()
        return self.rng.choice(moves) if moves else None


class GreedyBot(Bot):
    """The priority list of :func:`~nertz.bots.heuristic.strong_move`, then turn or declare."""

    name = "greedy"

    def __init__(self) -> None:
        super().__init__()
        self.idle = IdleSense(patience=2)
        self._shuffled: set[Move] = set()
        self._dug = 0

    def start(self, seat: int, rules: Rules, seed: int | str = 0) -> None:
        """Begin a round: nothing turned idly yet."""
        super().start(seat, rules, seed)
        self.idle.clear()
        self._shuffled = set()
        self._dug = 0

    def decide(self, obs: Observation) -> Move | None:
        """The first play on the priority list, else what an idle seat does."""
        rnd = obs.round
        if rnd.ended is not None:
            return None
        if not rnd.tableaus[obs.seat].nertz:
            if rnd.rules.call != "manual":
                return None
            last = play_on(rnd, obs.seat, self._dug)
            self._dug = self._dug + 1 if last is TURN else 0
            return last
        # A foundation step another seat could take first goes before everything else, even
        # before the Nertz top onto a work pile (that can wait a move; the race cannot): about
        # a point of win share against two pounce bots (docs/bots.md).
        plays = foundation_plays(rnd, obs.seat)
        if plays:
            urgent = urgent_play(rnd, obs.seat, plays)
            if urgent is not None:
                self._shuffled.clear()
                self.idle.progressed()
                return urgent
        # Idle turns only grow while nothing plays: after a play the count is 0, no need to look.
        unblock = self.idle.idle > 0 and self.idle.passes(obs) >= 1
        move = strong_move(rnd, obs.seat, unblock, self._shuffled)
        if move is None:
            return self.idle.when_idle(obs)
        if move.kind is Kind.TO_WORK and move.src.isdigit():
            # A run moved between piles is not progress by itself: never make it twice in a
            # row of such moves (two piles could hand a run back and forth).
            self._shuffled.add(move)
        else:
            self._shuffled.clear()
            self.idle.progressed()
        return move
