"""Stable-Baselines3's ``VecEnv`` over :class:`nertz.env.NertzVectorEnv` (the ``rl`` extra).

:func:`sb3_vec_env` builds the adapter. It shows learners the observation vector alone (a
``Box``, which SB3's ``MlpPolicy`` takes as it is) and hands the action masks to sb3-contrib's
``MaskablePPO`` through ``env_method("action_masks")``, the call its ``get_action_masks`` makes.
Finished tables are reset in the same step, as SB3 expects: the finished round's last
observation is ``infos[i]["terminal_observation"]``, ``infos[i]["TimeLimit.truncated"]`` says it
was cut by the step cap, and ``infos[i]["won"]`` / ``infos[i]["score"]`` give the learner's share
of that round's win and its round score.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from nertz.env.vector import NertzVectorEnv


class NertzSB3VecEnv(VecEnv):
    """The adapter (module docstring); ``tables`` is the vector env it drives."""

    def __init__(self, tables: NertzVectorEnv) -> None:
        self.tables = tables
        """The Gymnasium vector env underneath."""
        space = tables.single_observation_space
        assert isinstance(space, gymnasium.spaces.Dict)
        super().__init__(tables.num_envs, space["observation"], tables.single_action_space)
        self._actions: npt.NDArray[np.int64] = np.zeros(tables.num_envs, dtype=np.int64)

    def reset(self) -> npt.NDArray[np.float32]:
        """Deal at every table (seeded by :meth:`seed` if it was called)."""
        seeds = self._seeds if any(s is not None for s in self._seeds) else None
        obs, info = self.tables.reset(seed=seeds)
        self._reset_seeds()
        self.reset_infos = [{"score": int(s)} for s in info["score"]]
        observations: npt.NDArray[np.float32] = obs["observation"]
        return observations

    def step_async(self, actions: npt.NDArray[np.int64]) -> None:
        """Remember the actions for :meth:`step_wait`."""
        self._actions = np.asarray(actions, dtype=np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        """Step every table with the remembered actions."""
        obs, rewards, terms, truncs, info = self.tables.step(self._actions)
        dones = terms | truncs
        infos: list[dict[str, Any]] = []
        for i in range(self.num_envs):
            item: dict[str, Any] = {"score": int(info["score"][i])}
            if dones[i]:
                item["terminal_observation"] = info["final_obs"]["observation"][i]
                item["TimeLimit.truncated"] = bool(truncs[i] and not terms[i])
                item["won"] = float(info["won"][i])
            infos.append(item)
        return obs["observation"], rewards.astype(np.float32), dones, infos

    def action_masks(self) -> npt.NDArray[np.int8]:
        """Every table's action mask, one row a table."""
        return self.tables.action_masks()

    def close(self) -> None:
        """Close the tables."""
        self.tables.close()

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of each table's environment."""
        return [getattr(self.tables.envs[i], attr_name) for i in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute on each table's environment."""
        for i in self._indices(indices):
            setattr(self.tables.envs[i], attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call a method of each table's environment (``action_masks`` is answered from the
        batch)."""
        chosen = self._indices(indices)
        if method_name == "action_masks":
            masks = self.tables.action_masks()
            return [masks[i] for i in chosen]
        return [
            getattr(self.tables.envs[i], method_name)(*method_args, **method_kwargs)
            for i in chosen
        ]

    def env_is_wrapped(
        self, wrapper_class: type[gymnasium.Wrapper[Any, Any, Any, Any]],
        indices: VecEnvIndices = None,
    ) -> list[bool]:
        """No table is wrapped."""
        return [False for _ in self._indices(indices)]


def sb3_vec_env(num_envs: int, **kwargs: Any) -> NertzSB3VecEnv:
    """``num_envs`` tables as an SB3 ``VecEnv``; keywords are :class:`NertzVectorEnv`'s."""
    return NertzSB3VecEnv(NertzVectorEnv(num_envs, **kwargs))

