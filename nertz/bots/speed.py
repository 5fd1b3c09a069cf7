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
from statistics import NormalDist
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
        kind = move.kind
        card = kind is Kind.TO_FOUNDATION or kind is Kind.TO_WORK
        return (self.card_times if card else self.turn_times)[int(rng.random() * STEPS)]

    def react_ms(self, rng: random.Random) -> float:
        """How long a waiting seat takes to notice a change at the table (milliseconds)."""
        if not self.reaction_ms:
            return 0.0
        return self.react_times[int(rng.random() * STEPS)]

    @property
    def card_times(self) -> tuple[float, ...]:
        """The card-time distribution as :data:`STEPS` equally likely values (see
        :func:`quantiles`): the simulator draws one with a single uniform number."""
        return _scaled(self.card_ms, self.spread)

    @property
    def turn_times(self) -> tuple[float, ...]:
        """The same for a stock turn or a declaration."""
        return _scaled(self.card_ms * self.turn_share, self.spread)

    @property
    def react_times(self) -> tuple[float, ...]:
        """The same for the reaction delay."""
        return _scaled(self.reaction_ms, self.spread)


STEPS: Final = 1024
"""How many equally likely values stand for a time distribution."""
_TABLES: dict[tuple[float, float], tuple[float, ...]] = {}


def _scaled(mean: float, sigma: float) -> tuple[float, ...]:
    key = (mean, sigma)
    table = _TABLES.get(key)
    if table is None:
        table = _TABLES[key] = tuple(mean * q for q in quantiles(sigma))
    return table


def quantiles(sigma: float) -> tuple[float, ...]:
    """The log-normal of mean 1 as 1,024 equally likely values (its quantiles at the midpoints).

    One uniform draw and a lookup instead of a Box-Muller transform: the simulator draws a time
    for every action, and this is a tenth of the cost, with the same distribution to within a
    fraction of a percent."""
    normal = NormalDist()
    mu = -sigma * sigma / 2  # so that the mean is 1
    return tuple(math.exp(mu + sigma * normal.inv_cdf((i + 0.5) / STEPS)) for i in range(STEPS))


HUMAN_LEVELS: Final = ("beginner", "casual", "skilled", "expert")
"""The levels that play at a person's pace: what a room seats (``instant`` is for simulation
only; the server would throttle it)."""

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
