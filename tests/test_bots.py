"""Bots: legal moves only, determinism, the view-fed path deciding like the in-process one."""

from __future__ import annotations

import json
import random
import statistics

import pytest

from nertz.bots import (
    BOTS,
    SPEEDS,
    Bot,
    ExpertBot,
    GreedyBot,
    Observation,
    PlayerSpec,
    PounceBot,
    RandomBot,
    UnknownName,
    find_bot,
    find_speed,
    sample_world,
)
from nertz.bots.lines import LineSearch
from nertz.bots.memory import StockMemory
from nertz.bots.races import urgent_play
from nertz.cards import Card
from nertz.engine import Round
from nertz.match import Match
from nertz.moves import STUCK, TURN, Kind, Move
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
        far = Observation.from_view(wire, rules, t=step)
        assert far.legal_moves() == rnd.legal_moves(seat)
        near = Observation.from_round(rnd, seat, t=step)
        a = live[seat].decide(near)
        b = remote[seat].decide(far)
        assert a == b, (step, seat, str(a), str(b))
        compared += 1
        if a is not None:
            rnd.play(seat, a)
    return compared


@pytest.mark.parametrize("make", [GreedyBot, ExpertBot, RandomBot, PounceBot])
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


@pytest.mark.parametrize("make", [GreedyBot, ExpertBot, PounceBot])
def test_a_bot_declares_stuck_after_a_whole_idle_pass(make: type[Bot]) -> None:
    """Stuck is judged from what the seat saw: a declaration comes only after the seat has turned
    through all its stock and waste since its last card play (or the table's last change)."""
    rules = preset("pagat")
    declared = 0
    for seed in range(3):
        rnd = Match(rules, 2, seed=seed).deal()
        bots = [make(), GreedyBot()]
        for s, b in enumerate(bots):
            b.start(s, rules, seed)
        turned = 0
        for step in range(3000):
            if rnd.ended is not None:
                break
            seat = step % 2
            before = sum(len(f.cards) for f in rnd.foundations)
            move = bots[seat].decide(Observation.from_round(rnd, seat))
            if move is None:
                continue
            if seat == 0:
                tab = rnd.tableaus[0]
                if move.kind is Kind.STUCK:
                    assert turned >= (len(tab.stock) + len(tab.waste)) // rules.turn_count
                    declared += 1
                turned = turned + 1 if move.kind is Kind.TURN else 0
            resets = rnd.resets
            rnd.play(seat, move)
            if rnd.resets != resets or sum(len(f.cards) for f in rnd.foundations) != before:
                turned = 0
    assert declared > 0


class _Counting(ExpertBot):
    """An expert that counts the rollouts (``width=0``) or the searched lines of each decision."""

    def __init__(self, width: int = 0) -> None:
        super().__init__(width=width)
        self.rollouts: list[int] = []
        self.branched: list[int] = []

    def decide(self, obs: Observation) -> Move | None:
        self.rollouts.append(0)
        move = super().decide(obs)
        self.branched.append(self.searched)
        return move

    def _rollout(self, world: Round, seat: int, first: Move, rng: random.Random) -> float:
        self.rollouts[-1] += 1
        return super()._rollout(world, seat, first, rng)


def test_expert_keeps_its_rollout_budget() -> None:
    """The decision budget is a fixed count of rollouts (timing itself is bench/decisions.py's:
    a test must not depend on the machine's speed)."""
    rules = preset("pagat")
    rnd = Match(rules, 3, seed=11).deal()
    bots: list[Bot] = [_Counting(), GreedyBot(), GreedyBot()]
    for s, b in enumerate(bots):
        b.start(s, rules, 11)
    play_table(rnd, bots, [SPEEDS["instant"]] * 3, random.Random(11))
    counts = bots[0].rollouts  # type: ignore[attr-defined]
    assert max(counts) <= ExpertBot().budget
    assert sum(counts) > 0


def test_expert_keeps_its_search_budget() -> None:
    """The search (``width=3``, an option) branches a fixed count of lines a decision at most,
    and makes no rollout."""
    rules = preset("pagat")
    rnd = Match(rules, 3, seed=11).deal()
    expert = _Counting(width=3)
    bots: list[Bot] = [expert, GreedyBot(), GreedyBot()]
    for s, b in enumerate(bots):
        b.start(s, rules, 11)
    play_table(rnd, bots, [SPEEDS["instant"]] * 3, random.Random(11))
    assert expert.width > 0
    assert max(expert.branched) <= expert.lines
    assert sum(expert.branched) > 0
    assert sum(expert.rollouts) == 0


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


class _Remembering(ExpertBot):
    """An expert that, at every decision, checks its stock memory against the real cards and
    against what its seat has been shown so far."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: set[Card] = set()
        self.placed = 0
        self.misplaced = 0

    def decide(self, obs: Observation) -> Move | None:
        tab = obs.tableau
        if tab.waste:
            self.shown.add(tab.waste[-1])
        move = super().decide(obs)
        assert self._memory is not None
        cycle = self._memory.cycle()
        assert cycle is not None
        real = tab.waste + tab.stock[::-1]
        assert len(cycle) == len(real)
        for remembered, card in zip(cycle, real, strict=True):
            if remembered is not None:
                # Honest: only cards its seat saw on the waste; and right where they are.
                assert remembered in self.shown
                self.placed += 1
                self.misplaced += remembered is not card
        return move


@pytest.mark.parametrize("rules_name", ["pagat", "fairy_fly", "sanna"])
def test_stock_memory_holds_only_seen_cards_in_their_places(rules_name: str) -> None:
    rules = preset(rules_name)
    placed = misplaced = 0
    for seed in range(3):
        rnd = Match(rules, 3, seed=seed).deal()
        bots: list[Bot] = [_Remembering(), GreedyBot(), _Remembering()]
        for s, b in enumerate(bots):
            b.start(s, rules, seed)
        play_table(rnd, bots, [SPEEDS["instant"]] * 3, random.Random(seed))
        placed += sum(b.placed for b in bots if isinstance(b, _Remembering))
        misplaced += sum(b.misplaced for b in bots if isinstance(b, _Remembering))
    # It does remember: after a pass through the stock, many cards have a known place. A reset
    # it cannot see may mislead it for a moment (under rotate_either it may not show at once).
    assert placed > 1000
    assert misplaced <= placed // (20 if rules.stuck_reset == "rotate_either" else 200)


def test_stock_memory_follows_turns_plays_and_resets() -> None:
    rules = preset("pagat")
    rnd = Match(rules, 2, seed=4).deal()
    tab = rnd.tableaus[0]
    memory = StockMemory(rules)

    def look() -> None:
        memory.observe(len(tab.stock), len(tab.waste), tab.waste[-1] if tab.waste else None)

    look()
    assert memory.known() == 0
    cards = len(tab.stock)
    for _ in range(cards // 3 + 2):  # one pass and the turn back over
        rnd.play(0, TURN)
        look()
    assert memory.known() == -(-cards // 3)  # every group's top card, the short last one too
    rnd.play(0, STUCK)  # the reset is not seen by the memory: it must work out the rotation
    rnd.play(1, STUCK)  # from the next top
    look()
    for _ in range(3):
        rnd.play(0, TURN)
        look()
    cycle = memory.cycle()
    assert cycle is not None
    for remembered, card in zip(cycle, tab.waste + tab.stock[::-1], strict=True):
        assert remembered is None or remembered is card


def test_sample_world_puts_remembered_cards_back() -> None:
    rnd = Match(preset("pagat"), 2, seed=1).deal()
    tab = rnd.tableaus[0]
    for _ in range(5):
        rnd.play(0, TURN)
    real = tab.waste + tab.stock[::-1]
    known: list[Card | None] = [c if i % 4 == 0 else None for i, c in enumerate(real)]
    for seed in range(5):
        world = sample_world(rnd, random.Random(seed), {0: known})
        mine = world.tableaus[0]
        sampled = mine.waste + mine.stock[::-1]
        assert all(k is None or k is c for k, c in zip(known, sampled, strict=True))
        assert sorted(map(str, mine.all_cards())) == sorted(map(str, tab.all_cards()))
        assert view(world, 0) == view(rnd, 0)


def test_view_fed_expert_remembers_alike() -> None:
    """The stock memory reads only what a view shows too: both feeding paths remember alike."""
    rules = preset("pagat")
    rnd = Match(rules, 3, seed=8).deal()
    live, remote = ExpertBot(), ExpertBot()
    live.start(0, rules, 8)
    remote.start(0, rules, 8)
    others = [GreedyBot(), GreedyBot()]
    for s, b in enumerate(others, start=1):
        b.start(s, rules, 8)
    known = 0
    for step in range(300):
        if rnd.ended is not None:
            break
        seat = step % 3
        if seat:
            move = others[seat - 1].decide(Observation.from_round(rnd, seat))
        else:
            wire = json.loads(json.dumps(view(rnd, 0).to_json()))
            move = live.decide(Observation.from_round(rnd, 0))
            assert remote.decide(Observation.from_view(wire, rules)) == move
            assert live._memory is not None and remote._memory is not None
            assert live._memory.cycle() == remote._memory.cycle()
            known = max(known, live._memory.known())
        if move is not None:
            rnd.play(seat, move)
    assert known > 5


def test_expert_rollouts_let_the_other_seats_play_to_the_foundations() -> None:
    rules = preset("pagat")
    for seed in range(40):
        rnd = Match(rules, 3, seed=seed).deal()
        tops = [rnd.tableaus[1].nertz[-1]] + [p[-1] for p in rnd.tableaus[1].work]
        if any(c.rank == 1 for c in tops):
            break
    else:
        pytest.fail("no deal with an Ace on seat 1's tops")
    bot = ExpertBot()
    bot.start(0, rules, seed)
    world = rnd.copy()
    bot._rollout(world, 0, TURN, random.Random(0))
    assert any(1 in f.owners for f in world.foundations)  # seat 1 started a foundation



class _Watched(GreedyBot):
    """A greedy bot that checks, at each decision, that it makes the race play it is due."""

    def __init__(self) -> None:
        super().__init__()
        self.due = 0
        self.contested = 0

    def decide(self, obs: Observation) -> Move | None:
        rnd = obs.round
        tab = rnd.tableaus[obs.seat]
        due = None
        if rnd.ended is None and tab.nertz:
            plays = [m for m in rnd.legal_moves(obs.seat) if m.kind is Kind.TO_FOUNDATION]
            due = urgent_play(rnd, obs.seat, plays) if plays else None
        move = super().decide(obs)
        if due is not None:
            self.due += 1
            self.contested += due.src != "N"
            assert move == due, (str(move), str(due))
        return move


def test_greedy_makes_a_contested_foundation_play_first() -> None:
    """Greedy plays a card another seat shows too (or its Nertz top to a foundation) before
    anything else, its Nertz top onto a work pile included: the race cannot wait."""
    rules = preset("pagat")
    watched = _Watched()
    for seed in range(6):
        rnd = Match(rules, 3, seed=seed).deal()
        bots: list[Bot] = [watched, GreedyBot(), GreedyBot()]
        for s, b in enumerate(bots):
            b.start(s, rules, seed)
        play_table(rnd, bots, [SPEEDS["instant"]] * 3, random.Random(seed))
    assert watched.contested > 5


def test_expert_search_lets_the_other_seats_play_to_the_foundations() -> None:
    """In the line search as in the rollouts, the other seats play what fits the foundations."""
    rules = preset("pagat")
    for seed in range(40):
        rnd = Match(rules, 3, seed=seed).deal()
        tops = [rnd.tableaus[1].nertz[-1]] + [p[-1] for p in rnd.tableaus[1].work]
        if any(c.rank == 1 for c in tops):
            break
    else:
        pytest.fail("no deal with an Ace on seat 1's tops")
    world = rnd.copy()
    search = LineSearch(0, horizon=12.0, turn_time=0.4, width=3)
    value = search.value(world, TURN, budget=50)
    assert value >= 0.0
    assert search.lines <= 50
    assert any(1 in f.owners for f in world.foundations)  # seat 1 started a foundation
