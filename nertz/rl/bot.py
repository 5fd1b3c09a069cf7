"""The ``learned`` bot: plays a policy file from what its seat sees.

Each decision builds the seat's observation exactly as the environment does
(:class:`nertz.env.observation.ObservationCodec` over :func:`nertz.views.view` and the seat's
action mask from :meth:`nertz.env.actions.ActionCodec.legal`), so the bot reads nothing a person
at its seat could not see, whether it is fed the live round (the simulator) or a determinized
one rebuilt from a view (the server). It plays the legal action with the highest logit.

Which file: the ``path`` given, else the ``NERTZ_POLICY`` environment variable, else the policy
shipped with the package (:data:`DEFAULT_POLICY`, trained with the command in docs/ai.md).

At a table the bot never chooses to wait while it has a move: waiting is the table's business (a
bot's None means "nothing to do until the table changes"), so ``NOOP`` is left out of its
choice. It keeps the environment's no-stalling rule for itself: after a whole pass through its
stock without progress (no card of its own to a foundation, none out of its Nertz pile, stock or
waste, none turned face up) while nobody else played to a foundation either (all counts anyone
can see), it declares ``STUCK`` and then waits until the table changes that way or is reset, so
a policy that would shuffle runs back and forth cannot hold up a table.

It plays any ruleset and seat count: the action table is one for all rulesets
(:mod:`nertz.env.actions`), and the observation shows the opponent slots the policy was trained
with (the nearest seats clockwise; the rest only through the foundations).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from nertz.bots.base import Bot, Observation
from nertz.env.actions import NOOP
from nertz.env.observation import ObservationCodec
from nertz.moves import STUCK, Move
from nertz.rl.policy import Policy, PolicyError
from nertz.rules import Rules
from nertz.views import view

DEFAULT_POLICY: Final = Path(__file__).resolve().parent / "policies" / "pagat.npz"
"""The policy file shipped with the package."""

POLICY_ENV: Final = "NERTZ_POLICY"
"""The environment variable naming another policy file."""

_LOADED: dict[Path, Policy] = {}


def policy_path(path: str | Path | None = None) -> Path:
    """The policy file a bot plays: ``path``, else ``$NERTZ_POLICY``, else the shipped one."""
    chosen = path or os.environ.get(POLICY_ENV) or DEFAULT_POLICY
    return Path(chosen).expanduser().resolve()


def load_policy(path: str | Path | None = None) -> Policy:
    """The policy at :func:`policy_path` (loaded once per process and file)."""
    where = policy_path(path)
    policy = _LOADED.get(where)
    if policy is None:
        if not where.exists():
            raise PolicyError(
                f"no policy file at {where}: train one with `nertz train` and point "
                f"{POLICY_ENV} at it"
            )
        policy = _LOADED[where] = Policy.load(where)
    return policy


class LearnedBot(Bot):
    """A bot playing a trained policy (module docstring)."""

    name = "learned"

    def __init__(self, path: str | Path | None = None) -> None:
        super().__init__()
        self.idle = 0
        """Decisions since the seat last made progress."""
        self._progress: tuple[int, ...] = ()
        self.policy = load_policy(path)
        """The policy it plays."""
        self.observations = self.policy.observations
        """The observation encoder for the ruleset in play."""

    def start(self, seat: int, rules: Rules, seed: int | str = 0) -> None:
        """Begin a round; :class:`PolicyError` if the policy cannot play ``rules``."""
        why = self.policy.fits(rules)
        if why is not None:
            raise PolicyError(why)
        opponents = self.policy.observations.opponents
        self.observations = ObservationCodec(rules, opponents + 1, opponents)
        self.idle = 0
        self._progress = ()
        super().start(seat, rules, seed)

    def decide(self, obs: Observation) -> Move | None:
        """The policy's choice among the seat's legal moves (None when it has none)."""
        rnd = obs.round
        if rnd.ended is not None:
            return None
        seat = obs.seat
        tab = rnd.tableaus[seat]
        played = sum(owner == seat for f in rnd.foundations for owner in f.owners)
        table = sum(len(f.cards) for f in rnd.foundations)
        progress = (
            played, len(tab.nertz), len(tab.stock) + len(tab.waste), sum(tab.down), table,
            rnd.resets,
        )
        if progress != self._progress:
            self._progress, self.idle = progress, 0
        else:
            self.idle += 1
        window = -(-(len(tab.stock) + len(tab.waste)) // rnd.rules.turn_count) + 1
        if self.idle >= window:
            return None if rnd.stuck[seat] else STUCK
        codec = self.policy.actions
        legal = codec.legal(rnd, obs.seat, any_foundation=False)
        if not legal:
            return None
        mask = codec.mask(rnd, obs.seat, legal)
        vector = self.observations.encode_view(view(rnd, obs.seat), mask)
        mask[NOOP] = 0
        return legal[self.policy.choose(vector, mask)]
