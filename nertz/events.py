"""Frozen records of what a move did: the round's event log.

Every accepted move returns a tuple of these. They carry only what every seat may see at a real
table (a card that moved face up, a count of cards turned), so the server can broadcast them
through the seats' views as they are; the one exception, :class:`FalseCallPenalty`, names the
cards that went face down under the Nertz top and is sent to its own seat only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from nertz.cards import Card


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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class CardRevealed:
    """A face-down card of work pile ``pile`` (1-based) turned face up."""

    seat: int
    pile: int
    card: Card


@dataclass(frozen=True, slots=True)
class StockTurned:
    """Seat ``seat`` turned ``count`` cards onto its waste; ``recycled`` when the waste went back
    into the stock first (or only: ``count`` 0 is a bare turnover)."""

    seat: int
    count: int
    recycled: bool
    waste_top: Card | None


@dataclass(frozen=True, slots=True)
class StuckDeclared:
    """Seat ``seat`` declared it is stuck, choosing pile ``pile`` (``N`` or ``S``) to rotate."""

    seat: int
    pile: str


@dataclass(frozen=True, slots=True)
class StuckLapsed:
    """Seat ``seat``'s stuck declaration lapsed because it made another move."""

    seat: int


@dataclass(frozen=True, slots=True)
class ResetDone:
    """Every seat was stuck: each rotated the pile in ``piles`` (``N`` or ``S`` per seat)."""

    piles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Called:
    """Seat ``seat`` called the end of the round at ``t`` (``auto`` when its pile emptied)."""

    seat: int
    t: int | None
    auto: bool
    word: str


@dataclass(frozen=True, slots=True)
class FalseCallPenalty:
    """Seat ``seat`` called with cards left (``penalised``): ``cards`` went from its stock onto
    its Nertz pile (the last one on top); it pays ``each`` to every other seat."""

    seat: int
    cards: tuple[Card, ...]
    each: int


@dataclass(frozen=True, slots=True)
class RoundEnded:
    """The round is over: ``reason`` is :attr:`Ended.NERTZ` or :attr:`Ended.BLOCKED`;
    ``caller`` the calling seat."""

    reason: Ended
    caller: int | None


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
