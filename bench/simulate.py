"""Simulator benchmark: instant four-seat greedy rounds per second, on one core.

    .venv/bin/python bench/simulate.py [--preset pagat] [--rounds 600] [--json] [--compare]

Each round is dealt, played to its end on the virtual clock (:mod:`nertz.sim.table`: think
times drawn, actions in time order, races, resets) by four ``greedy`` bots at the ``instant``
level, and scored, exactly as ``nertz simulate`` does it, in this one process. Target (issue 3):
300 rounds a second. Compare ``bench/engine.py``, whose bare round-robin greedy playout is the
engine's ceiling for the same policy. The rate is per second of this process's CPU time, so
that other work on the machine skews it less.

``--compare`` runs it three times on each form of the engine, alternating (pure with
``NERTZ_PURE=1``, and compiled), and prints the medians and the compiled/pure ratio (issue 11's
target: 3x).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from forms import compare_forms, print_comparison

from nertz.bots.registry import PlayerSpec
from nertz.rules import Rules
from nertz.sim.runner import SimConfig, run
from nertz.sim.stats import summarize


def main() -> int:
    """Run the benchmark and print rounds per second."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="pagat")
    parser.add_argument("--rounds", type=int, default=600)
    parser.add_argument("--seed", default="bench")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--compare", action="store_true",
                        help="pure against compiled: medians of three runs each, and the ratio")
    args = parser.parse_args()
    if args.compare:
        key = "rounds_per_second"
        medians, ratios = compare_forms(
            __file__, ["--preset", args.preset, "--rounds", str(args.rounds), "--seed", args.seed],
            [key],
        )
        if args.json:
            print(json.dumps({"preset": args.preset, "median": medians,
                              "ratio": {key: round(ratios[key], 2)}}))
        else:
            print_comparison(medians, ratios, {key: "instant greedy sim rounds/s"})
        return 0
    rules = Rules.from_spec(args.preset)
    config = SimConfig(rules, (PlayerSpec("greedy", "instant"),) * 4, args.seed)
    run(config, 20)  # warm the caches (interned moves, parsed cards)
    started = time.process_time()
    records = run(config, args.rounds, workers=1)
    elapsed = time.process_time() - started
    stats = summarize(records)
    rate = args.rounds / elapsed
    if args.json:
        print(json.dumps({"preset": args.preset, "rounds": args.rounds,
                          "rounds_per_second": round(rate, 1),
                          "mean_moves": round(stats.mean_moves, 1)}))
    else:
        print(f"{args.preset}: {rate:.0f} instant four-seat greedy rounds/s on one core "
              f"({args.rounds} rounds, {stats.mean_moves:.0f} moves a round; target 300)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
