"""Records of what a move did: the round's event log.

Every accepted move returns a tuple of these (read-only by convention: nothing changes an event
once made). Each knows its public JSON (``to_json()``): what
every seat may see at a real table (a card that moved face up, a count of cards turned), which
the server broadcasts as it is. Two records hold more than that: :class:`FalseCallPenalty` names
the cards that went face down under the Nertz top, and its JSON carries only their count (the
seat sees its own Nertz top through its view, like everyone else); :class:`StuckLapsed` is not
told at all (its effect shows in the seat's stuck flag).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from nertz.cards import Card

# Plain (not frozen) dataclasses: compiled by mypyc, a frozen dataclass is built by an
# interpreted __init__, which cost a fifth of a compiled playout. The events made on every move
# (CardsMoved, CardRevealed, StockTurned, StuckLapsed) spell their __init__ out for the same
# reason: the compiler makes a written one native.

class Ended(StrEnum):
    """How a round ended: its value is the ``ended`` of SPEC section 4's replay output."""

    NERTZ = "nertz"
    """A seat called (or, under ``call: auto``, emptied its Nertz pile)."""
    BLOCKED = "blocked"
    """Nothing productive could happen again (SPEC ``blocked_round_end``), or the table came back
    to a position it had been in with nothing productive in between (docs/rules.md)."""
    OPEN = "open"
    """Not ended: a round scored as it stands (a replay whose moves ran out). A :class:`Round`
    in play has ``ended`` None, never this."""


@dataclass
class CardsMoved:
    """``cards`` (bottom first) went from pile ``src`` to ``dst`` of seat ``seat``'s tableau,
    or to foundation ``foundation`` (1-based) when ``dst`` is ``F``; ``started`` when it began
    the pile."""

    seat: int
    move: str
    cards: tuple[Card, ...]
    src: str
    dst: str
    foundation: int = 0
    started: bool = False
    t: int | None = None

    def __init__(
        self, seat: int, move: str, cards: tuple[Card, ...], src: str, dst: str,
        foundation: int = 0, started: bool = False, t: int | None = None,
    ) -> None:
        self.seat = seat
        self.move = move
        self.cards = cards
        self.src = src
        self.dst = dst
        self.foundation = foundation
        self.started = started
        self.t = t

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # A written __init__ needs pickling through it too (compiled, the default calls it bare).
        return (CardsMoved, (self.seat, self.move, self.cards, self.src, self.dst,
                             self.foundation, self.started, self.t))

    def to_json(self) -> dict[str, Any] | None:
        """The public record: every card named (they moved face up)."""
        return {"kind": "moved", "seat": self.seat, "src": self.src, "dst": self.dst,
                "cards": [str(c) for c in self.cards], "foundation": self.foundation,
                "started": self.started}


@dataclass
class CardRevealed:
    """A face-down card of work pile ``pile`` (1-based) turned face up."""

    seat: int
    pile: int
    card: Card

    def __init__(self, seat: int, pile: int, card: Card) -> None:
        self.seat = seat
        self.pile = pile
        self.card = card

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Through __init__, as CardsMoved.
        return (CardRevealed, (self.seat, self.pile, self.card))

    def to_json(self) -> dict[str, Any] | None:
        """The public record of the card turned face up."""
        return {"kind": "revealed", "seat": self.seat, "pile": self.pile, "card": str(self.card)}


@dataclass
class StockTurned:
    """Seat ``seat`` turned ``count`` cards onto its waste; ``recycled`` when the waste went back
    into the stock first (or only: ``count`` 0 is a bare turnover)."""

    seat: int
    count: int
    recycled: bool
    waste_top: Card | None

    def __init__(self, seat: int, count: int, recycled: bool, waste_top: Card | None) -> None:
        self.seat = seat
        self.count = count
        self.recycled = recycled
        self.waste_top = waste_top

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Through __init__, as CardsMoved.
        return (StockTurned, (self.seat, self.count, self.recycled, self.waste_top))

    def to_json(self) -> dict[str, Any] | None:
        """The public record (the new waste top shows in the seat's tableau)."""
        return {"kind": "turned", "seat": self.seat, "count": self.count,
                "recycled": self.recycled}


@dataclass
class StuckDeclared:
    """Seat ``seat`` declared it is stuck, choosing pile ``pile`` (``N`` or ``S``) to rotate."""

    seat: int
    pile: str

    def to_json(self) -> dict[str, Any] | None:
        """The public record of the declaration."""
        return {"kind": "stuck", "seat": self.seat, "pile": self.pile}


@dataclass
class StuckLapsed:
    """Seat ``seat``'s stuck declaration lapsed because it made another move."""

    seat: int

    def __init__(self, seat: int) -> None:
        self.seat = seat

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Through __init__, as CardsMoved.
        return (StuckLapsed, (self.seat,))

    def to_json(self) -> dict[str, Any] | None:
        """Not told: the seat's stuck flag shows it."""
        return None


@dataclass
class ResetDone:
    """Every seat was stuck: each rotated the pile in ``piles`` (``N`` or ``S`` per seat)."""

    piles: tuple[str, ...]

    def to_json(self) -> dict[str, Any] | None:
        """The public record of the reset."""
        return {"kind": "reset", "piles": list(self.piles)}


@dataclass
class Called:
    """Seat ``seat`` called the end of the round at ``t`` (``auto`` when its pile emptied)."""

    seat: int
    t: int | None
    auto: bool
    word: str

    def to_json(self) -> dict[str, Any] | None:
        """The public record of the call."""
        return {"kind": "called", "seat": self.seat, "t": self.t, "auto": self.auto,
                "word": self.word}


@dataclass
class FalseCallPenalty:
    """Seat ``seat`` called with cards left (``penalised``): ``cards`` went from its stock onto
    its Nertz pile (the last one on top); it pays ``each`` to every other seat."""

    seat: int
    cards: tuple[Card, ...]
    each: int

    def to_json(self) -> dict[str, Any] | None:
        """The public record: how many cards, never which (they went face down)."""
        return {"kind": "false_call", "seat": self.seat, "count": len(self.cards),
                "each": self.each}


@dataclass
class RoundEnded:
    """The round is over: ``reason`` is :attr:`Ended.NERTZ` or :attr:`Ended.BLOCKED`;
    ``caller`` the calling seat."""

    reason: Ended
    caller: int | None

    def to_json(self) -> dict[str, Any] | None:
        """The public record of the end."""
        return {"kind": "ended", "reason": self.reason, "caller": self.caller}


Event = (
    CardsMoved
    | CardRevealed
    | StockTurned
    | StuckDeclared
    | StuckLapsed
    | ResetDone
    | Called
    | FalseCallPenalty
    | RoundEnded
)
"""Any event."""
