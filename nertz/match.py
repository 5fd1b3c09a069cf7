"""A match: rounds to a target score or a fixed count, adaptive Nertz piles, lotto, the winner.

:class:`Match` deals each round (from a seed, or from given layouts), scores it when it is over and
keeps the running totals::

    match = Match(rules, seats=2, seed=7)
    rnd = match.deal()
    ...                      # play moves on rnd
    result = match.finish(rnd)
    match.over, match.winner
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nertz.cards import Card
from nertz.engine import Round, check_layout
from nertz.rules import Rules
from nertz.scoring import RoundScore, score_round
from nertz.state import Layout, deal, shuffled_deck

MIN_NERTZ, MAX_NERTZ = 1, 20
"""``adaptive_nertz_pile`` keeps every pile between these sizes (SPEC)."""


@dataclass(slots=True)
class RoundResult:
    """A finished round within the match: its score and the pot it paid out."""

    index: int
    score: RoundScore
    nertz_sizes: list[int]
    pot_in: int
    pot_out: int

    @property
    def scores(self) -> list[int]:
        """Each seat's round points, lotto included."""
        return self.score.totals


class Match:
    """Rounds of one ruleset for a fixed set of seats (players or teams)."""

    def __init__(self, rules: Rules, seats: int, seed: int | str = 0) -> None:
        if not 1 <= seats <= 8:
            raise ValueError(f"a match has 1 to 8 seats, not {seats}")
        self.rules = rules
        self.seats = seats
        self.seed = seed
        self.totals = [0] * seats
        self.results: list[RoundResult] = []
        self.nertz_sizes = [rules.nertz_pile_size] * seats
        self.pot = 0

    @property
    def round_index(self) -> int:
        """The number (0-based) of the round to be dealt next."""
        return len(self.results)

    def deal(self, layouts: Sequence[Layout] | None = None) -> Round:
        """Deal the next round: from ``layouts`` (checked, one per seat) or shuffled from the
        seed. Raises ``ValueError`` once the match is over."""
        if self.over:
            raise ValueError(f"the match is over after {len(self.results)} rounds")
        if layouts is not None:
            if len(layouts) != self.seats:
                raise ValueError(f"{len(layouts)} layouts for {self.seats} seats")
            for seat, layout in enumerate(layouts):
                check_layout(self.rules, layout, seat, self.nertz_sizes[seat])
            tableaus = [layout.to_tableau() for layout in layouts]
        else:
            tableaus = [
                deal(self.rules, self.deck_of(seat), self.nertz_sizes[seat])
                for seat in range(self.seats)
            ]
        return Round(self.rules, tableaus)

    def deck_of(self, seat: int) -> list[Card]:
        """The shuffled deck ``seat`` is dealt in the next round.

        Normally its own shuffle of (seed, round, seat). Under ``duplicate_deal`` the rounds go
        in blocks of N for N seats: block b's N hands are the decks of an ordinary deal of its
        first round (b x N), and in the block's k-th round seat s plays hand (s + k) mod N, so
        each seat plays every hand of the block once (the block's first round is dealt exactly
        as without the option).
        """
        r = self.round_index
        if not self.rules.duplicate_deal:
            return shuffled_deck(self.rules, self.seed, r, seat)
        n = self.seats
        return shuffled_deck(self.rules, self.seed, r - r % n, (seat + r) % n)

    def finish(self, rnd: Round) -> RoundResult:
        """Score ``rnd`` (over or not: an unfinished round is scored ``open``), pay the lotto,
        update totals and next round's pile sizes."""
        score = score_round(rnd)
        rules = self.rules
        base = score.totals
        pot_in = self.pot
        pot_out = 0
        if rules.lotto:
            negatives = sum(-s for s in base if s < 0)
            if pot_in:
                best = max(base)
                winners = [i for i, s in enumerate(base) if s == best]
                share = pot_in // len(winners)
                for i in winners:
                    score.seats[i].lotto = share
                pot_out = share * len(winners)
            self.pot = pot_in - pot_out + negatives
        sizes = list(self.nertz_sizes)
        if rules.adaptive_nertz_pile:
            for i, s in enumerate(base):
                change = (1 if i == score.caller else 0) - (1 if s < 0 else 0)
                self.nertz_sizes[i] = min(MAX_NERTZ, max(MIN_NERTZ, sizes[i] + change))
        result = RoundResult(len(self.results), score, sizes, pot_in, pot_out)
        self.results.append(result)
        for i, s in enumerate(score.totals):
            self.totals[i] += s
        return result

    @property
    def over(self) -> bool:
        """True once a total reaches the target or the set number of rounds is played."""
        rules = self.rules
        if rules.rounds is not None and len(self.results) >= rules.rounds:
            return True
        return rules.target_score is not None and bool(self.results) and (
            max(self.totals) >= rules.target_score
        )

    @property
    def winner(self) -> int | None:
        """The seat with the highest total once the match is over; None on a tie or before."""
        if not self.over:
            return None
        best = max(self.totals)
        leaders = [i for i, s in enumerate(self.totals) if s == best]
        return leaders[0] if len(leaders) == 1 else None
