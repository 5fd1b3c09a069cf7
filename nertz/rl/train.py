"""``nertz train``: sb3-contrib's ``MaskablePPO`` against chosen opponents, to a policy file.

The learner plays one seat of ``seats`` (seat 0; the opponents fill the others) in
:class:`nertz.env.NertzVectorEnv` tables, seen through :class:`nertz.rl.vec.NertzSB3VecEnv`.
Its reward is the environment's: the change in its round score from the deal, plus the shaping
chosen (``foundation_reward``, ``nertz_reward``, ``win_reward``). Training stops after
``minutes`` of this process's CPU time (one core: PyTorch is held to ``threads`` threads, one
by default) or ``max_steps`` steps, whichever comes first.

Written into ``out`` (a directory):

- ``policy.npz``: the policy file (:mod:`nertz.rl.policy`), what the ``learned`` bot plays;
- ``curve.csv``: after each rollout, the steps so far, CPU and wall seconds, and over the
  episodes finished in that rollout the learner's win share (ties split) and mean round score;
- ``curve.png``: that curve as a plot (needs matplotlib, the ``plot`` extra);
Policy and curve are also written every ``checkpoint_minutes`` of CPU time along the way, so a
run stopped early still leaves its latest policy.

- ``eval.json``: with ``eval_rounds``, the trained policy's win share and mean score over that
  many further rounds against the same opponents (played as the ``learned`` bot plays: the
  highest legal logit, never waiting), and the same for ``random`` in its seat for comparison.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nertz.env.actions import NOOP
from nertz.env.single import SingleAgentEnv
from nertz.rl.policy import Policy, policy_meta
from nertz.rl.vec import sb3_vec_env
from nertz.rules import Rules


@dataclass
class TrainConfig:
    """Everything one training run depends on (``nertz train`` sets these from its flags)."""

    rules: str = "pagat"
    seats: int = 3
    opponents: list[str] = field(default_factory=lambda: ["greedy", "greedy"])
    minutes: float = 20.0
    max_steps: int | None = None
    seed: int = 1
    envs: int = 8
    net: tuple[int, ...] = (128, 128)
    learning_rate: float = 3e-4
    n_steps: int = 128
    batch_size: int = 256
    epochs: int = 4
    gamma: float = 0.99
    ent_coef: float = 0.01
    foundation_reward: float = 0.0
    nertz_reward: float = 0.0
    win_reward: float = 10.0
    max_cycles: int = 400
    threads: int = 1
    eval_rounds: int = 0
    checkpoint_minutes: float = 1.0

    def check(self) -> None:
        """Raise ``ValueError`` naming the first setting that makes no sense."""
        Rules.from_spec(self.rules)
        if not 2 <= self.seats <= 8:
            raise ValueError(f"seats must be 2 to 8, not {self.seats}")
        if len(self.opponents) not in (1, self.seats - 1):
            raise ValueError(
                f"give one opponent or one per other seat ({self.seats - 1}), "
                f"not {len(self.opponents)}"
            )
        if self.minutes <= 0 and self.max_steps is None:
            raise ValueError("minutes must be positive (or give max_steps)")
        for name in ("envs", "n_steps", "batch_size", "epochs", "threads", "max_cycles"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not self.net or min(self.net) < 1:
            raise ValueError(f"net must be one or more positive layer widths, not {self.net}")

    def opponent_list(self) -> list[str]:
        """One opponent name per other seat."""
        return self.opponents * (self.seats - 1) if len(self.opponents) == 1 else self.opponents


@dataclass
class TrainResult:
    """What a run produced."""

    policy: Path
    curve_csv: Path
    curve_png: Path | None
    steps: int
    cpu_seconds: float
    wall_seconds: float
    evaluation: dict[str, Any] | None


def train(
    config: TrainConfig, out: str | Path, log: Callable[[str], None] | None = None
) -> TrainResult:
    """Train (module docstring); ``log`` gets a line after each rollout."""
    config.check()
    # Imported here: the rl extra is optional and heavy.
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    torch.set_num_threads(config.threads)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    rules = Rules.from_spec(config.rules)
    venv = sb3_vec_env(
        config.envs,
        rules=rules,
        seats=config.seats,
        opponents=config.opponent_list(),
        seed=config.seed,
        max_cycles=config.max_cycles,
        foundation_reward=config.foundation_reward,
        nertz_reward=config.nertz_reward,
        win_reward=config.win_reward,
    )
    venv.seed(config.seed)
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        learning_rate=config.learning_rate,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.epochs,
        gamma=config.gamma,
        ent_coef=config.ent_coef,
        policy_kwargs={"net_arch": list(config.net)},
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    cpu0, wall0 = time.process_time(), time.monotonic()
    budget = config.minutes * 60.0
    rows: list[dict[str, float]] = []
    curve_csv = out_dir / "curve.csv"

    def save(steps: int) -> Policy:
        """Write the policy file, curve.csv and curve.png as they stand."""
        cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
        trained = {
            "config": {
                k: list(v) if isinstance(v, tuple) else v for k, v in asdict(config).items()
            },
            "steps": steps,
            "cpu_seconds": round(cpu, 1),
            "wall_seconds": round(wall, 1),
            "torch": torch.__version__,
        }
        policy = export(model, rules, config.seats - 1, trained)
        policy.save(out_dir / "policy.npz")
        with curve_csv.open("w", newline="") as f:
            writer = csv.DictWriter(
                f, ["steps", "cpu_s", "wall_s", "episodes", "win_share", "mean_score"]
            )
            writer.writeheader()
            writer.writerows(rows)
        plot_curve(rows, out_dir / "curve.png", config)
        return policy

    class Curve(BaseCallback):
        """Collects finished episodes; one curve row a rollout; stops at the budget."""

        def __init__(self) -> None:
            super().__init__()
            self.saved = 0.0
            self.won: list[float] = []
            self.scores: list[float] = []

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "won" in info:
                    self.won.append(info["won"])
                    self.scores.append(info["score"])
            cpu = time.process_time() - cpu0
            over_steps = config.max_steps is not None and self.num_timesteps >= config.max_steps
            return not over_steps and (config.minutes <= 0 or cpu < budget)

        def _on_rollout_end(self) -> None:
            if not self.won:
                return
            row = {
                "steps": float(self.num_timesteps),
                "cpu_s": round(time.process_time() - cpu0, 1),
                "wall_s": round(time.monotonic() - wall0, 1),
                "episodes": float(len(self.won)),
                "win_share": round(float(np.mean(self.won)), 4),
                "mean_score": round(float(np.mean(self.scores)), 2),
            }
            rows.append(row)
            self.won, self.scores = [], []
            if config.checkpoint_minutes > 0 and (
                row["cpu_s"] - self.saved >= config.checkpoint_minutes * 60
            ):
                self.saved = row["cpu_s"]
                save(self.num_timesteps)
            if log is not None:
                log(
                    f"{int(row['steps'])} steps, {row['cpu_s']:.0f} s: win share "
                    f"{row['win_share']:.3f}, mean score {row['mean_score']:.1f} "
                    f"({int(row['episodes'])} rounds)"
                )

    total = config.max_steps if config.max_steps is not None else 10**12
    model.learn(total_timesteps=total, callback=Curve())
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    policy = save(int(model.num_timesteps))
    policy_path = out_dir / "policy.npz"
    drawn = out_dir / "curve.png"
    curve_png = drawn if rows and drawn.exists() else None
    evaluation = None
    if config.eval_rounds:
        evaluation = {
            "learned": evaluate(policy, config, config.eval_rounds),
            "random": evaluate(None, config, config.eval_rounds),
        }
        (out_dir / "eval.json").write_text(json.dumps(evaluation, indent=2) + "\n")
    venv.close()
    return TrainResult(
        policy_path, curve_csv, curve_png, int(model.num_timesteps), cpu, wall, evaluation
    )


def export(model: Any, rules: Rules, opponents: int, trained: dict[str, Any]) -> Policy:
    """The actor of a trained ``MaskablePPO`` ``MlpPolicy`` as a :class:`Policy`."""
    import torch

    net = model.policy
    weights, biases = [], []
    for layer in net.mlp_extractor.policy_net:
        if isinstance(layer, torch.nn.Linear):
            weights.append(layer.weight.detach().cpu().numpy().T.astype(np.float32))
            biases.append(layer.bias.detach().cpu().numpy().astype(np.float32))
        elif not isinstance(layer, torch.nn.Tanh):
            raise TypeError(f"the policy network has a {type(layer).__name__}; only tanh MLPs")
    weights.append(net.action_net.weight.detach().cpu().numpy().T.astype(np.float32))
    biases.append(net.action_net.bias.detach().cpu().numpy().astype(np.float32))
    return Policy(weights, biases, policy_meta(rules, opponents, trained))


def evaluate(
    policy: Policy | None, config: TrainConfig, rounds: int, seed: int = 10**6
) -> dict[str, float]:
    """Win share and mean round score of ``policy`` (None: a random legal player) in seat 0
    against the configured opponents, over ``rounds`` rounds dealt from ``seed`` on (seeds the
    training never dealt: it draws them from its own generator, below 2**31 but from a
    different stream). The policy plays as the ``learned`` bot does."""
    env = SingleAgentEnv(
        config.rules, config.seats, config.opponent_list(), max_cycles=config.max_cycles
    )
    rng = np.random.default_rng(seed)
    won = 0.0
    scores = 0.0
    for i in range(rounds):
        obs, _ = env.reset(seed=seed + i)
        done = False
        info: dict[str, Any] = {}
        while not done:
            mask = obs["action_mask"].copy()
            if mask.sum() > 1:
                mask[NOOP] = 0
            if policy is None:
                action = int(rng.choice(np.flatnonzero(mask)))
            else:
                action = policy.choose(obs["observation"], mask)
            obs, _, term, trunc, info = env.step(action)
            done = term or trunc
        totals = [int(x) for x in _totals(env)]
        top = max(totals)
        if totals[0] == top:
            won += 1.0 / totals.count(top)
        scores += info["score"]
    return {"rounds": rounds, "win_share": round(won / rounds, 4),
            "mean_score": round(scores / rounds, 2)}


def _totals(env: SingleAgentEnv) -> Sequence[int]:
    from nertz.scoring import score_round

    return score_round(env.table.round).totals


def plot_curve(rows: list[dict[str, float]], path: Path, config: TrainConfig) -> Path | None:
    """The learning curve as a PNG (None without matplotlib or without rows)."""
    if not rows:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    steps = [r["steps"] for r in rows]
    win = [r["win_share"] for r in rows]
    score = [r["mean_score"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    # A rollout finishes a dozen rounds or so: its win share is noisy, so the mean over the last
    # ten rollouts is drawn over it.
    smooth = [float(np.mean(win[max(0, i - 9) : i + 1])) for i in range(len(win))]
    ax.plot(steps, win, color="tab:blue", alpha=0.25)
    ax.plot(steps, smooth, color="tab:blue", label="learner's win share (10 rollouts)")
    ax.axhline(1 / config.seats, color="tab:blue", linestyle=":", label="parity")
    ax.set_xlabel("training steps")
    ax.set_ylabel("win share per rollout")
    ax.set_ylim(0, 1)
    twin = ax.twinx()
    score_smooth = [float(np.mean(score[max(0, i - 9) : i + 1])) for i in range(len(score))]
    twin.plot(steps, score_smooth, color="tab:orange", label="mean round score (10 rollouts)")
    twin.set_ylabel("mean round score")
    lines = ax.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="lower right", fontsize=8)
    ax.set_title(
        f"MaskablePPO, {config.rules}, {config.seats} seats vs "
        f"{', '.join(config.opponent_list())}"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
