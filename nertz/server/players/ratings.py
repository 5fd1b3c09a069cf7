"""Ratings: openskill's Plackett-Luce model, one rating per player and ruleset family.

A match is rated as a free-for-all of its seats ranked by their match totals (a team seat is a
team of its partners). Bots take part at a fixed rating for their speed level
(:data:`BOT_RATINGS`) that no match moves, so beating an expert bot is worth more than beating
a beginner and playing bots still means something. What people see is the *display rating*
(:func:`display`): 1000 plus 40 times openskill's ordinal (mu - 3 sigma), so a new player
shows 1000 and it rises as the model grows sure of them.

Families group presets whose skill carries over (docs/players.md has the table):

=================  ==========================================================
family             rules
=================  ==========================================================
``fairy_fly``      a staircase deal (the ``fairy_fly`` preset)
``sanna``          adaptive Nertz piles (the ``sanna`` preset)
``swinging_door``  swinging-door foundations (``swinging_door``, ``double_...``)
``starter9``       foundations from 9 (``starter9``, ``evil_jacks``, ``..._one_eyed``)
``nertz5``         five work piles otherwise (``standard``)
``pounce``         everything else: four piles, up from the Ace (``pagat``, ``hoorah``)
=================  ==========================================================

Under team rules the family takes a ``_teams`` suffix (partners are rated apart from solo play).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from openskill.models import PlackettLuce

from nertz.rules import PRESETS, Rules

MODEL: Final = PlackettLuce()
"""The rating model (openskill's defaults: mu 25, sigma 25/3)."""

FAMILIES: Final = ("pounce", "nertz5", "fairy_fly", "sanna", "swinging_door", "starter9")
"""Every solo family (each has a ``_teams`` twin)."""

BOT_SIGMA: Final = 1.0
"""A bot's fixed uncertainty: small, as its strength does not change."""

BOT_RATINGS: Final[dict[str, float]] = {
    "beginner": 16.0,
    "casual": 21.0,
    "skilled": 27.0,
    "expert": 32.0,
}
"""A bot's fixed mu by speed level (every family alike)."""


def family(rules: Rules) -> str:
    """The ruleset family a match under ``rules`` is rated in."""
    if rules.work_pile_deal == "staircase":
        base = "fairy_fly"
    elif rules.adaptive_nertz_pile:
        base = "sanna"
    elif rules.foundation in ("swinging_door", "double_swinging_door"):
        base = "swinging_door"
    elif rules.foundation in ("starter9", "evil_jacks", "evil_jacks_one_eyed"):
        base = "starter9"
    elif rules.work_piles == 5:
        base = "nertz5"
    else:
        base = "pounce"
    return base + ("_teams" if rules.teams != "off" else "")


def preset_name(rules: Rules) -> str:
    """The preset ``rules`` are (``custom`` when options changed one)."""
    for name, preset in PRESETS.items():
        if preset == rules:
            return name
    return "custom"


def family_of_presets() -> dict[str, str]:
    """Each preset's family (for the docs and the page)."""
    return {name: family(rules) for name, rules in PRESETS.items()}


@dataclass(frozen=True, slots=True)
class Skill:
    """A rating: openskill's mu and sigma."""

    mu: float
    sigma: float

    @property
    def display(self) -> float:
        """What people see (see :func:`display`)."""
        return display(self.mu, self.sigma)


NEW: Final = Skill(MODEL.mu, MODEL.sigma)
"""A player's rating before any rated match."""


def display(mu: float, sigma: float) -> float:
    """The rating shown: 1000 + 40 x (mu - 3 sigma); a new player shows 1000."""
    return 1000.0 + 40.0 * (mu - 3.0 * sigma)


def bot_skill(level: str | None) -> Skill:
    """A bot's fixed rating at speed ``level`` (an unknown level rates as ``casual``)."""
    return Skill(BOT_RATINGS.get(level or "", BOT_RATINGS["casual"]), BOT_SIGMA)


def rate(teams: Sequence[Sequence[Skill]], scores: Sequence[float]) -> list[list[Skill]]:
    """New ratings for every member of every team (seat) after a match in which the seats
    scored ``scores`` (higher is better; equal scores tie): openskill's Plackett-Luce update.
    Callers keep the bots' old ratings."""
    if len(teams) != len(scores):
        raise ValueError(f"{len(teams)} seats but {len(scores)} scores")
    if len(teams) < 2 or any(not t for t in teams):
        raise ValueError("a rated match needs two seats or more, each with someone in it")
    model_teams = [[MODEL.rating(mu=s.mu, sigma=s.sigma) for s in team] for team in teams]
    rated = MODEL.rate(model_teams, scores=list(scores))
    return [[Skill(r.mu, r.sigma) for r in team] for team in rated]


__all__ = ["BOT_RATINGS", "FAMILIES", "MODEL", "NEW", "Skill", "bot_skill", "display", "family",
           "family_of_presets", "preset_name", "rate"]
