"""The learned bot and its policy file (numpy only), and a short training run (the rl extra)
that shows the reward rising."""

from __future__ import annotations

import random
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from nertz.bots import Observation
from nertz.bots.base import sample_world
from nertz.bots.registry import PlayerSpec, find_bot
from nertz.match import Match
from nertz.rl.bot import DEFAULT_POLICY, POLICY_ENV, LearnedBot
from nertz.rl.policy import Policy, PolicyError, policy_meta
from nertz.rules import Rules
from nertz.sim.runner import SimConfig, play_one
from nertz.views import view


def random_policy(rules: Rules, opponents: int = 2, seed: int = 0) -> Policy:
    """A policy with random weights: enough to check how a policy is played."""
    meta = policy_meta(rules, opponents, {"test": True})
    rng = np.random.default_rng(seed)
    sizes = [meta["obs_size"], 16, len(meta["labels"])]
    weights = [rng.normal(0, 0.5, (a, b)).astype(np.float32) for a, b in pairwise(sizes)]
    biases = [rng.normal(0, 0.1, b).astype(np.float32) for b in sizes[1:]]
    return Policy(weights, biases, meta)


@pytest.fixture
def policy_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = random_policy(Rules.from_spec("pagat")).save(tmp_path / "p.npz")
    monkeypatch.setenv(POLICY_ENV, str(path))
    return path


def test_a_policy_file_round_trips(tmp_path: Path) -> None:
    policy = random_policy(Rules.from_spec("pagat"))
    loaded = Policy.load(policy.save(tmp_path / "p.npz"))
    obs = np.random.default_rng(1).random(policy.observations.size).astype(np.float32)
    assert np.allclose(loaded.logits(obs), policy.logits(obs))
    assert loaded.meta == policy.meta
    mask = np.zeros(policy.actions.size, dtype=np.int8)
    mask[[1, 5]] = 1
    assert policy.choose(obs, mask) in (1, 5)


def test_bad_policy_files_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="no policy file"):
        LearnedBot(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    with pytest.raises(PolicyError, match="not a policy file"):
        Policy.load(junk)
    policy = random_policy(Rules.from_spec("pagat"))
    policy.meta["labels"] = [*policy.meta["labels"][:-1], "9-8"]
    with pytest.raises(PolicyError, match="action table"):
        Policy.load(policy.save(tmp_path / "other.npz"))


@pytest.mark.parametrize("preset", ["pagat", "standard", "fairy_fly"])
def test_the_learned_bot_is_registered_and_plays_in_the_simulator(
    policy_file: Path, preset: str
) -> None:
    """One policy plays every ruleset (five work piles, Nertz-pile rotation) and seat count."""
    assert isinstance(find_bot("learned")(), LearnedBot)
    rules = Rules.from_spec(preset)
    players = tuple(PlayerSpec.parse(p) for p in ("learned", "greedy", "greedy", "learned"))
    record = play_one(SimConfig(rules, players, seed=3), 0)
    assert record.ended in ("nertz", "blocked", "open") and len(record.scores) == 4


@pytest.mark.parametrize("seats", [2, 3, 5])
def test_the_learned_bot_sees_only_its_seats_view(policy_file: Path, seats: int) -> None:
    """Every hidden card re-dealt, the bot decides the same; and the same from a view (the
    server's way) as from the live round (the simulator's)."""
    rules = Rules.from_spec("pagat")
    rnd = Match(rules, seats, seed=4).deal()
    rng = random.Random(5)
    decisions = 0
    for step in range(60):
        if rnd.ended is not None:
            break
        seat = step % seats
        bot = LearnedBot()
        bot.start(seat, rules)
        move = bot.decide(Observation.from_round(rnd, seat))
        for _ in range(3):
            other = LearnedBot()
            other.start(seat, rules)
            assert other.decide(Observation.from_round(sample_world(rnd, rng), seat)) == move
        served = LearnedBot()
        served.start(seat, rules)
        assert served.decide(Observation.from_view(view(rnd, seat), rules)) == move
        if move is not None:
            rnd.play(seat, move)
            decisions += 1
    assert decisions > 20


def test_the_learned_bot_declares_stuck_rather_than_stall(policy_file: Path) -> None:
    rules = Rules.from_spec("pagat")
    rnd = Match(rules, 2, seed=6).deal()
    bot = LearnedBot()
    bot.start(0, rules)
    moves = []
    for _ in range(200):
        move = bot.decide(Observation.from_round(rnd, 0))
        moves.append(move)
        if move is None:
            break
        rnd.play(0, move)
    # Whatever it did, nobody else played: within a few passes it declares and then waits.
    assert moves[-1] is None and rnd.stuck[0] == "S"


# ------------------------------------------------------------------ training (the rl extra)


def test_a_short_training_run_raises_the_reward(tmp_path: Path) -> None:
    """A tiny variant (two seats against random play, a one-layer network, 6,000 steps, about
    ten seconds of CPU): the learner's mean round score rises over the run and its policy beats
    random legal play on rounds it never saw. Seeded, so it does the same every time."""
    pytest.importorskip("sb3_contrib")
    from nertz.rl.train import TrainConfig, evaluate, train

    config = TrainConfig(
        seats=2, opponents=["random"], minutes=0, max_steps=6000, envs=4, n_steps=64,
        batch_size=64, net=(32,), max_cycles=60, win_reward=0.0, seed=3, learning_rate=1e-3,
        checkpoint_minutes=0,
    )
    result = train(config, tmp_path)
    rows = list(np.genfromtxt(result.curve_csv, delimiter=",", names=True))
    scores = [float(r["mean_score"]) for r in rows]
    quarter = len(scores) // 4
    assert quarter >= 4
    early, late = np.mean(scores[:quarter]), np.mean(scores[-quarter:])
    assert late > early + 2.0, (early, late)
    learned = evaluate(Policy.load(result.policy), config, 20)
    random_play = evaluate(None, config, 20)
    assert learned["mean_score"] > random_play["mean_score"] + 2.0, (learned, random_play)
    assert result.curve_png is None or result.curve_png.exists()


def test_nertz_train_command(capsys: pytest.CaptureFixture[str]) -> None:
    from nertz.cli import main

    assert main(["train", "--minutes", "0", "--out", "unused"]) == 2
    assert "minutes must be positive" in capsys.readouterr().err
    assert main(["train", "--seats", "3", "--opponents", "greedy,greedy,greedy"]) == 2
    assert "one per other seat" in capsys.readouterr().err
    # The shipped policy, evaluated on two rounds (and random play beside it).
    assert main(["train", "--evaluate", str(DEFAULT_POLICY), "--eval-rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert "learned: win share" in out and "random: win share" in out
