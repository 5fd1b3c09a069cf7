"""AI environment benchmark: parallel-environment steps per second, one table and vectorised.

    .venv/bin/python bench/env.py [--seats 4] [--preset pagat] [--seconds 10] [--tables 16]

*Steps per second*: :func:`nertz.env.parallel_env` with every seat choosing a random action
its mask allows (one step is every seat acting once); episodes are reset when they end. The
choice of actions costs a little numpy per seat, as it would for any agent. *Single steps per
second*: one learner's table (:func:`nertz.env.make_single`, the other seats random bots).
*Vector steps per second*: ``--tables`` such tables stepped in one call by
:class:`nertz.env.NertzVectorEnv`, counted as table-steps. One process,
one core; rates are per second of this process's CPU time, so other work on the machine does
not skew them much (a busy machine still slows caches: compare figures from one run).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from nertz.env import parallel_env


def steps_per_second(preset: str, seats: int, seconds: float) -> tuple[float, int]:
    """Random legal play in one table: (steps per CPU second, steps taken)."""
    env = parallel_env(preset, seats=seats, seed=1)
    rng = np.random.default_rng(1)
    obs, _ = env.reset()
    steps = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        if not env.agents:
            obs, _ = env.reset()
        actions = {
            a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents
        }
        obs, *_ = env.step(actions)
        steps += 1
    return steps / (time.process_time() - start), steps


def single_steps_per_second(preset: str, seats: int, seconds: float) -> tuple[float, int] | None:
    """One learner against random bots, one table stepped at a time (the vector env's unit of
    work, for comparison): (steps per CPU second, steps taken)."""
    try:
        from nertz.env import (
            NertzVectorEnv,  # noqa: F401  # present in versions with this form
            make_single,
        )
    except ImportError:
        return None
    env = make_single(preset, seats=seats, opponents="random", seed=1)
    rng = np.random.default_rng(1)
    obs, _ = env.reset()
    steps = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, _, term, trunc, _ = env.step(action)
        if term or trunc:
            obs, _ = env.reset()
        steps += 1
    return steps / (time.process_time() - start), steps


def vector_steps_per_second(
    preset: str, seats: int, seconds: float, tables: int
) -> tuple[float, int] | None:
    """Random legal play in ``tables`` tables stepped together: (table-steps per CPU second,
    table-steps taken), or None where this version has no vector form."""
    try:
        from nertz.env.vector import NertzVectorEnv
    except ImportError:
        return None
    venv = NertzVectorEnv(tables, rules=preset, seats=seats, opponents="random", seed=1)
    rng = np.random.default_rng(1)
    obs, _ = venv.reset(seed=1)
    steps = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        masks = obs["action_mask"]
        actions = np.array([int(rng.choice(np.flatnonzero(m))) for m in masks])
        obs, *_ = venv.step(actions)
        steps += tables
    return steps / (time.process_time() - start), steps


def main() -> None:
    """Run both measurements and print them (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="pagat")
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--tables", type=int, default=16)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rate, steps = steps_per_second(args.preset, args.seats, args.seconds)
    out: dict[str, Any] = {"steps_per_s": round(rate, 1), "steps": steps}
    single = single_steps_per_second(args.preset, args.seats, args.seconds)
    if single is not None:
        out.update(single_steps_per_s=round(single[0], 1))
    vec = vector_steps_per_second(args.preset, args.seats, args.seconds, args.tables)
    if vec is not None:
        out.update(vector_steps_per_s=round(vec[0], 1), vector_steps=vec[1], tables=args.tables)
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
