"""``nertz simulate --ray``: the same seeded run, its rounds spread over a Ray cluster.

Every round of a run is a pure function of the run's configuration and the round's index
(:func:`nertz.sim.runner.play_one`), so the work is cut into the same chunks of consecutive
rounds as on one machine, each chunk a Ray task, and the records are put back in round order:
the output is the same, record for record, whatever the number of workers or nodes. Ray is an
optional extra (``pip install 'nertz[cluster]'``); every node must have nertz installed (the
same version, in either form: both play alike).

``address`` is Ray's: ``HOST:6379`` joins a cluster as a driver on one of its nodes,
``ray://HOST:10001`` reaches a head through Ray Client, and None (or an empty string) joins the
cluster this machine belongs to (``ray start``, or ``RAY_ADDRESS``) or starts a local one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nertz.errors import NertzError
from nertz.sim.runner import RoundRecord, SimConfig, chunks, play_chunk


def run_on_ray(
    config: SimConfig,
    rounds: int,
    address: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    init_options: dict[str, Any] | None = None,
) -> list[RoundRecord]:
    """Play ``rounds`` rounds of ``config`` as Ray tasks; the records in round order.

    ``init_options`` go to ``ray.init`` as they are (a test starts a small local instance)."""
    try:
        import ray
    except ImportError:
        raise NertzError(
            "--ray needs Ray: install the cluster extra (pip install 'nertz[cluster]')"
        ) from None
    started_here = not ray.is_initialized()
    if started_here:
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        options.update(init_options or {})
        ray.init(address=address or None, **options)
    try:
        resources = ray.cluster_resources()
        workers = max(1, int(resources.get("CPU", 1)))
        task = ray.remote(play_chunk)
        jobs = chunks(rounds, workers)
        pending = {task.remote(config, start, stop): i for i, (start, stop) in enumerate(jobs)}
        results: list[list[RoundRecord] | None] = [None] * len(jobs)
        done = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                chunk: list[RoundRecord] = ray.get(ref)
                results[pending.pop(ref)] = chunk
                done += len(chunk)
                if progress is not None:
                    progress(done, rounds)
        return [record for chunk_records in results if chunk_records for record in chunk_records]
    finally:
        if started_here:
            ray.shutdown()
