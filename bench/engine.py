"""Engine benchmark: applied moves per second and greedy four-seat rounds per second.

    .venv/bin/python bench/engine.py [--preset pagat] [--seconds 5] [--json] [--compare]

*Moves per second*: each step lists one seat's legal moves (``Round.legal_moves``), picks one
with a seeded generator and applies it with ``Round.play`` (which verifies it again), as a random
player would; rounds are re-dealt when they end or after 2,000 moves. *Rounds per second*: four
seats play whole rounds with the built-in greedy playout (:mod:`nertz.playout`), dealing and
scoring included. One process, one core; rates are per second of this process's CPU time, so
that other work on the machine does not skew them. Targets (issue 2): 100,000 moves/s and 300
rounds/s.

``--compare`` measures both forms of the engine side by side (issue 11): three runs of each in
turn, one process each, the pure modules (``NERTZ_PURE=1``) and the compiled ones, and prints
each figure's median and the compiled/pure ratio (targets: 4x and 4x).
"""

from __future__ import annotations

import argparse
import json
import random
import time

from forms import compare_forms, print_comparison

from nertz.match import Match
from nertz.moves import Kind
from nertz.playout import play_round
from nertz.rules import Rules
from nertz.scoring import score_round

_SKIP_KINDS = (Kind.STUCK, Kind.CALL)


def moves_per_second(rules: Rules, seconds: float, seats: int = 4) -> tuple[float, int]:
    """Random legal play: (applied moves per second, moves applied)."""
    rng = random.Random(1)
    applied = 0
    deal = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        rnd = Match(rules, seats, seed=deal).deal()
        deal += 1
        for _ in range(2000):
            if rnd.ended is not None:
                break
            seat = int(rng.random() * seats)
            legal = rnd.legal_moves(seat)
            n = len(legal)
            # Declarations and the call come last in the list; a random player leaves them be.
            while n and legal[n - 1].kind in _SKIP_KINDS:
                n -= 1
            if not n:
                continue
            rnd.play(seat, legal[int(rng.random() * n)])
            applied += 1
    return applied / (time.process_time() - start), applied


def rounds_per_second(rules: Rules, seconds: float, seats: int = 4) -> tuple[float, int, float]:
    """Greedy playouts: (rounds per second, rounds played, mean actions per round)."""
    rounds = 0
    actions = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        match = Match(rules, seats, seed=rounds)
        rnd = match.deal()
        actions += play_round(rnd)
        score_round(rnd)
        rounds += 1
    return rounds / (time.process_time() - start), rounds, actions / max(rounds, 1)


def compare(preset: str, seconds: float, as_json: bool) -> None:
    """Run this benchmark three times on each form, alternating, and report medians."""
    keys = ("moves_per_second", "rounds_per_second")
    medians, ratios = compare_forms(
        __file__, ["--preset", preset, "--seconds", str(seconds)], keys
    )
    if as_json:
        print(json.dumps({"preset": preset, "median": medians,
                          "ratio": {k: round(v, 2) for k, v in ratios.items()}}))
        return
    print_comparison(medians, ratios, dict(zip(
        keys, ("random legal moves/s", "greedy four-seat rounds/s"), strict=True)))


def main() -> None:
    """Run both measurements and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="pagat")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--compare", action="store_true",
                        help="pure against compiled: medians of three runs each, and ratios")
    args = parser.parse_args()
    if args.compare:
        compare(args.preset, args.seconds, args.json)
        return
    rules = Rules.from_spec(args.preset)
    mps, moves = moves_per_second(rules, args.seconds)
    rps, rounds, mean_actions = rounds_per_second(rules, args.seconds)
    result = {
        "preset": args.preset,
        "moves_per_second": round(mps),
        "moves": moves,
        "rounds_per_second": round(rps, 1),
        "rounds": rounds,
        "mean_actions_per_round": round(mean_actions, 1),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"preset {args.preset}: {mps:,.0f} applied moves/s (legal moves included, "
              f"{moves:,} moves)")
        print(f"preset {args.preset}: {rps:,.1f} four-seat greedy rounds/s ({rounds} rounds, "
              f"{mean_actions:.0f} actions a round)")


if __name__ == "__main__":
    main()
