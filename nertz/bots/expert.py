"""The ``expert`` bot: contested foundation plays first, then a look-ahead over sampled worlds.

Each decision goes in these steps:

1. **Races first.** A foundation play that another seat could make too (its Nertz top, waste
   top or a work-pile top is the same card of another deck) is made at once, the Nertz pile's
   first: waiting would lose the card to that seat. An uncontested Nertz top that fits a
   foundation goes there at once too, and so does the waste top (free points, a card uncovered).
2. **The Nertz pile.** Its top goes onto a work pile if it can; where several piles take it, the
   look-ahead chooses.
3. **Look-ahead.** The remaining choices are weighed against turning the stock: work-pile cards
   to a foundation, the waste top onto a work pile, and the *plan* moves, work-to-work moves
   with partial runs (which greedy never makes) that empty a pile, turn up a face-down card, or
   bring up a card that takes the Nertz top or fits a foundation; and always the ``greedy``
   bot's own pick (:func:`~nertz.bots.heuristic.strong_move`), weighed first so that a tie
   goes to it (its list knows which waste cards help a later pass, which a short rollout
   cannot see; a screen on ``--seed 100`` gave about one point). Each is tried in up to 16
   sampled worlds (:func:`~nertz.bots.base.sample_world`: the hidden cards, which the seat does
   not know, dealt at random) and rolled out for 12 card moves' time with the engine's simple
   greedy playout (:func:`nertz.playout.greedy_move`; the greedy bot's own list measured no
   better there and costs more). Time is counted as the table charges it: a stock turn takes
   0.4 of a card move (:data:`TURN_TIME`, the speed levels' share), so a rollout reaches a card
   the stock brings up a pass later, and the discount runs on time, not on moves. A rollout
   earns a discounted reward for every card out of the Nertz pile, every card to a foundation
   and every face-down card turned up, and a bonus for emptying the pile. All candidates share
   the same worlds (common random numbers), so the comparison is fair and the noise small.

   ``width=3`` (with ``samples=8``) searches the seat's own line instead of rolling it out
   (:class:`~nertz.bots.lines.LineSearch`: a beam over its own choices in each world, the
   candidate worth the best line found). It screened about two points better on 1,500 rounds
   and measured the same as the rollouts on 6,000 fresh ones (``docs/bots.md``), at about twice
   the mean decision time, so it is an option, not the default.

   The other seats are not frozen in a rollout: for each card move's time the seat spends,
   every other seat plays a top card (Nertz, waste or work pile: what greedy would play first)
   that fits a foundation. At a table the foundations grow with everyone's cards, so a card
   kept back may soon fit, or lose its place to another seat's copy; frozen seats hid both.

   The seat's own stock is not sampled blind: :class:`~nertz.bots.memory.StockMemory` keeps
   the waste tops it has seen, in the order they came (what a player who has turned through
   the stock knows), and the sampled worlds put those cards back where they were seen.
4. **Idle.** If the best thing is to turn, :class:`~nertz.bots.idle.IdleSense` decides between
   turning, declaring stuck (after two whole passes through its stock with nothing to play:
   judged from what the seat saw, never from the engine's look at hidden cards) and waiting.

With its Nertz pile empty under ``call: manual``, the expert calls at once if it leads on the
visible points, else it plays its foundation cards first (the round is won on points) and, with
none to play, turns its stock for more for one pass before it calls anyway
(:func:`~nertz.bots.heuristic.play_on`, shared with ``greedy``).

The budget is a fixed count, not a timer, so decisions stay reproducible: 96 rollouts at most
(with ``width`` set, the search branches at most ``lines`` lines a decision, one copy of the
round each, besides the one line that goes on from each candidate in each world); it keeps
every decision under 20 ms (``bench/decisions.py``; ``docs/bots.md`` has the figures, and its
strength against ``greedy`` and ``pounce``). Against the earlier greedy
bot (``nertz.playout.greedy_move``), over 9,000 three-seat pagat rounds, it took 42.4% of the
wins, from 39.9% before the other seats played in its rollouts, the stock memory, the larger
bonus for emptying the pile and the play-on.
More worlds with a shorter horizon measured stronger than few long rollouts: the noise of the
sampled hidden cards, not the depth, is what limits the look-ahead.
"""

from __future__ import annotations

import random
from typing import Final

from nertz.bots.base import Bot, Observation, sample_world
from nertz.bots.heuristic import NOWHERE, play_on, strong_move
from nertz.bots.idle import IdleSense
from nertz.bots.lines import LineSearch, first_foundation_play
from nertz.bots.memory import StockMemory
from nertz.bots.races import urgent_play
from nertz.engine import Round
from nertz.errors import IllegalMoveError
from nertz.moves import TURN, Kind, Move, to_work
from nertz.playout import greedy_move
from nertz.rules import Rules

NERTZ_REWARD: Final = 5.0
"""A card out of the Nertz pile (it also stops costing the penalty)."""
FOUNDATION_REWARD: Final = 1.0
"""A card onto a foundation (a point)."""
REVEAL_REWARD: Final = 0.5
"""A face-down work card turned up (a card freed for later)."""
CALL_REWARD: Final = 10.0
"""The Nertz pile emptied: the round can be called (the caller wins about nine rounds in ten;
10 measured better than 4, see ``docs/bots.md``)."""
DISCOUNT: Final = 0.8
"""Per card move's time in a rollout: the same progress sooner is worth more, as the others are
racing."""
TURN_TIME: Final = 0.4
"""A stock turn's time as a share of a card move's, in rollouts: the speed levels' own share
(:class:`~nertz.bots.speed.SpeedProfile`'s ``turn_share``). Counting a turn as a whole move
made the rollouts see only a third of a pass and priced a card the stock brings up a few turns
later as if it came many moves later."""
OPPONENTS_PLAY: Final = True
"""In rollouts, the other seats play their top cards to the foundations as they come to fit."""
DIG: Final = True
"""With the Nertz pile empty but behind on points, turn the stock for a pass before calling."""
IDLE_PASSES: Final = 2
"""Idle passes through the stock before declaring stuck (:class:`~nertz.bots.idle.IdleSense`)."""
SHUFFLE_COST: Final = 0.05
"""A work-to-work move must beat turning by this much: it spends a move and risks loops."""
PRIOR_MARGIN: Final = 0.0
"""The ``greedy`` bot's own choice (:func:`~nertz.bots.heuristic.strong_move`) is always a
candidate and is credited this much: another move must beat it by more than the rollouts'
noise."""


class ExpertBot(Bot):
    """Contested plays first, then determinized rollouts (or a search of its own line, with
    ``width``); see the module docstring."""

    name = "expert"

    def __init__(
        self,
        samples: int = 16,
        horizon: float = 12.0,
        budget: int = 96,
        max_candidates: int = 10,
        turn_time: float = TURN_TIME,
        width: int = 0,
        lines: int = 600,
    ) -> None:
        super().__init__()
        self.samples = samples
        """Worlds sampled per decision."""
        self.horizon = horizon
        """How long a searched line (or a rollout) lasts, in card moves' time (a turn takes
        ``turn_time`` of one)."""
        self.turn_time = turn_time
        """A stock turn's time in lines and rollouts, as a share of a card move's."""
        self.budget = budget
        """Rollouts per decision at most: with many candidates each gets fewer worlds."""
        self.max_candidates = max_candidates
        self.width = width
        """Lines in the beam of :class:`~nertz.bots.lines.LineSearch`; 0: rollouts instead."""
        self.lines = lines
        """Lines the search may branch per decision at most (a count, not a timer)."""
        """Candidates looked at beyond this many are skipped (rare, keeps the budget)."""
        self.searched = 0
        """Lines the search branched in the current decision (the budget's count)."""
        self._idle = IdleSense(patience=IDLE_PASSES)
        self._fast_rules: Rules | None = None
        self._shuffled: set[Move] = set()
        self._memory: StockMemory | None = None
        self._digging = 0

    def start(self, seat: int, rules: Rules, seed: int | str = 0) -> None:
        """Begin a round."""
        super().start(seat, rules, seed)
        self._idle.clear()
        # Rollouts skip the table-wide blocked check: it looks at other seats' hidden cards
        # (sampled, so meaningless) and costs more than the rollout move itself.
        self._fast_rules = rules.replace(blocked_round_end=False)
        self._shuffled = set()
        self._memory = StockMemory(rules)
        self._digging = 0

    def decide(self, obs: Observation) -> Move | None:
        """Races first, then the plan and the look-ahead, then the idle logic."""
        self.searched = 0
        rnd = obs.round
        seat = obs.seat
        tab = rnd.tableaus[seat]
        if self._memory is not None:
            # Only what the seat sees of its own stock: the counts and the waste top.
            top = tab.waste[-1] if tab.waste else None
            self._memory.observe(len(tab.stock), len(tab.waste), top)
        if rnd.ended is not None:
            return None
        if not tab.nertz:
            return self._play_on(rnd, seat) if rnd.rules.call == "manual" else None
        legal = rnd.legal_moves(seat)
        plays = [m for m in legal if m.kind is Kind.TO_FOUNDATION]
        if plays:
            urgent = self._urgent(rnd, seat, plays)
            if urgent is not None:
                return self._made(urgent)
            # The waste top to a foundation is free: it scores and uncovers the next card.
            for m in plays:
                if m.src == "W":
                    return self._made(m)
        nertz_moves = [m for m in legal if m.src == "N" and m.kind is Kind.TO_WORK]
        if nertz_moves:
            best = nertz_moves[0]
            if len(nertz_moves) > 1:
                best = self._look_ahead(rnd, seat, nertz_moves)
            return self._made(best)
        # Work-pile cards to a foundation, the waste top onto a work pile and the plan's moves
        # are not always right (a base for the Nertz pile lost, a run lengthened, a card's time
        # spent): the look-ahead judges them against turning. Making them at once, as greedy
        # does, measured one to two points of win share worse.
        candidates = [m for m in plays if m.src.isdigit()]
        candidates += [m for m in legal if m.kind is Kind.TO_WORK and m.src == "W"]
        candidates += self._plan(rnd, seat)
        # Greedy's pick is always weighed, first, so that it wins ties: the priority list
        # knows things a short rollout does not see (which waste cards help a later pass).
        unblock = self._idle.idle > 0 and self._idle.passes(obs) >= 1
        prior = strong_move(rnd, seat, unblock, self._shuffled)
        if prior is not None:
            if prior in candidates:
                candidates.remove(prior)
            candidates.insert(0, prior)
        if not candidates:
            return self._idle.when_idle(obs)
        if TURN in legal:
            candidates.append(TURN)
        best = candidates[0]
        if len(candidates) > 1:
            best = self._look_ahead(rnd, seat, candidates[: self.max_candidates], prior)
        if best is TURN:
            return self._idle.when_idle(obs)
        return self._made(best)

    def _plan(self, rnd: Round, seat: int) -> list[Move]:
        """Work-to-work moves (partial runs too) that empty a pile, turn up a face-down card, or
        bring to a pile's top a card that takes the Nertz top or fits a foundation.

        Greedy sees whole runs only. No hidden card is read: a face-down card only counts."""
        tab = rnd.tableaus[seat]
        target = tab.nertz[-1]
        down = tab.down
        partial = rnd.rules.move_partial_runs
        out: list[Move] = []
        piles = tab.work
        for k, pile in enumerate(piles):
            d = down[k]
            last = len(pile) - 1 if partial else d
            for i in range(d, last + 1):
                moving = pile[i:]
                for j, other in enumerate(piles):
                    if j == k or len(other) <= down[j]:
                        continue
                    if not rnd._fits_pile(other, down[j], moving):
                        continue
                    move = to_work(str(k + 1), j + 1, None if i == d else pile[i])
                    if not self._fresh(move):
                        continue
                    left = pile[:i]
                    if (
                        not left
                        or len(left) == d
                        or rnd.foundation_for(left[-1]) != NOWHERE
                        or rnd._fits_pile(left, d, [target])
                    ):
                        out.append(move)
        return out

    def _play_on(self, rnd: Round, seat: int) -> Move:
        """The Nertz pile is empty: call while ahead, else play to the foundations first.

        Under ``call: manual`` a seat may play on before calling. The round is won on points,
        so a seat that would not top the table yet plays its foundation cards (contested ones
        first) and calls as soon as it leads. With nothing to play it turns its stock for more
        (a call while behind loses for sure; playing on may still win, as long as another seat
        does not call first), and calls once a whole pass has turned up nothing."""
        plays = [m for m in rnd.legal_moves(seat) if m.kind is Kind.TO_FOUNDATION]
        urgent = self._urgent(rnd, seat, plays) if plays else None
        move = play_on(rnd, seat, self._digging if DIG else 10**6, urgent)
        self._digging = self._digging + 1 if move is TURN else 0
        return move

    def _urgent(self, rnd: Round, seat: int, plays: list[Move]) -> Move | None:
        """A contested foundation play (Nertz first), else the Nertz top to a foundation."""
        return urgent_play(rnd, seat, plays)

    def _fresh(self, move: Move) -> bool:
        """A work-to-work move not already made since the last productive play (no loops)."""
        return not move.src.isdigit() or move not in self._shuffled

    def _made(self, move: Move) -> Move:
        if move.kind is Kind.TO_WORK and move.src.isdigit():
            self._shuffled.add(move)
        else:
            self._shuffled.clear()
            self._idle.progressed()
        return move

    def _look_ahead(
        self, rnd: Round, seat: int, candidates: list[Move], prior: Move | None = None
    ) -> Move:
        rng = self.rng
        count = max(2, min(self.samples, self.budget // len(candidates)))
        cycle = self._memory.cycle() if self._memory is not None else None
        known = {seat: cycle} if cycle is not None else None
        worlds = [sample_world(rnd, rng, known) for _ in range(count)]
        fast = self._fast_rules or rnd.rules
        for w in worlds:
            w.rules = fast
        best = candidates[-1]
        best_value = float("-inf")
        search = (
            LineSearch(seat, self.horizon, self.turn_time, self.width) if self.width else None
        )
        each = max(1, self.lines // (len(candidates) * len(worlds)))
        for move in candidates:
            total = 0.0
            for w in worlds:
                if search is not None:
                    total += search.value(w.copy(), move, each)
                else:
                    total += self._rollout(w.copy(), seat, move, rng)
            value = total / len(worlds)
            if move.kind is Kind.TO_WORK and move.src.isdigit():
                value -= SHUFFLE_COST
            if move == prior:
                value += PRIOR_MARGIN
            if value > best_value + 1e-9:
                best, best_value = move, value
        if search is not None:
            self.searched += search.lines
        return best

    def _rollout(self, world: Round, seat: int, first: Move, rng: random.Random) -> float:
        """Discounted progress of ``seat`` playing ``first`` then greedily, while the other
        seats play only what fits the foundations (their hidden cards are sampled anyway)."""
        tab = world.tableaus[seat]
        others = [s for s in range(world.seats) if s != seat]
        changed = True
        value = 0.0
        weight = 1.0
        move: Move | None = first
        turn_time = self.turn_time
        turn_discount = DISCOUNT**turn_time
        horizon = self.horizon
        clock = 0.0  # the seat's time spent, in card moves
        credit = 0.0  # time the other seats have had since they last played
        while move is not None:
            nertz = len(tab.nertz)
            down = sum(tab.down)
            try:
                world.play(seat, move)
            except IllegalMoveError:
                break
            gain = FOUNDATION_REWARD if move.kind is Kind.TO_FOUNDATION else 0.0
            if len(tab.nertz) < nertz:
                gain += NERTZ_REWARD
            if sum(tab.down) < down:
                gain += REVEAL_REWARD
            if not tab.nertz:
                value += weight * (gain + CALL_REWARD)
                break
            value += weight * gain
            # Time as the table charges it: a turn is quicker than a card move. The other seats
            # play a card per card move's time, so a seat turning for a card it needs does not
            # hand them a card at every flick.
            card = move.kind is Kind.TO_FOUNDATION or move.kind is Kind.TO_WORK
            cost = 1.0 if card else turn_time
            weight *= DISCOUNT if card else turn_discount
            clock += cost
            if clock >= horizon - 1e-9:
                break
            credit += cost
            if move.kind is Kind.TO_FOUNDATION:
                changed = True
            if credit < 1.0 - 1e-9:
                move = greedy_move(world, seat)
                if move is None and (tab.stock or tab.waste):
                    move = TURN
                continue
            credit -= 1.0
            if OPPONENTS_PLAY and changed:
                # The other seats' tops only change when they play, and what fits only when a
                # foundation grows: nothing new to look at otherwise.
                changed = False
                for s in others:
                    play = first_foundation_play(world, s)
                    if play is not None:
                        world.play(s, play)
                        changed = True
                        if world.ended is not None:
                            break  # its last Nertz card ended the round (``call: auto``)
                if world.ended is not None:
                    break
            move = greedy_move(world, seat)
            if move is None and (tab.stock or tab.waste):
                move = TURN
        return value

