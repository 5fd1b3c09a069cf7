"""Every round ends: many seeded rounds of every preset, played with the referee's resets.

    nice -n 10 .venv/bin/python bench/referee.py [--rounds 2000] [--random 200] [--json]

The large version of ``tests/test_referee.py::test_every_round_of_every_preset_ends``. Seats act
in turn (2, 3, 4 seats in rotation); nobody declares ``STUCK``; after every pass of the seats the
table asks the engine's referee (``Round.settle``), as a server table does after every move.
``--rounds`` rounds a preset are played by greedy seats (the greedy play, else mostly a turn,
else now and then a work-pile shuffle) and ``--random`` by seats that make any legal move. For
each preset it reports how the rounds ended, the longest round in moves and in resets, and how
many rounds the cycle rule ended; it exits 1 if a round was still going after ``--limit`` moves.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nertz.engine import Round
from nertz.events import ResetDone, RoundEnded
from nertz.match import Match
from nertz.rules import PRESETS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the tests' seats

from _support import Policy, any_legal, greedy_or_idle


def play(rnd: Round, choose: Policy, limit: int) -> tuple[int, bool]:
    """Play to the end or ``limit`` moves: (moves made, whether the cycle rule ended it)."""
    moves = 0
    while not rnd.over and moves < limit:
        for seat in range(rnd.seats):
            move = choose(rnd, seat)
            if move is not None:
                rnd.play(seat, move)
                moves += 1
            if rnd.over:
                return moves, False
        events = rnd.settle()
        if rnd.over and any(isinstance(e, ResetDone) for e in events):
            return moves, any(isinstance(e, RoundEnded) for e in events)
    return moves, False


def run(preset: str, rounds: int, make: Callable[[random.Random], Policy], limit: int,
        seed: str) -> dict[str, Any]:
    """Play ``rounds`` rounds of ``preset``; the figures for one line of the report."""
    rules = PRESETS[preset]
    ended: Counter[str] = Counter()
    longest = most_resets = cycles = 0
    start = time.process_time()
    for i in range(rounds):
        rnd = Match(rules, 2 + i % 3, seed=f"{seed}:{i}").deal()
        moves, cycled = play(rnd, make(random.Random(f"{seed}:{i}")), limit)
        ended[str(rnd.ended) if rnd.over else "unfinished"] += 1
        longest = max(longest, moves)
        most_resets = max(most_resets, rnd.resets)
        cycles += cycled
    return {"preset": preset, "rounds": rounds, "ended": dict(ended), "longest_moves": longest,
            "most_resets": most_resets, "cycle_rule": cycles,
            "cpu_s": round(time.process_time() - start, 1)}


def main() -> int:
    """Run the benchmark; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000, help="greedy rounds a preset")
    parser.add_argument("--random", type=int, default=200, help="random rounds a preset")
    parser.add_argument("--limit", type=int, default=20_000, help="moves before giving up")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args()
    unfinished = 0
    for preset in PRESETS:
        for kind, rounds, make in (("greedy", args.rounds, greedy_or_idle),
                                   ("random", args.random, any_legal)):
            if not rounds:
                continue
            line = {"seats": kind, **run(preset, rounds, make, args.limit, f"bench:{kind}")}
            unfinished += line["ended"].get("unfinished", 0)
            if args.json:
                print(json.dumps(line), flush=True)
            else:
                print(f"{preset:22s} {kind:6s} {rounds:6d} rounds  ended {line['ended']}  "
                      f"longest {line['longest_moves']} moves, {line['most_resets']} resets  "
                      f"cycle rule {line['cycle_rule']}  {line['cpu_s']} s", flush=True)
    return 1 if unfinished else 0


if __name__ == "__main__":
    sys.exit(main())
