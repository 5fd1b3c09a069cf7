"""The rules engine: legal moves, verify, apply, and the stuck and blocked checks.

A :class:`Round` is one deal in progress: every seat's tableau and the shared foundations. Like
python-chess's ``Board`` it is mutable so that one owner (a server table, the simulator) can play
hundreds of thousands of moves a second; :func:`apply` is the pure form that returns a new round
and leaves its argument untouched. Legality comes in three steps:

- :meth:`Round.legal_moves` lists a seat's moves;
- :meth:`Round.verify` raises :class:`IllegalMoveError` saying why a move is not allowed
  (:meth:`Round.can_play` answers yes or no);
- :meth:`Round.play` verifies, changes the round, and returns the events.

What happens next with nobody's move is the referee's: :meth:`Round.settle`, which a table owner
(the server, the simulator, the AI environment) calls after any change, resets the table when
every seat is stuck and ends the round when it is blocked (python-chess's ``Board.outcome()``,
made to act). A rejected move changes nothing. The engine keeps no clock: each move may carry
``t`` (ms from the round's start), which matters only for the call's grace window and for naming
a race's margin.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from nertz.cards import Card
from nertz.errors import IllegalMoveError, LostRace, NotationError
from nertz.events import (
    Called,
    CardRevealed,
    CardsMoved,
    Ended,
    Event,
    FalseCallPenalty,
    ResetDone,
    RoundEnded,
    StockTurned,
    StuckDeclared,
    StuckLapsed,
)
from nertz.foundations import POLICIES, Foundation
from nertz.moves import (
    CALL,
    OP_CALL,
    OP_STUCK,
    OP_TO_FOUNDATION,
    OP_TO_WORK,
    OP_TURN,
    STUCK,
    STUCK_NERTZ,
    TURN,
    Move,
    to_foundation,
    to_work,
)
from nertz.rules import Rules
from nertz.state import Layout, Tableau

NEW_FOUNDATION: Final = -1
"""Resolved target of a play that starts a new foundation."""

NO_FOUNDATION: Final = -2
"""What :meth:`Round.foundation_for` answers for a card that fits no foundation."""

FALSE_CALL_PAYMENT: Final = 10
"""What a false caller pays each other seat (SPEC: 10, or 20 with an Ace under aces_double)."""

_KEYS: Final = 64
"""Card keys (``suit << 4 | rank``) run from 1 to 61: the size of the foundation index."""

_BFS_LIMIT: Final = 20_000
"""Work-pile arrangements the stuck look-ahead explores before it gives up (answering 'not
stuck'); real positions need a few dozen at most."""


@dataclass(frozen=True, slots=True)
class FalseCall:
    """A penalised false call: who, how much each other seat received, and when."""

    seat: int
    each: int
    t: int | None

    def __reduce__(self) -> tuple[object, tuple[int, int, int | None]]:
        # Pickled through the constructor, as the compiled class needs (see Rules).
        return (FalseCall, (self.seat, self.each, self.t))


@dataclass(frozen=True, slots=True)
class Ruling:
    """What the referee rules for a table whose every seat is stuck (:meth:`Round.ruling`)."""

    blocked: bool
    """The round is blocked: it ends (and ``piles`` is empty)."""
    piles: tuple[str, ...] = ()
    """Otherwise it resets: per seat, the pile (``N`` or ``S``) it declares, ``""`` for a seat
    that has declared already and rotates what it declared."""


class Round:
    """One round in progress: tableaus, foundations, declarations and the call.

    ``ended`` is None while play goes on, :attr:`Ended.NERTZ` once a seat called (moves within
    the grace window after ``called_at`` still count) or :attr:`Ended.BLOCKED`.
    """

    __slots__ = (
        "_accepting",
        "_open_piles",
        "_positions",
        "_progress",
        "_starter",
        "called_at",
        "called_by",
        "ended",
        "false_calls",
        "foundations",
        "moves_played",
        "policy",
        "resets",
        "rules",
        "stuck",
        "tableaus",
    )

    def __init__(
        self, rules: Rules, tableaus: Sequence[Tableau], check_blocked: bool = True
    ) -> None:
        self.rules = rules
        self.policy = POLICIES[rules.foundation]
        self.tableaus: list[Tableau] = list(tableaus)
        self.foundations: list[Foundation] = []
        # [suit << 4 | rank] -> 0-based indices of the foundations that take that card next: a
        # list, not a dict, so a compiled lookup is one index with no boxed key.
        self._accepting: list[list[int]] = [[] for _ in range(_KEYS)]
        self._open_piles: list[int] = []
        self.stuck: list[str] = [""] * len(self.tableaus)
        self.called_by: int | None = None
        self.called_at: int | None = None
        self.ended: Ended | None = None
        self.false_calls: list[FalseCall] = []
        self.moves_played = 0
        self.resets = 0
        self._starter = self.policy.starter
        # The cycle rule's memory: the progress mark of the stretch being played, and the
        # positions the table was in after each reset of that stretch (see _after_reset).
        self._progress: tuple[object, ...] = ()
        self._positions: frozenset[tuple[object, ...]] = frozenset()
        if check_blocked and rules.blocked_round_end and self.tableaus and self.is_blocked():
            self.ended = Ended.BLOCKED

    # ----------------------------------------------------------------- construction, copies

    @classmethod
    def from_layouts(cls, rules: Rules, layouts: Sequence[Layout]) -> Round:
        """A round dealt as ``layouts`` say, one per seat, each checked against the rules."""
        for seat, layout in enumerate(layouts):
            check_layout(rules, layout, seat)
        return cls(rules, [layout.to_tableau() for layout in layouts])

    def copy(self) -> Round:
        """An independent copy: playing on it leaves this round untouched."""
        # Through __init__ with no seats (a compiled class has no bare __new__), then filled.
        other = Round(self.rules, (), check_blocked=False)
        other.tableaus = [t.copy() for t in self.tableaus]
        other.foundations = [f.copy() for f in self.foundations]
        other._accepting = [v[:] for v in self._accepting]
        other._open_piles = self._open_piles[:]
        other.stuck = self.stuck[:]
        other.called_by = self.called_by
        other.called_at = self.called_at
        other.ended = self.ended
        other.false_calls = self.false_calls[:]
        other.moves_played = self.moves_played
        other.resets = self.resets
        other._starter = self._starter
        other._progress = self._progress
        other._positions = self._positions
        return other

    def add_foundation(self, cards: Sequence[tuple[Card, int]]) -> int:
        """Lay out a foundation as it stands, bottom card first, each with the seat that played
        it: for rebuilding a round from what a seat saw (a joker takes the rank it stood for).
        Returns its 0-based index. The cards are not taken from any tableau."""
        target = NEW_FOUNDATION
        for card, owner in cards:
            target = self._place(card, owner, target, None)
        return target

    @property
    def seats(self) -> int:
        """How many seats (players or teams) play."""
        return len(self.tableaus)

    @property
    def over(self) -> bool:
        """True once the round has been called or blocked."""
        return self.ended is not None

    # ----------------------------------------------------------------------- card helpers

    def foundation_for(self, card: Card) -> int:
        """The 0-based index of the lowest foundation ``card`` fits, ``NEW_FOUNDATION`` if it
        starts one, or ``NO_FOUNDATION`` if it fits nowhere."""
        rank = card.rank
        if rank == 0:
            return self._open_piles[0] if self._open_piles else NO_FOUNDATION
        if rank == self._starter:
            return NEW_FOUNDATION
        found = self._accepting[card.key]
        return found[0] if found else NO_FOUNDATION

    def _fits_pile(self, pile: list[Card], down: int, moving: list[Card]) -> bool:
        """Whether ``moving`` (a valid run, bottom first) may go onto a work pile."""
        if len(pile) == down:
            return True
        if not self.rules.jokers:
            top = pile[-1]
            first = moving[0]
            return first.rank == top.rank - 1 and first.red is not top.red
        return valid_run(pile[down:] + moving)

    # ------------------------------------------------------------------------ legal moves

    def legal_moves(self, seat: int) -> list[Move]:
        """Every move ``seat`` may make now, each distinct play once.

        Foundation plays are listed as ``X-Fk`` for each foundation the card fits (``X-F`` for a
        starter card, which opens a new one); whole runs as ``3-1``, partial runs as ``3:7H-1``.
        After the call the list is empty: only cards already in the air (``t`` inside the grace
        window) may still land, and :meth:`verify` decides those.
        """
        if self.ended is not None or not 0 <= seat < len(self.tableaus):
            return []
        tab = self.tableaus[seat]
        moves: list[Move] = []
        work = tab.work
        downs = tab.down
        nertz = tab.nertz[-1] if tab.nertz else None
        waste = tab.waste[-1] if tab.waste else None
        # Foundation plays from every top card: the Nertz and waste tops, then the work piles'.
        # This is the hottest code of every playout: each source is a plain call on one card,
        # the moves come from tables indexed by number (no tuples, no dictionaries).
        starter = self._starter
        accepting = self._accepting
        open_piles = self._open_piles
        if nertz is not None:
            _foundation_moves(nertz, _F_TABLE[0], starter, accepting, open_piles, moves)
        if waste is not None:
            _foundation_moves(waste, _F_TABLE[1], starter, accepting, open_piles, moves)
        for k in range(len(work)):
            pile = work[k]
            if len(pile) > downs[k]:
                c = pile[-1]
                by_number = _F_TABLE[k + 2]
                rank = c.rank
                if rank == starter:
                    moves.append(by_number[0])
                    continue
                for fi in open_piles if rank == 0 else accepting[c.key]:
                    moves.append(by_number[fi + 1])
        if self.rules.jokers:
            self._work_moves_wild(tab, nertz, waste, moves)
        else:
            _work_moves(work, downs, nertz, waste, self.rules.move_partial_runs, moves)
        if tab.stock or tab.waste:
            moves.append(TURN)
        declared = self.stuck[seat]
        if declared != "S":
            moves.append(STUCK)
        if self.rules.rotate_either and declared != "N":
            moves.append(STUCK_NERTZ)
        if (self.rules.manual_call if nertz is None else self.rules.penalised_false_call):
            moves.append(CALL)
        return moves

    def _work_moves_wild(
        self, tab: Tableau, nertz: Card | None, waste: Card | None, moves: list[Move]
    ) -> None:
        """Moves onto work piles with jokers in play: each joined run is checked whole."""
        work = tab.work
        downs = tab.down
        n_work = len(work)
        for to_pile, c in ((_W_TABLE[0], nertz), (_W_TABLE[1], waste)):
            if c is None:
                continue
            for j in range(n_work):
                if self._fits_pile(work[j], downs[j], [c]):
                    moves.append(to_pile[j])
        partial = self.rules.move_partial_runs
        for k in range(n_work):
            pile = work[k]
            d = downs[k]
            if len(pile) <= d:
                continue
            src = _PILE_NAMES[k]
            to_pile = _W_TABLE[k + 2]
            for i in range(d, len(pile) if partial else d + 1):
                moving = pile[i:]
                for j in range(n_work):
                    if j != k and self._fits_pile(work[j], downs[j], moving):
                        moves.append(to_pile[j] if i == d else to_work(src, j + 1, pile[i]))

    # ----------------------------------------------------------------- verify and apply

    def can_play(self, seat: int, move: Move | str, t: int | None = None) -> bool:
        """Whether :meth:`play` would accept the move (malformed text answers False)."""
        try:
            self.verify(seat, move, t)
        except (IllegalMoveError, NotationError):
            return False
        return True

    def verify(
        self, seat: int, move: Move | str, t: int | None = None, hand: int | None = None
    ) -> None:
        """Raise :class:`IllegalMoveError` (or :class:`LostRace`) if the move is not allowed.

        ``hand`` names the partner (0: Nertz pile, 1: stock and waste) under ``teams: split``.
        """
        if isinstance(move, str):
            move = Move.parse(move, self.rules.call_word)
        self._check(seat, move, t, hand)

    def play(
        self, seat: int, move: Move | str, t: int | None = None, hand: int | None = None
    ) -> tuple[Event, ...]:
        """Verify and make the move; return what happened. Raises and changes nothing if the
        move is illegal (text that is no move raises :class:`NotationError`)."""
        if isinstance(move, str):
            move = Move.parse(move, self.rules.call_word)
        target = self._check(seat, move, t, hand)
        return self._execute(seat, move, target, t)

    def _illegal(self, seat: int, move: Move, reason: str) -> IllegalMoveError:
        return IllegalMoveError(str(move), seat, reason)

    def _check(self, seat: int, move: Move, t: int | None, hand: int | None) -> int:
        """Everything :meth:`verify` checks; returns the resolved foundation or work pile."""
        if not 0 <= seat < len(self.tableaus):
            raise IllegalMoveError(str(move), seat, f"there is no seat {seat}")
        if self.ended is not None:
            if self.ended is Ended.BLOCKED:
                raise self._illegal(seat, move, "the round is over: every seat is blocked")
            if move.op == OP_CALL or move.op == OP_STUCK:
                raise self._illegal(
                    seat, move, f"the round is over: seat {self.called_by} called"
                )
            grace = self.rules.call_grace_ms
            if t is None or self.called_at is None or t - self.called_at >= grace:
                when = "" if self.called_at is None else f" at {self.called_at} ms"
                raise self._illegal(
                    seat, move, f"the round is over: seat {self.called_by} called{when}"
                )
        kind = move.op
        if hand is not None and self.rules.split_teams:
            self._check_hand(seat, move, hand)
        tab = self.tableaus[seat]
        if kind == OP_TO_FOUNDATION:
            card = self._source_card(seat, move, tab)
            return self._check_foundation(seat, move, card, t)
        if kind == OP_TO_WORK:
            return self._check_work(seat, move, tab)
        if kind == OP_TURN:
            if not tab.stock and not tab.waste:
                raise self._illegal(seat, move, "the stock and the waste are both empty")
            return 0
        if kind == OP_STUCK:
            if move.stuck == "N" and not self.rules.rotate_either:
                raise self._illegal(
                    seat, move, "this ruleset rotates only the stock (stuck_reset rotate_stock)"
                )
            if self.stuck[seat] == (move.stuck or "S"):
                raise self._illegal(seat, move, "this seat has already declared it is stuck")
            return 0
        # The call.
        if tab.nertz:
            if not self.rules.penalised_false_call:
                left = len(tab.nertz)
                raise self._illegal(
                    seat, move, f"the Nertz pile still holds {left} card{'s' * (left != 1)}"
                )
            return 0
        if not self.rules.manual_call:  # pragma: no cover - the pile emptying ended the round
            raise self._illegal(seat, move, "the round ends by itself under call auto")
        return 0

    def _check_hand(self, seat: int, move: Move, hand: int) -> None:
        why = hand_refusal(move, hand)
        if why is not None:
            raise self._illegal(seat, move, why)

    def _source_card(self, seat: int, move: Move, tab: Tableau) -> Card:
        src = move.src
        if src == "N":
            if not tab.nertz:
                raise self._illegal(seat, move, "the Nertz pile is empty")
            return tab.nertz[-1]
        if src == "W":
            if not tab.waste:
                raise self._illegal(seat, move, "the waste is empty")
            return tab.waste[-1]
        k = move.work_src
        if k >= len(tab.work):
            raise self._illegal(
                seat, move, f"there is no work pile {src} (this ruleset has {len(tab.work)})"
            )
        pile = tab.work[k]
        if not pile:
            raise self._illegal(seat, move, f"work pile {src} is empty")
        return pile[-1]

    def _check_foundation(self, seat: int, move: Move, card: Card, t: int | None) -> int:
        rank = card.rank
        if move.foundation == 0:
            if rank == self._starter:
                return NEW_FOUNDATION
            fi = self.foundation_for(card)
            if fi >= 0:
                return fi
            for i in range(len(self.foundations)):
                self._raise_if_race(seat, move, card, i, t)
            if rank == 0:
                raise self._illegal(seat, move, "no foundation is open for a joker")
            raise self._illegal(seat, move, f"{card} fits no foundation")
        fi = move.foundation - 1
        if fi >= len(self.foundations):
            raise self._illegal(seat, move, f"there is no foundation F{move.foundation}")
        f = self.foundations[fi]
        if rank == 0:
            if f.needs:
                return fi
            raise self._illegal(seat, move, f"F{fi + 1} is finished")
        if card.suit == f.suit and rank in f.needs:
            return fi
        self._raise_if_race(seat, move, card, fi, t)
        if rank == self._starter:
            raise self._illegal(seat, move, f"{card} starts a new foundation: play it to F")
        raise self._illegal(seat, move, f"{card} does not fit F{fi + 1} ({_describe_needs(f)})")

    def _raise_if_race(self, seat: int, move: Move, card: Card, fi: int, t: int | None) -> None:
        """Raise :class:`LostRace` if ``card`` would have fitted foundation ``fi`` but for the
        card another seat played on it last."""
        f = self.foundations[fi]
        if len(f.cards) < 2 or f.suit != card.suit or f.owners[-1] == seat:
            return
        before = f.ranks[:-1]
        direction = 0
        for i in range(1, len(before)):
            direction = self.policy.direction_after(before[:i], direction, before[i])
        if card.rank in self.policy.next_ranks(before, direction):
            raise LostRace(str(move), seat, fi + 1, f.owners[-1], f.times[-1], t)

    def _check_work(self, seat: int, move: Move, tab: Tableau) -> int:
        j = move.work_dst
        n_work = len(tab.work)
        if j >= n_work:
            raise self._illegal(
                seat, move, f"there is no work pile {move.dst} (this ruleset has {n_work})"
            )
        src = move.src
        if src in ("N", "W"):
            if move.card is not None:  # pragma: no cover - the parser refuses this
                raise self._illegal(seat, move, "only a work pile's run can be split")
            moving = [self._source_card(seat, move, tab)]
        else:
            k = move.work_src
            if k >= n_work:
                raise self._illegal(
                    seat, move, f"there is no work pile {src} (this ruleset has {n_work})"
                )
            if k == j:
                raise self._illegal(seat, move, "a pile cannot move onto itself")
            pile = tab.work[k]
            d = tab.down[k]
            if len(pile) <= d:
                raise self._illegal(seat, move, f"work pile {src} is empty")
            i = d
            if move.card is not None:
                try:
                    i = pile.index(move.card, d)
                except ValueError:
                    raise self._illegal(
                        seat, move, f"{move.card} is not face up in work pile {src}"
                    ) from None
                if i > d and not self.rules.move_partial_runs:
                    raise self._illegal(
                        seat, move, "only whole runs move in this ruleset (move_partial_runs off)"
                    )
            moving = pile[i:]
        dst = tab.work[j]
        if not self._fits_pile(dst, tab.down[j], moving):
            top = dst[-1]
            raise self._illegal(
                seat, move, f"{moving[0]} does not go on {top} (work piles go down in "
                "alternating colours)"
            )
        return j

    def _execute(self, seat: int, move: Move, target: int, t: int | None) -> tuple[Event, ...]:
        tab = self.tableaus[seat]
        kind = move.op
        events: list[Event] = []
        self.moves_played += 1
        if self.stuck[seat] and kind != OP_STUCK:
            self.stuck[seat] = ""
            events.append(StuckLapsed(seat))
        if kind == OP_TURN:
            turned = self._turn(seat, tab)
            return (*events, turned) if events else (turned,)
        if kind == OP_STUCK:
            self._declare(seat, move.stuck or "S", events)
            return tuple(events)
        if kind == OP_CALL:
            if tab.nertz:
                events.append(self._false_call(seat, tab, t))
                self._after_change(events)
            else:
                self._call(seat, t, False, events)
            return tuple(events)
        src = move.src
        k = move.work_src  # -1 for the Nertz pile and the waste
        if kind == OP_TO_FOUNDATION:
            if k >= 0:
                card = tab.work[k].pop()
            elif src == "N":
                card = tab.nertz.pop()
            else:
                card = tab.waste.pop()
            started = target == NEW_FOUNDATION
            fi = self._place(card, seat, target, t)
            events.append(CardsMoved(seat, move.text, (card,), src, "F", fi + 1, started, t))
        else:
            dst = tab.work[target]
            moved: tuple[Card, ...]
            if k >= 0:
                pile = tab.work[k]
                i = tab.down[k] if move.card is None else pile.index(move.card)
                moved = tuple(pile[i:])
                del pile[i:]
                dst.extend(moved)
            else:
                card = tab.nertz.pop() if src == "N" else tab.waste.pop()
                dst.append(card)
                moved = (card,)
            events.append(CardsMoved(seat, move.text, moved, src, move.dst, 0, False, t))
        if k >= 0:
            pile = tab.work[k]
            if pile and len(pile) == tab.down[k]:
                tab.down[k] -= 1
                events.append(CardRevealed(seat, k + 1, pile[-1]))
        if src == "N" and not tab.nertz and not self.rules.manual_call and self.ended is None:
            self._call(seat, t, True, events)
            return tuple(events)
        if self.ended is None:
            self._after_change(events)
        return tuple(events)

    def _place(self, card: Card, seat: int, target: int, t: int | None) -> int:
        if target == NEW_FOUNDATION:
            f = Foundation(card.suit)
            fi = len(self.foundations)
            self.foundations.append(f)
            f.ranks.append(card.rank)
            f.cards.append(card)
            f.owners.append(seat)
            f.times.append(t)
            f.needs = self.policy.next_ranks(f.ranks, 0)
            self._index(fi, (), f)
            return fi
        f = self.foundations[target]
        old = f.needs
        rank = card.rank or old[0]
        f.direction = self.policy.direction_after(f.ranks, f.direction, rank)
        f.ranks.append(rank)
        f.cards.append(card)
        f.owners.append(seat)
        f.times.append(t)
        f.needs = self.policy.next_ranks(f.ranks, f.direction)
        self._index(target, old, f)
        return target

    def _index(self, fi: int, old: tuple[int, ...], f: Foundation) -> None:
        accepting = self._accepting
        base = f.suit << 4
        for rank in old:
            accepting[base | rank].remove(fi)
        for rank in f.needs:
            insort(accepting[base | rank], fi)
        if old and not f.needs:
            self._open_piles.remove(fi)
        elif f.needs and not old:
            insort(self._open_piles, fi)

    def _turn(self, seat: int, tab: Tableau) -> StockTurned:
        n = self.rules.turn_count
        stock = tab.stock
        waste = tab.waste
        recycled = False
        if not self.rules.continuous_stock:
            if not stock:
                waste.reverse()
                tab.stock, tab.waste = waste, []
                return StockTurned(seat, 0, True, None)
            # The top cards, taken in turn, land on the waste: the stock's end, reversed.
            count = min(n, len(stock))
            packet = stock[-count:]
            del stock[-count:]
            packet.reverse()
            waste += packet
        else:
            count = min(n, len(stock))
            for _ in range(count):
                waste.append(stock.pop())
            if count < n:
                # Continuous: the waste goes back over into the stock and the turn completes.
                recycled = True
                waste.reverse()
                stock = waste
                waste = []
                for _ in range(min(n - count, len(stock))):
                    waste.append(stock.pop())
                tab.stock, tab.waste = stock, waste
                count = n
        return StockTurned(seat, count, recycled, tab.waste[-1] if tab.waste else None)

    def _declare(self, seat: int, pile: str, events: list[Event]) -> None:
        self.stuck[seat] = pile
        events.append(StuckDeclared(seat, pile))
        if all(self.stuck):
            # The reset happens the moment the last seat declares (docs/rules.md). The cycle
            # rule counts only resets of a table that was truly stuck, one after another: seats
            # that could play but declared are choosing to go round, as SPEC lets them, and a
            # table that had a play on offer has not come round with nothing to do.
            cycling = self.rules.blocked_round_end and self.all_stuck()
            events.append(self._reset())
            if cycling:
                self._after_reset(events)
            else:
                self._positions = frozenset()

    def _reset(self) -> ResetDone:
        """Rotate every seat's declared pile and clear all declarations (SPEC ``stuck_reset``):
        every seat has declared, so each declaration says which pile."""
        chosen = tuple(self.stuck)
        either = self.rules.rotate_either
        for tab, pile in zip(self.tableaus, chosen, strict=True):
            if either and pile == "N":
                if tab.nertz:
                    tab.nertz.insert(0, tab.nertz.pop())
                continue
            if either:
                if not tab.stock and tab.waste:
                    tab.waste.reverse()
                    tab.stock, tab.waste = tab.waste, []
            else:
                # The waste goes back over onto the stock: the stock is as if nothing was turned.
                tab.waste.reverse()
                tab.stock.extend(tab.waste)
                tab.waste = []
            if tab.stock:
                tab.stock.insert(0, tab.stock.pop())
        self.stuck = [""] * len(self.tableaus)
        self.resets += 1
        return ResetDone(chosen)

    def _false_call(self, seat: int, tab: Tableau, t: int | None) -> FalseCallPenalty:
        taken: list[Card] = []
        for _ in range(3):
            if not tab.stock:
                if not tab.waste:
                    break
                tab.waste.reverse()
                tab.stock, tab.waste = tab.waste, []
            taken.append(tab.stock.pop())
        # The stock's top card (the first taken) ends on top of the Nertz pile.
        tab.nertz.extend(reversed(taken))
        each = FALSE_CALL_PAYMENT
        if self.rules.card_points == "aces_double" and any(c.rank == 1 for c in taken):
            each *= 2
        self.false_calls.append(FalseCall(seat, each, t))
        return FalseCallPenalty(seat, tuple(reversed(taken)), each)

    def _call(self, seat: int, t: int | None, auto: bool, events: list[Event]) -> None:
        self.called_by = seat
        self.called_at = t
        self.ended = Ended.NERTZ
        events.append(Called(seat, t, auto, self.rules.call_word))
        events.append(RoundEnded(Ended.NERTZ, seat))

    def _after_change(self, events: list[Event]) -> None:
        if self.rules.blocked_round_end and self.is_blocked():
            self._block(events)

    def _block(self, events: list[Event]) -> None:
        self.ended = Ended.BLOCKED
        events.append(RoundEnded(Ended.BLOCKED, None))

    # ------------------------------------------------------------------------ the referee

    def ruling(self) -> Ruling | None:
        """What :meth:`settle` would do now, without doing it (python-chess's ``outcome()``):
        None while the round is over or some seat can still make progress on its own.

        A table owner that logs its decisions (the server) asks this, stores the ruling, and
        applies it with ``settle(t, ruling.piles)``, so that a rebuild applies the same one.
        """
        if self.ended is not None or not self.all_stuck():
            return None
        if self.rules.blocked_round_end and self.is_blocked():
            return Ruling(True)
        return Ruling(False, tuple(
            "" if self.stuck[s] else self.reset_choice(s) for s in range(self.seats)
        ))

    def settle(self, t: int | None = None, piles: Sequence[str] | None = None) -> tuple[Event, ...]:
        """Settle what happens next with nobody's move, and return what happened: the one
        referee every table owner (server, simulator, environment) calls after any change.

        - the round is over, or some seat can still make progress on its own: nothing;
        - every seat is stuck (:meth:`all_stuck`) and the round is blocked (SPEC
          ``blocked_round_end``; normally the move that blocked it ended it already): it ends;
        - every seat is stuck: the table resets at once, as the seats' own declarations would
          make it. Each seat that has not declared declares for itself (``StuckDeclared``)
          the pile :meth:`reset_choice` picks, and the last declaration resets the table
          (``ResetDone``, then ``RoundEnded`` if the reset brought back a position the table
          was in after an earlier reset of a stuck table, with nothing productive in between:
          the cycle rule of docs/rules.md). The declarations are moves of the round
          (``moves_played``), so a replay file that records them as ``STUCK``/``STUCK N``
          replays the same reset.

        ``piles`` (a :class:`Ruling`'s: one ``N``/``S`` per seat, ``""`` or a declared seat's
        ignored) applies a reset already ruled, without asking again: for a server applying
        its log.
        """
        if self.ended is not None:
            return ()
        if piles is None:
            ruling = self.ruling()
            if ruling is None:
                return ()
            if ruling.blocked:
                events: list[Event] = []
                self._block(events)
                return tuple(events)
            piles = ruling.piles
        elif len(piles) != self.seats:
            raise ValueError(f"{len(piles)} piles for {self.seats} seats")
        out: list[Event] = []
        for seat, pile in enumerate(piles):
            if self.stuck[seat] or not pile or self.ended is not None:
                continue
            out.extend(self.play(seat, STUCK_NERTZ if pile == "N" else STUCK, t))
        return tuple(out)

    def reset_choice(self, seat: int) -> str:
        """The pile (``N`` or ``S``) a reset should rotate for ``seat``: one that can help.

        Under ``rotate_stock`` only the stock rotates. Under ``rotate_either``, ``N`` when a card
        under the Nertz top could be played productively once it comes up (to a foundation, or
        onto a work pile), else ``S``. The Nertz pile first, because only its rotation is sure to
        bring every card up in turn: nothing else reorders it, while the waste stays put under
        a stock rotation. (Declared seats rotate what they declared.)
        """
        tab = self.tableaus[seat]
        either = self.rules.rotate_either
        if either and len(tab.nertz) > 1 and self._pool_helps(tab, tab.nertz[:-1]):
            return "N"
        return "S"

    def _after_reset(self, events: list[Event]) -> None:
        """The cycle rule, after a reset of a table whose every seat was stuck: a reset that
        brings the table back to a position it was in after an earlier such reset, with nothing
        productive in between, ends the round ``blocked``.

        Progress (the mark) is what no move undoes: cards on the foundations, each seat's Nertz
        and stock-plus-waste sizes and face-down count. Within one stretch of equal marks, the
        position that matters is each seat's whole tableau (pile by pile, card by card), but only
        for the seats that could still progress at all (:meth:`is_blocked`'s per-seat test): what
        a seat that can never play again does with its stock changes nothing, and counting it
        would let its stock's own cycle hide the table's.
        """
        if self.ended is not None:
            return
        mark = (
            sum(len(f.cards) for f in self.foundations),
            tuple((len(t.nertz), len(t.stock) + len(t.waste), sum(t.down))
                  for t in self.tableaus),
        )
        position = tuple(
            (tuple(t.nertz), tuple(t.stock), tuple(t.waste), tuple(map(tuple, t.work)))
            if self._can_progress(s, resets=True) else None
            for s, t in enumerate(self.tableaus)
        )
        if mark != self._progress or not self._positions:
            self._progress = mark
            self._positions = frozenset((position,))
        elif position in self._positions:
            self._block(events)
        else:
            self._positions = self._positions | {position}

    # ----------------------------------------------------------------- stuck and blocked

    def is_stuck(self, seat: int) -> bool:
        """Exact: True when ``seat`` has no productive move now nor after any number of its own
        turns and work-pile rearrangements (other seats' plays might still free it).

        Productive (SPEC ``blocked_round_end``): a card to a foundation, a card out of the Nertz
        pile, a stock card onto a work pile, a work-pile move that turns up a face-down card or
        empties a pile while the Nertz pile has cards; a seat that may call is not stuck.
        """
        return not self._can_progress(seat, resets=False)

    def all_stuck(self) -> bool:
        """True when every seat :meth:`is_stuck`: the moment for a reset."""
        return all(self.is_stuck(s) for s in range(len(self.tableaus)))

    def is_blocked(self) -> bool:
        """True when no seat has a productive move now or after any number of its own turns and
        resets: nothing can ever reach a foundation or leave a Nertz pile again."""
        return all(not self._can_progress(s, True) for s in range(len(self.tableaus)))

    def _reachable_stock_cards(self, tab: Tableau, resets: bool) -> list[Card]:
        """Stock and waste cards the seat can bring to the waste's top by turning (and resets,
        which rotate the stock so that every card comes up in time)."""
        if resets:
            return tab.stock + tab.waste
        cycle = tab.waste + tab.stock[::-1]
        size = len(cycle)
        if not size:
            return []
        n = self.rules.turn_count
        continuous = self.rules.continuous_stock
        seen: set[int] = set()
        tops: list[Card] = []
        w = len(tab.waste)
        while w not in seen:
            seen.add(w)
            if w:
                tops.append(cycle[w - 1])
            left = size - w
            if left >= n:
                w += n
            elif continuous:
                w = min(n - left, size)
            else:
                w = size if left else 0
        return tops

    def _can_progress(self, seat: int, resets: bool) -> bool:
        tab = self.tableaus[seat]
        if not tab.nertz:
            # An empty pile can call (manual); under auto the round is over already.
            return True
        if resets:
            # Asked for every seat after every move (is_blocked): the common answer, some card
            # fits a foundation, comes first and without building the pool.
            nertz = tab.nertz if self.rules.rotate_either else tab.nertz[-1:]
            if self._any_fits((nertz, tab.stock, tab.waste)):
                return True
            return self._work_helps(tab, nertz + tab.stock + tab.waste)
        return self._pool_helps(tab, tab.nertz[-1:] + self._reachable_stock_cards(tab, False))

    def _any_fits(self, piles: tuple[list[Card], ...]) -> bool:
        """Whether some card of ``piles`` fits a foundation now (or starts one)."""
        starter = self._starter
        accepting = self._accepting
        for cards in piles:
            for c in cards:
                rank = c.rank
                if rank == starter:
                    return True
                if rank == 0:
                    if self._open_piles:
                        return True
                elif accepting[c.key]:
                    return True
        return False

    def _pool_helps(self, tab: Tableau, pool: list[Card]) -> bool:
        """Whether the seat has a productive play once any one card of ``pool`` (cards of its
        Nertz pile, stock or waste) is on top of its pile: to a foundation, or onto a work pile,
        now or after rearranging its work piles. (Plays that need no card of the pool count too;
        a stuck seat has none.)"""
        # The common answer first, cheaply: some card fits a foundation.
        return self._any_fits((pool,)) or self._work_helps(tab, pool)

    def _work_helps(self, tab: Tableau, pool: list[Card]) -> bool:
        """:meth:`_pool_helps` once no card of ``pool`` fits a foundation: a productive play
        onto or between the work piles, now or after rearranging them."""
        work = tab.work
        down = tab.down
        if self._productive_work(work, down, pool):
            return True
        if not self.rules.move_partial_runs:
            return False
        return self._search_rearrangements(work, down, pool)

    def _productive_work(
        self, work: list[list[Card]], down: list[int], pool: list[Card]
    ) -> bool:
        n = len(work)
        for j in range(n):
            pile = work[j]
            if len(pile) == down[j]:
                if pool:
                    return True
                continue
            if self.foundation_for(pile[-1]) != NO_FOUNDATION:
                return True
            for c in pool:
                if self._fits_pile(pile, down[j], [c]):
                    return True
        # A whole run moving off a pile reveals a card or empties it (the Nertz pile has cards).
        for k in range(n):
            pile = work[k]
            d = down[k]
            if len(pile) <= d:
                continue
            run = pile[d:]
            for j in range(n):
                if j != k and len(work[j]) > 0 and self._fits_pile(work[j], down[j], run):
                    return True
        return False

    def _search_rearrangements(
        self, work: list[list[Card]], down: list[int], pool: list[Card]
    ) -> bool:
        """Breadth-first over partial-run moves, which change nothing productive themselves but
        may uncover a card that plays."""
        start = tuple(tuple(p) for p in work)
        seen = {start}
        frontier = [start]
        while frontier:
            nxt = []
            for state in frontier:
                for k, pile in enumerate(state):
                    d = down[k]
                    for i in range(d + 1, len(pile)):
                        moving = list(pile[i:])
                        for j, other in enumerate(state):
                            if j == k or not other:
                                continue
                            if not self._fits_pile(list(other), down[j], moving):
                                continue
                            new = list(state)
                            new[k] = pile[:i]
                            new[j] = other + pile[i:]
                            key = tuple(new)
                            if key in seen:
                                continue
                            seen.add(key)
                            lists = [list(p) for p in key]
                            if self._productive_work(lists, down, pool):
                                return True
                            if len(seen) > _BFS_LIMIT:
                                return True
                            nxt.append(key)
            frontier = nxt
        return False


# ---------------------------------------------------------------------------- helpers

_PILE_NAMES: Final = ("1", "2", "3", "4", "5")
_SOURCES: Final = ("N", "W", *_PILE_NAMES)
"""The sources of a play by number: 0 the Nertz pile, 1 the waste, 2 + k work pile k."""

_W_TABLE: Final[list[list[Move]]] = [[to_work(src, j + 1) for j in range(5)] for src in _SOURCES]
"""``_W_TABLE[source][j]`` is ``src-(j+1)``: shared move values, found by number."""

_MAX_FOUNDATIONS: Final = 33
"""Foundations start only with starter cards: at most 4 a deck, 8 decks (jokers start none)."""
_F_TABLE: Final[list[list[Move]]] = [
    [to_foundation(src, n) for n in range(_MAX_FOUNDATIONS + 1)] for src in _SOURCES
]
"""``_F_TABLE[source][k]`` is ``src-Fk`` (k 0 is the bare ``src-F``): shared move values."""

_PARTIAL: Final[list[Move | None]] = [None] * (5 * 5 * _KEYS)
"""Partial-run moves ``k:card-j`` of non-joker cards, at ``(k * 5 + j) * 64 + card.key``
(0-based piles), made on first use: a list index instead of a dictionary and its tuple key."""


def _foundation_moves(
    c: Card,
    by_number: list[Move],
    starter: int,
    accepting: list[list[int]],
    open_piles: list[int],
    moves: list[Move],
) -> None:
    """Append the plays of ``c`` to the foundations (``by_number``: its source's row of
    :data:`_F_TABLE`)."""
    rank = c.rank
    if rank == starter:
        moves.append(by_number[0])
        return
    found = open_piles if rank == 0 else accepting[c.key]
    for fi in found:
        moves.append(by_number[fi + 1])


def _card_to_work(
    c: Card,
    filled: list[tuple[int, int, bool]],
    empties: list[int],
    to_pile: list[Move],
    moves: list[Move],
) -> None:
    """Append the plays of one card (the Nertz or waste top) onto work piles, jokers out of
    play: onto each top one rank higher of the other colour, then onto each empty pile."""
    need = c.rank + 1
    red = c.red
    for j, rank, top_red in filled:
        if rank == need and top_red is not red:
            moves.append(to_pile[j])
    for j in empties:
        moves.append(to_pile[j])


def _work_moves(
    work: list[list[Card]],
    downs: list[int],
    nertz: Card | None,
    waste: Card | None,
    partial: bool,
    moves: list[Move],
) -> None:
    """Moves onto work piles without jokers. A face-up run goes down by one in alternating
    colours, so the one card of a run that could go onto a given top is found by arithmetic
    (its rank fixes its place in the run), not by scanning the run."""
    # Each non-empty pile as (index, top rank, top colour); and the empty piles.
    filled: list[tuple[int, int, bool]] = []
    empties: list[int] = []
    for j, pile in enumerate(work):
        if pile:
            top = pile[-1]
            filled.append((j, top.rank, top.red))
        else:
            empties.append(j)
    if nertz is not None:
        _card_to_work(nertz, filled, empties, _W_TABLE[0], moves)
    if waste is not None:
        _card_to_work(waste, filled, empties, _W_TABLE[1], moves)
    for k, pile in enumerate(work):
        d = downs[k]
        size = len(pile)
        if size <= d:
            continue
        to_pile = _W_TABLE[k + 2]
        row = k * 5 * _KEYS  # pile k's partial-run moves in _PARTIAL (looked up inline)
        base = pile[d].rank + d + 1  # the card that goes on a top of rank r is pile[base - r]
        for j, rank, top_red in filled:
            i = base - rank
            if d <= i < size and j != k and pile[i].red is not top_red:
                if i == d:
                    moves.append(to_pile[j])
                elif partial:
                    c = pile[i]
                    at = row + j * _KEYS + c.key
                    move = _PARTIAL[at]
                    if move is None:
                        move = _PARTIAL[at] = to_work(_PILE_NAMES[k], j + 1, c)
                    moves.append(move)
        for j in empties:
            moves.append(to_pile[j])
            if partial:
                for i in range(d + 1, size):
                    c = pile[i]
                    at = row + j * _KEYS + c.key
                    move = _PARTIAL[at]
                    if move is None:
                        move = _PARTIAL[at] = to_work(_PILE_NAMES[k], j + 1, c)
                    moves.append(move)


def _describe_needs(f: Foundation) -> str:
    from nertz.cards import SUITS, rank_name

    if not f.needs:
        return "it is finished"
    return "it takes " + " or ".join(rank_name(r) + SUITS[f.suit] for r in f.needs)


def valid_run(run: Sequence[Card]) -> bool:
    """Whether ``run`` (bottom first) goes down by one in alternating colours, jokers wild."""
    anchor = -1
    for i, c in enumerate(run):
        if c.rank:
            anchor = i
            break
    if anchor < 0:
        return len(run) <= 13
    a = run[anchor]
    if a.rank + anchor > 13 or a.rank - (len(run) - 1 - anchor) < 1:
        return False
    for i in range(anchor + 1, len(run)):
        c = run[i]
        if c.rank and (c.rank != a.rank - (i - anchor) or (c.red != a.red) != ((i - anchor) & 1)):
            return False
    return True


def check_layout(rules: Rules, layout: Layout, seat: int, nertz_size: int | None = None) -> None:
    """Refuse a layout that does not fit the rules, naming the problem (``NotationError``)."""
    from collections import Counter

    from nertz.cards import deck

    who = f"seat {seat}"
    size = rules.nertz_pile_size if nertz_size is None else nertz_size
    if len(layout.nertz) != size:
        raise NotationError(
            f"{who}: the Nertz pile has {len(layout.nertz)} cards, the rules deal {size}"
        )
    if len(layout.work) != rules.work_piles:
        raise NotationError(
            f"{who}: {len(layout.work)} work piles, the rules have {rules.work_piles}"
        )
    for k, pile in enumerate(layout.work, start=1):
        ups = [up for _, up in pile]
        if any(ups[i] and not ups[i + 1] for i in range(len(ups) - 1)):
            raise NotationError(f"{who}: work pile {k} has a face-down card above a face-up one")
        if pile and not ups[-1]:
            raise NotationError(f"{who}: work pile {k} has no face-up card on top")
        run = [c for c, up in pile if up]
        if not valid_run(run):
            raise NotationError(
                f"{who}: work pile {k}'s face-up cards "
                f"({' '.join(map(str, run))}) are not a run down in alternating colours"
            )
    counts = Counter(layout.nertz + layout.stock + layout.waste + tuple(
        c for pile in layout.work for c, _ in pile))
    for c, n in counts.items():
        if n > 1:
            raise NotationError(f"{who}: card {c} appears {n} times")
    expected = deck(rules.jokers)
    for c in expected:
        if c not in counts:
            raise NotationError(f"{who}: card {c} is missing")
    for c in counts:
        if c.rank == 0 and not rules.jokers:
            raise NotationError(f"{who}: card {c} is a joker and this ruleset has none")


def hand_refusal(move: Move, hand: int) -> str | None:
    """Why partner ``hand`` may not make ``move`` under ``teams: split`` (partner 0 plays the
    Nertz pile, partner 1 the stock and waste, both the work piles), or None if it may."""
    if hand not in (0, 1):
        return f"there is no partner {hand} (0 or 1)"
    if hand == 0 and (move.op == OP_TURN or move.src == "W"):
        return "under split teams the stock and waste are the other partner's"
    if hand == 1 and move.src == "N":
        return "under split teams the Nertz pile is the other partner's"
    return None


def apply(
    rnd: Round, seat: int, move: Move | str, t: int | None = None, hand: int | None = None
) -> tuple[Round, tuple[Event, ...]]:
    """The pure form of :meth:`Round.play`: a new round and the events; ``rnd`` is untouched."""
    if isinstance(move, str):
        move = Move.parse(move, rnd.rules.call_word)
    target = rnd._check(seat, move, t, hand)
    new = rnd.copy()
    return new, new._execute(seat, move, target, t)


def play_all(rnd: Round, moves: Iterable[tuple[int, Move | str]]) -> list[tuple[Event, ...]]:
    """Play ``(seat, move)`` pairs in order; raises on the first illegal one."""
    return [rnd.play(seat, move) for seat, move in moves]
