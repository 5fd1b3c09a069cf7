"""What one seat observes, as a fixed-length integer vector built from :func:`nertz.views.view`.

The vector is made only from a :class:`nertz.views.SeatView`, the engine's one form for what a
seat may see: face-up cards and counts. No stock order, no card under a Nertz or waste top and
no face-down work card can reach it, whatever the encoding does.

Cards are integers: 0 is "no card", ``1 + 13 x suit + (rank - 1)`` for the 52 cards (suits in
``S H D C`` order, so 1 is ``AS`` and 52 is ``KC``), 53 and 54 the jokers ``X1`` and ``X2``.
Ranks alone are 1 (Ace) to 13 (King), 0 for none.

Layout, in order (``P`` work piles, ``M = 4 x seats`` foundation slots):

1. One block per seat, **the observer's own first**, then the others clockwise (seat+1, seat+2,
   ...), so a policy sees "me, left, across, right" whichever seat it plays. A block is
   ``6 + P x 15`` values: Nertz top, Nertz count, waste top, waste count, stock count, stuck
   (0 none, 1 ``STUCK``/``STUCK S``, 2 ``STUCK N``); then per work pile: face-down count, face-up
   count, and the face-up run bottom first, padded with 0 to 13 cards.
2. One block per foundation slot ``F1..FM`` (the numbers the actions use), 6 values: suit + 1
   (0: not started), top card, cards on it, the ranks it takes next (up to two, most natural
   first, 0 for none: a finished pile takes nothing; this is how a joker on top reads), and how
   many of its cards the observer played (its foundation points, before penalties).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from nertz.cards import Card
from nertz.engine import Round
from nertz.env.actions import MAX_RUN, STARTERS_PER_DECK
from nertz.rules import Rules
from nertz.views import SeatView, view

NO_CARD: Final = 0
"""The code of an empty slot."""

CARD_CODES: Final = 54
"""The highest card code (``X2``)."""

MAX_COUNT: Final = 54
"""Bound on every pile count: no pile holds more than one whole deck (a penalised false call
can grow a Nertz pile past its dealt size, so the dealt size is no bound)."""

TABLEAU_HEAD: Final = 6
"""Values before the work piles in a seat's block."""

PILE_WIDTH: Final = 2 + MAX_RUN
"""Values per work pile: face-down count, face-up count, the run."""

FOUNDATION_WIDTH: Final = 6
"""Values per foundation slot."""

_STUCK_CODES: Final = {"": 0, "S": 1, "N": 2}


def card_code(card: Card | None) -> int:
    """A card's integer code (0 for None)."""
    if card is None:
        return NO_CARD
    if card.rank == 0:
        return 52 + card.index
    return 1 + 13 * card.suit + card.rank - 1


class ObservationCodec:
    """Builds one seat's observation vector and the ``Box`` it lives in."""

    __slots__ = ("_block", "_foundations", "_work", "high", "rules", "seats", "size", "space")

    def __init__(self, rules: Rules, seats: int) -> None:
        self.rules = rules
        self.seats = seats
        self._work = rules.work_piles
        self._foundations = STARTERS_PER_DECK * seats
        self._block = TABLEAU_HEAD + self._work * PILE_WIDTH
        self.size = seats * self._block + self._foundations * FOUNDATION_WIDTH
        """Length of the vector."""
        block = [CARD_CODES, MAX_COUNT, CARD_CODES, MAX_COUNT, MAX_COUNT, 2]
        block += [MAX_COUNT, MAX_RUN, *([CARD_CODES] * MAX_RUN)] * self._work
        # Under double_swinging_door a pile may go up and down again with other decks' cards,
        # so its length is bounded only by its suit's cards in all decks: 13 a seat.
        found = [4, CARD_CODES, 13 * seats, 13, 13, 13 * seats]
        self.high = np.array(block * seats + found * self._foundations, dtype=np.int16)
        """Each value's upper bound (every lower bound is 0)."""
        self.space = spaces.Box(0, self.high, shape=(self.size,), dtype=np.int16)
        """The observation ``Box``."""

    def encode(self, rnd: Round, seat: int) -> npt.NDArray[np.int16]:
        """``seat``'s observation of ``rnd``, built from its :func:`nertz.views.view` only."""
        return self.encode_view(view(rnd, seat))

    def encode_view(self, v: SeatView) -> npt.NDArray[np.int16]:
        """The vector for a seat's view (its ``seat``, 0 or more, is the observer and comes
        first)."""
        out = np.zeros(self.size, dtype=np.int16)
        n = len(v.tableaus)
        for rel in range(n):
            t = v.tableaus[(v.seat + rel) % n]
            base = rel * self._block
            out[base : base + TABLEAU_HEAD] = (
                card_code(t.nertz_top),
                t.nertz_count,
                card_code(t.waste_top),
                t.waste_count,
                t.stock_count,
                _STUCK_CODES[t.stuck],
            )
            at = base + TABLEAU_HEAD
            for down, up in zip(t.work_down, t.work_up, strict=True):
                out[at] = down
                out[at + 1] = len(up)
                for i, c in enumerate(up[:MAX_RUN]):
                    out[at + 2 + i] = card_code(c)
                at += PILE_WIDTH
        at = n * self._block
        for f in v.foundations[: self._foundations]:
            needs = (*f.needs[:2], 0, 0)
            out[at : at + FOUNDATION_WIDTH] = (
                # Jokers never start a foundation, so its first card names the suit.
                f.cards[0].suit + 1,
                card_code(f.cards[-1]),
                len(f.cards),
                needs[0],
                needs[1],
                sum(1 for owner in f.owners if owner == v.seat),
            )
            at += FOUNDATION_WIDTH
        return out
