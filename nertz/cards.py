"""Cards and their notation (SPEC section 1).

A card is rank then suit: ``TH`` is the ten of hearts, ``X1`` and ``X2`` are the two jokers of a
deck. Parsing accepts ``10H`` and lower case; ``str()`` always gives the canonical form.

Every card value is interned: ``Card.parse("7h") is Card.parse("7H")``, so the engine can compare
cards cheaply and a deck is just a tuple of the 52 (or 54) shared values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from nertz.errors import NotationError

RANKS: Final = "A23456789TJQK"
"""Rank characters in order, Ace (1) to King (13)."""

SUITS: Final = "SHDC"
"""Suit characters: spades, hearts, diamonds, clubs."""

JOKER_RANK: Final = 0
"""The rank number of a joker: it stands for whatever card it is played as."""


@dataclass(frozen=True, slots=True, eq=False)
class Card:
    """One playing card: ``rank`` 1 (Ace) to 13 (King), ``suit`` 0..3 in ``SHDC`` order.

    A joker has rank 0 and suit -1; ``index`` tells the deck's two jokers apart (1 or 2).
    There is exactly one value per card (made here, found with :meth:`parse`; pickling and
    copying return it too), so equality and hashing are by identity: as cheap as can be, in
    the engine's innermost loops.
    """

    rank: int
    suit: int
    index: int = 0
    red: bool = False
    """Hearts and diamonds are red; jokers have no colour and answer False. Stored, not derived,
    because the engine asks it in its innermost loops."""
    key: int = 0
    """``suit << 4 | rank``: the card's place in the engine's foundation index (derived once)."""

    @property
    def is_joker(self) -> bool:
        """True for ``X1`` and ``X2``."""
        return self.rank == JOKER_RANK

    @property
    def code(self) -> str:
        """The canonical notation, the same as ``str(card)``."""
        return _CODES[self]

    def __str__(self) -> str:
        return _CODES[self]

    def __repr__(self) -> str:
        return f"Card({_CODES[self]!r})"

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # Unpickling goes through parse so the interned value comes back.
        return (Card.parse, (_CODES[self],))

    @staticmethod
    def parse(text: object) -> Card:
        """Read a card: ``7H``, ``th``, ``10H``, ``X1``.

        >>> Card.parse("10h")
        Card('TH')
        """
        # Typed object, checked here: compiled, a str annotation would raise TypeError instead.
        card = None
        if isinstance(text, str):
            # Canonical text, the common case, needs no clean-up.
            card = _BY_TEXT.get(text) or _BY_TEXT.get(text.strip().upper())
        if card is None:
            raise NotationError(f"not a card: {text!r}")
        return card


def _build() -> tuple[dict[Card, str], dict[str, Card], tuple[Card, ...], tuple[Card, ...]]:
    codes: dict[Card, str] = {}
    by_text: dict[str, Card] = {}
    deck: list[Card] = []
    for suit, suit_char in enumerate(SUITS):
        for rank, rank_char in enumerate(RANKS, start=1):
            card = Card(rank, suit, 0, suit in (1, 2), suit << 4 | rank)
            codes[card] = rank_char + suit_char
            by_text[rank_char + suit_char] = card
            if rank_char == "T":
                by_text["10" + suit_char] = card
            deck.append(card)
    jokers = []
    for i in (1, 2):
        card = Card(JOKER_RANK, -1, i)
        codes[card] = f"X{i}"
        by_text[f"X{i}"] = card
        jokers.append(card)
    return codes, by_text, tuple(deck), tuple(jokers)


_CODES, _BY_TEXT, STANDARD_DECK, JOKERS = _build()
"""``STANDARD_DECK``: the 52 cards, spades first; ``JOKERS``: ``X1`` and ``X2``."""


def deck(jokers: bool = False) -> tuple[Card, ...]:
    """One player's deck: 52 cards, or 54 with the two jokers."""
    return STANDARD_DECK + JOKERS if jokers else STANDARD_DECK


def card(text: str) -> Card:
    """Shorthand for :meth:`Card.parse`."""
    return Card.parse(text)


def cards(text: str) -> list[Card]:
    """Parse a space-separated list of cards: ``cards("AS 2H")``."""
    return [Card.parse(t) for t in text.split()]


def rank_name(rank: int) -> str:
    """The rank character for 1..13 (``A``..``K``)."""
    return RANKS[rank - 1]
