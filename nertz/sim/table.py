"""One round on a virtual clock: bots act at their own pace and race for the foundations.

The table keeps a heap of pending actions ordered by (time, arrival order). Two kinds:

- a **decision**: the seat looks at the table *as it is at that moment* and picks a move
  (or decides to wait); the move is then in the seat's hands for its think time, drawn from its
  speed profile, and lands at ``t + think``;
- a **landing**: the engine gets the move at that time. If another seat changed the position in
  between (took that foundation step first), the engine rejects it: that is a race, won by
  whoever reached the table first. After a landing the seat decides again at once; after a
  rejection it takes its reaction delay to notice.

A seat that waits is woken, after its reaction delay, by any change at the table that might
concern it (a card to a foundation, a reset). No wall clock is read: the same seed gives the same
round. The table mirrors the server on two points: what happens when every seat is stuck is the
engine's referee's (:meth:`~nertz.engine.Round.settle`: a reset at once, with no vote and no
timer, or the round's end), asked whenever every seat is idle; and after a call, moves already in
the air still land if they reach the table within ``call_grace_ms``.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from nertz.bots.base import Bot, Observation
from nertz.bots.speed import STEPS, SpeedProfile
from nertz.engine import Round
from nertz.errors import IllegalMoveError, LostRace
from nertz.events import Event, StockTurned
from nertz.moves import Kind, Move

MAX_ACTIONS: Final = 20_000
"""Moves a round may take before the table gives up and scores it ``open`` (a safety net)."""
MAX_MS: Final = 3_600_000
"""Simulated time (one hour) after which the table gives up likewise."""


@dataclass(slots=True)
class TableStats:
    """What happened at the table in one round, beyond the score."""

    moves: int = 0
    """Accepted moves."""
    rejected: int = 0
    """Moves the engine refused on landing (lost races included)."""
    races: int = 0
    """Foundation plays lost to another seat that was there first."""
    resets: int = 0
    """Stuck resets (by declarations or by the table finding every seat stuck)."""
    ms: float = 0.0
    """Simulated milliseconds from the deal to the last landing."""
    log: list[tuple[int, int, str, bool]] = field(default_factory=list)
    """(t, seat, move, accepted) for every landing, when asked to keep it."""


def play_table(
    rnd: Round,
    bots: Sequence[Bot],
    speeds: Sequence[SpeedProfile],
    rng: random.Random,
    keep_log: bool = False,
) -> TableStats:
    """Play ``rnd`` to its end with ``bots[s]`` at seat ``s``; the bots must be started.

    ``rng`` draws every think time and reaction delay (the bots have their own generators).
    """
    seats = rnd.seats
    stats = TableStats()
    observations = [Observation.from_round(rnd, s) for s in range(seats)]
    heap: list[tuple[float, int, int, Move | None]] = []
    push = heapq.heappush
    pop = heapq.heappop
    seq = 0
    waiting = [False] * seats
    log = stats.log if keep_log else None
    grace = rnd.rules.call_grace_ms
    # The think-time tables, drawn from with one uniform number (speed.py): this loop runs for
    # every action of every simulated round, so it avoids method calls where it can.
    card_times = [p.card_times for p in speeds]
    turn_times = [p.turn_times for p in speeds]
    uniform = rng.random
    steps = STEPS
    to_foundation = Kind.TO_FOUNDATION
    to_work = Kind.TO_WORK
    # Seats start at once, staggered by a reaction so nobody owns the first foundation by seat
    # order alone.
    for s in range(seats):
        push(heap, (speeds[s].react_ms(rng), seq, s, None))
        seq += 1
    t = 0.0
    while heap:
        t, _, seat, move = pop(heap)
        if rnd.ended is not None:
            # After the call only cards already in the air may land, inside the grace window.
            if move is None or rnd.called_at is None or t - rnd.called_at >= grace:
                continue
        elif t > MAX_MS or stats.moves >= MAX_ACTIONS:
            break
        if move is not None:
            events: tuple[Event, ...] = ()
            try:
                events = rnd.play(seat, move, int(t))
            except LostRace:
                stats.rejected += 1
                stats.races += 1
                ok = False
            except IllegalMoveError:
                stats.rejected += 1
                ok = False
            else:
                ok = True
                stats.moves += 1
            if log is not None:
                log.append((int(t), seat, str(move), ok))
            if rnd.ended is not None:
                stats.ms = t
                continue
            if not ok:
                push(heap, (t + speeds[seat].react_ms(rng), seq, seat, None))
                seq += 1
                continue
            kind = move.kind
            if kind is to_foundation:
                _wake(heap, waiting, speeds, rng, t, seq)
                seq += seats
            elif kind is Kind.STUCK or kind is Kind.TURN:
                # The server asks the referee after every move. Here it is asked when the others
                # are idle (a seat's own turns cannot make every seat stuck), or when this seat
                # has turned through its whole stock (for seats that never stop turning):
                # asking at every turn would cost the simulator much of its time.
                if rnd.resets == stats.resets and (
                    _others_idle(rnd, waiting, seat) or _turned_over(events)
                ):
                    rnd.settle(int(t))
                if rnd.resets != stats.resets:
                    stats.resets = rnd.resets
                    _wake(heap, waiting, speeds, rng, t, seq)
                    seq += seats
            stats.ms = t
            if rnd.ended is not None:
                continue  # the referee ended it (a reset that only went round in a circle)
        # The seat decides now, on the table as it is.
        obs = observations[seat]
        obs.t = int(t)
        nxt = bots[seat].decide(obs)
        if nxt is None:
            waiting[seat] = True
            if _others_idle(rnd, waiting, seat) and rnd.settle(int(t)):
                stats.resets = rnd.resets
                if rnd.ended is not None:
                    stats.ms = t
                    continue
                _wake(heap, waiting, speeds, rng, t, seq)
                seq += seats
            continue
        kind = nxt.kind
        times = card_times if kind is to_foundation or kind is to_work else turn_times
        push(heap, (t + times[seat][int(uniform() * steps)], seq, seat, nxt))
        seq += 1
    return stats


def _turned_over(events: tuple[Event, ...]) -> bool:
    """The move turned the seat's waste back into its stock: a whole pass is done."""
    last = events[-1] if events else None
    return isinstance(last, StockTurned) and last.recycled


def _others_idle(rnd: Round, waiting: list[bool], seat: int) -> bool:
    """Every other seat is waiting or has declared: the moment to ask the engine about a reset."""
    stuck = rnd.stuck
    return all(waiting[s] or stuck[s] or s == seat for s in range(len(waiting)))


def _wake(
    heap: list[tuple[float, int, int, Move | None]],
    waiting: list[bool],
    speeds: Sequence[SpeedProfile],
    rng: random.Random,
    t: float,
    seq: int,
) -> None:
    """Schedule a decision, after its reaction delay, for every waiting seat (uses ``seats``
    sequence numbers from ``seq`` so the caller can advance its counter blindly)."""
    for s in range(len(waiting)):
        if waiting[s]:
            waiting[s] = False
            heapq.heappush(heap, (t + speeds[s].react_ms(rng), seq + s, s, None))
