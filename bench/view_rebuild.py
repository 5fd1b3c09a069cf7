"""CPU per look of a network bot's observation: ``Observation.from_view`` against the rebuilder.

Plays rounds of four greedy bots in-process; every seat keeps a mirror of its view as
:class:`nertz.net.client.Client` keeps it (the whole table once, then each move's update put in
place with :func:`~nertz.net.client.apply_update`, decoded afresh as off the socket), and each
decision is preceded by one look, timed both ways: ``Observation.from_view`` (the whole table
re-derived) and :class:`~nertz.bots.rebuild.ViewRebuilder` (only what changed since that seat's
last look). Between two looks of a seat the other seats have moved, as at a live table. No
network, no server: a figure that hardly moves with the machine's load, unlike
``bench/server_load.py``'s ``bench CPU ms/move``.

    python bench/view_rebuild.py --rounds 6
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nertz.bots import GreedyBot, Observation  # noqa: E402
from nertz.bots.rebuild import ViewRebuilder  # noqa: E402
from nertz.match import Match  # noqa: E402
from nertz.net.client import apply_update  # noqa: E402
from nertz.rules import preset  # noqa: E402
from nertz.views import view  # noqa: E402


def looks(rounds: int, seats: int, rules_name: str) -> list[tuple[int, dict[str, Any]]]:
    """Every look of every seat, in play order: (seat, the seat's mirror at that moment). The
    mirrors are snapshots that share what the live mirror shared (unchanged parts are the very
    same objects), so a rebuilder sees what it would see live."""
    rules = preset(rules_name)
    out: list[tuple[int, dict[str, Any]]] = []
    for seed in range(rounds):
        rnd = Match(rules, seats, seed=seed).deal()
        bots = [GreedyBot() for _ in range(seats)]
        for s, b in enumerate(bots):
            b.start(s, rules, seed)
        mirrors = [json.loads(json.dumps(view(rnd, s).to_json())) for s in range(seats)]
        shown = view(rnd, 0).to_json()
        rng = random.Random(seed)
        for _ in range(3000):
            if rnd.ended is not None:
                break
            seat = rng.randrange(seats)
            table = mirrors[seat]
            # A shallow snapshot: the tableaus and foundations are the mirror's own objects.
            out.append((seat + seed * seats, {**table, "tableaus": list(table["tableaus"]),
                                              "foundations": list(table["foundations"])}))
            move = bots[seat].decide(Observation.from_round(rnd, seat))
            if move is None:
                continue
            rnd.play(seat, move)
            now = view(rnd, 0).to_json()
            update = {
                "tableaus": [b for a, b in zip(shown["tableaus"], now["tableaus"], strict=True)
                             if a != b],
                "foundations": [f for i, f in enumerate(now["foundations"])
                                if i >= len(shown["foundations"])
                                or shown["foundations"][i] != f],
                "ended": now["ended"], "called_by": now["called_by"], "t": 0,
            }
            shown = now
            wire = json.dumps(update)
            for mirror in mirrors:
                apply_update(mirror, json.loads(wire))
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--rules", default="pagat")
    parser.add_argument("--repeat", type=int, default=5, help="timed passes (the best is kept)")
    args = parser.parse_args(argv)
    rules = preset(args.rules)
    seen = looks(args.rounds, args.seats, args.rules)
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        t = time.process_time()
        for _seat, table in seen:
            Observation.from_view(table, rules)
        full = time.process_time() - t
        rebuilders: dict[int, ViewRebuilder] = {}
        t = time.process_time()
        for seat, table in seen:
            rebuilders.setdefault(seat, ViewRebuilder()).observe(table, rules)
        part = time.process_time() - t
        best["from_view"] = min(best.get("from_view", full), full)
        best["rebuilder"] = min(best.get("rebuilder", part), part)
    n = len(seen)
    print(json.dumps({"looks": n,
                      "from_view_us_per_look": round(best["from_view"] * 1e6 / n, 1),
                      "rebuilder_us_per_look": round(best["rebuilder"] * 1e6 / n, 1),
                      "ratio": round(best["rebuilder"] / best["from_view"], 2)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
