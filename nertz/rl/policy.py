"""The policy file: a network's weights and the table it was trained for, played in numpy.

A policy file is one ``.npz`` (numpy's zip of arrays, read with ``allow_pickle=False``):

- ``w0, b0, w1, b1, ...``: the hidden layers (``tanh`` after each), then ``w_out, b_out``: the
  action logits. A weight ``wI`` has shape ``(inputs, outputs)``;
- ``meta``: a JSON string: ``format`` (1), ``rules`` (the ruleset's options), ``opponents``
  (the observation's opponent slots), ``labels`` (the action table's entries), ``obs_size``
  and ``trained`` (how it was made: command, steps, seconds).

The forward pass is the actor of Stable-Baselines3's ``MlpPolicy`` (its default ``tanh``
network), so :func:`nertz.rl.train.export` writes exactly what was trained; playing picks the
highest logit among the legal actions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from nertz.env.actions import ActionCodec
from nertz.env.observation import ObservationCodec
from nertz.errors import NertzError
from nertz.rules import Rules

FORMAT: Final = 1
"""The policy file format this module reads and writes."""


class PolicyError(NertzError, ValueError):
    """A policy file that cannot be read, or that does not fit the table it is asked to play."""


class Policy:
    """A loaded policy: the layers, the ruleset it was trained under and its codecs."""

    __slots__ = ("actions", "biases", "meta", "observations", "rules", "weights")

    def __init__(
        self,
        weights: list[npt.NDArray[np.float32]],
        biases: list[npt.NDArray[np.float32]],
        meta: dict[str, Any],
    ) -> None:
        if len(weights) != len(biases) or not weights:
            raise PolicyError("a policy needs as many bias vectors as weight matrices, and one")
        self.weights = weights
        self.biases = biases
        self.meta = meta
        """What the file says of itself (see the module docstring)."""
        try:
            self.rules = Rules.from_spec(meta["rules"])
            """The ruleset it was trained under."""
            opponents = int(meta["opponents"])
        except (KeyError, TypeError, ValueError) as exc:
            raise PolicyError(f"the policy's meta is incomplete or wrong: {exc}") from None
        self.actions = ActionCodec(self.rules)
        """Its action table."""
        self.observations = ObservationCodec(self.rules, opponents + 1, opponents)
        """Its observation encoder."""
        if list(self.actions.labels) != list(meta.get("labels", [])):
            raise PolicyError("the policy's action table is not this version's")
        if self.observations.size != weights[0].shape[0] or meta.get("obs_size") != (
            self.observations.size
        ):
            raise PolicyError(
                f"the policy reads {weights[0].shape[0]} inputs; this version's observation "
                f"has {self.observations.size}"
            )
        if weights[-1].shape[1] != self.actions.size:
            raise PolicyError(
                f"the policy has {weights[-1].shape[1]} outputs for {self.actions.size} actions"
            )

    def logits(self, obs: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The action logits for one observation vector."""
        x = obs.astype(np.float32, copy=False)
        for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
            x = np.tanh(x @ w + b)
        out: npt.NDArray[np.float32] = x @ self.weights[-1] + self.biases[-1]
        return out

    def choose(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> int:
        """The legal action (``mask`` 1) with the highest logit."""
        logits = self.logits(obs)
        return int(np.argmax(np.where(mask.astype(bool), logits, -np.inf)))

    def fits(self, rules: Rules) -> str | None:
        """Why this policy cannot play under ``rules`` (its action table differs), or None."""
        if ActionCodec(rules).labels != self.actions.labels:
            return (
                f"the policy was trained for {self.rules.work_piles} work piles and "
                f"{'no ' if self.rules.stuck_reset != 'rotate_either' else ''}Nertz-pile "
                "rotation; this ruleset's action table differs"
            )
        return None

    def save(self, path: str | Path) -> Path:
        """Write the policy file (see the module docstring)."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, npt.NDArray[Any]] = {}
        for i, (w, b) in enumerate(zip(self.weights[:-1], self.biases[:-1], strict=True)):
            arrays[f"w{i}"] = w
            arrays[f"b{i}"] = b
        arrays["w_out"] = self.weights[-1]
        arrays["b_out"] = self.biases[-1]
        arrays["meta"] = np.array(json.dumps(self.meta, sort_keys=True))
        with out.open("wb") as f:
            np.savez_compressed(f, **arrays)  # type: ignore[arg-type]  # numpy types **kwds oddly
        return out

    @staticmethod
    def load(path: str | Path) -> Policy:
        """Read a policy file; :class:`PolicyError` says what is wrong with a bad one."""
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except FileNotFoundError:
            raise PolicyError(f"no policy file at {path}") from None
        except (OSError, ValueError) as exc:
            raise PolicyError(f"{path} is not a policy file: {exc}") from None
        try:
            meta = json.loads(str(arrays.pop("meta")[()]))
        except (KeyError, ValueError) as exc:
            raise PolicyError(f"{path} has no readable meta: {exc}") from None
        if meta.get("format") != FORMAT:
            raise PolicyError(f"{path} is policy format {meta.get('format')}, not {FORMAT}")
        weights, biases = [], []
        i = 0
        while f"w{i}" in arrays:
            weights.append(arrays[f"w{i}"].astype(np.float32))
            biases.append(arrays[f"b{i}"].astype(np.float32))
            i += 1
        if "w_out" not in arrays or "b_out" not in arrays:
            raise PolicyError(f"{path} has no output layer")
        weights.append(arrays["w_out"].astype(np.float32))
        biases.append(arrays["b_out"].astype(np.float32))
        return Policy(weights, biases, meta)


def policy_meta(rules: Rules, opponents: int, trained: dict[str, Any]) -> dict[str, Any]:
    """The ``meta`` of a new policy file for ``rules`` and ``opponents`` slots."""
    return {
        "format": FORMAT,
        "rules": rules.to_spec(),
        "opponents": opponents,
        "labels": list(ActionCodec(rules).labels),
        "obs_size": ObservationCodec(rules, opponents + 1, opponents).size,
        "trained": trained,
    }
