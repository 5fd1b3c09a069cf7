"""The fixed action enumeration: every move the notation allows for one ruleset, as integers.

An agent's action is one index into a table built once per (ruleset, seat count). The table is
the same for every seat and every position, so a policy network can have a fixed output layer;
what is playable *now* comes from the action mask (:meth:`ActionCodec.mask`), which is exactly
:meth:`nertz.engine.Round.legal_moves` run through :meth:`ActionCodec.encode`.

In table order (``P`` work piles, ``M`` foundation slots):

==================  ===================  =================================================
indices             text                 move
==================  ===================  =================================================
0                   ``NOOP``             wait this step (always allowed)
1                   ``T``                turn the stock
2                   ``STUCK``            declare stuck (``STUCK S``)
3                   ``NERTZ``            call
4 (rotate_either)   ``STUCK N``          declare stuck, rotating the Nertz pile
(2+P) x (1+M)       ``N-F`` ``N-F3`` ..  a top card (N, W, 1..P) to a new foundation (bare
                                         ``F``) or to foundation ``Fk``
2 x P               ``N-2`` ``W-4`` ..   the Nertz or waste top onto work pile j
P x (P-1) x D       ``3-1`` ``3+2-1`` .. work pile k's face-up run from depth d onto pile j
==================  ===================  =================================================

Caps, and why they are exact rather than guesses:

- ``M = 4 x seats`` foundation slots. A foundation is started only by the ruleset's starter card
  (an Ace, or a 9 under ``starter9``), each deck has four of them and jokers never start one, so
  no round can number a foundation above ``F{4 x seats}``.
- ``D`` run depths: 13 with ``move_partial_runs`` on, 1 with it off. Depth counts from the bottom
  of the face-up run, so depth 0 is the whole run (``3-1``) and depth d > 0 is the partial move
  ``3:<card>-1`` naming the run's (d+1)-th card from the bottom. A face-up run goes down one rank
  a card, so it never holds more than 13 cards (K to A; jokers included, see
  :func:`nertz.engine.valid_run`). Depth rather than card text keeps the table small and
  position-independent: the card at a depth is looked up when the action is played.
- ``STUCK N`` exists only under ``stuck_reset: rotate_either``; ``NERTZ`` always (it is illegal
  most of the time, as the mask says).

>>> from nertz.rules import Rules
>>> codec = ActionCodec(Rules.from_spec("pagat"), seats=2)
>>> codec.size, codec.labels[:4], codec.labels[codec.index("3+2-1")]
(222, ('NOOP', 'T', 'STUCK', 'NERTZ'), '3+2-1')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from nertz.engine import Round
from nertz.errors import IllegalMoveError
from nertz.moves import CALL, STUCK, STUCK_NERTZ, TURN, Kind, Move, to_foundation, to_work
from nertz.rules import Rules

NOOP: Final = 0
"""The index of ``NOOP`` (wait this step) in every table."""

MAX_RUN: Final = 13
"""The longest face-up run a work pile can hold (K down to A)."""

STARTERS_PER_DECK: Final = 4
"""Cards of the starter rank in one deck (four Aces, or four 9s): each can start one
foundation, which bounds the foundation count."""


@dataclass(frozen=True, slots=True)
class ActionSlot:
    """One entry of the table: what the index means before the position is known.

    ``kind`` is ``noop``, ``turn``, ``stuck``, ``call``, ``to_foundation``, ``to_work`` or
    ``run``; ``src`` a pile code; ``dst`` a work pile (1-based) or 0; ``foundation`` 0 for a new
    foundation or the foundation's number; ``depth`` the run depth; ``stuck`` ``S`` or ``N``.
    """

    kind: str
    label: str
    src: str = ""
    dst: int = 0
    foundation: int = 0
    depth: int = 0
    stuck: str = ""


class ActionCodec:
    """The action table of one ruleset and seat count: indices to moves and back, and masks."""

    __slots__ = (
        "_f_base",
        "_foundations",
        "_index",
        "_run_base",
        "_run_depths",
        "_src_index",
        "_w_base",
        "_work",
        "labels",
        "rules",
        "seats",
        "size",
        "slots",
    )

    def __init__(self, rules: Rules, seats: int) -> None:
        self.rules = rules
        self.seats = seats
        self._work = rules.work_piles
        self._foundations = STARTERS_PER_DECK * seats
        self._run_depths = MAX_RUN if rules.move_partial_runs else 1
        slots: list[ActionSlot] = [
            ActionSlot("noop", "NOOP"),
            ActionSlot("turn", "T"),
            ActionSlot("stuck", "STUCK", stuck="S"),
            ActionSlot("call", "NERTZ"),
        ]
        if rules.stuck_reset == "rotate_either":
            slots.append(ActionSlot("stuck", "STUCK N", stuck="N"))
        sources = ("N", "W", *(str(k) for k in range(1, self._work + 1)))
        self._src_index = {s: i for i, s in enumerate(sources)}
        self._f_base = len(slots)
        for src in sources:
            slots.append(ActionSlot("to_foundation", f"{src}-F", src=src))
            for f in range(1, self._foundations + 1):
                slots.append(ActionSlot("to_foundation", f"{src}-F{f}", src=src, foundation=f))
        self._w_base = len(slots)
        for src in ("N", "W"):
            for j in range(1, self._work + 1):
                slots.append(ActionSlot("to_work", f"{src}-{j}", src=src, dst=j))
        self._run_base = len(slots)
        for k in range(1, self._work + 1):
            for depth in range(self._run_depths):
                for j in range(1, self._work + 1):
                    if j == k:
                        continue
                    # "3+2-1": pile 3 from depth 2 onto pile 1 (depth 0 is plain "3-1").
                    label = f"{k}-{j}" if depth == 0 else f"{k}+{depth}-{j}"
                    slots.append(ActionSlot("run", label, src=str(k), dst=j, depth=depth))
        self.slots: tuple[ActionSlot, ...] = tuple(slots)
        """Every entry, in index order."""
        self.labels: tuple[str, ...] = tuple(s.label for s in slots)
        """Each index's text: the move notation, with ``k+d-j`` for a run from depth d."""
        self.size = len(slots)
        """How many actions the table has: the size of the ``Discrete`` action space."""
        self._index = {s.label: i for i, s in enumerate(slots)}

    def index(self, label: str) -> int:
        """The index of a label (``"N-F3"``, ``"3+2-1"``, ``"NOOP"``); KeyError if none."""
        return self._index[label]

    # ------------------------------------------------------------------- index -> move

    def decode(self, rnd: Round, seat: int, action: int) -> Move | None:
        """The move ``action`` means for ``seat`` now, or None for ``NOOP``.

        Raises :class:`IllegalMoveError` when the index names no card (a run depth past the top
        of the pile) and ``ValueError`` for an index outside the table. Whether the move is legal
        is the engine's business: :meth:`Round.play` decides.
        """
        if not 0 <= action < self.size:
            raise ValueError(f"action {action} is outside the table (0..{self.size - 1})")
        slot = self.slots[action]
        kind = slot.kind
        if kind == "noop":
            return None
        if kind == "turn":
            return TURN
        if kind == "call":
            return CALL
        if kind == "stuck":
            return STUCK_NERTZ if slot.stuck == "N" else STUCK
        if kind == "to_foundation":
            return to_foundation(slot.src, slot.foundation)
        if kind == "to_work":
            return to_work(slot.src, slot.dst)
        if slot.depth == 0:
            return to_work(slot.src, slot.dst)
        tab = rnd.tableaus[seat]
        k = int(slot.src) - 1
        at = tab.down[k] + slot.depth
        pile = tab.work[k]
        if at >= len(pile):
            raise IllegalMoveError(
                slot.label,
                seat,
                f"work pile {slot.src}'s face-up run has {len(pile) - tab.down[k]} cards, "
                f"none at depth {slot.depth}",
            )
        return to_work(slot.src, slot.dst, pile[at])

    # ------------------------------------------------------------------- move -> index

    def encode(self, rnd: Round, seat: int, move: Move | None) -> int:
        """The index of ``move`` for ``seat`` now (None is ``NOOP``).

        Raises ``ValueError`` for a move the table has no entry for (a foundation numbered past
        the cap, a pile this ruleset lacks, a partial run under ``move_partial_runs: off``, a
        card that is not face up in its pile).
        """
        if move is None:
            return NOOP
        kind = move.kind
        if kind is Kind.TURN:
            return 1
        if kind is Kind.STUCK:
            return self._index["STUCK N" if move.stuck == "N" else "STUCK"]
        if kind is Kind.CALL:
            return 3
        src = self._src_index.get(move.src)
        if src is None:
            raise ValueError(f"move {move} comes from a pile this ruleset does not have")
        if kind is Kind.TO_FOUNDATION:
            if move.foundation > self._foundations:
                raise ValueError(f"move {move} names a foundation past F{self._foundations}")
            return self._f_base + src * (1 + self._foundations) + move.foundation
        j = move.work_dst
        if not 0 <= j < self._work:
            raise ValueError(f"move {move} goes to a pile this ruleset does not have")
        if move.src in ("N", "W"):
            return self._w_base + (0 if move.src == "N" else self._work) + j
        k = move.work_src
        depth = 0
        if move.card is not None:
            tab = rnd.tableaus[seat]
            try:
                depth = tab.work[k].index(move.card, tab.down[k]) - tab.down[k]
            except ValueError:
                raise ValueError(f"move {move}: the card is not face up in its pile") from None
        if depth >= self._run_depths or j == k:
            raise ValueError(f"move {move} has no entry in this ruleset's table")
        # Destinations skip the source pile itself, hence the shift for j > k.
        return (
            self._run_base
            + (k * self._run_depths + depth) * (self._work - 1)
            + (j if j < k else j - 1)
        )

    def mask(self, rnd: Round, seat: int) -> npt.NDArray[np.int8]:
        """1 for each index whose move is in ``rnd.legal_moves(seat)``, and for ``NOOP``."""
        out = np.zeros(self.size, dtype=np.int8)
        out[NOOP] = 1
        for move in rnd.legal_moves(seat):
            out[self.encode(rnd, seat, move)] = 1
        return out
