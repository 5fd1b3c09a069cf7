"""The vectorised environment: batched spaces, same-step autoreset, seeded repeatability."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from nertz.env import NertzVectorEnv, make_single


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per table."""
    return np.array([int(rng.choice(np.flatnonzero(m))) for m in masks])


def run(venv: NertzVectorEnv, steps: int, seed: int) -> list[np.ndarray]:
    """Rewards, dones and observations of a seeded random run."""
    rng = np.random.default_rng(seed)
    obs, _ = venv.reset(seed=seed)
    trace = [obs["observation"]]
    for _ in range(steps):
        obs, rewards, terms, truncs, _ = venv.step(random_legal(obs["action_mask"], rng))
        trace += [obs["observation"], rewards, terms | truncs]
    return trace


def test_batched_spaces_and_autoreset() -> None:
    venv = NertzVectorEnv(3, seats=2, opponents="greedy", max_cycles=40)
    single = make_single(seats=2, opponents="greedy")
    obs, info = venv.reset(seed=5)
    size = single.table.observations.size
    assert obs["observation"].shape == (3, size) and obs["observation"].dtype == np.float32
    assert obs["action_mask"].shape == (3, single.table.actions.size)
    assert obs in venv.observation_space
    assert info["score"].tolist() == [-26, -26, -26]
    assert np.array_equal(venv.action_masks(), obs["action_mask"])
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(45):  # past the 40-step cap: every table finishes at least once
        obs, _, terms, truncs, info = venv.step(random_legal(obs["action_mask"], rng))
        done = terms | truncs
        if done.any():
            finished += int(done.sum())
            assert np.array_equal(info["_final_obs"], done)
            # The returned observation is the new round's; the finished one's is kept aside.
            for i in np.flatnonzero(done):
                assert not np.array_equal(info["final_obs"]["observation"][i],
                                          obs["observation"][i])
                assert 0.0 <= info["won"][i] <= 1.0
    assert finished >= 3
    with pytest.raises(ValueError):
        venv.step(np.zeros(2, dtype=np.int64))


def test_a_seeded_vector_env_repeats() -> None:
    a = run(NertzVectorEnv(2, seats=3, opponents="random"), 30, seed=7)
    b = run(NertzVectorEnv(2, seats=3, opponents="random"), 30, seed=7)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    # Table i is the single env seeded seed + i.
    single = make_single(seats=3, opponents="random")
    first, _ = single.reset(seed=8)
    venv = NertzVectorEnv(2, seats=3, opponents="random")
    obs, _ = venv.reset(seed=7)
    assert np.array_equal(obs["observation"][1], first["observation"])
