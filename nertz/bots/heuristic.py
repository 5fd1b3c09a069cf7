"""The card play of the ``greedy`` bot: a priority list with judgement about the waste and the runs.

:func:`strong_move` answers the seat's next card move, or None when it would only turn the stock.
It reads only what the seat sees (its Nertz top, waste top, face-up runs, the foundations and its
own counts). In order:

1. the Nertz top to a foundation;
2. the Nertz top onto a work pile: onto a matching top first, else onto an empty pile (where
   step 4 then *tucks* it under a run whose base goes onto it);
3. a card to a foundation: a contested one first (another seat shows the same card, or the card
   before it, ready to play), the waste top next, then the work-pile tops;
4. a whole run onto another pile when that empties its pile (for the Nertz top) or turns up a
   face-down card;
5. part of a run onto another pile when that brings up a card that fits a foundation or takes
   the Nertz top;
6. the waste top onto a work pile, only when it helps: the Nertz top then goes onto it; or the
   pile it lengthens builds down toward the Nertz top or a run's base (a card 1 to 5 ranks
   below, of the colour the run will have there); or early in a pass through the stock (taking a
   card out changes which cards come up by threes on the next pass); or a high card (10 to K)
   that rarely reaches a foundation soon and makes a good base;
7. part of a run onto another pile when that brings up a card that fits a foundation soon (its
   suit's foundation needs a card at most 3 ranks below) onto a top that does not;
8. after a whole idle pass through the stock (``unblock``): the waste top onto any pile that
   takes it, so that the next pass brings up other cards.

Steps 2, 4, 5, 6 and 7 take their ideas from Pounce Online's computer players (read to learn:
:mod:`nertz.bots.pounce` models them); the contested plays, the Nertz-top test of step 6, the
order within step 3 and step 5's Nertz target are this project's.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Final

from nertz.cards import Card
from nertz.engine import NEW_FOUNDATION, NO_FOUNDATION, Round
from nertz.moves import CALL, TURN, Kind, Move, to_foundation, to_work
from nertz.scoring import card_value
from nertz.state import Tableau

NOWHERE: Final = NO_FOUNDATION
"""What :meth:`Round.foundation_for` answers for a card that fits no foundation (the engine's
:data:`~nertz.engine.NO_FOUNDATION`)."""
SOON: Final = 3
"""A card fits a foundation *soon* when its suit's foundation needs a card at most this many
ranks below it (or it is at most this many ranks above the starter)."""
HELP_SPAN: Final = 5
"""Step 6: the waste top helps a pile that builds down toward a card this many ranks below."""
EARLY: Final = 0.75
"""Step 6: early in a pass means at least this share of the stock and waste is still stock."""
HIGH: Final = 10
"""Step 6: a card of this rank or more is a good base."""
NAMES: Final = ("1", "2", "3", "4", "5")


def foundation_move(rnd: Round, src: str, card: Card) -> Move | None:
    """``src`` to the foundation ``card`` fits (the lowest numbered), or None."""
    fi = rnd.foundation_for(card)
    if fi == NOWHERE:
        return None
    return to_foundation(src, 0 if fi == NEW_FOUNDATION else fi + 1)


def takes(rnd: Round, tab: Tableau, j: int, card: Card) -> bool:
    """Whether work pile ``j`` (0-based) takes ``card`` on top (an empty pile takes any)."""
    return rnd._fits_pile(tab.work[j], tab.down[j], [card])


def soon(rnd: Round, card: Card, span: int = SOON) -> bool:
    """Whether ``card`` will fit a foundation after at most ``span - 1`` other cards of its suit
    (visible facts only: the foundations' needs)."""
    rank = card.rank
    if rank == 0:
        return True
    if rnd.foundation_for(card) != NOWHERE:
        return True
    for f in rnd.foundations:
        if f.suit != card.suit:
            continue
        for need in f.needs:
            if 0 <= (rank - need) * (f.direction or 1) < span:
                return True
    return _from_starter(rnd, rank) < span


def _from_starter(rnd: Round, rank: int) -> int:
    """Ranks from a starter card up to ``rank`` (large when below it)."""
    starter = 9 if rnd.rules.foundation in ("starter9", "evil_jacks", "evil_jacks_one_eyed") else 1
    return rank - starter if rank >= starter else 99


def contested(rnd: Round, seat: int, card: Card) -> bool:
    """Whether another seat shows the same card (its own copy) on a top, ready to race for the
    same foundation step."""
    key = card.key
    for s, other in enumerate(rnd.tableaus):
        if s == seat:
            continue
        if other.nertz and other.nertz[-1].key == key:
            return True
        if other.waste and other.waste[-1].key == key:
            return True
        for pile, d in zip(other.work, other.down, strict=True):
            if len(pile) > d and pile[-1].key == key:
                return True
    return False


def nertz_to_work(rnd: Round, tab: Tableau) -> Move | None:
    """Step 2: the Nertz top onto a matching top, else onto an empty pile."""
    top = tab.nertz[-1]
    work = tab.work
    down = tab.down
    empty = -1
    for j, pile in enumerate(work):
        if not pile:
            if empty < 0:
                empty = j
        elif rnd._fits_pile(pile, down[j], [top]):
            return to_work("N", j + 1)
    if empty < 0:
        return None
    return to_work("N", empty + 1)


def whole_run_move(rnd: Round, tab: Tableau) -> Move | None:
    """Step 4: a whole run onto another non-empty pile (emptying its pile or turning a card up),
    a tucked run's base included (onto the Nertz card just laid on an empty pile)."""
    work = tab.work
    down = tab.down
    wild = rnd.rules.jokers
    for k, pile in enumerate(work):
        d = down[k]
        if len(pile) <= d:
            continue
        base = pile[d]
        for j, other in enumerate(work):
            if j == k or not other:
                continue
            if wild:
                if rnd._fits_pile(other, down[j], pile[d:]):
                    return to_work(NAMES[k], j + 1)
            elif other[-1].rank == base.rank + 1 and other[-1].red is not base.red:
                return to_work(NAMES[k], j + 1)
    return None


def partial_moves(rnd: Round, tab: Tableau) -> list[tuple[int, int, int]]:
    """Every partial-run move as (source pile, the moving card's index, target pile), 0-based;
    the target is a non-empty pile (a run moved to an empty pile frees nothing)."""
    if not rnd.rules.move_partial_runs:
        return []
    out: list[tuple[int, int, int]] = []
    work = tab.work
    down = tab.down
    if rnd.rules.jokers:
        for k, pile in enumerate(work):
            for i in range(down[k] + 1, len(pile)):
                moving = pile[i:]
                for j, other in enumerate(work):
                    if j != k and other and rnd._fits_pile(other, down[j], moving):
                        out.append((k, i, j))
        return out
    # Without jokers a face-up run goes down by one: the one card of run k that could go onto
    # pile j's top sits at the index its rank gives.
    for j, other in enumerate(work):
        if len(other) <= down[j]:
            continue
        target = other[-1]
        for k, pile in enumerate(work):
            d = down[k]
            if k == j or len(pile) <= d + 1:
                continue
            i = d + pile[d].rank - target.rank + 1
            if d < i < len(pile) and pile[i].red is not target.red:
                out.append((k, i, j))
    return out


def strong_move(
    rnd: Round, seat: int, unblock: bool = False, avoid: Container[Move] = ()
) -> Move | None:
    """The ``greedy`` bot's card move for ``seat`` (the module docstring's list), or None to turn.

    ``unblock``: the seat has turned a whole pass without a play (step 8). ``avoid``: work-to-
    work moves not to make (those made since the last productive play, against loops)."""
    tab = rnd.tableaus[seat]
    if not tab.nertz:
        return None
    top = tab.nertz[-1]
    move = foundation_move(rnd, "N", top)
    if move is not None:
        return move
    move = nertz_to_work(rnd, tab)
    if move is not None:
        return move
    waste = tab.waste[-1] if tab.waste else None
    plays: list[tuple[Move, Card]] = []
    if waste is not None:
        move = foundation_move(rnd, "W", waste)
        if move is not None:
            plays.append((move, waste))
    for k, (pile, d) in enumerate(zip(tab.work, tab.down, strict=True)):
        if len(pile) > d:
            move = foundation_move(rnd, NAMES[k], pile[-1])
            if move is not None:
                plays.append((move, pile[-1]))
    if plays:
        for move, card in plays:
            if contested(rnd, seat, card):
                return move
        return plays[0][0]
    move = whole_run_move(rnd, tab)
    if move is not None and move not in avoid:
        return move
    partial = partial_moves(rnd, tab)
    for k, i, j in partial:
        uncovered = tab.work[k][i - 1]
        if rnd.foundation_for(uncovered) != NOWHERE or rnd._fits_pile(
            tab.work[k][:i], tab.down[k], [top]
        ):
            move = to_work(NAMES[k], j + 1, tab.work[k][i])
            if move not in avoid:
                return move
    if waste is not None:
        move = waste_to_work(rnd, tab, waste, unblock)
        if move is not None:
            return move
    for k, i, j in partial:
        uncovered = tab.work[k][i - 1]
        if soon(rnd, uncovered) and not soon(rnd, tab.work[j][-1]):
            move = to_work(NAMES[k], j + 1, tab.work[k][i])
            if move not in avoid:
                return move
    return None


def waste_to_work(rnd: Round, tab: Tableau, waste: Card, unblock: bool) -> Move | None:
    """Step 6 (and 8): the waste top onto the pile it helps most, or None."""
    top = tab.nertz[-1]
    work = tab.work
    down = tab.down
    cycle = len(tab.stock) + len(tab.waste)
    early = len(tab.stock) >= EARLY * cycle
    fallback = -1
    for j, pile in enumerate(work):
        if not rnd._fits_pile(pile, down[j], [waste]):
            continue
        if len(pile) > down[j] and rnd._fits_pile([*pile, waste], down[j], [top]):
            return to_work("W", j + 1)  # the Nertz top goes onto it next
        if fallback < 0 and (
            unblock or early or waste.rank >= HIGH or (pile and _helps(tab, pile[-1]))
        ):
            fallback = j
    return to_work("W", fallback + 1) if fallback >= 0 else None


def _helps(tab: Tableau, pile_top: Card) -> bool:
    """Whether a pile with ``pile_top`` builds down toward the Nertz top or a run's base: such a
    card lies 1 to :data:`HELP_SPAN` ranks below, of the colour the run will have at its rank."""
    targets = [tab.nertz[-1]] if tab.nertz else []
    targets += [p[d] for p, d in zip(tab.work, tab.down, strict=True) if len(p) > d]
    return any(_on_track(c, pile_top) for c in targets)


def _on_track(card: Card, pile_top: Card) -> bool:
    """``card`` could one day lie in the run that goes down from ``pile_top``."""
    gap = pile_top.rank - card.rank
    return 0 < gap <= HELP_SPAN and (gap % 2 == 1) == (card.red is not pile_top.red)


def play_on(rnd: Round, seat: int, dug: int, first: Move | None = None) -> Move:
    """The Nertz pile is empty (``call: manual``): call while ahead, else play on first.

    The round is won on points, so a seat that would not top the table yet plays its
    foundation cards (``first``, if given, before the others) and calls as soon as it leads.
    With nothing to play it turns its stock for more (a call while behind loses for sure;
    playing on may still win, as long as another seat does not call first) and calls once
    ``dug``, its turns since its last play, make a whole pass."""
    points = visible_points(rnd)
    mine = points[seat]
    if all(mine > p for s, p in enumerate(points) if s != seat):
        return CALL
    if first is not None:
        return first
    for move in rnd.legal_moves(seat):
        if move.kind is Kind.TO_FOUNDATION:
            return move
    tab = rnd.tableaus[seat]
    cards = len(tab.stock) + len(tab.waste)
    if cards and dug <= cards // rnd.rules.turn_count + 1:
        return TURN
    return CALL


def visible_points(rnd: Round) -> list[int]:
    """Each seat's round score as the table shows it: foundation cards, less the Nertz-pile
    penalty (bonuses and variant payments left out: this is a bot's quick count)."""
    rules = rnd.rules
    points = [0] * rnd.seats
    for f in rnd.foundations:
        for owner, rank in zip(f.owners, f.ranks, strict=True):
            points[owner] += card_value(rules, rank)
    penalty = rules.nertz_penalty
    for s, tab in enumerate(rnd.tableaus):
        if tab.nertz:
            # Only the top card shows: price the hidden ones as average cards.
            each = penalty if isinstance(penalty, int) else card_value(rules, 7)
            points[s] -= each * len(tab.nertz)
    return points
