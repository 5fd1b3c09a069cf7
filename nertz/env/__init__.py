"""Nertz for AI research: a PettingZoo parallel environment and a single-agent Gymnasium one.

Needs the ``ai`` extra (``pip install 'nertz[ai]'``: pettingzoo, gymnasium, numpy); the rest of
the package does not import this one. The pieces, one module each:

- :mod:`nertz.env.actions`: the fixed action table of a ruleset and its masks;
- :mod:`nertz.env.observation`: what a seat sees, as an integer vector;
- :mod:`nertz.env.parallel`: :func:`parallel_env`, every seat acting at once each step;
- :mod:`nertz.env.single`: :func:`make_single`, one learner against bots.

docs/ai.md has a random-agent loop and the details.
"""

from nertz.env.actions import NOOP, ActionCodec
from nertz.env.observation import ObservationCodec, card_code
from nertz.env.parallel import NertzParallelEnv, agent_name, env, parallel_env
from nertz.env.single import (
    OPPONENTS,
    Opponent,
    SingleAgentEnv,
    make_opponent,
    make_single,
    register_opponent,
)

__all__ = [
    "NOOP",
    "OPPONENTS",
    "ActionCodec",
    "NertzParallelEnv",
    "ObservationCodec",
    "Opponent",
    "SingleAgentEnv",
    "agent_name",
    "card_code",
    "env",
    "make_opponent",
    "make_single",
    "parallel_env",
    "register_opponent",
]
