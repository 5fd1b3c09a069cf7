"""The PettingZoo ``ParallelEnv``: every seat acts at once each step, as at a real table.

A thin adapter over the engine: :class:`nertz.match.Match` deals, :class:`nertz.engine.Round`
decides every move, :func:`nertz.views.view` is all an agent sees and
:func:`nertz.scoring.score_round` is the reward.

**A step.** Each live agent sends one action index (:mod:`nertz.env.actions`); a missing agent
waits. The seats' actions are applied one by one in an order drawn from the environment's seeded
generator, fresh each step, so no seat wins every race by its number. The first move the engine
accepts stands; a later one that no longer fits (another seat's card reached the foundation
first) is rejected and changes nothing, exactly as at a table. ``infos[agent]`` says what
happened to each seat's action: ``action`` (the table entry's text), ``move`` (the move's
notation, ``""`` for a wait), ``accepted``, ``error``
(the engine's reason, ``""`` if none), ``lost_race``, ``order`` (its place in this step's
order), ``stuck_reset`` (the table was reset this step) and ``score`` (the seat's round score).
Every move of one step carries the same time ``t = step x step_ms`` ms, so under
``call_grace_ms`` a move in the same step as the call still counts (it was in the air).

**Rewards** are each step's change in the seat's round score, counted from 0 at the deal, so an
episode's return is the seat's round score (cards played minus the Nertz-pile penalty plus
bonuses; an unfinished round is scored as it stands, as the engine's ``open``).

**An episode is one round.** It terminates when the round ends (a call, or ``blocked``: the
engine's exact check) and is truncated after ``max_cycles`` steps.
``reset(seed=s)`` deals the first round of a match from seed ``s`` (the same deal as
``Match(rules, seats, seed=s)``, the replay files' and the simulator's); a plain ``reset()`` deals
the first round of a new match from a seed drawn from the environment's generator, so episodes
are independent rounds. With ``whole_match=True`` a plain ``reset()`` instead deals the match's
next round (the last one scored as it stands), so ``adaptive_nertz_pile`` carries over, until
the match is over and a new one starts.

**Stuck tables.** Seats may declare ``STUCK`` themselves; the engine resets once all have.
Like the server, the environment also asks the engine's referee (:meth:`Round.settle`), which
resets at once when every seat is stuck (or ends a round that only goes round in a circle).
That check is costly, so it runs only after a whole stock cycle of
quiet: no card reached a foundation, left a Nertz pile, left a stock or waste, or turned face up
for ``max(ceil((stock + waste) / turn_count)) + 1`` steps, enough for every seat to turn through
its whole stock. A quiet table that is not stuck (agents dithering) is checked again only after
another such stretch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, cast

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec
from pettingzoo.utils.env import AECEnv

from nertz.engine import Round
from nertz.env.actions import NOOP, ActionCodec
from nertz.env.observation import ObservationCodec
from nertz.errors import IllegalMoveError, LostRace
from nertz.match import Match
from nertz.render import draw
from nertz.rules import Rules
from nertz.scoring import score_round
from nertz.state import Layout

Observation = dict[str, npt.NDArray[Any]]
"""One agent's observation: ``{"observation": int16 vector, "action_mask": int8 vector}``."""

Info = dict[str, Any]
"""One agent's info dict."""

Action = int | np.integer[Any] | None
"""An action index: a plain int, or the numpy integer a ``Discrete`` space samples; None waits
(it is what PettingZoo's AEC wrapper sends for a finished agent)."""

MAX_CYCLES: Final = 1000
"""Default step cap. Greedy bots finish a four-seat round in 30 to 100 steps; random agents
rarely finish one at all."""

STEP_MS: Final = 1000
"""Default simulated milliseconds per step (the ``t`` each move carries)."""

_SEED_BOUND: Final = 2**31
"""Match seeds drawn by the environment are below this."""


def agent_name(seat: int) -> str:
    """The agent id of a seat: ``seat_0``, ``seat_1``, ..."""
    return f"seat_{seat}"


class NertzParallelEnv(ParallelEnv[str, Observation, Action]):
    """One Nertz round as a PettingZoo ``ParallelEnv`` (see the module docstring).

    ``rules`` is a preset name, a :class:`Rules` or a ``{"preset": ..., option: value}`` object;
    extra keyword ``options`` override single rules options (``work_piles=5``).
    """

    # PettingZoo declares ``metadata`` an instance attribute, so no ClassVar here.
    metadata: dict[str, Any] = {  # noqa: RUF012
        "name": "nertz_v0",
        "render_modes": ["ansi", "human"],
        "is_parallelizable": True,
    }

    def __init__(
        self,
        rules: str | Rules | dict[str, Any] = "pagat",
        seats: int = 4,
        seed: int | None = None,
        *,
        max_cycles: int = MAX_CYCLES,
        step_ms: int = STEP_MS,
        whole_match: bool = False,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        base = Rules.from_spec(rules)
        self.rules: Rules = base.replace(**options) if options else base
        """The ruleset every round is played under."""
        if not 1 <= seats <= 8:
            raise ValueError(f"a table has 1 to 8 seats, not {seats}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be 'ansi', 'human' or None, not {render_mode!r}")
        self.seats = seats
        """How many seats (agents) play."""
        self.max_cycles = max_cycles
        """Steps before an episode is truncated (PettingZoo's name for the cap)."""
        self.step_ms = step_ms
        """Simulated milliseconds per step."""
        self.whole_match = whole_match
        """Whether a plain reset() deals the match's next round (else a fresh match's first)."""
        self.render_mode = render_mode
        """``ansi`` (render returns text), ``human`` (render prints it) or None."""
        self.actions = ActionCodec(self.rules, seats)
        """The action table (index <-> move)."""
        self.observations = ObservationCodec(self.rules, seats)
        """The observation encoder."""
        self.possible_agents: list[str] = [agent_name(s) for s in range(seats)]
        self.agents: list[str] = []
        # One space object per agent, so that seeding one agent's space leaves the others be.
        self._action_spaces: dict[str, spaces.Space[Action]] = {
            a: spaces.Discrete(self.actions.size) for a in self.possible_agents
        }
        self._observation_spaces: dict[str, spaces.Space[Observation]] = {
            a: cast(
                spaces.Space[Observation],
                spaces.Dict(
                    {
                        "observation": self.observations.space,
                        "action_mask": spaces.Box(0, 1, (self.actions.size,), dtype=np.int8),
                    }
                ),
            )
            for a in self.possible_agents
        }
        self._pending_seed = seed
        self._rng = np.random.default_rng(seed)
        self._match: Match | None = None
        self._round: Round | None = None
        self._steps = 0
        self._scores = [0] * seats
        self._quiet = 0
        self._signature: tuple[object, ...] = ()

    # ------------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space[Observation]:
        """The agent's observation space: a ``Dict`` of the vector and the action mask (the same
        object on every call, as PettingZoo requires, so seeding it sticks)."""
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Action]:
        """The agent's action space: ``Discrete`` over :attr:`actions`."""
        return self._action_spaces[agent]

    # ------------------------------------------------------------------------ state

    @property
    def round(self) -> Round:
        """The round in play (the engine's object: the umpire's view, hidden cards included)."""
        if self._round is None:
            raise RuntimeError("call reset() before using the environment")
        return self._round

    @property
    def match(self) -> Match:
        """The match the rounds belong to."""
        if self._match is None:
            raise RuntimeError("call reset() before using the environment")
        return self._match

    @property
    def steps(self) -> int:
        """Steps taken in this episode."""
        return self._steps

    def seed(self, seed: int | None = None) -> None:
        """Seed the next :meth:`reset` (which then starts a new match from ``seed``)."""
        self._pending_seed = seed

    # ------------------------------------------------------------------------ reset

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Observation], dict[str, Info]]:
        """Deal a round; see the module docstring for what a seed does.

        ``options`` may hold ``"layouts"``: one :class:`nertz.state.Layout` per seat to deal
        instead of shuffling (other keys are ignored).
        """
        if seed is None:
            seed, self._pending_seed = self._pending_seed, None
        if seed is not None:
            # One generator for both the step orders and later match seeds: one seed fixes all.
            self._rng = np.random.default_rng(seed)
            self._match = None
        match = self._match if self.whole_match else None
        if match is not None and self._round is not None:
            # The last round counts as it stands (a truncated one is scored "open").
            match.finish(self._round)
            if match.over:
                match = None
        if match is None:
            # A seeded reset deals exactly what Match(rules, seats, seed) deals (the replay
            # files' and the simulator's deal); later matches take seeds from the generator.
            match_seed = seed if seed is not None else int(self._rng.integers(_SEED_BOUND))
            match = Match(self.rules, self.seats, seed=match_seed)
        self._match = match
        layouts: list[Layout] | None = None
        if options and "layouts" in options:
            layouts = list(options["layouts"])
        self._round = match.deal(layouts)
        self.agents = self.possible_agents[:]
        self._steps = 0
        self._scores = [0] * self.seats
        self._quiet = 0
        self._signature = _progress(self._round)
        obs = {a: self._observe(s) for s, a in enumerate(self.possible_agents)}
        return obs, {a: {} for a in self.possible_agents}

    # ------------------------------------------------------------------------ step

    def step(
        self, actions: Mapping[str, Action]
    ) -> tuple[
        dict[str, Observation],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, Info],
    ]:
        """Apply every seat's action in a fresh seeded order; see the module docstring."""
        if not self.agents:
            # PettingZoo's convention: a finished episode answers with empty dicts.
            return {}, {}, {}, {}, {}
        rnd = self.round
        t = self._steps * self.step_ms
        chosen: dict[int, int] = {}
        for seat, agent in enumerate(self.possible_agents):
            action = actions.get(agent)
            index = NOOP if action is None else int(action)
            # Checked before any move is made, so a bad index never leaves half a step played.
            if not 0 <= index < self.actions.size:
                raise ValueError(
                    f"{agent}: action {index} is outside the table (0..{self.actions.size - 1})"
                )
            chosen[seat] = index
        infos: dict[str, Info] = {}
        for place, seat in enumerate(self._rng.permutation(self.seats).tolist()):
            agent = self.possible_agents[seat]
            infos[agent] = self._act(rnd, seat, chosen[seat], t, place)
        self._steps += 1
        stuck_reset = self._watch_stuck(rnd, t)
        totals = score_round(rnd).totals
        rewards: dict[str, float] = {}
        for seat, agent in enumerate(self.possible_agents):
            rewards[agent] = float(totals[seat] - self._scores[seat])
            infos[agent]["stuck_reset"] = stuck_reset
            infos[agent]["score"] = totals[seat]
        self._scores = totals
        ended = rnd.ended is not None
        cut = not ended and self._steps >= self.max_cycles
        obs = {a: self._observe(s) for s, a in enumerate(self.possible_agents)}
        terminations = dict.fromkeys(self.possible_agents, ended)
        truncations = dict.fromkeys(self.possible_agents, cut)
        if ended or cut:
            self.agents = []
        if self.render_mode == "human":
            print(self._draw())
        return obs, rewards, terminations, truncations, infos

    def _act(self, rnd: Round, seat: int, action: int, t: int, place: int) -> Info:
        info: Info = {
            "action": self.actions.labels[action],
            "move": "",
            "accepted": True,
            "error": "",
            "lost_race": False,
            "order": place,
        }
        try:
            move = self.actions.decode(rnd, seat, action)
            if move is None:
                return info
            info["move"] = str(move)
            rnd.play(seat, move, t)
        except LostRace as e:
            info.update(accepted=False, error=e.reason, lost_race=True)
        except IllegalMoveError as e:
            info.update(accepted=False, error=e.reason)
        return info

    def _watch_stuck(self, rnd: Round, t: int) -> bool:
        """Reset the table if every seat is stuck; check only after a stock cycle of quiet."""
        if rnd.ended is not None:
            return False
        signature = _progress(rnd)
        if signature != self._signature:
            self._signature = signature
            self._quiet = 0
            return False
        self._quiet += 1
        turn = rnd.rules.turn_count
        window = max(-(-(len(t.stock) + len(t.waste)) // turn) for t in rnd.tableaus) + 1
        if self._quiet < window:
            return False
        self._quiet = 0
        resets = rnd.resets
        rnd.settle(t)
        if rnd.resets == resets:
            return False
        self._signature = _progress(rnd)
        return True

    def _observe(self, seat: int) -> Observation:
        rnd = self.round
        return {
            "observation": self.observations.encode(rnd, seat),
            "action_mask": self.actions.mask(rnd, seat),
        }

    # ------------------------------------------------------------------------ render

    def render(self) -> str | None:
        """The table as text (the umpire's view, for a human watching): returned under
        ``ansi``, printed under ``human``."""
        if self.render_mode is None:
            return None
        text = self._draw()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _draw(self) -> str:
        return f"step {self._steps}\n{draw(self.round)}"

    def close(self) -> None:
        """Nothing to release."""


def _progress(rnd: Round) -> tuple[object, ...]:
    """What changes whenever a seat does something productive: cards on foundations, Nertz and
    stock-plus-waste sizes, face-down counts, and the reset count. Work-to-work shuffles of
    face-up cards and stock turns leave it alone."""
    return (
        sum(len(f.cards) for f in rnd.foundations),
        tuple(len(t.nertz) for t in rnd.tableaus),
        tuple(len(t.stock) + len(t.waste) for t in rnd.tableaus),
        tuple(sum(t.down) for t in rnd.tableaus),
        rnd.resets,
    )


def parallel_env(
    rules: str | Rules | dict[str, Any] = "pagat",
    seats: int = 4,
    seed: int | None = None,
    **kwargs: Any,
) -> NertzParallelEnv:
    """A Nertz ``ParallelEnv``: ``max_cycles``, ``step_ms`` and ``render_mode`` set the
    environment, any other keyword overrides a rules option (``turn_count=1``)."""
    return NertzParallelEnv(rules, seats, seed, **kwargs)


def env(
    rules: str | Rules | dict[str, Any] = "pagat",
    seats: int = 4,
    seed: int | None = None,
    **kwargs: Any,
) -> AECEnv[str, Observation, Action]:
    """The same game as an AEC environment (PettingZoo's ``parallel_to_aec``): seats act one
    after another within a step, and the step resolves once all have."""
    # parallel_to_aec types its argument as ParallelEnv[..., A | None]; our Action already
    # includes None inside a union, which mypy cannot split back into A, hence the cast.
    convert = cast(Callable[[NertzParallelEnv], AECEnv[str, Observation, Action]], parallel_to_aec)
    return convert(parallel_env(rules, seats, seed, **kwargs))
