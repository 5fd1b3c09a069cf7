"""``nertz simulate --ray``: a local Ray instance plays a seeded run exactly as one process does.

Skipped where Ray is not installed (it is the optional ``cluster`` extra).
"""

from __future__ import annotations

import pytest

from nertz.bots.registry import PlayerSpec
from nertz.rules import Rules
from nertz.sim.runner import SimConfig, chunks, run

ray = pytest.importorskip("ray")


def test_ray_run_equals_the_single_process_run() -> None:
    from nertz.sim.cluster import run_on_ray

    config = SimConfig(Rules.from_spec("pagat"),
                       (PlayerSpec("greedy", "instant"), PlayerSpec("random", "instant")) * 2,
                       seed="cluster")
    rounds = 24
    alone = run(config, rounds, workers=1)
    seen: list[int] = []
    spread = run_on_ray(config, rounds, None, lambda done, total: seen.append(done),
                        init_options={"num_cpus": 2, "object_store_memory": 80 * 1024 * 1024})
    # Records are whole values (the clock is the simulator's virtual one): equal, in order.
    assert spread == alone
    assert seen[-1] == rounds


def test_chunks_cover_every_round_once() -> None:
    for rounds, workers in ((1, 1), (7, 3), (400, 2), (1000, 64)):
        ranges = chunks(rounds, workers)
        assert [i for a, b in ranges for i in range(a, b)] == list(range(rounds))
