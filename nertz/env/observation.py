"""What one seat observes, as a fixed-length float vector built from :func:`nertz.views.view`.

The vector is made only from a :class:`nertz.views.SeatView`, the engine's one form for what a
seat may see (face-up cards and counts), and from the seat's action mask, which depends on
nothing hidden either. No stock order, no card under a Nertz or waste top and no face-down work
card can reach it, whatever the encoding does.

**A card** is :data:`CARD_WIDTH` features, so that a network sees what makes cards alike
rather than arbitrary ids: present (1, or 0 for no card), rank / 13, the rank one-hot (Ace to
King), the suit one-hot (``S H D C``), red, joker (a joker has no rank or suit bits).

**Counts** are divided by 13 (a dealt Nertz pile in ``pagat``), so they sit near [0, 1].

Layout, in order (``P`` = :data:`nertz.env.actions.MAX_WORK_PILES` work-pile slots, the same
under every ruleset, ``O`` opponent slots, ``A`` actions):

1. **Own seat**: Nertz top (card), Nertz count, waste top (card), waste count, stock count,
   declared stuck (0 or 1), cards it has on foundations; then per work pile: the top card (the
   one that takes a card), the bottom of the face-up run (the card that moves with the run),
   face-up count, face-down count, empty (0 or 1); a pile slot the ruleset does not have is all
   zeros.
2. **Opponents**, clockwise from the seat's left, ``O`` slots (``seats - 1`` unless given; a
   missing opponent is all zeros, and past ``O`` the farther ones are left out): present,
   Nertz top (card), Nertz count, waste top (card), declared stuck, cards on foundations.
3. **What the foundations need next**: 52 flags, one per card (``13 x suit + rank - 1``),
   1 when some foundation takes that card now (a starter card always: it opens a new one).
4. **What is playable where**: the action mask without ``NOOP`` (``A - 1`` flags, in table
   order: :mod:`nertz.env.actions`), so the policy sees which ideas are open, not only the mask
   that filters its choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from nertz.cards import Card
from nertz.engine import Round
from nertz.env.actions import MAX_WORK_PILES, ActionCodec
from nertz.foundations import POLICIES
from nertz.rules import Rules
from nertz.views import SeatView, TableauView, view

CARD_WIDTH: Final = 21
"""Features per card: present, rank / 13, 13 rank bits, 4 suit bits, red, joker."""

COUNT_SCALE: Final = 13.0
"""Counts are divided by this."""

HIGH: Final = 5.0
"""Upper bound of every feature: no pile holds more than a deck and a penalty (54 / 13 < 5)."""

OWN_HEAD: Final = 2 * CARD_WIDTH + 5
"""Own-seat values before the work piles."""

PILE_WIDTH: Final = 2 * CARD_WIDTH + 3
"""Values per own work pile."""

OPPONENT_WIDTH: Final = 2 * CARD_WIDTH + 4
"""Values per opponent slot."""

NEEDS_WIDTH: Final = 52
"""One flag per card of the 52."""


def _card_table() -> dict[Card | None, npt.NDArray[np.float32]]:
    from nertz.cards import deck

    table: dict[Card | None, npt.NDArray[np.float32]] = {
        None: np.zeros(CARD_WIDTH, dtype=np.float32)
    }
    for card in deck(True):
        row = np.zeros(CARD_WIDTH, dtype=np.float32)
        row[0] = 1.0
        if card.rank == 0:
            row[CARD_WIDTH - 1] = 1.0
        else:
            row[1] = card.rank / 13.0
            row[1 + card.rank] = 1.0
            row[15 + card.suit] = 1.0
            row[19] = 1.0 if card.red else 0.0
        table[card] = row
    return table


_CARDS: Final = _card_table()


def card_features(card: Card | None) -> npt.NDArray[np.float32]:
    """A card's :data:`CARD_WIDTH` features (all zeros for None); a shared array: copy to
    change it."""
    return _CARDS[card]


class ObservationCodec:
    """Builds one seat's observation vector and the ``Box`` it lives in.

    ``opponents`` is how many opponent slots the vector has (``seats - 1`` by default); a
    policy trained with some number of slots plays at any table size.
    """

    __slots__ = ("_actions", "_mask_base", "_needs_base", "_opp_base", "_work", "opponents",
                 "rules", "seats", "size", "space")

    def __init__(self, rules: Rules, seats: int, opponents: int | None = None) -> None:
        self.rules = rules
        self.seats = seats
        self.opponents = seats - 1 if opponents is None else opponents
        """Opponent slots in the vector."""
        if self.opponents < 0:
            raise ValueError(f"opponent slots must be 0 or more, not {self.opponents}")
        self._work = MAX_WORK_PILES
        self._actions = ActionCodec(rules).size
        self._opp_base = OWN_HEAD + self._work * PILE_WIDTH
        self._needs_base = self._opp_base + self.opponents * OPPONENT_WIDTH
        self._mask_base = self._needs_base + NEEDS_WIDTH
        self.size = self._mask_base + self._actions - 1
        """Length of the vector."""
        self.space = spaces.Box(0.0, HIGH, shape=(self.size,), dtype=np.float32)
        """The observation ``Box``."""

    def encode(
        self, rnd: Round, seat: int, mask: npt.NDArray[np.int8] | None = None
    ) -> npt.NDArray[np.float32]:
        """``seat``'s observation of ``rnd``, from its :func:`nertz.views.view` and its action
        mask (computed here unless given)."""
        if mask is None:
            mask = ActionCodec(rnd.rules).mask(rnd, seat)
        return self.encode_view(view(rnd, seat), mask)

    def encode_view(self, v: SeatView, mask: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
        """The vector for a seat's view and action mask (the view's ``seat`` is the observer)."""
        return self.encode_table(v, [mask], [v.seat])[0]

    def encode_table(
        self, v: SeatView, masks: Sequence[npt.NDArray[np.int8]], seats: Sequence[int]
    ) -> list[npt.NDArray[np.float32]]:
        """The vectors of several seats at once, from one view of the table (views of one
        table differ only in whose they are) and each seat's mask: the blocks every seat shares
        are built once."""
        n = len(v.tableaus)
        played = [0] * n
        for f in v.foundations:
            for owner in f.owners:
                played[owner] += 1
        needs = np.zeros(NEEDS_WIDTH, dtype=np.float32)
        starter = POLICIES[self.rules.foundation].starter
        needs[starter - 1 :: 13] = 1.0
        for f in v.foundations:
            suit = f.cards[0].suit  # jokers never start a foundation: the first card's suit
            for rank in f.needs:
                needs[13 * suit + rank - 1] = 1.0
        absent = np.zeros(OPPONENT_WIDTH, dtype=np.float32)
        opp_blocks = [
            _opponent_block(v.tableaus[s], played[s]) for s in range(n)
        ] if self.opponents else []
        out = []
        for seat, mask in zip(seats, masks, strict=True):
            if len(mask) != self._actions:
                raise ValueError(
                    f"the mask has {len(mask)} entries, the action table {self._actions}"
                )
            parts = [self._own_block(v.tableaus[seat], played[seat])]
            for rel in range(1, self.opponents + 1):
                parts.append(opp_blocks[(seat + rel) % n] if rel < n else absent)
            parts.append(needs)
            parts.append(mask[1:].astype(np.float32))
            out.append(np.concatenate(parts))
        return out

    def _own_block(self, own: TableauView, played: int) -> npt.NDArray[np.float32]:
        """The observer's own tableau."""
        cw = CARD_WIDTH
        out = np.zeros(self._opp_base, dtype=np.float32)
        out[0:cw] = _CARDS[own.nertz_top]
        out[cw] = own.nertz_count / COUNT_SCALE
        out[cw + 1 : 2 * cw + 1] = _CARDS[own.waste_top]
        at = 2 * cw + 1
        out[at] = own.waste_count / COUNT_SCALE
        out[at + 1] = own.stock_count / COUNT_SCALE
        out[at + 2] = 1.0 if own.stuck else 0.0
        out[at + 3] = played / COUNT_SCALE
        at = OWN_HEAD
        for down, up in zip(own.work_down, own.work_up, strict=True):
            if up:
                out[at : at + cw] = _CARDS[up[-1]]
                out[at + cw : at + 2 * cw] = _CARDS[up[0]]
            out[at + 2 * cw] = len(up) / COUNT_SCALE
            out[at + 2 * cw + 1] = down / COUNT_SCALE
            out[at + 2 * cw + 2] = 0.0 if up or down else 1.0
            at += PILE_WIDTH
        return out


def _opponent_block(t: TableauView, played: int) -> npt.NDArray[np.float32]:
    """Another seat's tableau, as an opponent slot."""
    cw = CARD_WIDTH
    out = np.zeros(OPPONENT_WIDTH, dtype=np.float32)
    out[0] = 1.0
    out[1 : 1 + cw] = _CARDS[t.nertz_top]
    out[1 + cw] = t.nertz_count / COUNT_SCALE
    out[2 + cw : 2 + 2 * cw] = _CARDS[t.waste_top]
    out[2 + 2 * cw] = 1.0 if t.stuck else 0.0
    out[3 + 2 * cw] = played / COUNT_SCALE
    return out
