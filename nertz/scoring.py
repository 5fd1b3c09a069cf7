"""A round's points: foundation cards, Nertz-pile penalties, bonuses, variant payments.

Each seat's :class:`SeatScore` keeps the breakdown a results screen shows; ``total`` is the sum.
Readings (SPEC section 3, docs/rules.md): "per player" payments go to or come from each other
seat; a joker on a foundation is worth the card it stands for, and a joker left in a Nertz pile
costs what an Ace would (the dearest card); a false call's payments stand unless the false caller
later calls correctly, and the +25 goes to the first correct call after a false one, in the same
round.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nertz.engine import Round
from nertz.foundations import ONE_EYED_JACKS, UP
from nertz.rules import Rules

NEXT_CALLER_BONUS = 25
"""Points for the first correct call after a false call (SPEC)."""


def card_value(rules: Rules, rank: int) -> int:
    """What one card of ``rank`` (1..13; 0 a joker) is worth under ``card_points``."""
    scheme = rules.card_points
    if rank == 0:
        rank = 1  # a joker left over costs what the dearest card, the Ace, would
    if scheme == "flat":
        return rules.points_per_card
    if scheme == "aces_double":
        return rules.points_per_card * (2 if rank == 1 else 1)
    if scheme == "face_value":
        return 14 if rank == 1 else rank
    # swinging_door: K Q J T 15, A 20, 2..9 10
    if rank == 1:
        return 20
    return 15 if rank >= 10 else 10


@dataclass(slots=True)
class SeatScore:
    """One seat's round points and where they came from."""

    foundation_cards: int = 0
    card_points: int = 0
    nertz_left: int = 0
    nertz_penalty: int = 0
    caller_bonus: int = 0
    variant_bonus: int = 0
    false_calls: int = 0
    lotto: int = 0

    @property
    def total(self) -> int:
        """The round score: cards minus penalty plus every bonus and payment."""
        return (
            self.card_points
            - self.nertz_penalty
            + self.caller_bonus
            + self.variant_bonus
            + self.false_calls
            + self.lotto
        )

    def to_json(self) -> dict[str, int]:
        """The breakdown with its total, for files and the wire."""
        return {
            "foundation_cards": self.foundation_cards,
            "card_points": self.card_points,
            "nertz_left": self.nertz_left,
            "nertz_penalty": self.nertz_penalty,
            "caller_bonus": self.caller_bonus,
            "variant_bonus": self.variant_bonus,
            "false_calls": self.false_calls,
            "lotto": self.lotto,
            "total": self.total,
        }


@dataclass(slots=True)
class RoundScore:
    """The outcome of a round: how it ended, who called, and each seat's score."""

    ended: str
    caller: int | None
    seats: list[SeatScore] = field(default_factory=list)

    @property
    def totals(self) -> list[int]:
        """Each seat's round points."""
        return [s.total for s in self.seats]


def score_round(rnd: Round) -> RoundScore:
    """Score a round as it stands: ``ended`` is ``nertz``, ``blocked`` or ``open`` (not over:
    scored as if ended now, with no caller). Lotto is the match's business (:mod:`nertz.match`)."""
    rules = rnd.rules
    n = rnd.seats
    seats = [SeatScore() for _ in range(n)]
    ended = rnd.ended or "open"
    caller = rnd.called_by if ended == "nertz" else None
    for f in rnd.foundations:
        for owner, rank in zip(f.owners, f.ranks, strict=True):
            seats[owner].foundation_cards += 1
            seats[owner].card_points += card_value(rules, rank)
    for seat, tab in enumerate(rnd.tableaus):
        s = seats[seat]
        s.nertz_left = len(tab.nertz)
        if rules.nertz_penalty == "card_points":
            s.nertz_penalty = sum(card_value(rules, c.rank) for c in tab.nertz)
        else:
            s.nertz_penalty = rules.nertz_penalty * len(tab.nertz)
    if caller is not None:
        seats[caller].caller_bonus = rules.caller_bonus
    _variant_bonuses(rnd, seats)
    for fc in rnd.false_calls:
        if fc.seat == caller:
            continue  # a false caller who later calls correctly has the payment undone
        seats[fc.seat].false_calls -= fc.each * (n - 1)
        for other in range(n):
            if other != fc.seat:
                seats[other].false_calls += fc.each
    if caller is not None and rnd.false_calls:
        seats[caller].false_calls += NEXT_CALLER_BONUS
    return RoundScore(ended, caller, seats)


def _variant_bonuses(rnd: Round, seats: list[SeatScore]) -> None:
    """Starter 9 and Evil Jacks: points for the seat that plays a pile's 3, and the Jacks."""
    family = rnd.policy.family
    if family != "starter9":
        return
    name = rnd.policy.name
    n = len(seats)
    for f in rnd.foundations:
        if len(f.ranks) < 2 or f.ranks[-1] != 3:
            continue
        three = f.owners[-1]
        if f.direction != UP or name == "starter9":
            seats[three].variant_bonus += 60 if f.direction == UP else 40
            continue
        j = f.ranks.index(11)
        jack_seat = f.owners[j]
        one_eyed = name == "evil_jacks_one_eyed" and f.cards[j] in ONE_EYED_JACKS
        if jack_seat == three:
            gain, loss = (150, 25) if one_eyed else (100, 5)
            for s in range(n):
                seats[s].variant_bonus += gain if s == three else -loss
            continue
        sign = 1 if one_eyed else -1  # a one-eyed Jack takes 15 from each other seat
        for s in range(n):
            if s == jack_seat:
                seats[s].variant_bonus += sign * 15 * (n - 1)
            else:
                seats[s].variant_bonus -= sign * 15
        seats[three].variant_bonus += 40
