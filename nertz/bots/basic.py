"""The two simple bots: ``random`` (any legal move) and ``greedy`` (a fixed priority list).

The greedy priority list is the one of the strongest open-source heuristics, and its card play is
:func:`nertz.playout.greedy_move` (one implementation, shared with the engine's benchmark): the
Nertz top to a foundation; any other top card (waste, work) to a foundation; the Nertz top onto a
work pile; a whole run that frees a card (turns one up, or empties its pile for the Nertz top);
the waste top onto a work pile; else turn the stock.

What this module adds is what a player does when that list is empty for a while: after turning
through the whole stock without a play it asks the engine whether it is *truly* stuck
(:meth:`Observation.is_stuck`, an exact look-ahead) and declares ``STUCK`` only then. If the
engine says a line of play exists that the list does not see (a partial-run rearrangement that
frees a card), it tries work-pile moves at random until something productive turns up.
"""

from __future__ import annotations

from typing import Final

from nertz.bots.base import Bot, Observation
from nertz.moves import STUCK, STUCK_NERTZ, TURN, Kind, Move
from nertz.playout import greedy_move
from nertz.rules import Rules

GIVE_UP_CYCLES: Final = 8
"""After this many idle passes through the stock a greedy seat declares stuck even though the
engine still sees a line (a safety net: the rearrangement it needs may be beyond a random walk)."""


class RandomBot(Bot):
    """Any legal move, uniformly (declarations and the call included)."""

    name = "random"

    def decide(self, obs: Observation) -> Move | None:
        """A uniformly random legal move; None once the round is over."""
        moves = obs.legal_moves()
        return self.rng.choice(moves) if moves else None


class GreedyBot(Bot):
    """The fixed priority list, declaring stuck only when the engine says it truly is."""

    name = "greedy"

    def __init__(self) -> None:
        super().__init__()
        self.idle = 0
        self._resets = 0

    def start(self, seat: int, rules: Rules, seed: int | str = 0) -> None:
        """Begin a round: nothing turned idly yet."""
        super().start(seat, rules, seed)
        self.idle = 0
        self._resets = 0

    def decide(self, obs: Observation) -> Move | None:
        """The first play on the priority list, else what an idle seat does."""
        rnd = obs.round
        if rnd.ended is not None:
            return None
        move = greedy_move(rnd, obs.seat)
        if move is not None:
            self.idle = 0
            return move
        return self.when_idle(obs)

    def progressed(self) -> None:
        """Tell the idle counter that the seat just made a productive play."""
        self.idle = 0

    def when_idle(self, obs: Observation) -> Move | None:
        """Nothing on the list plays: turn, or declare stuck if the engine says so, or wait.

        Counting turns rather than asking the engine at every turn keeps the common case
        cheap: the exact look-ahead runs only after a whole pass through the stock.
        """
        rnd = obs.round
        seat = obs.seat
        if rnd.resets != self._resets:
            # A reset re-orders the stock: a fresh pass is needed before judging again.
            self._resets = rnd.resets
            self.idle = 0
        tab = rnd.tableaus[seat]
        cards = len(tab.stock) + len(tab.waste)
        cycle = cards // rnd.rules.turn_count + 2
        if rnd.stuck[seat]:
            # Declared: wait, unless another seat's play has since freed this one.
            if cards and self.idle <= GIVE_UP_CYCLES * cycle and not obs.is_stuck():
                return TURN
            return None
        if cards == 0 or self.idle > cycle:
            if obs.is_stuck() or self.idle > GIVE_UP_CYCLES * cycle:
                return self._declare(obs)
            if cards == 0 or self.idle > 2 * cycle:
                shuffles = [
                    m for m in obs.legal_moves() if m.kind is Kind.TO_WORK and m.src.isdigit()
                ]
                if shuffles:
                    self.idle += 1
                    return self.rng.choice(shuffles)
        if cards:
            self.idle += 1
            return TURN
        return None

    def _declare(self, obs: Observation) -> Move:
        rnd = obs.round
        if rnd.rules.stuck_reset == "rotate_either":
            tab = rnd.tableaus[obs.seat]
            # Rotating the Nertz pile shows a new Nertz top: worth more than a re-ordered stock.
            if len(tab.nertz) > 1 or not (tab.stock or tab.waste):
                return STUCK_NERTZ
        return STUCK
