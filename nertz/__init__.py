"""nertz: real-time multiplayer Nertz (Nerts, Pounce, Racing Demon).

The rules engine is pure and deterministic: :mod:`nertz.cards`, :mod:`nertz.rules`,
:mod:`nertz.moves`, :mod:`nertz.engine`, :mod:`nertz.scoring`, :mod:`nertz.match`,
:mod:`nertz.replay`. See ``docs/`` for the rules catalogue and the notation.

The engine's modules load compiled (mypyc) when the install built them and pure Python
otherwise; :data:`FORM` says which, and :mod:`nertz._form` how it is decided.
"""

from nertz._form import select as _select

__version__ = "0.1.0"

FORM: str = _select()
"""``compiled``, or ``pure (why)``: which form of the engine this process loaded."""
