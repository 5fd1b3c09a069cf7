"""nertz: real-time multiplayer Nertz (Nerts, Pounce, Racing Demon).

The rules engine is pure and deterministic: :mod:`nertz.cards`, :mod:`nertz.rules`,
:mod:`nertz.moves`, :mod:`nertz.engine`, :mod:`nertz.scoring`, :mod:`nertz.match`,
:mod:`nertz.replay`. See ``docs/`` for the rules catalogue and the notation.
"""

__version__ = "0.1.0"
