"""Speed profiles: how long a bot takes to spot and make a move, and to react to others.

A real player's pace varies from card to card, so every time is drawn from a log-normal
distribution around the profile's mean (right-skewed: mostly near the mean, now and then slow),
using a generator the caller seeds; the same seed gives the same times.

==========  ==========  =========  ==============================================
level       a card      reaction   who
==========  ==========  =========  ==============================================
beginner    1.8 s       0.9 s      learning the game
casual      1.2 s       0.6 s      the family table
skilled     0.8 s       0.4 s      a regular
expert      0.5 s       0.25 s     a tournament player
instant     10 ms       0 ms       simulation: the clock only orders the actions
==========  ==========  =========  ==============================================

Turning the stock is quicker than moving a card (a flick, not a search): 40% of the card time.
The reaction delay is how long a seat that was waiting takes to notice that another seat's play
(a new foundation card, a reset) gave it something to do, or that its own card lost a race.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Final

from nertz.moves import Kind, Move


@dataclass(frozen=True, slots=True)
class SpeedProfile:
    """A level of play speed: mean milliseconds per card and per reaction, and the spread."""

    name: str
    card_ms: float
    """Mean time to spot and move one card."""
    reaction_ms: float
    """Mean delay before a waiting seat notices another seat's play."""
    spread: float = 0.35
    """Sigma of the log-normal: 0.35 puts most times within about 0.6x to 1.6x the mean."""
    turn_share: float = 0.4
    """A stock turn (or a declaration) takes this share of the card time."""

    def think_ms(self, move: Move, rng: random.Random) -> float:
        """How long ``move`` takes from the decision to the table (milliseconds)."""
        mean = self.card_ms if move.kind in _CARD_KINDS else self.card_ms * self.turn_share
        return _draw(mean, self.spread, rng)

    def react_ms(self, rng: random.Random) -> float:
        """How long a waiting seat takes to notice a change at the table (milliseconds)."""
        return _draw(self.reaction_ms, self.spread, rng) if self.reaction_ms else 0.0


_CARD_KINDS: Final = frozenset({Kind.TO_FOUNDATION, Kind.TO_WORK})


def _draw(mean: float, sigma: float, rng: random.Random) -> float:
    # A log-normal with this mean: mu = ln(mean) - sigma^2 / 2.
    return rng.lognormvariate(math.log(mean) - sigma * sigma / 2, sigma)


SPEEDS: Final[dict[str, SpeedProfile]] = {
    p.name: p
    for p in (
        SpeedProfile("beginner", 1800, 900),
        SpeedProfile("casual", 1200, 600),
        SpeedProfile("skilled", 800, 400),
        SpeedProfile("expert", 500, 250),
        SpeedProfile("instant", 10, 0),
    )
}
"""The speed levels by name."""
