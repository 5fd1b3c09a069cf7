"""The ``pounce`` bot: a test opponent that plays by the decision rules of Pounce Online's best
computer player, re-implemented here in this project's own code.

Pounce Online (github.com/alexrcoleman/pounce, ``shared/ComputerV1.ts``) is an open-source
Nertz/Pounce game whose computer players follow a fixed priority list with a few settings per
"style". Its authors' three-player tournament put the style called *Center pressure* (formerly
"Alex 75%") first, and an independent measurement found it beats our earlier greedy bot; this
module plays its rules so that ours can be measured against it (``docs/bots.md``). It is a
benchmark opponent, not one of our designs; what differs from the original is said below.

Its rules, in order (the original's names in brackets):

1. the Nertz top to a foundation (pounce to center);
2. the Nertz top onto a work pile (pounce to solitaire): first, if a pile is empty, *tucked*
   under a run whose base goes onto it; else onto the first pile that takes it, an empty one
   included;
3. the first work-pile top that fits a foundation (solitaire to center);
4. the waste top to a foundation (deck to center);
5. work pile to work pile (solitaire to solitaire): the first whole run that goes onto another
   pile; else part of a run that uncovers a card fitting a foundation now (unblocker); else
   part of a run that uncovers a card that will fit soon (its suit's foundation needs a card at
   most 4 ranks below it, or it is an Ace or a 2) onto a non-empty pile whose top will not
   (unblocker prep);
6. the waste top onto the first work pile that takes it (deck to solitaire), but only if the
   pile's top leads toward the Nertz top or a run's base (such a card lies 1 to 5 ranks below it,
   with the parity of its place in the run: "helpful"), or else while at least 75% of the stock
   is still unturned (the style's threshold: playing early reorders the next pass), or else if
   the waste top is a 10 or higher; an empty pile only by the last two rules; once the table
   has been quiet for a while (the original: 30 ticks with no move anywhere) onto any pile;
7. turn the stock (cycle).

Differences, forced by the engine or the table: the tuck is two moves here (the Nertz top onto
the empty pile, then the run onto it: rule 5's whole-run move makes the second at the next
decision, as it comes first among rule 5's moves); rule 5 never moves a whole run of face-up
cards onto an empty pile (the original never has an empty pile there: rule 2 fills it first, and
here it would only loop); "the table has been quiet" is the seat's own whole pass through its
stock without a play (a bot sees no table-wide clock); the original's stuck vote is for people,
so this bot declares stuck like ours do (:class:`~nertz.bots.idle.IdleSense`, after a second
idle pass); a run moved between piles is not moved again until a productive play (a guard
against two piles handing a run back and forth, which the original does not need to say); and it
calls as soon as its Nertz pile is empty (Pounce ends the round at once).
"""

from __future__ import annotations

from typing import Final

from nertz.bots.base import Bot, Observation
from nertz.bots.heuristic import NAMES, NOWHERE, foundation_move, takes
from nertz.bots.idle import IdleSense
from nertz.cards import Card
from nertz.engine import Round
from nertz.moves import CALL, Kind, Move, to_work
from nertz.rules import Rules
from nertz.state import Tableau

SOON_SPAN: Final = 4
"""Rule 5: "plays soon" means at most this many ranks above its foundation's top."""
HELP_SPAN: Final = 5
"""Rule 6: a helpful pile leads toward a card at most this many ranks below its top."""
THRESHOLD: Final = 0.75
"""Rule 6: the Center pressure style's share of the stock still unturned."""
HIGH: Final = 10
"""Rule 6: a waste top of this rank or more goes onto a pile anyway."""
PATIENCE: Final = 2
"""Idle passes through the stock before declaring stuck (the first relaxes rule 6)."""


class PounceBot(Bot):
    """Pounce Online's Center pressure rules (module docstring), for measuring ours against."""

    name = "pounce"

    def __init__(self) -> None:
        super().__init__()
        self._idle = IdleSense(patience=PATIENCE)
        self._shuffled: set[Move] = set()

    def start(self, seat: int, rules: Rules, seed: int | str = 0) -> None:
        """Begin a round."""
        super().start(seat, rules, seed)
        self._idle.clear()
        self._shuffled = set()

    def decide(self, obs: Observation) -> Move | None:
        """The first rule that gives a move, else turn (or declare stuck, or wait)."""
        rnd = obs.round
        if rnd.ended is not None:
            return None
        tab = rnd.tableaus[obs.seat]
        if not tab.nertz:
            return CALL if rnd.rules.call == "manual" else None
        quiet = self._idle.idle > 0 and self._idle.passes(obs) >= 1
        move = pounce_move(rnd, obs.seat, quiet)
        if move is None or move in self._shuffled:
            return self._idle.when_idle(obs)
        if move.kind is Kind.TO_WORK and move.src.isdigit():
            self._shuffled.add(move)
        else:
            self._shuffled.clear()
            self._idle.progressed()
        return move


def pounce_move(rnd: Round, seat: int, quiet: bool = False) -> Move | None:
    """The first of rules 1 to 6 that applies (None: turn). ``quiet``: relax rule 6."""
    tab = rnd.tableaus[seat]
    top = tab.nertz[-1]
    work = tab.work
    down = tab.down
    move = foundation_move(rnd, "N", top)  # 1
    if move is not None:
        return move
    move = _nertz_to_work(rnd, tab, top)  # 2
    if move is not None:
        return move
    for k, (pile, d) in enumerate(zip(work, down, strict=True)):  # 3
        if len(pile) > d:
            move = foundation_move(rnd, NAMES[k], pile[-1])
            if move is not None:
                return move
    waste = tab.waste[-1] if tab.waste else None
    if waste is not None:  # 4
        move = foundation_move(rnd, "W", waste)
        if move is not None:
            return move
    move = _work_to_work(rnd, tab)  # 5
    if move is not None:
        return move
    if waste is not None:  # 6
        return _waste_to_work(rnd, tab, waste, quiet)
    return None


def _nertz_to_work(rnd: Round, tab: Tableau, top: Card) -> Move | None:
    work = tab.work
    down = tab.down
    empty = next((j for j, pile in enumerate(work) if not pile), -1)
    if empty >= 0:
        for pile, d in zip(work, down, strict=True):
            if len(pile) > d and pile[d].rank + 1 == top.rank and pile[d].red is not top.red:
                return to_work("N", empty + 1)  # the tuck's first half
    for j in range(len(work)):
        if takes(rnd, tab, j, top):
            return to_work("N", j + 1)
    return None


def _work_to_work(rnd: Round, tab: Tableau) -> Move | None:
    work = tab.work
    down = tab.down
    for k, pile in enumerate(work):
        d = down[k]
        if len(pile) <= d:
            continue
        for j, other in enumerate(work):
            if j == k or (not other and d == 0):
                continue
            if rnd._fits_pile(other, down[j], pile[d:]):
                return to_work(NAMES[k], j + 1)
    if not rnd.rules.move_partial_runs:
        return None
    prep: Move | None = None
    for k, pile in enumerate(work):
        for i in range(down[k] + 1, len(pile)):
            j = _first_taker(rnd, tab, pile[i:], k)
            if j < 0:
                continue
            if rnd.foundation_for(pile[i - 1]) != NOWHERE:
                return to_work(NAMES[k], j + 1, pile[i])
            if (
                prep is None
                and work[j]
                and _soon(rnd, pile[i - 1])
                and not _soon(rnd, work[j][-1])
            ):
                prep = to_work(NAMES[k], j + 1, pile[i])
    return prep


def _first_taker(rnd: Round, tab: Tableau, moving: list[Card], k: int) -> int:
    for j, other in enumerate(tab.work):
        if j != k and rnd._fits_pile(other, tab.down[j], moving):
            return j
    return -1


def _waste_to_work(rnd: Round, tab: Tableau, waste: Card, quiet: bool) -> Move | None:
    stock = len(tab.stock)
    early = stock >= THRESHOLD * (stock + len(tab.waste))
    for j, pile in enumerate(tab.work):
        if not takes(rnd, tab, j, waste):
            continue
        if quiet or early or waste.rank >= HIGH:
            return to_work("W", j + 1)
        if len(pile) > tab.down[j] and _helpful(tab, pile[-1]):
            return to_work("W", j + 1)
    return None


def _helpful(tab: Tableau, pile_top: Card) -> bool:
    cards = [p[d] for p, d in zip(tab.work, tab.down, strict=True) if len(p) > d]
    if tab.nertz:
        cards.append(tab.nertz[-1])
    for c in cards:
        gap = pile_top.rank - c.rank
        if 0 < gap <= HELP_SPAN and (gap % 2 == 1) == (c.red is not pile_top.red):
            return True
    return False


def _soon(rnd: Round, card: Card) -> bool:
    """Rule 5's "plays soon": an Ace or a 2, or a foundation of its suit is at most
    :data:`SOON_SPAN` ranks below it."""
    if card.rank <= 2:
        return True
    for f in rnd.foundations:
        if f.suit == card.suit and f.cards and 0 <= card.rank - f.ranks[-1] <= SOON_SPAN:
            return True
    return False
