"""Races for the foundations: which of a seat's foundation plays another seat could take first.

A foundation step goes to whoever reaches the table first. When another seat shows the same card
(its own copy, on its Nertz top, waste top or a face-up work-pile top) the step it fits is
*contested*: waiting loses the card's place, and with it the point and the tempo. Both ``greedy``
and ``expert`` make such a play before anything else, even before laying their Nertz top onto a
work pile (the Nertz card can wait one move; the contested card cannot). Only visible cards are
read: the other seats' tops and the foundations.
"""

from __future__ import annotations

from nertz.cards import Card
from nertz.engine import Round
from nertz.moves import Kind, Move
from nertz.state import Tableau


def urgent_play(rnd: Round, seat: int, plays: list[Move]) -> Move | None:
    """Among ``plays`` (the seat's foundation moves), a contested one (the Nertz top's first),
    else the Nertz top to a foundation, else None."""
    tab = rnd.tableaus[seat]
    rivals: set[tuple[int, int]] = set()
    for s, other in enumerate(rnd.tableaus):
        if s == seat:
            continue
        tops = [other.nertz[-1]] if other.nertz else []
        if other.waste:
            tops.append(other.waste[-1])
        tops += [p[-1] for p, d in zip(other.work, other.down, strict=True) if len(p) > d]
        rivals.update((c.suit, c.rank) for c in tops)
    nertz_play: Move | None = None
    contested: Move | None = None
    for m in plays:
        card = source_card(tab, m)
        if m.src == "N":
            nertz_play = m
        # Starting a foundation is never contested: every seat may start its own.
        if (card.suit, card.rank) in rivals and rnd.foundation_for(card) >= 0 and (
            contested is None or m.src == "N"
        ):
            contested = m
    return contested or nertz_play


def foundation_plays(rnd: Round, seat: int) -> list[Move]:
    """The seat's legal moves to a foundation."""
    return [m for m in rnd.legal_moves(seat) if m.kind is Kind.TO_FOUNDATION]


def source_card(tab: Tableau, move: Move) -> Card:
    """The card a foundation play takes (the top of its source pile)."""
    if move.src == "N":
        return tab.nertz[-1]
    if move.src == "W":
        return tab.waste[-1]
    return tab.work[move.work_src][-1]
