"""Expert decision time: every decision of ``expert`` in instant three-seat rounds against two
``greedy`` bots (or another bot, ``--against``), timed one by one, on one core.

    .venv/bin/python bench/decisions.py [--preset pagat] [--rounds 15] [--against greedy]
                                        [--cpu] [--json]

Round ``i`` is ``Match(rules, 3, seed=i)``'s first deal, played to its end on the virtual clock
(:func:`nertz.sim.table.play_table`) with the expert in seat 0. Budget (``docs/bots.md``): every
decision under 20 ms on a quiet core. Run it with nothing else busy: the worst case is what it
is for, and a shared core doubles it. ``--cpu`` times each decision by the CPU time of this
thread instead of the wall clock: a loaded machine still slows it (shared caches) but no longer
counts the time other processes held the core.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nertz.bots import SPEEDS, ExpertBot, Observation, find_bot
from nertz.match import Match
from nertz.moves import Move
from nertz.rules import Rules
from nertz.sim.table import play_table


class _Timed(ExpertBot):
    """The expert, with the time of every decision kept (wall, or this thread's CPU)."""

    def __init__(self, times: list[float], clock: Callable[[], float] = time.perf_counter) -> None:
        super().__init__()
        self.times = times
        self.clock = clock

    def decide(self, obs: Observation) -> Move | None:
        started = self.clock()
        move = super().decide(obs)
        self.times.append(self.clock() - started)
        return move


def main() -> int:
    """Time the decisions and print their mean, median, 99th percentile and worst."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="pagat")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--against", default="greedy", help="the two other seats' bot")
    parser.add_argument("--cpu", action="store_true",
                        help="time by this thread's CPU time, not the wall clock")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rules = Rules.from_spec(args.preset)
    against = find_bot(args.against)
    times: list[float] = []
    for seed in range(args.rounds):
        rnd = Match(rules, 3, seed=seed).deal()
        clock = time.thread_time if args.cpu else time.perf_counter
        bots = [_Timed(times, clock), against(), against()]
        for s, bot in enumerate(bots):
            bot.start(s, rules, seed)
        play_table(rnd, bots, [SPEEDS["instant"]] * 3, random.Random(seed))
    ms = sorted(t * 1000 for t in times)
    result = {
        "decisions": len(ms),
        "mean_ms": round(statistics.mean(ms), 2),
        "median_ms": round(statistics.median(ms), 3),
        "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 1),
        "worst_ms": round(ms[-1], 1),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{args.preset}: {result['decisions']} expert decisions"
            f"{' (CPU time)' if args.cpu else ''} in {args.rounds} rounds "
            f"against two {args.against}: "
            f"mean {result['mean_ms']} ms, median {result['median_ms']} ms, "
            f"99th percentile {result['p99_ms']} ms, worst {result['worst_ms']} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
