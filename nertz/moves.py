"""Moves and their text form (SPEC section 2).

A :class:`Move` is a small immutable value; ``str(move)`` gives the canonical notation and
``Move.parse(str(move)) == move``. Parsing knows nothing of the ruleset: ``5-F`` parses (and is
then illegal with four work piles), while ``Q-Z`` or pile ``7`` raise :class:`NotationError`.

=============  ============================================================================
text           meaning
=============  ============================================================================
``N-F``        the Nertz pile's top card to the lowest-numbered foundation it fits, or a new one
``W-F4``       the waste's top card to foundation F4 exactly
``3-F``        work pile 3's top card to a foundation
``N-2``        the Nertz top card onto (or into) work pile 2
``3-1``        work pile 3's whole face-up run onto pile 1
``3:7H-1``     from pile 3, the 7H and every card above it onto pile 1
``T``          turn the stock (or turn the waste over into it)
``STUCK``      declare stuck (``STUCK N`` / ``STUCK S`` under ``rotate_either``)
``NERTZ``      call Nertz
=============  ============================================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from nertz.cards import Card
from nertz.errors import NotationError


class Kind(Enum):
    """What a move does."""

    TO_FOUNDATION = "to_foundation"
    TO_WORK = "to_work"
    TURN = "turn"
    STUCK = "stuck"
    CALL = "call"


OP_TO_FOUNDATION: Final = 0
"""``Move.op`` of a play to a foundation: the kinds as small ints, which compiled code compares
without a lookup (an Enum member is an attribute of its class, looked up on every use)."""
OP_TO_WORK: Final = 1
"""``Move.op`` of a play onto a work pile."""
OP_TURN: Final = 2
"""``Move.op`` of a turn of the stock."""
OP_STUCK: Final = 3
"""``Move.op`` of a stuck declaration."""
OP_CALL: Final = 4
"""``Move.op`` of the call."""
_OPS: Final = {
    Kind.TO_FOUNDATION: OP_TO_FOUNDATION, Kind.TO_WORK: OP_TO_WORK, Kind.TURN: OP_TURN,
    Kind.STUCK: OP_STUCK, Kind.CALL: OP_CALL,
}

NERTZ_PILE: Final = "N"
"""Pile code of the Nertz pile."""
WASTE: Final = "W"
"""Pile code of the waste."""
STOCK: Final = "S"
"""Pile code of the stock (only in ``STUCK S``: cards leave the stock by ``T``)."""

MAX_WORK_PILES: Final = 5
"""No ruleset has more work piles than this; pile ``6`` is no pile at all."""

CALL_WORDS: Final = frozenset({"NERTZ", "NERTS", "POUNCE", "HOORAH", "SQUEAL"})
"""Words read as the call; the canonical text is always ``NERTZ``."""


@dataclass(frozen=True, slots=True)
class Move:
    """One move by one seat.

    ``src`` is ``"N"``, ``"W"`` or a work pile number ``"1"``..``"5"``; ``dst`` is ``"F"`` or a
    work pile number; ``foundation`` is 0 for a bare ``F`` (lowest that fits, or new) or the
    foundation's number; ``card`` is the first card of a partial run (``3:7H-1``);
    ``stuck`` is ``"N"`` or ``"S"`` for a declaration.
    """

    kind: Kind
    src: str = ""
    dst: str = ""
    foundation: int = 0
    card: Card | None = None
    stuck: str = ""
    text: str = field(default="", compare=False, repr=False)
    """The canonical notation, computed once: moves are shared values, printed often."""
    work_src: int = field(default=-1, compare=False, repr=False)
    """The source work pile as a 0-based index, or -1 when the source is not a work pile."""
    work_dst: int = field(default=-1, compare=False, repr=False)
    """The destination work pile as a 0-based index, or -1 for a foundation."""
    op: int = field(default=-1, compare=False, repr=False)
    """``kind`` as one of the ``OP_*`` numbers, for the engine's hot paths."""

    def __post_init__(self) -> None:
        # Derived once here: the engine reads them on every move it checks and makes.
        object.__setattr__(self, "text", self._format())
        object.__setattr__(self, "work_src", int(self.src) - 1 if self.src.isdigit() else -1)
        object.__setattr__(self, "work_dst", int(self.dst) - 1 if self.dst.isdigit() else -1)
        object.__setattr__(self, "op", _OPS[self.kind])

    def __str__(self) -> str:
        return self.text

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # Pickled as its text: the compiled class cannot restore a frozen dataclass's slots.
        return (Move.parse, (self.text,))

    def _format(self) -> str:
        kind = self.kind
        if kind is Kind.TURN:
            return "T"
        if kind is Kind.CALL:
            return "NERTZ"
        if kind is Kind.STUCK:
            return "STUCK" if self.stuck in ("", STOCK) else f"STUCK {self.stuck}"
        src = self.src if self.card is None else f"{self.src}:{self.card}"
        if kind is Kind.TO_FOUNDATION:
            return f"{src}-F{self.foundation or ''}"
        return f"{src}-{self.dst}"

    @staticmethod
    def parse(text: object, call_word: str | None = None) -> Move:
        """Read a move; raises :class:`NotationError` naming the text if it is no move at all.

        The call is ``NERTZ`` or any of :data:`CALL_WORDS`; with ``call_word`` (the ruleset's
        own word, SPEC section 2: "or the ruleset's own word") that word calls too, in any case.

        >>> str(Move.parse("3:10h-1"))
        '3:TH-1'
        >>> str(Move.parse("bingo", call_word="Bingo"))
        'NERTZ'
        """
        if not isinstance(text, str):
            raise NotationError(f"a move is text, not {type(text).__name__}")
        cached = _PARSED.get(text)
        if cached is not None:
            return cached
        try:
            move = _parse(text)
        except NotationError:
            # Not cached: the same text is no move under another ruleset's word.
            if call_word is not None and _word(text) == _word(call_word):
                return CALL
            raise
        if len(_PARSED) < 4096:
            _PARSED[text] = move
        return move


_PARSED: dict[str, Move] = {}
_PILE_MOVE = re.compile(r"^([NW1-9])(?::([0-9A-Z]{2,3}))?-(F(\d*)|[1-9])$")


def _word(text: str) -> str:
    """A call word as compared: upper case, spaces folded, a closing ``!`` dropped."""
    return " ".join(text.strip().upper().rstrip("!").split())


def _quoted(text: str) -> str:
    """``text`` as an error names it: quoted, and cut short past 40 characters, so that a
    refusal never echoes a flood back (or into a server's log)."""
    return repr(text if len(text) <= 40 else text[:40] + "…")


def _parse(text: str) -> Move:
    norm = " ".join(text.strip().upper().split())
    if not norm:
        raise NotationError("empty move text")
    if norm == "T":
        return TURN
    if norm in CALL_WORDS:
        return CALL
    if norm.startswith("STUCK"):
        rest = norm[5:].strip()
        if rest in ("", STOCK):
            return STUCK
        if rest == NERTZ_PILE:
            return STUCK_NERTZ
        raise NotationError(f"bad move {_quoted(text)}: STUCK takes N or S, not {_quoted(rest)}")
    m = _PILE_MOVE.match(norm.replace(" ", ""))
    if m is None:
        raise NotationError(f"bad move {_quoted(text)}: not a move")
    src, card_text, dst, number = m.group(1), m.group(2), m.group(3), m.group(4)
    for pile in (src, dst):
        if pile.isdigit() and not 1 <= int(pile) <= MAX_WORK_PILES:
            raise NotationError(f"bad move {_quoted(text)}: there is no work pile {pile}")
    card = None
    if card_text is not None:
        if not src.isdigit():
            raise NotationError(f"bad move {_quoted(text)}: only a work pile's run can be split")
        if dst.startswith("F"):
            raise NotationError(f"bad move {_quoted(text)}: a run cannot go to a foundation")
        try:
            card = Card.parse(card_text)
        except NotationError:
            raise NotationError(f"bad move {_quoted(text)}: {card_text!r} is not a card") from None
    if dst.startswith("F"):
        foundation = 0
        if number:
            foundation = int(number)
            if foundation < 1:
                raise NotationError(f"bad move {_quoted(text)}: foundations are numbered from F1")
        return Move(Kind.TO_FOUNDATION, src=src, dst="F", foundation=foundation)
    return Move(Kind.TO_WORK, src=src, dst=dst, card=card)


TURN: Final = Move(Kind.TURN)
"""``T``: turn the stock."""
CALL: Final = Move(Kind.CALL)
"""``NERTZ``: call the end of the round."""
STUCK: Final = Move(Kind.STUCK, stuck=STOCK)
"""``STUCK``: declare stuck (the stock is the pile to rotate)."""
STUCK_NERTZ: Final = Move(Kind.STUCK, stuck=NERTZ_PILE)
"""``STUCK N``: declare stuck, choosing to rotate the Nertz pile (``rotate_either``)."""


_SHARED: dict[tuple[str, int, Card | None, bool], Move] = {}
"""Moves are values: bots and playouts make the same few hundred again and again, so each is
made once and shared (the set of possible moves is small and bounded)."""


def to_foundation(src: str, foundation: int = 0) -> Move:
    """``src-F`` (foundation 0) or ``src-Fk``."""
    key = (src, foundation, None, True)
    move = _SHARED.get(key)
    if move is None:
        move = _SHARED[key] = Move(Kind.TO_FOUNDATION, src=src, dst="F", foundation=foundation)
    return move


def to_work(src: str, dst: int, card: Card | None = None) -> Move:
    """``src-k`` onto work pile ``dst`` (1-based), or ``src:card-k`` for a partial run."""
    key = (src, dst, card, False)
    move = _SHARED.get(key)
    if move is None:
        move = _SHARED[key] = Move(Kind.TO_WORK, src=src, dst=str(dst), card=card)
    return move
