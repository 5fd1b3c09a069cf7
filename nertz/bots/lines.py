"""A search of the seat's own line in one sampled world: a small beam over its own moves.

The expert's rollouts judge each candidate move by one fixed continuation (the engine's simple
greedy playout), which spends the rest of the rollout as a weak player would. Here each
candidate's continuation is searched instead: from the position after the candidate, a beam of
``width`` lines is grown move by move, the seat's own choices branching (which pile takes the
Nertz top, the waste top, a work-pile card to a foundation, a productive run move, turning on),
and the candidate is worth the best line found before the horizon. Time is counted as in the
rollouts: a card move is 1, a stock turn ``turn_time``; for each card move's time every other
seat plays a top card that fits a foundation, as it comes to fit. Turning is one step that goes
on turning until something can be played (a whole pass at most), so a line is not lost in a
chain of single turns that earn nothing.

No hidden card is read: the world is a :func:`~nertz.bots.base.sample_world` sample, and the
search is deterministic given it (the stock order is the sample's).
"""

from __future__ import annotations

from typing import Final

from nertz.bots.heuristic import NAMES, NOWHERE, foundation_move
from nertz.engine import Round
from nertz.errors import IllegalMoveError
from nertz.moves import TURN, Kind, Move, to_work

NERTZ_REWARD: Final = 5.0
"""A card out of the Nertz pile (the rollouts' figure)."""
FOUNDATION_REWARD: Final = 1.0
"""A card onto a foundation."""
REVEAL_REWARD: Final = 0.5
"""A face-down work card turned up."""
CALL_REWARD: Final = 10.0
"""The Nertz pile emptied."""
DISCOUNT: Final = 0.8
"""Per card move's time: the same progress sooner is worth more."""


class Line:
    """One line of play in a world: the world as it stands after the line, and its bookkeeping."""

    __slots__ = ("changed", "clock", "credit", "done", "moved", "value", "weight", "world")

    def __init__(self, world: Round) -> None:
        self.world = world
        self.value = 0.0
        """Discounted reward so far."""
        self.weight = 1.0
        """The discount reached: the weight of the next reward."""
        self.clock = 0.0
        """The seat's time spent, in card moves."""
        self.credit = 0.0
        """Time the other seats have had since they last played."""
        self.changed = True
        """A foundation grew since the other seats last looked."""
        self.done = False
        """The line ended: the horizon, the pile emptied, or a refused move."""
        self.moved: tuple[Move, ...] = ()
        """Work-to-work moves made since the last productive play (not made again: no loops)."""

    def branch(self) -> Line:
        """A copy that can be played on without touching this line."""
        other = Line(self.world.copy())
        other.value = self.value
        other.weight = self.weight
        other.clock = self.clock
        other.credit = self.credit
        other.changed = self.changed
        other.moved = self.moved
        return other


class LineSearch:
    """The beam search (see the module docstring); one per decision's settings."""

    def __init__(self, seat: int, horizon: float, turn_time: float, width: int) -> None:
        self.seat = seat
        self.horizon = horizon
        self.turn_time = turn_time
        self.turn_discount = DISCOUNT**turn_time
        self.width = width
        self.lines = 0
        """Lines branched so far (the cost: one copy of the round each)."""

    def value(self, world: Round, first: Move, budget: int) -> float:
        """The best discounted reward found for ``first`` then the searched line, branching at
        most ``budget`` lines."""
        root = Line(world)
        self.step(root, first)
        best = root.value if root.done else float("-inf")
        frontier = [] if root.done else [root]
        spent = 0
        width = self.width
        while frontier:
            children: list[Line] = []
            for line in frontier:
                options = self.options(line)
                if not options:
                    best = max(best, line.value)
                    continue
                # The alternatives are copies, made before the line itself moves on by its
                # first option (greedy's priority): out of budget, that is all that goes on.
                pairs: list[tuple[Line, Move]] = []
                for move in options[1:]:
                    if spent >= budget:
                        break
                    pairs.append((line.branch(), move))
                    spent += 1
                pairs.insert(0, (line, options[0]))
                for child, move in pairs:
                    self.step(child, move)
                    if child.done:
                        best = max(best, child.value)
                    else:
                        children.append(child)
            if not children:
                break
            # Stable: among equal lines the one whose move came first in the options' order
            # (greedy's priorities) stays.
            children.sort(key=_value, reverse=True)
            frontier = children[:width]
        self.lines += spent
        return best

    def options(self, line: Line) -> list[Move]:
        """The seat's moves worth branching on, in greedy's order of priority."""
        w = line.world
        seat = self.seat
        tab = w.tableaus[seat]
        if not tab.nertz or w.ended is not None:
            return []
        top = tab.nertz[-1]
        move = foundation_move(w, "N", top)
        if move is not None:
            return [move]
        waste = tab.waste[-1] if tab.waste else None
        if waste is not None:
            move = foundation_move(w, "W", waste)
            if move is not None:
                return [move]
        work = tab.work
        down = tab.down
        out: list[Move] = []
        empty = -1
        for j, pile in enumerate(work):
            if not pile:
                if empty < 0:
                    empty = j
            elif w._fits_pile(pile, down[j], [top]):
                out.append(to_work("N", j + 1))
        if empty >= 0:
            out.append(to_work("N", empty + 1))
        if out:
            return out  # the Nertz top goes onto a pile: only which pile is a choice
        for k, pile in enumerate(work):
            if len(pile) > down[k]:
                move = foundation_move(w, NAMES[k], pile[-1])
                if move is not None:
                    out.append(move)
        out += self.plan(w, line.moved)
        if waste is not None:
            for j, pile in enumerate(work):
                if pile and w._fits_pile(pile, down[j], [waste]):
                    out.append(to_work("W", j + 1))
        if tab.stock or tab.waste:
            out.append(TURN)
        return out

    def plan(self, w: Round, moved: tuple[Move, ...]) -> list[Move]:
        """Work-to-work moves (partial runs too) that empty a pile, turn up a face-down card,
        or bring up a card that takes the Nertz top or fits a foundation."""
        tab = w.tableaus[self.seat]
        target = tab.nertz[-1]
        down = tab.down
        partial = w.rules.move_partial_runs
        wild = w.rules.jokers
        out: list[Move] = []
        piles = tab.work
        for j, other in enumerate(piles):
            dj = down[j]
            if len(other) <= dj:
                continue
            top = other[-1]
            for k, pile in enumerate(piles):
                d = down[k]
                if k == j or len(pile) <= d:
                    continue
                if wild:
                    first = d
                    last = len(pile) - 1 if partial else d
                else:
                    # Without jokers a run goes down by one: the one card of run k that goes
                    # onto pile j's top sits where its rank says.
                    first = last = d + pile[d].rank - top.rank + 1
                    if first < d or first >= len(pile) or (first > d and not partial):
                        continue
                for i in range(first, last + 1):
                    if not w._fits_pile(other, dj, pile[i:]):
                        continue
                    move = to_work(NAMES[k], j + 1, None if i == d else pile[i])
                    if move in moved:
                        continue
                    if (
                        i == d
                        or w.foundation_for(pile[i - 1]) != NOWHERE
                        or w._fits_pile(pile[:i], d, [target])
                    ):
                        out.append(move)
        return out

    def step(self, line: Line, move: Move) -> None:
        """Play ``move`` (a turn goes on until something can be played) and let time pass."""
        w = line.world
        tab = w.tableaus[self.seat]
        if move is TURN:
            # Turn on while nothing new can be played, a pass at most: one choice, not many.
            turns = (len(tab.stock) + len(tab.waste)) // max(1, w.rules.turn_count) + 2
            for _ in range(turns):
                if not self._play(line, TURN) or line.done:
                    return
                if self._playable(w):
                    return
            return
        self._play(line, move)

    def _playable(self, w: Round) -> bool:
        """Something besides turning: a card for a foundation, or a place for the Nertz top or
        the waste top."""
        tab = w.tableaus[self.seat]
        top = tab.nertz[-1]
        if w.foundation_for(top) != NOWHERE:
            return True
        waste = tab.waste[-1] if tab.waste else None
        if waste is not None and w.foundation_for(waste) != NOWHERE:
            return True
        for k, pile in enumerate(tab.work):
            if not pile:
                return True
            d = tab.down[k]
            if len(pile) > d and w.foundation_for(pile[-1]) != NOWHERE:
                return True
            if w._fits_pile(pile, d, [top]):
                return True
            if waste is not None and w._fits_pile(pile, d, [waste]):
                return True
        return False

    def _play(self, line: Line, move: Move) -> bool:
        """One move and its time; False (and the line done) if the world refuses it."""
        w = line.world
        seat = self.seat
        tab = w.tableaus[seat]
        nertz = len(tab.nertz)
        down = sum(tab.down)
        try:
            w.play(seat, move)
        except IllegalMoveError:
            line.done = True
            return False
        kind = move.kind
        gain = FOUNDATION_REWARD if kind is Kind.TO_FOUNDATION else 0.0
        if len(tab.nertz) < nertz:
            gain += NERTZ_REWARD
        if sum(tab.down) < down:
            gain += REVEAL_REWARD
        if kind is Kind.TO_WORK and move.src.isdigit() and gain == 0.0:
            line.moved = (*line.moved, move)
        elif kind is not Kind.TURN:
            line.moved = ()
        if not tab.nertz:
            line.value += line.weight * (gain + CALL_REWARD)
            line.done = True
            return True
        line.value += line.weight * gain
        card = kind is Kind.TO_FOUNDATION or kind is Kind.TO_WORK
        cost = 1.0 if card else self.turn_time
        line.weight *= DISCOUNT if card else self.turn_discount
        line.clock += cost
        if line.clock >= self.horizon - 1e-9:
            line.done = True
            return True
        if kind is Kind.TO_FOUNDATION:
            line.changed = True
        line.credit += cost
        if line.credit < 1.0 - 1e-9:
            return True
        line.credit -= 1.0
        if line.changed:
            line.changed = False
            for s in range(w.seats):
                if s == seat:
                    continue
                play = first_foundation_play(w, s)
                if play is not None:
                    w.play(s, play)
                    line.changed = True
                    if w.ended is not None:
                        line.done = True
                        return True
        return True


def _value(line: Line) -> float:
    return line.value


def first_foundation_play(rnd: Round, seat: int) -> Move | None:
    """The seat's first foundation play in greedy's order (Nertz top, waste top, work tops)."""
    tab = rnd.tableaus[seat]
    if tab.nertz:
        move = foundation_move(rnd, "N", tab.nertz[-1])
        if move is not None:
            return move
    if tab.waste:
        move = foundation_move(rnd, "W", tab.waste[-1])
        if move is not None:
            return move
    for k, (pile, d) in enumerate(zip(tab.work, tab.down, strict=True)):
        if len(pile) > d:
            move = foundation_move(rnd, NAMES[k], pile[-1])
            if move is not None:
                return move
    return None
