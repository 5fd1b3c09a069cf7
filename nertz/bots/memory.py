"""What a seat remembers of its own stock: the waste tops it has seen, in the order they came.

A player who has turned through the stock once has seen every card that showed on the waste, and
turning does not reorder the stock: the next pass brings the same cards up in the same order (a
reset turns the whole stock over and moves one card, which only shifts the order by one). So a
bot may remember, per place in its stock, the card it saw there; that is what a person at the
table knows too, and nothing more.

The stock and waste are kept as one *cycle*: the waste bottom to top, then the stock top to
bottom, the order in which the cards come up. Turning only moves the boundary ``w`` (the waste's
size) along the cycle, the waste top going away takes the card before the boundary out, and a
reset (``rotate_stock``) moves the boundary to 0 and the cycle's first card to its end.

:class:`StockMemory` is fed only what the seat's view shows of its own tableau (the stock and
waste counts and the waste top), at every decision. It does not need to know which of its moves
landed (a move may lose a race) nor whether the table reset (a view does not say): it keeps the
few histories consistent with what it saw (nothing happened, a turn, the waste top played, each
possibly followed by a reset) and lets each new waste top rule out the wrong ones. If none fits
(a ruling it does not model), it forgets and starts again from what it sees. Either way it never
holds a card the seat was not shown, and it answers the same whether the bot is fed the live
round or a view, as it reads only the counts and the top.
"""

from __future__ import annotations

from typing import Final

from nertz.cards import Card
from nertz.rules import Rules

MAX_HISTORIES: Final = 6
"""Histories kept at once: a reset with an empty waste looks like nothing happening, so a few
stay open until a waste top tells them apart (more would cost time and hardly ever help)."""

Cycle = tuple[Card | None, ...]
"""The stock and waste in the order they come up; None where the seat has not seen the card."""


class StockMemory:
    """The cards of a seat's stock and waste that it has seen, by their place in the cycle."""

    __slots__ = ("_continuous", "_histories", "_reset", "_turn_count")

    def __init__(self, rules: Rules) -> None:
        self._turn_count = rules.turn_count
        self._continuous = rules.stock_end == "continuous"
        self._reset = rules.stuck_reset
        self._histories: list[tuple[Cycle, int]] = []

    def clear(self) -> None:
        """Forget everything (a new round)."""
        self._histories = []

    def observe(self, stock_count: int, waste_count: int, waste_top: Card | None) -> None:
        """Take in what the seat sees now of its own stock and waste."""
        size = stock_count + waste_count
        kept: list[tuple[Cycle, int]] = []
        seen: set[tuple[Cycle, int]] = set()
        for cycle, w in self._histories:
            for nxt in self._successors(cycle, w):
                if nxt in seen:
                    continue
                seen.add(nxt)
                fitted = _fit(nxt, size, waste_count, waste_top)
                if fitted is not None and fitted not in kept:
                    kept.append(fitted)
            if len(kept) >= MAX_HISTORIES:
                break
        if not kept:
            fresh: list[Card | None] = [None] * size
            if waste_top is not None and waste_count:
                fresh[waste_count - 1] = waste_top
            kept = [(tuple(fresh), waste_count)]
        self._histories = kept[:MAX_HISTORIES]

    def cycle(self) -> Cycle | None:
        """The stock and waste as remembered (the waste bottom to top, then the stock top to
        bottom), or None before the first observation.

        While several histories remain open, the likeliest (the fewest resets) is given: a
        reset is rare, and the next waste top nearly always settles it. Giving only the places
        where all histories agree would forget the whole stock at every turn back over."""
        return self._histories[0][0] if self._histories else None

    def known(self) -> int:
        """How many cards of the stock and waste the memory places (for tests)."""
        cycle = self.cycle()
        return 0 if cycle is None else sum(c is not None for c in cycle)

    def _successors(self, cycle: Cycle, w: int) -> list[tuple[Cycle, int]]:
        """Where one decision's worth of play may have taken the stock: nothing, a turn or the
        waste top played, each with or without a reset after it, the likeliest first."""
        size = len(cycle)
        steps: list[tuple[Cycle, int]] = [(cycle, w)]
        if size:
            n = self._turn_count
            if self._continuous:
                left = size - w
                steps.append((cycle, w + n if left >= n else min(n - left, size)))
            else:
                steps.append((cycle, 0 if w == size else min(w + n, size)))
        if w:
            steps.append((cycle[: w - 1] + cycle[w:], w - 1))
        return steps + [self._after_reset(c, k) for c, k in steps]

    def _after_reset(self, cycle: Cycle, w: int) -> tuple[Cycle, int]:
        """The engine's stuck reset of the stock (``Round.reset``), on the cycle."""
        waste = list(cycle[:w])
        stock = list(cycle[w:])
        stock.reverse()
        if self._reset == "rotate_either":
            if not stock and waste:
                waste.reverse()
                stock, waste = waste, []
        else:
            waste.reverse()
            stock.extend(waste)
            waste = []
        if stock:
            stock.insert(0, stock.pop())
        stock.reverse()
        return tuple(waste + stock), len(waste)


def _fit(
    history: tuple[Cycle, int], size: int, w: int, top: Card | None
) -> tuple[Cycle, int] | None:
    """The history with the seen waste top written in, or None if it contradicts what shows."""
    cycle, k = history
    if len(cycle) != size or k != w:
        return None
    if not w or top is None:
        return history
    there = cycle[w - 1]
    if there is top:
        return history
    if there is not None or top in cycle:
        return None
    return (*cycle[: w - 1], top, *cycle[w:]), w
