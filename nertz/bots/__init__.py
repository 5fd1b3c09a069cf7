"""Bots: one small interface (a seat's view in, an action out) and the players behind it.

- :mod:`nertz.bots.base`: :class:`Observation` (fed from the live round or from a
  :class:`~nertz.views.SeatView`), the :class:`Bot` interface, honest sampling of hidden cards;
- :mod:`nertz.bots.basic`: ``random`` and ``greedy``;
- :mod:`nertz.bots.heuristic`: greedy's card play, and the helpers the other bots share;
- :mod:`nertz.bots.races`: which foundation plays another seat could take first (both
  ``greedy`` and ``expert`` make those before anything else);
- :mod:`nertz.bots.expert`: ``expert``, contested plays first and a sampled look-ahead;
- :mod:`nertz.bots.pounce`: ``pounce``, a benchmark opponent playing Pounce Online's rules;
- :mod:`nertz.bots.idle`: when a seat with nothing to play turns or declares stuck, from what
  it has seen;
- :mod:`nertz.bots.memory`: what a seat remembers of its own stock (the waste tops it saw);
- :mod:`nertz.bots.speed`: the speed levels ``beginner`` .. ``instant``;
- :mod:`nertz.bots.registry`: bots and levels by name;
- :mod:`nertz.bots.driver`: the real-time loop that plays a bot at its speed through a seat link
  (the server's bots in-process, ``nertz bot`` over the network).

::

    bot = find_bot("greedy")()
    bot.start(seat=1, rules=rules, seed=7)
    move = bot.decide(Observation.from_view(view_json, rules))   # a Move, or None: wait
"""

from nertz.bots.base import Bot, Observation, determinize, sample_world
from nertz.bots.basic import GreedyBot, RandomBot
from nertz.bots.expert import ExpertBot
from nertz.bots.pounce import PounceBot
from nertz.bots.registry import BOTS, PlayerSpec, UnknownName, find_bot, find_speed
from nertz.bots.speed import SPEEDS, SpeedProfile

__all__ = [
    "BOTS",
    "SPEEDS",
    "Bot",
    "ExpertBot",
    "GreedyBot",
    "Observation",
    "PlayerSpec",
    "PounceBot",
    "RandomBot",
    "SpeedProfile",
    "UnknownName",
    "determinize",
    "find_bot",
    "find_speed",
    "sample_world",
]
