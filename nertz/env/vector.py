"""Many tables stepped in one call: a Gymnasium ``VectorEnv`` of single-learner tables.

:class:`NertzVectorEnv` holds ``num_envs`` independent :class:`nertz.env.single.SingleAgentEnv`
tables (one learner against bots each) and steps them all with one array of actions, the form
vectorised learners (PPO and its kin) consume: one batched observation ``{"observation":
(n, size) float32, "action_mask": (n, actions) int8}``, and arrays of rewards, terminations and
truncations.

It resets a finished table in the same call (Gymnasium's ``AutoresetMode.SAME_STEP``, the
convention Stable-Baselines3 uses too): the observation returned for that table is its new
round's first, and ``infos["final_obs"]`` (with the mask ``infos["_final_obs"]``) holds the
finished round's last. ``infos["score"]`` is each table's round score after the step (the
finished round's, for a table just reset), and ``infos["won"]`` the learner's share of the
round's win for a finished table (1 for the top score, split on a tie; 0 elsewhere).

Table ``i`` is seeded from ``seed + i`` at the first ``reset(seed=...)``, so a seeded vector
env repeats exactly. :func:`nertz.rl.vec.sb3_vec_env` wraps this one as Stable-Baselines3's
``VecEnv`` for sb3-contrib's ``MaskablePPO`` (the ``rl`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from nertz.env.single import OpponentSpec, SingleAgentEnv
from nertz.rules import Rules

BatchObservation = dict[str, npt.NDArray[Any]]
"""``{"observation": (n, size) float32, "action_mask": (n, actions) int8}``."""


class NertzVectorEnv(VectorEnv[BatchObservation, npt.NDArray[np.int64], npt.NDArray[Any]]):
    """``num_envs`` tables of one learner against bots, stepped together (module docstring).

    Every keyword after ``num_envs`` is :class:`SingleAgentEnv`'s; a name or plain policy as
    ``opponents`` is shared, a list of bot objects is not (give names instead: each table then
    gets its own bots).
    """

    # Gymnasium declares ``metadata`` an instance attribute, so no ClassVar here.
    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int,
        rules: str | Rules | dict[str, Any] = "pagat",
        seats: int = 4,
        opponents: OpponentSpec | Sequence[OpponentSpec] = "greedy",
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        if num_envs < 1:
            raise ValueError(f"a vector env needs at least 1 table, not {num_envs}")
        self.envs = [
            SingleAgentEnv(rules, seats, opponents, None, **kwargs) for _ in range(num_envs)
        ]
        """The tables."""
        self.num_envs = num_envs
        first = self.envs[0]
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(first.observation_space, num_envs)
        self.action_space = batch_space(first.action_space, num_envs)
        self._seed = seed
        obs_size = first.table.observations.size
        n_actions = first.table.actions.size
        self._obs = np.zeros((num_envs, obs_size), dtype=np.float32)
        self._masks = np.zeros((num_envs, n_actions), dtype=np.int8)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[BatchObservation, dict[str, Any]]:
        """Deal a round at every table; ``seed`` seeds table ``i`` with ``seed + i`` (or takes
        one seed per table as a list)."""
        if seed is None:
            seed, self._seed = self._seed, None
        if seed is None or isinstance(seed, int):
            seeds: list[int | None] = [
                None if seed is None else seed + i for i in range(self.num_envs)
            ]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"{len(seeds)} seeds for {self.num_envs} tables")
        scores = np.zeros(self.num_envs, dtype=np.int64)
        for i, (env, s) in enumerate(zip(self.envs, seeds, strict=True)):
            obs, info = env.reset(seed=s, options=options)
            self._store(i, obs)
            scores[i] = info["score"]
        return self._batch(), {"score": scores}

    def step(
        self, actions: npt.NDArray[np.int64] | Sequence[int]
    ) -> tuple[
        BatchObservation,
        npt.NDArray[np.float64],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        dict[str, Any],
    ]:
        """One step at every table (``actions[i]`` is table i's learner's action)."""
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} actions for {self.num_envs} tables")
        n = self.num_envs
        rewards = np.zeros(n, dtype=np.float64)
        terms = np.zeros(n, dtype=np.bool_)
        truncs = np.zeros(n, dtype=np.bool_)
        scores = np.zeros(n, dtype=np.int64)
        won = np.zeros(n, dtype=np.float64)
        done = np.zeros(n, dtype=np.bool_)
        final_obs = np.zeros_like(self._obs)
        final_masks = np.zeros_like(self._masks)
        for i, env in enumerate(self.envs):
            obs, reward, term, trunc, info = env.step(int(actions[i]))
            rewards[i], terms[i], truncs[i] = reward, term, trunc
            scores[i] = info["score"]
            if term or trunc:
                done[i] = True
                final_obs[i] = obs["observation"]
                final_masks[i] = obs["action_mask"]
                won[i] = _won(env)
                obs, _ = env.reset()
            self._store(i, obs)
        infos: dict[str, Any] = {"score": scores, "won": won}
        if done.any():
            infos["final_obs"] = {"observation": final_obs, "action_mask": final_masks}
            infos["_final_obs"] = done
        return self._batch(), rewards, terms, truncs, infos

    def action_masks(self) -> npt.NDArray[np.int8]:
        """Every table's current action mask, one row a table."""
        return self._masks.copy()

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""

    def _store(self, i: int, obs: dict[str, npt.NDArray[Any]]) -> None:
        self._obs[i] = obs["observation"]
        self._masks[i] = obs["action_mask"]

    def _batch(self) -> BatchObservation:
        return {"observation": self._obs.copy(), "action_mask": self._masks.copy()}


def _won(env: SingleAgentEnv) -> float:
    """The learner's share of its finished round's win (ties split)."""
    from nertz.scoring import score_round

    totals = score_round(env.table.round).totals
    top = max(totals)
    if totals[env.learner] != top:
        return 0.0
    return 1.0 / totals.count(top)

