"""When a bot with nothing to play turns, declares stuck or waits: judged from what it has seen.

A person at the table cannot know whether a line of play is hidden in their stock; they know only
that they have turned through it once with nothing to show. :class:`IdleSense` decides the same
way and reads nothing else: it counts the seat's turns since it last played a card (its own
productive play, a reset, or a card reaching a foundation from anywhere, which may make a card it
has seen in its stock fit now), and once that count covers a whole pass through its stock and
waste (``cards // turn_count + 2`` turns: every card that can come up has shown once) it declares
``STUCK``. A declared seat waits; a card to a foundation wakes it and it looks again.

Every input is visible to the seat: its own stock and waste counts, its declaration, the number
of resets and the number of foundation cards. No bot asks the engine's exact
:meth:`~nertz.engine.Round.is_stuck` (a look-ahead over cards nobody can see); the table and the
server still use it as the referee that resets a table when every seat is stuck.
"""

from __future__ import annotations

from typing import Final

from nertz.bots.base import Observation
from nertz.moves import STUCK, STUCK_NERTZ, TURN, Move

RESUME: Final = True
"""A declared seat turns again (taking its declaration back) once a card has reached a
foundation since it declared: a card it saw in its stock may fit now."""


class IdleSense:
    """A seat's count of its idle turns, and what it does when its policy finds no play."""

    __slots__ = ("_declared_at", "_foundation_cards", "_resets", "idle", "patience")

    def __init__(self, patience: int = 1) -> None:
        self.patience = patience
        """Idle passes through the stock before the seat declares stuck."""
        self.idle = 0
        """Turns since the seat's last productive play (or a change at the table)."""
        self._resets = 0
        self._foundation_cards = 0
        self._declared_at = -1

    def clear(self) -> None:
        """A new round: nothing turned idly yet."""
        self.idle = 0
        self._resets = 0
        self._foundation_cards = 0
        self._declared_at = -1

    def progressed(self) -> None:
        """The seat just made a productive play: the count starts again."""
        self.idle = 0

    def passes(self, obs: Observation) -> float:
        """How many whole passes through its stock the seat has turned idly (0 right after a
        play; 1 or more means every card that can come up has shown since)."""
        self._look(obs)
        return self.idle / _pass_length(obs)

    def when_idle(self, obs: Observation) -> Move | None:
        """The seat's policy found nothing to play: turn, declare stuck, or wait (None)."""
        self._look(obs)
        rnd = obs.round
        seat = obs.seat
        tab = rnd.tableaus[seat]
        declared = rnd.stuck[seat]
        if declared and not (RESUME and self._foundation_cards != self._declared_at):
            return None  # declared: wait until a foundation card or a reset wakes the seat
        # Not declared, or a card reached a foundation since: one it saw may fit now.
        if (tab.stock or tab.waste) and self.idle < self.patience * _pass_length(obs):
            self.idle += 1
            return TURN
        self._declared_at = self._foundation_cards
        if declared:
            return None  # nothing new after all: the declaration stands
        if rnd.rules.stuck_reset == "rotate_either" and (
            len(tab.nertz) > 1 or not (tab.stock or tab.waste)
        ):
            # Rotating the Nertz pile shows a new Nertz top: worth more than a re-ordered stock.
            return STUCK_NERTZ
        return STUCK

    def _look(self, obs: Observation) -> None:
        """A reset or a new foundation card since the last look starts the count again: the
        stock comes up in a new order, or a card already seen in it may fit now."""
        rnd = obs.round
        cards = sum(map(len, rnd.foundations))
        if rnd.resets != self._resets or cards != self._foundation_cards:
            self._resets = rnd.resets
            self._foundation_cards = cards
            self.idle = 0


def _pass_length(obs: Observation) -> int:
    """Turns that bring every card of the seat's stock and waste up once, plus one spare."""
    tab = obs.tableau
    return (len(tab.stock) + len(tab.waste)) // obs.rules.turn_count + 2
