"""One learner against bots: a Gymnasium ``Env`` over the parallel environment.

The learner plays one seat (``learner``, seat 0 by default); every other seat is an opponent
that the wrapper asks for a move each step. The parallel environment then resolves all the
seats' actions in its seeded random order, so the learner races the bots fairly.

Opponents are given by name, as a bot, or as a plain policy:

- a name: first those added with :func:`register_opponent`, then the project's bots
  (:data:`nertz.bots.BOTS`: ``random``, ``greedy``, ``expert``), each started afresh every
  episode with a seed drawn from the environment's generator. Should :mod:`nertz.bots` be
  missing, ``greedy`` (:func:`nertz.playout.greedy_move`) and ``random`` still work;
- a :class:`nertz.bots.Bot` (anything with ``start(seat, rules, seed)`` and
  ``decide(observation)``), fed :meth:`nertz.bots.Observation.from_round`; its None means wait;
- a callable ``(Round, seat) -> Move | None`` such as :func:`nertz.playout.greedy_move`, whose
  None means "nothing better than turning": the wrapper turns the stock (or waits when stock and
  waste are empty).

Observation and action spaces are the parallel environment's (a ``Dict`` of the observation
vector and the action mask, and ``Discrete`` over the action table);
:meth:`SingleAgentEnv.action_masks` gives the mask in sb3-contrib's ``MaskablePPO`` convention.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import gymnasium
import numpy as np
import numpy.typing as npt

from nertz.engine import Round
from nertz.env.parallel import (
    MAX_CYCLES,
    Action,
    Info,
    NertzParallelEnv,
    Observation,
    agent_name,
)
from nertz.moves import TURN, Move
from nertz.playout import greedy_move
from nertz.rules import Rules

Policy = Callable[[Round, int], Move | None]
"""A plain opponent policy: the move it makes for a seat of a round, or None to just turn."""

_SEED_BOUND = 2**31


@runtime_checkable
class Opponent(Protocol):
    """What the wrapper drives for each other seat: started each episode, asked each step."""

    def start(self, seat: int, rules: Rules, seed: int) -> None:
        """Begin an episode in ``seat``."""

    def act(self, rnd: Round, seat: int, t: int) -> Move | None:
        """The seat's move now (``t`` ms into the round), or None to wait this step."""


@runtime_checkable
class _BotLike(Protocol):
    """The shape of a :class:`nertz.bots.Bot`, checked without importing that package."""

    def start(self, seat: int, rules: Rules, seed: int | str = 0) -> None: ...

    def decide(self, obs: Any) -> Move | None: ...


class PolicyOpponent:
    """A plain policy as an opponent: its None turns the stock (or waits, with nothing to
    turn), the reading :func:`nertz.playout.greedy_move` needs."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def start(self, seat: int, rules: Rules, seed: int) -> None:
        """Nothing to set up: a plain policy keeps no state."""

    def act(self, rnd: Round, seat: int, t: int) -> Move | None:
        """The policy's move, or ``T`` in place of its None."""
        move = self.policy(rnd, seat)
        if move is None:
            tab = rnd.tableaus[seat]
            return TURN if tab.stock or tab.waste else None
        return move


class RandomOpponent:
    """A uniformly random legal move, seeded each episode (the fallback for ``random``)."""

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def start(self, seat: int, rules: Rules, seed: int) -> None:
        """Reseed."""
        self.rng = random.Random(seed)

    def act(self, rnd: Round, seat: int, t: int) -> Move | None:
        """Any legal move."""
        moves = rnd.legal_moves(seat)
        return self.rng.choice(moves) if moves else None


class BotOpponent:
    """A :mod:`nertz.bots` bot as an opponent, fed the live round the in-process way."""

    def __init__(self, bot: _BotLike) -> None:
        self.bot = bot

    def start(self, seat: int, rules: Rules, seed: int) -> None:
        """Start the bot's round."""
        self.bot.start(seat, rules, seed)

    def act(self, rnd: Round, seat: int, t: int) -> Move | None:
        """The bot's decision (None: it waits)."""
        from nertz.bots import Observation as BotObservation

        return self.bot.decide(BotObservation.from_round(rnd, seat, t))


OpponentSpec = str | Policy | _BotLike | Opponent
"""A name, a bot, an :class:`Opponent` or a plain policy."""

OPPONENTS: dict[str, Callable[[], Opponent]] = {}
"""Opponents added by name with :func:`register_opponent` (they take precedence over the
project's bots of the same name)."""


def register_opponent(name: str, factory: Callable[[], Opponent]) -> None:
    """Make ``name`` usable as an opponent: ``factory()`` returns a fresh :class:`Opponent`."""
    OPPONENTS[name] = factory


def _bot(name: str) -> Opponent | None:
    """The :mod:`nertz.bots` bot of that name, or None if there is none (or no such package).

    Imported when asked rather than at module import, so the environment does not depend on the
    bots package being importable.
    """
    try:
        from nertz.bots import BOTS
    except ImportError:  # pragma: no cover - the package ships with nertz
        return None
    factory = BOTS.get(name.strip().lower())
    return None if factory is None else BotOpponent(factory())


_FALLBACKS: dict[str, Callable[[], Opponent]] = {
    "greedy": lambda: PolicyOpponent(greedy_move),
    "random": RandomOpponent,
}


def make_opponent(spec: OpponentSpec) -> Opponent:
    """Resolve an opponent spec (see the module docstring). Raises ``ValueError`` for an
    unknown name."""
    if isinstance(spec, str):
        factory = OPPONENTS.get(spec)
        if factory is not None:
            return factory()
        found = _bot(spec)
        if found is not None:
            return found
        if spec in _FALLBACKS:  # pragma: no cover - only without nertz.bots
            return _FALLBACKS[spec]()
        raise ValueError(f"unknown opponent {spec!r}")
    if isinstance(spec, Opponent):
        return spec
    if isinstance(spec, _BotLike):
        return BotOpponent(spec)
    return PolicyOpponent(spec)


class SingleAgentEnv(gymnasium.Env[Observation, Action]):
    """A Gymnasium environment: the learner's seat against opponent policies.

    ``opponents`` is one spec for every other seat or a sequence, one per other seat in seat
    order. Other keywords go to :class:`NertzParallelEnv` (``max_cycles``, ``render_mode``,
    the rewards, rules options).
    """

    # Gymnasium declares ``metadata`` an instance attribute, so no ClassVar here.
    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"]}  # noqa: RUF012

    def __init__(
        self,
        rules: str | Rules | dict[str, Any] = "pagat",
        seats: int = 4,
        opponents: OpponentSpec | Sequence[OpponentSpec] = "greedy",
        seed: int | None = None,
        *,
        learner: int = 0,
        max_cycles: int = MAX_CYCLES,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        if not 0 <= learner < seats:
            raise ValueError(f"learner seat {learner} is not one of the {seats} seats")
        self.table = NertzParallelEnv(
            rules, seats, None, max_cycles=max_cycles, render_mode=render_mode, **options
        )
        """The parallel environment underneath."""
        self.learner = learner
        """The learner's seat."""
        self.agent = agent_name(learner)
        """The learner's agent id in :attr:`table`."""
        others = [s for s in range(seats) if s != learner]
        if isinstance(opponents, Sequence) and not isinstance(opponents, str):
            specs = list(opponents)
            if len(specs) != len(others):
                raise ValueError(f"{len(specs)} opponents for {len(others)} other seats")
        else:
            if len(others) > 1 and not isinstance(opponents, str) and not _stateless(opponents):
                # A bot keeps per-seat memory: one object cannot play two seats.
                raise ValueError("give one bot object per other seat (a list), or a name")
            specs = [opponents] * len(others)
        # Resolved now, so an unknown name fails here rather than at the first reset.
        self.opponents: dict[int, Opponent] = {
            s: make_opponent(spec) for s, spec in zip(others, specs, strict=True)
        }
        """Each other seat's opponent."""
        self._initial_seed = seed
        self.render_mode = render_mode
        self.observation_space = self.table.observation_space(self.agent)
        self.action_space = self.table.action_space(self.agent)
        self._last: Observation | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, Info]:
        """Deal a round. ``seed`` starts a new match; the opponents are reseeded from the
        environment's generator, so one seed fixes the whole episode."""
        if seed is None:
            seed, self._initial_seed = self._initial_seed, None
        super().reset(seed=seed)
        obs, infos = self.table.reset(seed=seed, options=options)
        rules = self.table.rules
        for s, opponent in self.opponents.items():
            opponent.start(s, rules, int(self.np_random.integers(_SEED_BOUND)))
        self._last = obs[self.agent]
        return obs[self.agent], infos[self.agent]

    def step(self, action: Action) -> tuple[Observation, float, bool, bool, Info]:
        """The learner's action and the opponents' moves, resolved together as one step."""
        rnd = self.table.round
        t = self.table.steps * self.table.step_ms
        moves = {seat: opponent.act(rnd, seat, t) for seat, opponent in self.opponents.items()}
        obs, rewards, terms, truncs, infos = self.table.step_moves({self.agent: action}, moves)
        self._last = obs[self.agent]
        info = infos[self.agent]
        info["opponents"] = {a: infos[a]["move"] for a in infos if a != self.agent}
        return obs[self.agent], rewards[self.agent], terms[self.agent], truncs[self.agent], info

    def action_masks(self) -> npt.NDArray[np.int8]:
        """The learner's current action mask (sb3-contrib ``MaskablePPO``'s convention)."""
        if self._last is None:
            raise RuntimeError("call reset() before asking for action masks")
        return self._last["action_mask"]

    def render(self) -> str | None:
        """The table as text (see :meth:`NertzParallelEnv.render`)."""
        return self.table.render()

    def close(self) -> None:
        """Nothing to release."""


def _stateless(spec: object) -> bool:
    """Whether one object may serve several seats: a plain policy, not a bot or opponent."""
    return not isinstance(spec, (Opponent, _BotLike))


def make_single(
    rules: str | Rules | dict[str, Any] = "pagat",
    seats: int = 4,
    opponents: OpponentSpec | Sequence[OpponentSpec] = "greedy",
    seed: int | None = None,
    **kwargs: Any,
) -> SingleAgentEnv:
    """A :class:`SingleAgentEnv`: one learner (seat 0 unless ``learner=``) against bots."""
    return SingleAgentEnv(rules, seats, opponents, seed, **kwargs)
