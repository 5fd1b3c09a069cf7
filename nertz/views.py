"""What one seat may see: the only form in which a round leaves the engine for a client.

At a real table a player sees every face-up card: each Nertz pile's top card, every waste's top
card, the face-up runs of every work pile and every foundation. Nobody sees a stock's cards (not
even their own: the stock is face down), the cards under any Nertz top (their own included), the
cards under a waste's top, or a face-down work card. A :class:`SeatView` holds exactly that, with
counts for what is hidden.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nertz.cards import SUITS, Card
from nertz.engine import Round


@dataclass(frozen=True, slots=True)
class TableauView:
    """One tableau as anyone at the table sees it."""

    seat: int
    nertz_top: Card | None
    nertz_count: int
    work_down: tuple[int, ...]
    work_up: tuple[tuple[Card, ...], ...]
    stock_count: int
    waste_top: Card | None
    waste_count: int
    stuck: str

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: cards as their notation."""
        return {
            "seat": self.seat,
            "nertz_top": _c(self.nertz_top),
            "nertz_count": self.nertz_count,
            "work": [
                {"down": d, "up": [str(c) for c in up]}
                for d, up in zip(self.work_down, self.work_up, strict=True)
            ],
            "stock_count": self.stock_count,
            "waste_top": _c(self.waste_top),
            "waste_count": self.waste_count,
            "stuck": self.stuck,
        }


@dataclass(frozen=True, slots=True)
class FoundationView:
    """A foundation: its cards bottom first with the seat that played each, its suit, and the
    ranks that fit on it next (the foundation policy's answer: a client need not know it)."""

    number: int
    cards: tuple[Card, ...]
    owners: tuple[int, ...]
    needs: tuple[int, ...]
    suit: int = -1

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (``suit`` a letter of ``SHDC``; ``needs`` ranks 1 to 13)."""
        return {
            "number": self.number,
            "cards": [str(c) for c in self.cards],
            "owners": list(self.owners),
            "finished": not self.needs,
            "suit": SUITS[self.suit] if 0 <= self.suit < len(SUITS) else None,
            "needs": list(self.needs),
        }


@dataclass(frozen=True, slots=True)
class SeatView:
    """The whole table as seat ``seat`` sees it (``seat`` -1: a spectator, who sees the same
    face-up cards as any player)."""

    seat: int
    tableaus: tuple[TableauView, ...]
    foundations: tuple[FoundationView, ...]
    ended: str | None
    called_by: int | None

    @property
    def own(self) -> TableauView:
        """This seat's own tableau."""
        return self.tableaus[self.seat]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for the wire."""
        return {
            "seat": self.seat,
            "tableaus": [t.to_json() for t in self.tableaus],
            "foundations": [f.to_json() for f in self.foundations],
            "ended": self.ended,
            "called_by": self.called_by,
        }


def _c(card: Card | None) -> str | None:
    return None if card is None else str(card)


def tableau_view(rnd: Round, seat: int) -> TableauView:
    """Seat ``seat``'s tableau as anyone at the table sees it."""
    tab = rnd.tableaus[seat]
    return TableauView(
        seat=seat,
        nertz_top=tab.nertz[-1] if tab.nertz else None,
        nertz_count=len(tab.nertz),
        work_down=tuple(tab.down),
        work_up=tuple(tuple(p[d:]) for p, d in zip(tab.work, tab.down, strict=True)),
        stock_count=len(tab.stock),
        waste_top=tab.waste[-1] if tab.waste else None,
        waste_count=len(tab.waste),
        stuck=rnd.stuck[seat],
    )


def tableau_json(rnd: Round, seat: int) -> dict[str, Any]:
    """``tableau_view(rnd, seat).to_json()``, built straight from the round: a server sends
    one with every move, and the frozen view between them cost twice the dict (the property
    tests hold the two equal)."""
    tab = rnd.tableaus[seat]
    nertz = tab.nertz
    waste = tab.waste
    return {
        "seat": seat,
        "nertz_top": str(nertz[-1]) if nertz else None,
        "nertz_count": len(nertz),
        "work": [{"down": d, "up": [str(c) for c in p[d:]]}
                 for p, d in zip(tab.work, tab.down, strict=True)],
        "stock_count": len(tab.stock),
        "waste_top": str(waste[-1]) if waste else None,
        "waste_count": len(waste),
        "stuck": rnd.stuck[seat],
    }


def foundation_json(rnd: Round, index: int) -> dict[str, Any]:
    """``foundation_view(rnd, index).to_json()``, built straight from the round (see
    :func:`tableau_json`)."""
    f = rnd.foundations[index]
    needs = f.needs
    suit = f.suit
    return {
        "number": index + 1,
        "cards": [str(c) for c in f.cards],
        "owners": list(f.owners),
        "finished": not needs,
        "suit": SUITS[suit] if 0 <= suit < len(SUITS) else None,
        "needs": list(needs),
    }


def foundation_view(rnd: Round, index: int) -> FoundationView:
    """Foundation ``index`` (0-based) as everyone sees it."""
    f = rnd.foundations[index]
    return FoundationView(index + 1, tuple(f.cards), tuple(f.owners), f.needs, f.suit)


def view(rnd: Round, seat: int) -> SeatView:
    """What ``seat`` sees of ``rnd`` (-1 for a spectator)."""
    tabs = tuple(tableau_view(rnd, s) for s in range(rnd.seats))
    founds = tuple(foundation_view(rnd, i) for i in range(len(rnd.foundations)))
    return SeatView(seat, tabs, founds, rnd.ended, rnd.called_by)


def visible_cards(v: SeatView) -> set[tuple[int, Card]]:
    """Every (owner seat, card) the view shows: what a test checks against the hidden ones."""
    out: set[tuple[int, Card]] = set()
    for t in v.tableaus:
        if t.nertz_top is not None:
            out.add((t.seat, t.nertz_top))
        if t.waste_top is not None:
            out.add((t.seat, t.waste_top))
        for up in t.work_up:
            out.update((t.seat, c) for c in up)
    for f in v.foundations:
        out.update(zip(f.owners, f.cards, strict=True))
    return out


def hidden_cards(rnd: Round) -> set[tuple[int, Card]]:
    """Every (owner seat, card) that nobody at the table may see: each stock, the cards under
    each Nertz top and each waste top, every face-down work card. No view ever shows one."""
    out: set[tuple[int, Card]] = set()
    for seat, tab in enumerate(rnd.tableaus):
        out.update((seat, c) for c in tab.stock)
        out.update((seat, c) for c in tab.nertz[:-1])
        out.update((seat, c) for c in tab.waste[:-1])
        for pile, d in zip(tab.work, tab.down, strict=True):
            out.update((seat, c) for c in pile[:d])
    return out
