"""A simple, fast greedy playout: the engine's own smoke test, benchmark and demo maker.

The policy, for the seat to act: its Nertz top to a foundation, any other top card to a
foundation, the Nertz top onto a work pile, a whole run that uncovers a face-down card or empties
its pile, the waste top onto a work pile, else turn the stock. A seat that has turned through its
whole stock twice without finding a play asks the engine whether it is truly stuck and declares
so (the engine resets once everyone has); seats act in turn, round robin, with no clock.
The bots in :mod:`nertz.bots` play far better; this is the baseline they build on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nertz.cards import Card
from nertz.engine import NEW_FOUNDATION, NO_FOUNDATION, Round
from nertz.match import Match
from nertz.moves import (
    CALL,
    OP_STUCK,
    STUCK,
    STUCK_NERTZ,
    TURN,
    Move,
    to_foundation,
    to_work,
)
from nertz.replay import Recorder, ReplayFile
from nertz.rules import Rules
from nertz.state import Tableau

MAX_ACTIONS = 20_000
"""A playout stops (the round stays ``open``) after this many actions: a safety net."""


def greedy_move(rnd: Round, seat: int) -> Move | None:
    """The greedy policy's play for ``seat``, or None if it would only turn the stock."""
    tab = rnd.tableaus[seat]
    if not tab.nertz:
        return CALL if rnd.rules.manual_call else None
    fits = rnd.foundation_for
    top = tab.nertz[-1]
    fi = fits(top)
    if fi != NO_FOUNDATION:
        return to_foundation("N", 0 if fi == NEW_FOUNDATION else fi + 1)
    work = tab.work
    down = tab.down
    n = len(work)
    waste = tab.waste[-1] if tab.waste else None
    if waste is not None:
        fi = fits(waste)
        if fi != NO_FOUNDATION:
            return to_foundation("W", 0 if fi == NEW_FOUNDATION else fi + 1)
    for k in range(n):
        pile = work[k]
        if len(pile) > down[k]:
            fi = fits(pile[-1])
            if fi != NO_FOUNDATION:
                return to_foundation(_NAMES[k], 0 if fi == NEW_FOUNDATION else fi + 1)
    if rnd.rules.jokers:
        return _greedy_to_work_wild(rnd, tab, top, waste)
    empty = -1
    for j in range(n):
        pile = work[j]
        if not pile:
            if empty < 0:
                empty = j
        else:
            last = pile[-1]
            if last.rank == top.rank + 1 and last.red is not top.red:
                return to_work("N", j + 1)
    if empty >= 0:
        return to_work("N", empty + 1)
    for k in range(n):
        pile = work[k]
        d = down[k]
        if len(pile) <= d:
            continue
        first = pile[d]
        for j in range(n):
            other = work[j]
            if j != k and other:
                last = other[-1]
                if last.rank == first.rank + 1 and last.red is not first.red:
                    return to_work(_NAMES[k], j + 1)
    if waste is not None:
        for j in range(n):
            other = work[j]
            if other:
                last = other[-1]
                if last.rank == waste.rank + 1 and last.red is not waste.red:
                    return to_work("W", j + 1)
    return None


def _greedy_to_work_wild(rnd: Round, tab: Tableau, top: Card, waste: Card | None) -> Move | None:
    """The work-pile steps of :func:`greedy_move` when jokers may sit in the runs."""
    work = tab.work
    down = tab.down
    n = len(work)
    for j in range(n):
        if work[j] and rnd._fits_pile(work[j], down[j], [top]):
            return to_work("N", j + 1)
    for j in range(n):
        if not work[j]:
            return to_work("N", j + 1)
    for k in range(n):
        if len(work[k]) <= down[k]:
            continue
        run = work[k][down[k]:]
        for j in range(n):
            if j != k and work[j] and rnd._fits_pile(work[j], down[j], run):
                return to_work(_NAMES[k], j + 1)
    if waste is not None:
        for j in range(n):
            if work[j] and rnd._fits_pile(work[j], down[j], [waste]):
                return to_work("W", j + 1)
    return None


_NAMES = ("1", "2", "3", "4", "5")


def play_round(
    rnd: Round,
    policy: Callable[[Round, int], Move | None] = greedy_move,
    max_actions: int = MAX_ACTIONS,
    on_move: Callable[[int, Move], None] | None = None,
) -> int:
    """Play ``rnd`` to its end with every seat on ``policy``; returns the number of actions.

    ``on_move(seat, move)`` hears of every move before it is played (for recording)."""
    seats = rnd.seats
    idle = [0] * seats  # turns since the seat last found a play
    actions = 0
    seat = 0
    while rnd.ended is None and actions < max_actions:
        move = policy(rnd, seat)
        if move is None:
            tab = rnd.tableaus[seat]
            cycle = (len(tab.stock) + len(tab.waste)) // rnd.rules.turn_count + 2
            if rnd.stuck[seat]:
                move = None
            elif idle[seat] > 2 * cycle or not (tab.stock or tab.waste):
                move = STUCK if rnd.is_stuck(seat) or idle[seat] > 4 * cycle else TURN
                if move is TURN and not (tab.stock or tab.waste):
                    move = STUCK
            else:
                move = TURN
            if move is STUCK and rnd.rules.rotate_either and rnd.resets % 2:
                # Alternate which pile rotates, so every Nertz card comes up in time too.
                move = STUCK_NERTZ
            if move is TURN:
                idle[seat] += 1
        else:
            idle[seat] = 0
        if move is not None:
            if on_move is not None:
                on_move(seat, move)
            events = rnd.play(seat, move)
            actions += 1
            if move.op == OP_STUCK and len(events) > 1:
                idle = [0] * seats
        seat += 1
        if seat == seats:
            seat = 0
    return actions


def record_match(
    rules: Rules, players: Sequence[str], seed: int | str = 0, step_ms: int = 150
) -> ReplayFile:
    """Play a whole match with the greedy playout and return it as a replay file.

    Each round stores its layouts, and each action is ``step_ms`` after the one before, so the
    file replays to the same scores with any engine that follows SPEC.
    """
    match = Match(rules, len(players), seed)
    recorder = Recorder(rules, players, seed)
    while not match.over:
        rnd = match.deal()
        recorder.start_round(rnd)
        clock = 0

        def record(seat: int, move: Move) -> None:
            nonlocal clock
            clock += step_ms
            recorder.record(clock, seat, move)

        play_round(rnd, on_move=record)
        match.finish(rnd)
        if rules.target_score is None and rules.rounds is None:
            break  # a match with neither a target nor a round count never ends by itself
    return recorder.file
