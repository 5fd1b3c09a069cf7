"""The action table: a few dozen semantic actions, each one idea of play, as integers.

An agent's action is one index into one table, the same for every ruleset, seat, position and
seat count, so a policy network has a fixed output layer, plays any ruleset, and one entry always
means one idea ("the Nertz top to a foundation"), never a slot that moves about as the
foundations are numbered. The table is laid out for :data:`MAX_WORK_PILES` work piles and has
``STUCK N``; under a ruleset with fewer piles, or that rotates only the stock, those entries are
simply never legal. What is playable *now* comes from the action mask
(:meth:`ActionCodec.mask`), built from :meth:`nertz.engine.Round.legal_moves`: an entry is 1
exactly when the move it stands for now is legal.

In table order (``P`` = :data:`MAX_WORK_PILES` work piles):

==================  ===================  =================================================
indices             text                 move
==================  ===================  =================================================
0                   ``NOOP``             wait this step (always allowed)
1                   ``T``                turn the stock
2                   ``STUCK``            declare stuck (``STUCK S``)
3                   ``NERTZ``            call
4                   ``STUCK N``          declare stuck, rotating the Nertz pile
2 + P               ``N-F`` ``W-F`` ..   a top card (N, W, 1..P) to a foundation: any
                                         foundation it fits, or a new one for a starter
2 x P               ``N-2`` ``W-4`` ..   the Nertz or waste top onto work pile j
P x (P-1)           ``3-1`` ..           the longest part of work pile k's face-up run
                                         that goes onto pile j
==================  ===================  =================================================

What the table leaves out, on purpose:

- *Which* foundation a card goes to. Foundations of one suit that take the same card are worth
  the same to the player who plays it, so ``X-F`` is the engine's own any-foundation move (the
  lowest-numbered foundation the card fits; a starter opens a new one).
- A run's *shorter* parts. Without jokers, a part of a run that fits a non-empty pile is unique
  (a run holds each rank once, and the rank fixes the part), so ``k-j`` names it; onto an
  empty pile ``k-j`` moves the whole run, and the partial moves onto an empty pile are not in
  the table. With jokers, where several parts may fit, ``k-j`` is the longest.

>>> from nertz.rules import Rules
>>> codec = ActionCodec(Rules.from_spec("pagat"))
>>> codec.size, codec.labels[:4], codec.labels[codec.index("3-1")]
(42, ('NOOP', 'T', 'STUCK', 'NERTZ'), '3-1')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from nertz.engine import Round
from nertz.moves import CALL, STUCK, STUCK_NERTZ, TURN, Kind, Move, to_foundation, to_work
from nertz.rules import Rules

NOOP: Final = 0
"""The index of ``NOOP`` (wait this step) in every table."""

TURN_INDEX: Final = 1
"""The index of ``T`` (turn the stock) in every table."""

STUCK_INDEX: Final = 2
"""The index of ``STUCK`` in every table."""

CALL_INDEX: Final = 3
"""The index of ``NERTZ`` (call) in every table."""

MAX_WORK_PILES: Final = 5
"""The most work piles a ruleset may have (the ``work_piles`` option: 4 or 5)."""


@dataclass(frozen=True, slots=True)
class ActionSlot:
    """One entry of the table: what the index means before the position is known.

    ``kind`` is ``noop``, ``turn``, ``stuck``, ``call``, ``to_foundation``, ``to_work`` or
    ``run``; ``src`` a pile code (``N``, ``W``, ``1``..); ``dst`` a work pile (1-based) or 0;
    ``stuck`` ``S`` or ``N``.
    """

    kind: str
    label: str
    src: str = ""
    dst: int = 0
    stuck: str = ""


Legal = dict[int, Move]
"""The legal actions of a seat now: index to the move it stands for (``NOOP`` is left out)."""


class ActionCodec:
    """The action table, read under one ruleset: indices to moves and back, and masks.

    ``seats`` is accepted for symmetry with :class:`nertz.env.observation.ObservationCodec`;
    the table depends on neither it nor the ruleset.
    """

    __slots__ = ("_f_base", "_index", "_run_base", "_src_index", "_w_base", "_work", "labels",
                 "rules", "size", "slots")

    def __init__(self, rules: Rules, seats: int = 1) -> None:
        self.rules = rules
        if rules.work_piles > MAX_WORK_PILES:
            raise ValueError(f"the table has room for {MAX_WORK_PILES} work piles")
        self._work = MAX_WORK_PILES
        slots: list[ActionSlot] = [
            ActionSlot("noop", "NOOP"),
            ActionSlot("turn", "T"),
            ActionSlot("stuck", "STUCK", stuck="S"),
            ActionSlot("call", "NERTZ"),
            ActionSlot("stuck", "STUCK N", stuck="N"),
        ]
        sources = ("N", "W", *(str(k) for k in range(1, self._work + 1)))
        self._src_index = {s: i for i, s in enumerate(sources)}
        self._f_base = len(slots)
        for src in sources:
            slots.append(ActionSlot("to_foundation", f"{src}-F", src=src))
        self._w_base = len(slots)
        for src in ("N", "W"):
            for j in range(1, self._work + 1):
                slots.append(ActionSlot("to_work", f"{src}-{j}", src=src, dst=j))
        self._run_base = len(slots)
        for k in range(1, self._work + 1):
            for j in range(1, self._work + 1):
                if j != k:
                    slots.append(ActionSlot("run", f"{k}-{j}", src=str(k), dst=j))
        self.slots: tuple[ActionSlot, ...] = tuple(slots)
        """Every entry, in index order."""
        self.labels: tuple[str, ...] = tuple(s.label for s in slots)
        """Each index's text: the move notation (``X-F`` is any foundation)."""
        self.size = len(slots)
        """How many actions the table has: the size of the ``Discrete`` action space."""
        self._index = {s.label: i for i, s in enumerate(slots)}

    def index(self, label: str) -> int:
        """The index of a label (``"N-F"``, ``"3-1"``, ``"NOOP"``); KeyError if none."""
        return self._index[label]

    # ------------------------------------------------------------------- move -> index

    def _slot_of(self, move: Move) -> int:
        """The entry a move belongs to (several moves may share one: see the module doc)."""
        kind = move.kind
        if kind is Kind.TURN:
            return TURN_INDEX
        if kind is Kind.STUCK:
            return self._index["STUCK N" if move.stuck == "N" else "STUCK"]
        if kind is Kind.CALL:
            return CALL_INDEX
        src = self._src_index.get(move.src)
        if src is None:
            raise ValueError(f"move {move} comes from a pile this ruleset does not have")
        if kind is Kind.TO_FOUNDATION:
            return self._f_base + src
        j = move.work_dst
        if not 0 <= j < self._work:
            raise ValueError(f"move {move} goes to a pile this ruleset does not have")
        if move.src in ("N", "W"):
            return self._w_base + (0 if move.src == "N" else self._work) + j
        k = move.work_src
        if j == k:
            raise ValueError(f"move {move} goes back onto its own pile")
        # Destinations skip the source pile itself, hence the shift for j > k.
        return self._run_base + k * (self._work - 1) + (j if j < k else j - 1)

    def encode(self, rnd: Round, seat: int, move: Move | None) -> int:
        """The entry of ``move`` (None is ``NOOP``): ``3:7H-1`` is ``3-1``, ``N-F4`` is ``N-F``.

        Raises ``ValueError`` for a move the table has no entry for (a pile this ruleset lacks).
        ``rnd`` and ``seat`` are not needed for that and are kept for callers' symmetry with
        :meth:`decode`.
        """
        if move is None:
            return NOOP
        return self._slot_of(move)

    # ------------------------------------------------------------------- legal actions

    def legal(self, rnd: Round, seat: int, any_foundation: bool = True) -> Legal:
        """Each legal entry and the move it stands for now (``NOOP`` left out).

        ``X-F`` stands for the engine's any-foundation move (it goes to whichever foundation
        takes the card when it lands: the environment's choice, as a step's moves land in turn);
        with ``any_foundation`` False, for the first foundation move the engine lists instead
        (``X-Fk``, what a bot answers). ``k-j`` stands for the longest legal part of pile k's
        run onto j (a whole run, whose move names no card, is longer than any part).
        """
        out: Legal = {}
        tab = rnd.tableaus[seat]
        for move in rnd.legal_moves(seat):
            i = self._slot_of(move)
            kept = out.get(i)
            if kept is None:
                is_foundation = move.kind is Kind.TO_FOUNDATION
                out[i] = to_foundation(move.src) if is_foundation and any_foundation else move
            elif move.kind is Kind.TO_WORK and kept.card is not None:
                if move.card is None:
                    out[i] = move
                else:
                    pile = tab.work[move.work_src]
                    if pile.index(move.card) < pile.index(kept.card):
                        out[i] = move
        return out

    def mask(self, rnd: Round, seat: int, legal: Legal | None = None) -> npt.NDArray[np.int8]:
        """1 for each entry whose move is legal now (:meth:`legal`), and for ``NOOP``."""
        out = np.zeros(self.size, dtype=np.int8)
        out[NOOP] = 1
        out[list(self.legal(rnd, seat) if legal is None else legal)] = 1
        return out

    # ------------------------------------------------------------------- index -> move

    def decode(self, rnd: Round, seat: int, action: int, legal: Legal | None = None) -> Move | None:
        """The move ``action`` stands for now, or None for ``NOOP``.

        A legal entry gives its move (:meth:`legal`; pass ``legal`` if already known). An entry
        the mask forbids still gives the plain move it names (``3-1``: the whole run), so that
        the engine can say why it is refused. Raises ``ValueError`` for an index outside the
        table.
        """
        if not 0 <= action < self.size:
            raise ValueError(f"action {action} is outside the table (0..{self.size - 1})")
        if action == NOOP:
            return None
        found = (self.legal(rnd, seat) if legal is None else legal).get(action)
        if found is not None:
            return found
        slot = self.slots[action]
        kind = slot.kind
        if kind == "turn":
            return TURN
        if kind == "call":
            return CALL
        if kind == "stuck":
            return STUCK_NERTZ if slot.stuck == "N" else STUCK
        if kind == "to_foundation":
            return to_foundation(slot.src)
        return to_work(slot.src, slot.dst)
