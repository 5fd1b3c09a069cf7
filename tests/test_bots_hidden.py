"""No bot decides on a card its seat cannot see: reshuffling every hidden card changes nothing.

At every decision of the bot under test, copies of it (its memory and random generator as they
are) are asked the same question on worlds in which every hidden card has been dealt again: the
other seats' hidden cards, its own Nertz pile under the top, its face-down work cards, and its
own stock and waste except the cards it was shown there (kept where it saw them, as a player
remembers them). Every copy must answer exactly what the bot answered on the real table.
"""

from __future__ import annotations

import copy
import random

import pytest

from nertz.bots import BOTS, SPEEDS, Bot, Observation, find_bot, sample_world
from nertz.bots.memory import StockMemory
from nertz.engine import NO_FOUNDATION
from nertz.match import Match
from nertz.moves import Move
from nertz.rules import Rules, preset
from nertz.sim.table import play_table

CHECKED_DECISIONS = 400
"""Decisions checked per seat and round (the rest are played unchecked, to keep the test short)."""


class Blindfolded(Bot):
    """Wraps a bot and asks reshuffled copies of it the same question at every decision."""

    def __init__(self, inner: Bot, shuffles: int) -> None:
        super().__init__()
        self.inner = inner
        self.name = inner.name
        self.shuffles = shuffles
        self.checked = 0
        self.memory: StockMemory | None = None
        self.world_rng = random.Random(0)

    def start(self, seat: int, rules: Rules, seed: int | str = 0) -> None:
        self.inner.start(seat, rules, seed)
        self.memory = StockMemory(rules)
        self.world_rng = random.Random(f"blindfold:{seed}:{seat}")

    def decide(self, obs: Observation) -> Move | None:
        assert self.memory is not None
        tab = obs.tableau
        # What the seat has been shown of its own stock: the waste tops, where they came.
        self.memory.observe(len(tab.stock), len(tab.waste), tab.waste[-1] if tab.waste else None)
        if self.checked >= CHECKED_DECISIONS:
            return self.inner.decide(obs)
        before = copy.deepcopy(self.inner)
        move = self.inner.decide(obs)
        cycle = self.memory.cycle()
        known = {obs.seat: cycle} if cycle is not None else None
        for _ in range(self.shuffles):
            world = sample_world(obs.round, self.world_rng, known)
            twin = copy.deepcopy(before)
            other = twin.decide(Observation(world, obs.seat, obs.t))
            assert other == move, (self.name, obs.seat, str(move), str(other))
        self.checked += 1
        return move


@pytest.mark.parametrize("name", sorted(BOTS))
@pytest.mark.parametrize("rules_name", ["pagat", "fairy_fly"])
def test_no_decision_depends_on_a_hidden_card(name: str, rules_name: str) -> None:
    rules = preset(rules_name)
    checked = 0
    for seed in range(2):
        rnd = Match(rules, 3, seed=seed).deal()
        bots = [Blindfolded(find_bot(n)(), 2) for n in (name, "greedy", name)]
        for s, b in enumerate(bots):
            b.start(s, rules, seed)
        play_table(rnd, bots, [SPEEDS["instant"]] * 3, random.Random(seed))
        checked += bots[0].checked + bots[2].checked
    assert checked > 100


class _Peeking(Bot):
    """Turns the stock only when the card about to come up fits a foundation: a cheat."""

    name = "peeking"

    def decide(self, obs: Observation) -> Move | None:
        rnd = obs.round
        tab = obs.tableau
        moves = rnd.legal_moves(obs.seat)
        if tab.stock and rnd.foundation_for(tab.stock[-1]) != NO_FOUNDATION:
            return moves[-1]
        return moves[0] if moves else None


def test_the_blindfold_catches_a_bot_that_peeks() -> None:
    rules = preset("pagat")
    rnd = Match(rules, 3, seed=1).deal()
    bots = [Blindfolded(_Peeking(), 4), Blindfolded(find_bot("greedy")(), 1),
            Blindfolded(find_bot("greedy")(), 1)]
    for s, b in enumerate(bots):
        b.start(s, rules, 1)
    with pytest.raises(AssertionError, match="peeking"):
        play_table(rnd, bots, [SPEEDS["instant"]] * 3, random.Random(1))
