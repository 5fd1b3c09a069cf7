"""The AI environments: PettingZoo's and Gymnasium's own conformance checks, masks that are
exactly the engine's legal moves, observations blind to hidden cards, races, stuck resets,
determinism, and the random-agent loop of docs/ai.md."""

from __future__ import annotations

import random
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test

from nertz.cards import Card, deck
from nertz.engine import Round
from nertz.env import (
    NOOP,
    ActionCodec,
    NertzParallelEnv,
    card_features,
    env,
    make_single,
    parallel_env,
)
from nertz.env.observation import CARD_WIDTH, OPPONENT_WIDTH, OWN_HEAD, PILE_WIDTH
from nertz.match import Match
from nertz.moves import Move
from nertz.playout import greedy_move
from nertz.rules import Rules
from nertz.state import Layout

DOCS = Path(__file__).resolve().parent.parent / "docs" / "ai.md"
PRESETS = ["pagat", "standard", "fairy_fly", "sanna", "starter9", "double_swinging_door"]


def random_actions(
    e: NertzParallelEnv, obs: dict[str, Any], rng: np.random.Generator
) -> dict[str, int]:
    """A random legal action for every live agent."""
    return {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in e.agents}


# ------------------------------------------------------------------ conformance suites


def test_pettingzoo_parallel_api() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PettingZoo reports soft failures as warnings
        parallel_api_test(parallel_env(seed=1), num_cycles=1000)


def test_pettingzoo_parallel_api_other_tables() -> None:
    parallel_api_test(parallel_env("fairy_fly", seats=2, seed=2), num_cycles=300)
    parallel_api_test(parallel_env("standard", seats=6, seed=3, jokers=True), num_cycles=300)


def test_pettingzoo_parallel_seed_test() -> None:
    parallel_seed_test(lambda: parallel_env(seats=3))
    parallel_seed_test(lambda: parallel_env("fairy_fly"))


# A dict observation carrying the action mask is PettingZoo's own convention, yet its AEC test
# still hints that observations "probably should be" plain arrays.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
def test_pettingzoo_aec_api() -> None:
    api_test(env(seats=3, seed=4), num_cycles=200)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"opponents": "random", "seats": 3},
        {"rules": "fairy_fly", "seats": 2, "opponents": "expert"},
        {"rules": "standard", "opponents": [greedy_move, "random", "greedy"]},
    ],
)
def test_gymnasium_check_env(kwargs: dict[str, Any]) -> None:
    check_env(make_single(seed=3, **kwargs), skip_render_check=True)


# ------------------------------------------------------------------ masks and actions


@pytest.mark.parametrize("preset", PRESETS)
def test_masks_are_exact(preset: str) -> None:
    """An entry is offered exactly when the move it stands for is legal, and every legal move
    of the engine belongs to an offered entry."""
    e = parallel_env(preset, seats=3, seed=11, jokers=preset == "pagat")
    rng = np.random.default_rng(0)
    checked = steps = 0
    obs, _ = e.reset()
    while steps < 200:  # across rounds: a random round can end early
        if not e.agents:
            obs, _ = e.reset()
        rnd = e.round
        for seat, agent in enumerate(e.possible_agents):
            mask = obs[agent]["action_mask"]
            assert mask[NOOP] == 1  # waiting is always allowed
            for i in range(1, e.actions.size):
                move = e.actions.decode(rnd, seat, i)
                assert move is not None
                assert rnd.can_play(seat, move) == bool(mask[i]), (e.actions.labels[i], move)
            for move in rnd.legal_moves(seat):
                assert mask[e.actions.encode(rnd, seat, move)] == 1
            checked += int(mask.sum()) - 1
        obs, *_ = e.step(random_actions(e, obs, rng))
        steps += 1
    assert checked > 1000


def test_action_table_shape() -> None:
    codec = ActionCodec(Rules.from_spec("pagat"))
    assert codec.size == 42 and len(set(codec.labels)) == codec.size
    assert codec.labels[:5] == ("NOOP", "T", "STUCK", "NERTZ", "STUCK N")
    assert codec.labels[5:12] == ("N-F", "W-F", "1-F", "2-F", "3-F", "4-F", "5-F")
    assert "5-3" in codec.labels and "4-4" not in codec.labels
    # One table for every ruleset and seat count: a policy plays them all.
    for name in PRESETS:
        assert ActionCodec(Rules.from_spec(name), 8).labels == codec.labels


def test_entries_a_ruleset_lacks_are_never_offered() -> None:
    e = parallel_env("pagat", seats=2, seed=1)  # four work piles, rotates only the stock
    obs, _ = e.reset()
    for label in ("STUCK N", "5-F", "N-5", "W-5", "5-1", "1-5"):
        i = e.actions.index(label)
        assert obs["seat_0"]["action_mask"][i] == 0
        _, _, _, _, infos = e.step({"seat_0": i})
        assert infos["seat_0"]["accepted"] is False and infos["seat_0"]["error"]
        obs, _ = e.reset()


def test_a_run_move_takes_the_part_that_fits() -> None:
    rules = Rules.from_spec("pagat")
    lay = layout(["2S"], work=[["9S", "8H", "7C"], ["9C"], ["3C"], []])
    rnd = Round.from_layouts(rules, [lay])
    codec = ActionCodec(rules)
    assert str(codec.decode(rnd, 0, codec.index("1-2"))) == "1:8H-2"  # 8H onto the black 9
    assert str(codec.decode(rnd, 0, codec.index("1-4"))) == "1-4"  # the whole run to a space
    assert codec.encode(rnd, 0, Move.parse("1:8H-2")) == codec.index("1-2")
    assert codec.encode(rnd, 0, Move.parse("N-F3")) == codec.index("N-F")
    mask = codec.mask(rnd, 0)
    assert mask[codec.index("1-3")] == 0 and mask[codec.index("2-4")] == 1


def test_an_illegal_action_is_rejected_and_changes_nothing() -> None:
    e = parallel_env(seats=2, seed=5)
    obs, _ = e.reset()
    bad = int(np.flatnonzero(obs["seat_0"]["action_mask"] == 0)[0])
    before = [t.copy() for t in e.round.tableaus]
    _, _, _, _, infos = e.step({"seat_0": bad, "seat_1": NOOP})
    assert infos["seat_0"]["accepted"] is False and infos["seat_0"]["error"]
    assert e.round.tableaus == before
    with pytest.raises(ValueError):
        e.step({"seat_0": e.actions.size})


# ------------------------------------------------------------------ hidden information


def scramble_hidden(rnd: Round, rng: random.Random) -> Round:
    """A copy with every card nobody may see re-ordered: stocks, the cards under Nertz and
    waste tops, and face-down work cards (swapped between piles too)."""
    out = rnd.copy()
    for tab in out.tableaus:
        rng.shuffle(tab.stock)
        under, tab.nertz = tab.nertz[:-1], tab.nertz[-1:]
        rng.shuffle(under)
        tab.nertz = under + tab.nertz
        below, tab.waste = tab.waste[:-1], tab.waste[-1:]
        rng.shuffle(below)
        tab.waste = below + tab.waste
        down = [c for pile, d in zip(tab.work, tab.down, strict=True) for c in pile[:d]]
        rng.shuffle(down)
        for pile, d in zip(tab.work, tab.down, strict=True):
            pile[:d], down = down[:d], down[d:]
    return out


@pytest.mark.parametrize("preset", ["pagat", "fairy_fly"])
def test_observations_never_depend_on_hidden_cards(preset: str) -> None:
    e = parallel_env(preset, seats=3, seed=21, max_cycles=120)
    rng = np.random.default_rng(1)
    shuffler = random.Random(2)
    obs, _ = e.reset()
    assert scramble_hidden(e.round, shuffler).tableaus != e.round.tableaus  # it does scramble
    while e.agents:
        scrambled = scramble_hidden(e.round, shuffler)
        for seat, agent in enumerate(e.possible_agents):
            assert np.array_equal(e.observations.encode(scrambled, seat), obs[agent]["observation"])
            assert np.array_equal(e.actions.mask(scrambled, seat), obs[agent]["action_mask"])
        obs, *_ = e.step(random_actions(e, obs, rng))


def test_observation_layout() -> None:
    """Own seat first, then the opponents clockwise; cards as features; the foundations'
    needs; the playable flags."""
    e = parallel_env(seats=3, seed=8)
    obs, _ = e.reset()
    opp = OWN_HEAD + 5 * PILE_WIDTH  # five work-pile slots, whatever the ruleset
    needs = opp + 2 * OPPONENT_WIDTH
    for seat, agent in enumerate(e.possible_agents):
        vec = obs[agent]["observation"]
        own = e.round.tableaus[seat]
        assert np.array_equal(vec[:CARD_WIDTH], card_features(own.nertz[-1]))
        assert vec[CARD_WIDTH] == pytest.approx(len(own.nertz) / 13)
        first_pile = own.work[0][-1]
        assert np.array_equal(vec[OWN_HEAD : OWN_HEAD + CARD_WIDTH], card_features(first_pile))
        for rel in (1, 2):
            tab = e.round.tableaus[(seat + rel) % 3]
            at = opp + (rel - 1) * OPPONENT_WIDTH
            assert vec[at] == 1.0
            assert np.array_equal(vec[at + 1 : at + 1 + CARD_WIDTH], card_features(tab.nertz[-1]))
        # Nothing is on a foundation yet: each suit's Ace, and only it, is wanted.
        assert vec[needs : needs + 52].tolist() == [1.0 if i % 13 == 0 else 0.0 for i in range(52)]
        assert np.array_equal(vec[needs + 52 :], obs[agent]["action_mask"][1:])
        assert obs[agent] in e.observation_space(agent)
    features = card_features(Card.parse("7H"))
    assert features[0] == 1 and features[1 + 7] == 1 and features[15 + 1] == 1 and features[19] == 1
    assert card_features(None).sum() == 0


# ------------------------------------------------------------------ races and stuck tables


def layout(nertz_top: list[str], work: list[list[str]], stock_top: list[str] = ()) -> Layout:
    """A one-deck layout: the named Nertz top cards (last on top), work piles face up, the
    named cards on top of the stock, everything else filling the Nertz pile then the stock."""
    fixed = [Card.parse(c) for c in [*nertz_top, *(c for p in work for c in p), *stock_top]]
    rest = [c for c in deck() if c not in fixed]
    fill = 13 - len(nertz_top)
    nertz = (*rest[:fill], *(Card.parse(c) for c in nertz_top))
    piles = tuple(tuple((Card.parse(c), True) for c in pile) for pile in work)
    stock = (*(Card.parse(c) for c in stock_top), *rest[fill:])
    return Layout(nertz=nertz, work=piles, stock=stock)


def test_a_race_has_one_winner_and_both_seats_win_some() -> None:
    # Both seats hold 2S on their Nertz piles; seat 0 starts the spade foundation with its AS.
    lays = [
        layout(["2S"], [["AS"], ["KH"], ["KD"], ["KC"]]),
        layout(["2S"], [["AH"], ["KH"], ["KD"], ["KC"]]),
    ]
    winners = set()
    for seed in range(12):
        e = parallel_env(seats=2, seed=seed)
        e.reset(seed=seed, options={"layouts": lays})
        e.step({"seat_0": e.actions.index("1-F"), "seat_1": NOOP})
        play = e.actions.index("N-F")
        _, rewards, _, _, infos = e.step({"seat_0": play, "seat_1": play})
        accepted = [a for a in infos if infos[a]["accepted"]]
        assert len(accepted) == 1
        loser = next(a for a in infos if a not in accepted)
        assert infos[loser]["lost_race"]
        assert rewards[accepted[0]] == 3.0 and rewards[loser] == 0.0  # +1 card, +2 penalty
        winners.add(accepted[0])
    assert winners == {"seat_0", "seat_1"}  # the seeded order is fair, not seat order


def stuck_layout() -> Layout:
    """Stuck but not blocked (pagat, turn 3): kings on every work pile, every queen and three
    Aces under the Nertz top, and the last Ace first in the stock, where turning three at a time
    never shows it. Only a reset (which rotates the stock) can free it."""
    return layout(
        ["QS", "QH", "QD", "QC", "AH", "AD", "AC", "5H"],
        [["KS"], ["KH"], ["KD"], ["KC"]],
        stock_top=["AS"],
    )


def test_the_table_resets_when_every_seat_is_stuck() -> None:
    e = parallel_env(seats=2, seed=0)
    e.reset(options={"layouts": [stuck_layout(), stuck_layout()]})
    assert e.round.all_stuck() and not e.round.is_blocked()
    resets_at = []
    for _ in range(40):
        _, _, _, _, infos = e.step({"seat_0": NOOP, "seat_1": NOOP})
        if infos["seat_0"]["stuck_reset"]:
            resets_at.append(e.steps)
            if e.round.resets == 1:
                # After the reset the Ace comes up: the table is not stuck any more.
                assert not e.round.all_stuck()
    # After a pass through the stock without progress (35 stock cards / 3 turned, rounded
    # up, + 1 = 13 steps); seats that then go on waiting are stuck again a pass later.
    assert resets_at == [13, 26, 39]


def test_seats_that_only_wait_or_turn_are_declared_stuck() -> None:
    """No stalling: seats that could play but only wait or turn count as stuck after a pass
    through their stock, and the table is reset, as for seats that truly are stuck."""
    e = parallel_env(seats=2, seed=0)
    e.reset()
    assert not e.round.all_stuck()
    turn = e.actions.index("T")
    resets_at = []
    for step in range(60):
        action = NOOP if step % 2 else turn
        _, _, _, _, infos = e.step({"seat_0": action, "seat_1": NOOP})
        if infos["seat_0"]["stuck_reset"]:
            resets_at.append(e.steps)
    # 35 stock cards, 3 a turn: a pass is 13 steps; then again after each further pass.
    assert resets_at[:2] == [13, 26] and e.round.resets == len(resets_at)


def test_a_seat_making_progress_holds_off_the_reset() -> None:
    e = parallel_env(seats=2, seed=0)
    e.reset(options={"layouts": [stuck_layout(), layout(["2S"], [["AS"], ["KH"], ["KD"], ["KC"]])]})
    _, _, _, _, infos = e.step({"seat_0": NOOP, "seat_1": e.actions.index("1-F")})
    for _ in range(12):
        _, _, _, _, infos = e.step({})
        assert not infos["seat_0"]["stuck_reset"]
    # Seat 1 played its Ace at step 1, so its pass ends two steps after seat 0's.
    _, _, _, _, infos = e.step({})
    assert infos["seat_0"]["stuck_reset"] and e.steps == 14


# ------------------------------------------------------------------ episodes and determinism


def run_episode(e: NertzParallelEnv, seed: int | None, rng_seed: int) -> list[Any]:
    """Every output of one random-agent episode."""
    rng = np.random.default_rng(rng_seed)
    obs, infos = e.reset(seed=seed)
    trace: list[Any] = [obs, infos]
    while e.agents:
        out = e.step(random_actions(e, obs, rng))
        obs = out[0]
        trace.append(out)
    return trace


def same(a: Any, b: Any) -> bool:
    """Deep equality that understands numpy arrays."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return bool(a == b)


def test_a_random_episode_ends_and_its_return_is_the_round_score() -> None:
    e = parallel_env(seats=4, seed=3)
    rng = np.random.default_rng(3)
    obs, first = e.reset()
    dealt = {a: first[a]["score"] for a in e.possible_agents}
    returns = dict.fromkeys(e.possible_agents, 0.0)
    while e.agents:
        obs, rewards, terms, truncs, infos = e.step(random_actions(e, obs, rng))
        for a, r in rewards.items():
            returns[a] += r
    assert all(terms.values()) or all(truncs.values())
    assert e.steps <= e.max_cycles
    # Counted from the deal's score (the dealt Nertz pile's penalty), not charged at step one.
    assert dealt == {a: -26 for a in e.possible_agents}
    assert returns == {a: float(infos[a]["score"] - dealt[a]) for a in e.possible_agents}
    assert e.step({}) == ({}, {}, {}, {}, {})


def test_the_step_cap_truncates() -> None:
    e = parallel_env(seats=2, seed=3, max_cycles=25)
    e.reset()
    for _ in range(25):
        _, _, terms, truncs, _ = e.step({})
    assert all(truncs.values()) and not any(terms.values()) and e.agents == []


def test_seeded_episodes_repeat_exactly() -> None:
    a = run_episode(parallel_env(seats=3), seed=42, rng_seed=9)
    b = run_episode(parallel_env(seats=3), seed=42, rng_seed=9)
    c = run_episode(parallel_env(seats=3), seed=43, rng_seed=9)
    assert same(a, b)
    assert not same(a[0], c[0])
    # The constructor's seed and seed() do what reset(seed=) does; later resets follow on.
    d = parallel_env(seats=3, seed=42)
    assert same(run_episode(d, seed=None, rng_seed=9), a)
    e = parallel_env(seats=3)
    e.seed(42)
    assert same(run_episode(e, seed=None, rng_seed=9), a)
    assert same(run_episode(d, None, 1), run_episode(e, None, 1))


def test_a_seeded_reset_deals_the_matchs_deal_and_whole_match_plays_on() -> None:
    e = parallel_env("sanna", seats=2, seed=6)
    e.reset()
    dealt = Match(e.rules, 2, seed=6).deal()
    assert e.round.tableaus == dealt.tableaus
    e.reset()  # independent rounds: a fresh match each time
    assert e.match.round_index == 0 and e.round.tableaus != dealt.tableaus
    w = parallel_env("sanna", seats=2, seed=6, whole_match=True, max_cycles=5)
    w.reset()
    while w.agents:
        w.step({})
    w.reset()  # the truncated round is scored as it stands; both seats were negative
    assert w.match.round_index == 1
    assert [len(t.nertz) for t in w.round.tableaus] == [9, 9]  # sanna: 10, -1 when negative


def test_single_agent_greedy_learner_plays_a_round() -> None:
    single = make_single(seats=3, opponents="greedy", seed=5)
    _, first = single.reset()
    total, done = float(first["score"]), False
    while not done:
        rnd = single.table.round
        move = greedy_move(rnd, 0)
        if move is None:
            tab = rnd.tableaus[0]
            action = 1 if tab.stock or tab.waste else NOOP  # T, or wait
        else:
            action = single.table.actions.encode(rnd, 0, move)
        assert single.action_masks()[action] == 1
        _, reward, terminated, truncated, info = single.step(action)
        total += reward
        done = terminated or truncated
    assert terminated and single.table.round.ended in ("nertz", "blocked")
    assert total == info["score"]


def test_single_agent_rejects_bad_opponents() -> None:
    with pytest.raises(ValueError):
        make_single(opponents="no-such-bot")
    with pytest.raises(ValueError):
        make_single(seats=3, opponents=["greedy"])


# ------------------------------------------------------------------ the docs


def test_the_docs_snippets_run(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S)
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, str(DOCS), "exec"), {})
    printed = capsys.readouterr().out
    assert re.match(r"(nertz|blocked|None) \{'seat_0': ", printed)
