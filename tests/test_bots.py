"""Bots: legal moves only, determinism, the view-fed path deciding like the in-process one."""

from __future__ import annotations

import json
import random
import statistics
import time

import pytest

from nertz.bots import (
    BOTS,
    SPEEDS,
    Bot,
    ExpertBot,
    GreedyBot,
    Observation,
    PlayerSpec,
    RandomBot,
    UnknownName,
    find_bot,
    find_speed,
    sample_world,
)
from nertz.engine import Round
from nertz.match import Match
from nertz.moves import TURN, Move
from nertz.rules import Rules, preset
from nertz.sim.table import play_table
from nertz.views import view


class Checked(Bot):
    """Wraps a bot and checks every answer against the engine at the moment it is given."""

    def __init__(self, inner: Bot) -> None:
        super().__init__()
        self.inner = inner
        self.name = inner.name
        self.decisions = 0

    def start(self, seat: int, rules: Rules, seed: int | str = 0) -> None:
        self.inner.start(seat, rules, seed)

    def decide(self, obs: Observation) -> Move | None:
        move = self.inner.decide(obs)
        self.decisions += 1
        if move is not None:
            assert move in obs.legal_moves(), (str(move), obs.seat)
            assert obs.round.can_play(obs.seat, move)
        return move


@pytest.mark.parametrize("name", sorted(BOTS))
@pytest.mark.parametrize("rules_name", ["pagat", "fairy_fly", "standard"])
def test_bots_return_only_legal_moves(name: str, rules_name: str) -> None:
    rules = preset(rules_name)
    for seed in range(2):
        match = Match(rules, 3, seed=seed)
        rnd = match.deal()
        bots = [Checked(find_bot(n)()) for n in (name, "greedy", name)]
        for s, b in enumerate(bots):
            b.start(s, rules, seed)
        play_table(rnd, bots, [SPEEDS["instant"]] * 3, random.Random(seed))
        assert rnd.ended is not None or rnd.moves_played > 0
        assert bots[0].decisions > 0


def _play_lockstep(rules: Rules, make: type[Bot], seed: int, steps: int) -> int:
    """Two copies of a bot, one fed the live round and one fed the seat's view as JSON; they
    must decide alike at every step. Returns how many decisions were compared."""
    match = Match(rules, 3, seed=seed)
    rnd = match.deal()
    live = [make() for _ in range(3)]
    remote = [make() for _ in range(3)]
    for s in range(3):
        live[s].start(s, rules, seed)
        remote[s].start(s, rules, seed)
    compared = 0
    for step in range(steps):
        if rnd.ended is not None:
            break
        seat = step % 3
        wire = json.loads(json.dumps(view(rnd, seat).to_json()))
        far = Observation.from_view(wire, rules, t=step, stuck=rnd.is_stuck(seat))
        assert far.legal_moves() == rnd.legal_moves(seat)
        near = Observation.from_round(rnd, seat, t=step)
        a = live[seat].decide(near)
        b = remote[seat].decide(far)
        assert a == b, (step, seat, str(a), str(b))
        compared += 1
        if a is not None:
            rnd.play(seat, a)
    return compared


@pytest.mark.parametrize("make", [GreedyBot, ExpertBot, RandomBot])
def test_view_fed_bot_decides_like_in_process(make: type[Bot]) -> None:
    assert _play_lockstep(preset("pagat"), make, seed=3, steps=150) > 50


def test_view_fed_bot_under_staircase_and_jokers() -> None:
    rules = preset("fairy_fly").replace(jokers=True)
    assert _play_lockstep(rules, ExpertBot, seed=5, steps=90) > 30


def test_sample_world_keeps_the_visible_and_shuffles_the_hidden() -> None:
    rnd = Match(preset("pagat"), 2, seed=1).deal()
    for _ in range(12):
        rnd.play(0, TURN)
    world = sample_world(rnd, random.Random(1))
    assert view(world, 0) == view(rnd, 0)
    for real, fake in zip(rnd.tableaus, world.tableaus, strict=True):
        assert sorted(map(str, real.all_cards())) == sorted(map(str, fake.all_cards()))
    # The sample depends on what is visible, not on where the hidden cards really are.
    wire = view(rnd, 0).to_json()
    rebuilt = Observation.from_view(wire, rnd.rules).round
    again = sample_world(rebuilt, random.Random(1))
    assert [t.stock for t in again.tableaus] == [t.stock for t in world.tableaus]


def test_bots_are_deterministic() -> None:
    rules = preset("pagat")

    def run(seed: int) -> list[str]:
        rnd = Match(rules, 3, seed=seed).deal()
        bots = [ExpertBot(), GreedyBot(), RandomBot()]
        for s, b in enumerate(bots):
            b.start(s, rules, seed)
        stats = play_table(rnd, bots, [SPEEDS["casual"]] * 3, random.Random(seed), keep_log=True)
        return [f"{t} {s} {m} {ok}" for t, s, m, ok in stats.log]

    assert run(4) == run(4)
    assert run(4) != run(5)


def test_greedy_declares_stuck_only_when_the_engine_says_so() -> None:
    rules = preset("pagat")
    for seed in range(4):
        rnd = Match(rules, 2, seed=seed).deal()
        bots = [GreedyBot(), GreedyBot()]
        for s, b in enumerate(bots):
            b.start(s, rules, seed)
        turns = 0
        while rnd.ended is None and turns < 3000:
            seat = turns % 2
            move = bots[seat].decide(Observation.from_round(rnd, seat))
            if move is not None and move.kind.name == "STUCK":
                assert rnd.is_stuck(seat)
            if move is not None:
                rnd.play(seat, move)
            turns += 1


def test_expert_decides_within_budget() -> None:
    rules = preset("pagat")
    rnd = Match(rules, 3, seed=11).deal()
    bot = ExpertBot()
    bot.start(0, rules, 11)
    others = [GreedyBot(), GreedyBot()]
    for s, b in enumerate(others, start=1):
        b.start(s, rules, 11)
    times = []
    for step in range(240):
        if rnd.ended is not None:
            break
        seat = step % 3
        obs = Observation.from_round(rnd, seat)
        if seat == 0:
            t0 = time.perf_counter()
            move = bot.decide(obs)
            times.append(time.perf_counter() - t0)
        else:
            move = others[seat - 1].decide(obs)
        if move is not None:
            rnd.play(seat, move)
    # Generous against a loaded test machine: the budget is 20 ms a decision at most.
    assert statistics.mean(times) < 0.02


def test_registry_and_speeds() -> None:
    assert PlayerSpec.parse("expert:casual") == PlayerSpec("expert", "casual")
    assert PlayerSpec.parse("greedy", "skilled").profile is SPEEDS["skilled"]
    with pytest.raises(UnknownName, match="unknown bot 'nobody'"):
        find_bot("nobody")
    with pytest.raises(UnknownName, match="unknown speed level"):
        find_speed("warp")
    with pytest.raises(UnknownName):
        PlayerSpec.parse("greedy:warp")
    assert [p.card_ms for p in SPEEDS.values()] == [1800, 1200, 800, 500, 10]


def test_speed_draws_are_seeded_and_centred() -> None:
    casual = find_speed("casual")
    card = Move.parse("N-F")
    a = [casual.think_ms(card, random.Random(2)) for _ in range(3)]
    b = [casual.think_ms(card, random.Random(2)) for _ in range(3)]
    assert a == b
    rng = random.Random(9)
    draws = [casual.think_ms(card, rng) for _ in range(4000)]
    assert 1100 < statistics.mean(draws) < 1300
    turns = [casual.think_ms(TURN, rng) for _ in range(4000)]
    assert statistics.mean(turns) < statistics.mean(draws)
    reacts = [casual.react_ms(rng) for _ in range(4000)]
    assert 540 < statistics.mean(reacts) < 660
    assert find_speed("instant").react_ms(rng) == 0.0


def test_round_type_is_the_engines() -> None:
    obs = Observation.from_view(view(Match(preset("pagat"), 2).deal(), 1), preset("pagat"))
    assert isinstance(obs.round, Round)
    assert obs.seat == 1
    assert obs.tableau is obs.round.tableaus[1]
