"""How each foundation variant starts, grows and dies: small named policies.

A foundation is one suit. Its policy answers two questions: which rank starts a pile, and which
ranks fit next (:meth:`FoundationPolicy.next_ranks`, most natural first). A pile whose
``next_ranks`` is empty is finished (complete, or dead at the 3 in ``starter9``).

Readings (SPEC section 3): in ``swinging_door`` the second card (2 or K) fixes the direction; in
``double_swinging_door`` every step is one up or down, ranks wrap past the Ace (a 2 takes a 3 or a
K, a K a Q or a 2) and Aces only start piles; in ``starter9`` (and both ``evil_jacks``) piles start
with a 9, the second card (T or 8) fixes the direction, up runs 9 T J Q K A 2 3, down runs
9 8 7 6 5 4 3, and the pile is dead at the 3.

A joker played on a foundation stands for the first of ``next_ranks``: the next card up where the
direction is still open, and the same way as the last step in ``double_swinging_door``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from nertz.cards import Card

UP: Final = 1
"""Direction of a pile going up."""
DOWN: Final = -1
"""Direction of a pile going down."""


class Foundation:
    """One shared foundation pile during a round.

    ``ranks[i]`` is the rank card ``cards[i]`` counts as (a joker's stand-in rank), ``owners[i]``
    the seat that played it and ``times[i]`` when (ms from the round's start, or None).
    ``direction`` is 0 until the pile's direction is fixed, then ``UP`` or ``DOWN`` (in
    ``double_swinging_door``: the direction of the last step). ``needs`` caches the ranks that fit.
    """

    __slots__ = ("cards", "direction", "needs", "owners", "ranks", "suit", "times")

    def __init__(self, suit: int) -> None:
        self.suit = suit
        self.ranks: list[int] = []
        self.cards: list[Card] = []
        self.owners: list[int] = []
        self.times: list[int | None] = []
        self.direction = 0
        self.needs: tuple[int, ...] = ()

    def copy(self) -> Foundation:
        """An independent copy (cards are immutable and shared)."""
        other = Foundation(self.suit)
        other.ranks = self.ranks[:]
        other.cards = self.cards[:]
        other.owners = self.owners[:]
        other.times = self.times[:]
        other.direction = self.direction
        other.needs = self.needs
        return other

    @property
    def top(self) -> Card:
        """The card on top of the pile."""
        return self.cards[-1]

    @property
    def finished(self) -> bool:
        """True when nothing more can be played on this pile."""
        return not self.needs

    def __len__(self) -> int:
        return len(self.cards)


@dataclass(frozen=True, slots=True)
class FoundationPolicy:
    """How one foundation variant grows. ``starter`` is the rank that starts a pile."""

    name: str
    starter: int
    family: str
    """``up``, ``swinging_door``, ``double_swinging_door`` or ``starter9`` (the growth shape)."""

    def next_ranks(self, ranks: list[int], direction: int) -> tuple[int, ...]:
        """The ranks that fit on a pile holding ``ranks`` (bottom first), most natural first."""
        last = ranks[-1]
        family = self.family
        if family == "up":
            return (last + 1,) if last < 13 else ()
        if family == "swinging_door":
            if len(ranks) == 1:
                return (2, 13)
            if direction == UP:
                return (last + 1,) if last < 13 else ()
            return (last - 1,) if last > 2 else ()
        if family == "double_swinging_door":
            if last == 1:
                return (13, 2) if direction == DOWN else (2, 13)
            up = last + 1 if last < 13 else 2
            down = last - 1 if last > 2 else 13
            return (down, up) if direction == DOWN else (up, down)
        # starter9 and the evil jacks grow alike: 9 T J Q K A 2 3 up, 9 8 7 6 5 4 3 down.
        if len(ranks) == 1:
            return (10, 8)
        if last == 3:
            return ()
        if direction == UP:
            return ({13: 1, 1: 2, 2: 3}.get(last, last + 1),)
        return (last - 1,)

    def direction_after(self, ranks: list[int], direction: int, rank: int) -> int:
        """The pile's direction once ``rank`` has been played on a pile holding ``ranks``."""
        family = self.family
        if family == "up":
            return UP
        if family == "double_swinging_door":
            last = ranks[-1]
            if last == 1:
                return UP if rank == 2 else DOWN
            return UP if rank == (last + 1 if last < 13 else 2) else DOWN
        if len(ranks) == 1:
            second_up = 2 if family == "swinging_door" else 10
            return UP if rank == second_up else DOWN
        return direction

    def is_legal_sequence(self, ranks: list[int]) -> bool:
        """Whether ``ranks`` (bottom first) is a sequence this variant can build."""
        if not ranks or ranks[0] != self.starter:
            return False
        direction = 0
        for i in range(1, len(ranks)):
            head = ranks[:i]
            if ranks[i] not in self.next_ranks(head, direction):
                return False
            direction = self.direction_after(head, direction, ranks[i])
        return True


POLICIES: Final[dict[str, FoundationPolicy]] = {
    "up": FoundationPolicy("up", 1, "up"),
    "swinging_door": FoundationPolicy("swinging_door", 1, "swinging_door"),
    "double_swinging_door": FoundationPolicy("double_swinging_door", 1, "double_swinging_door"),
    "starter9": FoundationPolicy("starter9", 9, "starter9"),
    "evil_jacks": FoundationPolicy("evil_jacks", 9, "starter9"),
    "evil_jacks_one_eyed": FoundationPolicy("evil_jacks_one_eyed", 9, "starter9"),
}
"""Each ``foundation`` option value's policy."""

ONE_EYED_JACKS: Final = frozenset({Card.parse("JS"), Card.parse("JH")})
"""The one-eyed Jacks of ``evil_jacks_one_eyed`` (SPEC: JS and JH)."""
