"""The PettingZoo ``ParallelEnv``: every seat acts at once each step, as at a real table.

A thin adapter over the engine: :class:`nertz.match.Match` deals, :class:`nertz.engine.Round`
decides every move, :func:`nertz.views.view` is all an agent sees and
:func:`nertz.scoring.score_round` is the reward.

**A step.** Each live agent sends one action index (:mod:`nertz.env.actions`); a missing agent
waits. Every action is read against the table as it stood at the start of the step (what the
agent observed), then the seats' moves are applied one by one in an order drawn from the
environment's seeded generator, fresh each step, so no seat wins every race by its number. The
first move the engine accepts stands; a later one that no longer fits (another seat's card
reached the foundation first) is rejected and changes nothing, exactly as at a table.
``infos[agent]`` says what happened to each seat's action: ``action`` (the table entry's text),
``move`` (the move's notation, ``""`` for a wait), ``accepted``, ``error`` (the engine's reason,
``""`` if none), ``lost_race``, ``order`` (its place in this step's order), ``stuck_reset`` (the
table was reset this step) and ``score`` (the seat's round score). Every move of one step
carries the same time ``t = step x step_ms`` ms, so under ``call_grace_ms`` a move in the same
step as the call still counts (it was in the air).

**Rewards** are each step's change in the seat's round score, counted from the score at the deal
(so the dealt Nertz pile's penalty is not charged in the first step: an episode's return is the
round score minus the dealt score, and each Nertz card played earns its penalty back). Optional
shaping adds ``foundation_reward`` per card the seat put on a foundation and ``nertz_reward`` per
card that left its Nertz pile, and ``win_reward`` at the episode's end to the top round score
(split on a tie). ``infos[agent]["score"]`` is always the plain round score.

**An episode is one round.** It terminates when the round ends (a call, or ``blocked``: the
engine's exact check) and is truncated after ``max_cycles`` steps.
``reset(seed=s)`` deals the first round of a match from seed ``s`` (the same deal as
``Match(rules, seats, seed=s)``, the replay files' and the simulator's); a plain ``reset()`` deals
the first round of a new match from a seed drawn from the environment's generator, so episodes
are independent rounds. With ``whole_match=True`` a plain ``reset()`` instead deals the match's
next round (the last one scored as it stands), so ``adaptive_nertz_pile`` carries over, until
the match is over and a new one starts.

**Stuck tables, and no stalling.** Seats may declare ``STUCK`` themselves; the engine resets once
all have. A seat that makes no progress (no card of its own to a foundation, none out of its
Nertz pile, stock or waste, none turned face up) for a whole pass through its stock
(``ceil((stock + waste) / turn_count) + 1`` steps) counts as stuck too, whatever it did
meanwhile: waiting, turning and shuffling runs all look the same from across the table. Once
every seat has declared or counts as stuck, the table is reset. So an agent that stalls cannot
hold a stuck table hostage, and no hidden card is consulted to decide it.
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
from nertz.env.actions import NOOP, ActionCodec, Legal
from nertz.env.observation import ObservationCodec
from nertz.errors import IllegalMoveError, LostRace
from nertz.match import Match
from nertz.moves import Move
from nertz.render import draw
from nertz.rules import Rules
from nertz.scoring import score_round
from nertz.state import Layout
from nertz.views import view

Observation = dict[str, npt.NDArray[Any]]
"""One agent's observation: ``{"observation": float32 vector, "action_mask": int8 vector}``."""

Info = dict[str, Any]
"""One agent's info dict."""

Action = int | np.integer[Any] | None
"""An action index: a plain int, or the numpy integer a ``Discrete`` space samples; None waits
(it is what PettingZoo's AEC wrapper sends for a finished agent)."""

StepResult = tuple[
    dict[str, Observation],
    dict[str, float],
    dict[str, bool],
    dict[str, bool],
    dict[str, Info],
]
"""What a step returns, per agent: observations, rewards, terminations, truncations, infos."""

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
        foundation_reward: float = 0.0,
        nertz_reward: float = 0.0,
        win_reward: float = 0.0,
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
        self.foundation_reward = foundation_reward
        """Shaping: reward per card the seat puts on a foundation (0: none)."""
        self.nertz_reward = nertz_reward
        """Shaping: reward per card that leaves the seat's Nertz pile (0: none)."""
        self.win_reward = win_reward
        """Reward at the episode's end for the top round score, split on a tie (0: none)."""
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
        self._idle = [0] * seats
        self._progress: list[tuple[int, int, int, int]] = []
        self._legal: list[Legal] = []

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
        self._scores = score_round(self._round).totals
        self._idle = [0] * self.seats
        self._progress = _progress(self._round)
        obs = self._observe_all()
        return obs, {a: {"score": self._scores[s]} for s, a in enumerate(self.possible_agents)}

    # ------------------------------------------------------------------------ step

    def step(
        self, actions: Mapping[str, Action]
    ) -> StepResult:
        """Apply every seat's action in a fresh seeded order; see the module docstring."""
        return self.step_moves(actions, {})

    def step_moves(
        self, actions: Mapping[str, Action], moves: Mapping[int, Move | None]
    ) -> StepResult:
        """:meth:`step`, with some seats giving an engine move (None waits) instead of an
        action index: ``moves`` maps a seat number to its move, and wins over ``actions``.

        This is how bots sit at the table (:mod:`nertz.env.single`): their moves need not be in
        the action table.
        """
        if not self.agents:
            # PettingZoo's convention: a finished episode answers with empty dicts.
            return {}, {}, {}, {}, {}
        rnd = self.round
        t = self._steps * self.step_ms
        chosen: list[tuple[str, Move | None]] = []
        for seat, agent in enumerate(self.possible_agents):
            if seat in moves:
                move = moves[seat]
                chosen.append(("" if move is None else str(move), move))
                continue
            action = actions.get(agent)
            index = NOOP if action is None else int(action)
            # Checked before any move is made, so a bad index never leaves half a step played.
            if not 0 <= index < self.actions.size:
                raise ValueError(
                    f"{agent}: action {index} is outside the table (0..{self.actions.size - 1})"
                )
            # Read against the table the agent observed: nothing has moved since.
            chosen.append(
                (self.actions.labels[index], self.actions.decode(rnd, seat, index,
                                                                 self._legal[seat]))
            )
        infos: dict[str, Info] = {}
        for place, seat in enumerate(self._rng.permutation(self.seats).tolist()):
            label, move = chosen[seat]
            infos[self.possible_agents[seat]] = self._act(rnd, seat, label, move, t, place)
        self._steps += 1
        before = self._progress
        stuck_reset = self._watch_stuck(rnd, t)
        totals = score_round(rnd).totals
        ended = rnd.ended is not None
        cut = not ended and self._steps >= self.max_cycles
        wins = _wins(totals) if (ended or cut) and self.win_reward else [0.0] * self.seats
        rewards: dict[str, float] = {}
        for seat, agent in enumerate(self.possible_agents):
            reward = float(totals[seat] - self._scores[seat]) + self.win_reward * wins[seat]
            if self.foundation_reward or self.nertz_reward:
                old, new = before[seat], self._progress[seat]
                reward += self.foundation_reward * (new[0] - old[0])
                reward += self.nertz_reward * max(0, old[1] - new[1])
            rewards[agent] = reward
            infos[agent]["stuck_reset"] = stuck_reset
            infos[agent]["score"] = totals[seat]
        self._scores = totals
        obs = self._observe_all()
        terminations = dict.fromkeys(self.possible_agents, ended)
        truncations = dict.fromkeys(self.possible_agents, cut)
        if ended or cut:
            self.agents = []
        if self.render_mode == "human":
            print(self._draw())
        return obs, rewards, terminations, truncations, infos

    def _act(
        self, rnd: Round, seat: int, label: str, move: Move | None, t: int, place: int
    ) -> Info:
        info: Info = {
            "action": label,
            "move": "" if move is None else str(move),
            "accepted": True,
            "error": "",
            "lost_race": False,
            "order": place,
        }
        if move is None:
            return info
        try:
            rnd.play(seat, move, t)
        except LostRace as e:
            info.update(accepted=False, error=e.reason, lost_race=True)
        except IllegalMoveError as e:
            info.update(accepted=False, error=e.reason)
        return info

    def _watch_stuck(self, rnd: Round, t: int) -> bool:
        """Count each seat's steps without progress; reset the table once every seat has
        declared stuck or gone a whole stock pass without progress (the module docstring)."""
        progress = _progress(rnd)
        turn = rnd.rules.turn_count
        all_stuck = rnd.ended is None
        for seat, (old, new) in enumerate(zip(self._progress, progress, strict=True)):
            if old != new:
                self._idle[seat] = 0
            else:
                self._idle[seat] += 1
            tab = rnd.tableaus[seat]
            window = -(-(len(tab.stock) + len(tab.waste)) // turn) + 1
            if not rnd.stuck[seat] and self._idle[seat] < window:
                all_stuck = False
        self._progress = progress
        if not all_stuck:
            return False
        # The engine's referee makes the reset: each seat that counts as stuck declares the
        # pile it rules (the Nertz pile when a card under its top could play), and a reset that
        # only brings a stuck table back where it was ends the round blocked.
        resets = rnd.resets
        rnd.settle(t, [rnd.reset_choice(s) for s in range(self.seats)])
        self._idle = [0] * self.seats
        return rnd.resets != resets

    def _observe_all(self) -> dict[str, Observation]:
        rnd = self.round
        seats = range(self.seats)
        self._legal = [self.actions.legal(rnd, s) for s in seats]
        masks = [self.actions.mask(rnd, s, self._legal[s]) for s in seats]
        # One view serves every seat: views of a table differ only in whose they are.
        vectors = self.observations.encode_table(view(rnd, 0), masks, seats)
        return {
            a: {"observation": vectors[s], "action_mask": masks[s]}
            for s, a in enumerate(self.possible_agents)
        }

    def legal(self, seat: int) -> Legal:
        """The seat's legal actions now (index to move), as its last observation's mask says."""
        return self._legal[seat]

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


def _progress(rnd: Round) -> list[tuple[int, int, int, int]]:
    """Per seat, what changes whenever it does something productive: its cards on foundations,
    its Nertz and stock-plus-waste sizes and its face-down count. Work-to-work shuffles of
    face-up cards, stock turns and waits leave it alone."""
    played = [0] * len(rnd.tableaus)
    for f in rnd.foundations:
        for owner in f.owners:
            played[owner] += 1
    return [
        (played[s], len(t.nertz), len(t.stock) + len(t.waste), sum(t.down))
        for s, t in enumerate(rnd.tableaus)
    ]


def _wins(totals: list[int]) -> list[float]:
    """Each seat's share of the round's win: the top score wins, a tie splits it."""
    top = max(totals)
    n = totals.count(top)
    return [1.0 / n if x == top else 0.0 for x in totals]


def parallel_env(
    rules: str | Rules | dict[str, Any] = "pagat",
    seats: int = 4,
    seed: int | None = None,
    **kwargs: Any,
) -> NertzParallelEnv:
    """A Nertz ``ParallelEnv``: ``max_cycles``, ``step_ms``, ``whole_match``, ``render_mode``
    and the rewards (``foundation_reward``, ``nertz_reward``, ``win_reward``) set the
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
