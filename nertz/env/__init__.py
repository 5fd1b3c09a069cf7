"""Nertz for AI research: a PettingZoo parallel environment and a single-agent Gymnasium one.

Needs the ``ai`` extra (``pip install 'nertz[ai]'``: pettingzoo, gymnasium, numpy); the rest of
the package does not import this one. The pieces, one module each:

- :mod:`nertz.env.actions`: the semantic action table of a ruleset and its masks;
- :mod:`nertz.env.observation`: what a seat sees, as a float vector of card features;
- :mod:`nertz.env.parallel`: :func:`parallel_env`, every seat acting at once each step;
- :mod:`nertz.env.single`: :func:`make_single`, one learner against bots;
- :mod:`nertz.env.vector`: :class:`NertzVectorEnv`, many such tables stepped in one call.

docs/ai.md has a random-agent loop and the details.
"""

from nertz.env.actions import NOOP, ActionCodec
from nertz.env.observation import ObservationCodec, card_features
from nertz.env.parallel import NertzParallelEnv, agent_name, env, parallel_env
from nertz.env.single import (
    OPPONENTS,
    Opponent,
    SingleAgentEnv,
    make_opponent,
    make_single,
    register_opponent,
)
from nertz.env.vector import NertzVectorEnv

__all__ = [
    "NOOP",
    "OPPONENTS",
    "ActionCodec",
    "NertzParallelEnv",
    "NertzVectorEnv",
    "ObservationCodec",
    "Opponent",
    "SingleAgentEnv",
    "agent_name",
    "card_features",
    "env",
    "make_opponent",
    "make_single",
    "parallel_env",
    "register_opponent",
]
