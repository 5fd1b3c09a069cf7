"""A seat's tableau as a value, layouts, and the seeded deal.

Inside the engine every pile is a Python list ordered bottom to top, so the top card is ``[-1]``
and taking it is O(1); that includes the stock, whose *text* form (SPEC section 4) lists the top
card first. :class:`Layout` is the file form, :class:`Tableau` the engine's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from nertz.cards import Card, deck
from nertz.errors import NotationError
from nertz.rules import Rules


class Tableau:
    """One seat's own cards: Nertz pile, work piles, stock and waste.

    ``work[k]`` lists work pile k+1 bottom to top; its first ``down[k]`` cards are face down.
    ``stock`` and ``waste`` are bottom to top too: ``stock[-1]`` is the next card turned.
    """

    __slots__ = ("down", "nertz", "stock", "waste", "work")

    def __init__(
        self,
        nertz: list[Card],
        work: list[list[Card]],
        down: list[int],
        stock: list[Card],
        waste: list[Card] | None = None,
    ) -> None:
        self.nertz = nertz
        self.work = work
        self.down = down
        self.stock = stock
        self.waste = waste if waste is not None else []

    def copy(self) -> Tableau:
        """An independent copy."""
        return Tableau(
            self.nertz[:], [p[:] for p in self.work], self.down[:], self.stock[:], self.waste[:]
        )

    def all_cards(self) -> list[Card]:
        """Every card still in this tableau, in no particular order."""
        out = self.nertz + self.stock + self.waste
        for pile in self.work:
            out += pile
        return out

    def run(self, k: int) -> list[Card]:
        """The face-up run of work pile ``k`` (0-based), bottom first."""
        return self.work[k][self.down[k]:]

    def to_layout(self) -> Layout:
        """The file form of this tableau."""
        return Layout(
            nertz=tuple(self.nertz),
            work=tuple(
                tuple((c, i >= d) for i, c in enumerate(pile))
                for pile, d in zip(self.work, self.down, strict=True)
            ),
            stock=tuple(reversed(self.stock)),
            waste=tuple(self.waste),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tableau):
            return NotImplemented
        return (
            self.nertz == other.nertz
            and self.work == other.work
            and self.down == other.down
            and self.stock == other.stock
            and self.waste == other.waste
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class Layout:
    """A tableau as the replay file writes it.

    ``nertz`` bottom to top (the last card face up); each work pile bottom to top as
    ``(card, face_up)``; ``stock`` top first; ``waste`` bottom to top (an extension: SPEC's deals
    start with an empty waste, and a file may leave the key out).
    """

    nertz: tuple[Card, ...]
    work: tuple[tuple[tuple[Card, bool], ...], ...]
    stock: tuple[Card, ...]
    waste: tuple[Card, ...] = ()

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Pickled through the constructor: the compiled class cannot restore a frozen
        # dataclass's slots one by one.
        return (Layout, (self.nertz, self.work, self.stock, self.waste))

    def to_tableau(self) -> Tableau:
        """The engine form (checked by :func:`nertz.engine.check_layout` first)."""
        work = [[c for c, _ in pile] for pile in self.work]
        down = [sum(1 for _, up in pile if not up) for pile in self.work]
        return Tableau(list(self.nertz), work, down, list(reversed(self.stock)), list(self.waste))

    def to_json(self) -> dict[str, object]:
        """The SPEC form: ``{"nertz": [...], "work": [[...]], "stock": [...]}``."""
        out: dict[str, object] = {
            "nertz": [str(c) for c in self.nertz],
            "work": [[str(c) if up else f"~{c}" for c, up in pile] for pile in self.work],
            "stock": [str(c) for c in self.stock],
        }
        if self.waste:
            out["waste"] = [str(c) for c in self.waste]
        return out

    @staticmethod
    def from_json(data: object) -> Layout:
        """Read the SPEC form; raises :class:`NotationError` naming a bad key or card."""
        if not isinstance(data, dict):
            raise NotationError("a layout must be an object with nertz, work and stock")
        for key in ("nertz", "work", "stock"):
            if key not in data:
                raise NotationError(f"layout has no {key!r}")
        unknown = set(data) - {"nertz", "work", "stock", "waste"}
        if unknown:
            raise NotationError(f"layout has unknown key {sorted(unknown)[0]!r}")

        def card_list(value: object, what: str) -> tuple[Card, ...]:
            if not isinstance(value, list):
                raise NotationError(f"layout {what} must be a list of cards")
            out = []
            for item in value:
                if not isinstance(item, str):
                    raise NotationError(f"layout {what}: {item!r} is not a card")
                try:
                    out.append(Card.parse(item))
                except NotationError:
                    raise NotationError(f"layout {what}: {item!r} is not a card") from None
            return tuple(out)

        work_data = data["work"]
        if not isinstance(work_data, list) or not all(isinstance(p, list) for p in work_data):
            raise NotationError("layout work must be a list of piles (lists of cards)")
        work = []
        for k, pile in enumerate(work_data, start=1):
            cells = []
            for item in pile:
                if not isinstance(item, str):
                    raise NotationError(f"layout work pile {k}: {item!r} is not a card")
                text = item.strip()
                up = not text.startswith("~")
                try:
                    c = Card.parse(text.lstrip("~"))
                except NotationError:
                    raise NotationError(f"layout work pile {k}: {item!r} is not a card") from None
                cells.append((c, up))
            work.append(tuple(cells))
        return Layout(
            nertz=card_list(data["nertz"], "nertz"),
            work=tuple(work),
            stock=card_list(data["stock"], "stock"),
            waste=card_list(data.get("waste", []), "waste"),
        )


def shuffled_deck(rules: Rules, seed: int | str, round_index: int, seat: int) -> list[Card]:
    """Seat ``seat``'s deck for round ``round_index``, shuffled from ``seed``.

    Each (seed, round, seat) has its own generator, seeded from their text, so a deal never
    depends on how many other seats or rounds there are, nor on any global random state.
    """
    cards = list(deck(rules.jokers))
    random.Random(f"nertz:{seed}:{round_index}:{seat}").shuffle(cards)
    return cards


def deal(rules: Rules, cards: list[Card], nertz_size: int | None = None) -> Tableau:
    """Deal one tableau from a shuffled deck (first card dealt first).

    The Nertz pile takes the first cards (the last of them face up), then the work piles
    (``staircase``: pile k gets k-1 face-down cards under a face-up one, dealt row by row as in
    the Fairy Fly rules), and the rest is the stock, the next card dealt on top.
    """
    size = rules.nertz_pile_size if nertz_size is None else nertz_size
    it = iter(cards)
    nertz = [next(it) for _ in range(size)]
    n = rules.work_piles
    work: list[list[Card]] = [[] for _ in range(n)]
    if rules.work_pile_deal == "staircase":
        # Row r: a face-up card on pile r, a face-down card on each pile after it; so pile k's
        # face-up card is the last one it receives.
        for row in range(n):
            for k in range(row, n):
                work[k].append(next(it))
        down = list(range(n))
    else:
        for k in range(n):
            work[k].append(next(it))
        down = [0] * n
    rest = list(it)
    rest.reverse()
    return Tableau(nertz, work, down, rest)
