"""``nertz simulate``: bots play many rounds; statistics, JSON and plots.

::

    nertz simulate --rules pagat --seats 3 --bots expert,greedy,greedy --rounds 3000 \\
        --seed 1 --workers 0 --json --plot out/

``--bots`` names one player per seat (``BOT`` or ``BOT:LEVEL``; fewer names than seats repeat
in turn); ``--speed`` is the level of players named without one. ``--rounds`` counts rounds: with
rotation on, each deal is played once per seat with the players rotated, so a multiple of the
seat count pairs every deal completely. Bad input exits 2 with a one-line message.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from nertz.bots.registry import PlayerSpec
from nertz.errors import NertzError
from nertz.rules import Rules


def add_parser(subparsers: Any) -> None:
    """Register ``simulate`` on the ``nertz`` command's subparsers."""
    p = subparsers.add_parser("simulate", help="bots play many rounds; statistics and plots")
    p.add_argument("--rules", default="pagat", help="a preset name or a JSON rules object")
    p.add_argument("--set", action="append", metavar="OPTION=VALUE", help="override an option")
    p.add_argument("--seats", type=int, default=None, help="seats (default: one per --bots name)")
    p.add_argument("--bots", default="greedy,greedy,greedy,greedy",
                   help="comma-separated players, BOT or BOT:LEVEL")
    p.add_argument("--speed", default="instant", help="level of players named without one")
    p.add_argument("--rounds", type=int, default=400)
    p.add_argument("--seed", default="0")
    p.add_argument("--workers", type=int, default=1, help="processes; 0 uses every core")
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="run on a Ray cluster (the cluster extra): ADDRESS of its head "
                        "(HOST:6379, or ray://HOST:10001); alone, this machine's cluster or "
                        "a new local one")
    p.add_argument("--no-rotate", action="store_true", help="keep every player in its seat")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.add_argument("--plot", metavar="DIR", help="write PNG charts into DIR")
    p.add_argument("--progress", action="store_true",
                   help="show the progress bar even when stderr is no terminal")
    p.set_defaults(func=run_command)


def build_rules(spec: str, sets: list[str] | None) -> Rules:
    """The ruleset of ``--rules`` with every ``--set`` applied (raises on bad input)."""
    raw: Any = spec
    if spec.lstrip().startswith("{"):
        try:
            raw = json.loads(spec)
        except json.JSONDecodeError as exc:
            raise NertzError(f"--rules: not JSON: {exc.msg}") from None
    rules = Rules.from_spec(raw)
    for item in sets or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise NertzError(f"--set takes OPTION=VALUE, not {item!r}")
        text = value.strip()
        # Numbers go in as numbers: the rules' text parsing reads digits only for options with
        # a range, so "turn_count=1" would be refused (reported to the engine's owner).
        typed: Any = int(text) if text.lstrip("-").isdigit() else text
        rules = rules.replace(**{name.strip(): typed})
    return rules.check_new()


def run_command(args: argparse.Namespace) -> int:
    """Run ``nertz simulate``."""
    from nertz.sim.runner import ProgressBar, SimConfig, run
    from nertz.sim.stats import summarize, table

    rules = build_rules(args.rules, args.set)
    names = [n for n in args.bots.split(",") if n.strip()]
    if not names:
        raise NertzError("--bots names no bot")
    seats = args.seats if args.seats is not None else len(names)
    if not 1 <= seats <= 8:
        raise NertzError(f"--seats must be 1 to 8, not {seats}")
    if args.rounds < 1:
        raise NertzError(f"--rounds must be at least 1, not {args.rounds}")
    players = tuple(PlayerSpec.parse(names[s % len(names)], args.speed) for s in range(seats))
    seed: int | str = int(args.seed) if args.seed.lstrip("-").isdigit() else args.seed
    config = SimConfig(rules, players, seed, rotate=not args.no_rotate)
    bar = ProgressBar(sys.stderr, force=args.progress)
    started = time.perf_counter()
    if args.ray is not None:
        from nertz.sim.cluster import run_on_ray

        records = run_on_ray(config, args.rounds, args.ray, bar)
    else:
        records = run(config, args.rounds, args.workers, bar)
    elapsed = time.perf_counter() - started
    stats = summarize(records)
    rate = args.rounds / elapsed if elapsed > 0 else 0.0
    if args.plot:
        from nertz.sim.plots import write_plots

        write_plots(stats, args.plot)
    if args.json:
        extra = {"rules": rules.to_spec(), "seats": seats, "seed": seed,
                 "players": [str(p) for p in players]}
        print(json.dumps(stats.to_json(rate, extra)))
    else:
        print(table(stats))
        print(f"{args.rounds} rounds in {elapsed:.1f} s ({rate:.1f} rounds/s)")
    return 0
