"""Many rounds: paired deals, rotated seats, worker processes, a progress bar.

Round ``i`` of a run plays deal ``i // n`` with the players rotated ``i % n`` places (``n`` the
number of seats): over ``n`` consecutive rounds every player sits at every seat of the same
deal, so luck of the cards cancels out between players. Every round is seeded from the run's seed
and its own index alone, so a run gives the same records whatever the number of workers, and
any single round can be replayed on its own.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TextIO

from nertz.bots.registry import PlayerSpec
from nertz.match import Match
from nertz.rules import Rules
from nertz.sim.table import play_table


@dataclass(frozen=True, slots=True)
class SimConfig:
    """What to simulate: the rules, one player per seat (in seat order for rotation 0), the seed."""

    rules: Rules
    players: tuple[PlayerSpec, ...]
    seed: int | str = 0
    rotate: bool = True
    """Rotate the players through the seats over consecutive rounds of a deal."""

    @property
    def seats(self) -> int:
        """How many seats play."""
        return len(self.players)


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One simulated round: who sat where, how it ended, the points, the table's tallies."""

    index: int
    deal: int
    players: tuple[str, ...]
    """The player at each seat (a :class:`PlayerSpec` as text, as named in the run)."""
    scores: tuple[int, ...]
    ended: str
    caller: int | None
    moves: int
    rejected: int
    races: int
    resets: int
    ms: float

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats with the top round score (more than one on a tie)."""
        best = max(self.scores)
        return tuple(s for s, v in enumerate(self.scores) if v == best)


def seating(config: SimConfig, index: int) -> tuple[int, tuple[PlayerSpec, ...]]:
    """Round ``index``'s deal number and the player at each seat."""
    n = config.seats
    if not config.rotate:
        return index, config.players
    deal, shift = divmod(index, n)
    return deal, tuple(config.players[(s + shift) % n] for s in range(n))


def play_one(config: SimConfig, index: int, names: Sequence[str] | None = None) -> RoundRecord:
    """Play round ``index`` of the run ``config`` (a pure function of the two)."""
    deal, players = seating(config, index)
    labels = names if names is not None else [_label(config, p) for p in players]
    match = Match(config.rules, config.seats, seed=f"{config.seed}:{deal}")
    rnd = match.deal()
    bots = []
    for s, p in enumerate(players):
        bot = p.make()
        bot.start(s, config.rules, f"{config.seed}:{index}:{s}")
        bots.append(bot)
    rng = random.Random(f"nertz-sim:{config.seed}:{index}")
    stats = play_table(rnd, bots, [p.profile for p in players], rng)
    result = match.finish(rnd)
    return RoundRecord(
        index=index,
        deal=deal,
        players=tuple(labels),
        scores=tuple(result.scores),
        ended=result.score.ended,
        caller=result.score.caller,
        moves=stats.moves,
        rejected=stats.rejected,
        races=stats.races,
        resets=stats.resets,
        ms=stats.ms,
    )


def _label(config: SimConfig, player: PlayerSpec) -> str:
    # Name a player by its bot alone when every player of the run has the same speed, so
    # `--bots expert,greedy` reports "expert" and "greedy"; else by bot and speed.
    speeds = {p.speed for p in config.players}
    return player.bot if len(speeds) == 1 else str(player)


def play_chunk(config: SimConfig, start: int, stop: int) -> list[RoundRecord]:
    """Rounds ``start`` to ``stop - 1`` of the run: one task of a worker process or of Ray."""
    return [play_one(config, i) for i in range(start, stop)]


def _chunk(args: tuple[SimConfig, int, int]) -> list[RoundRecord]:
    return play_chunk(*args)


def chunks(rounds: int, workers: int) -> list[tuple[int, int]]:
    """The run cut into ``(start, stop)`` ranges of consecutive rounds for ``workers``."""
    # Chunks small enough for a smooth bar and a fair share per worker, large enough that the
    # pickling of records stays a small cost.
    size = max(1, min(50, rounds // (workers * 8) or 1))
    return [(a, min(rounds, a + size)) for a in range(0, rounds, size)]


def run(
    config: SimConfig,
    rounds: int,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[RoundRecord]:
    """Play ``rounds`` rounds, in ``workers`` processes (0: one per core); records in order."""
    if workers <= 0:
        workers = os.cpu_count() or 1
    workers = min(workers, max(1, rounds))
    done = 0
    records: list[RoundRecord] = []
    jobs = [(config, a, b) for a, b in chunks(rounds, workers)]
    results: Iterator[list[RoundRecord]]
    pool = None
    if workers == 1:
        results = map(_chunk, jobs)
    else:
        pool = multiprocessing.get_context("fork").Pool(workers)
        results = pool.imap(_chunk, jobs)
    try:
        for chunk in results:
            records.extend(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, rounds)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return records


class ProgressBar:
    """A one-line progress bar on a terminal stream (stderr), redrawn at most ten times a second.

    Hand-written to keep the project free of dependencies; silent when the stream is no terminal
    unless ``force`` is set.
    """

    def __init__(self, stream: TextIO = sys.stderr, width: int = 30, force: bool = False) -> None:
        self.stream = stream
        self.width = width
        self.enabled = force or stream.isatty()
        self.started = time.perf_counter()
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        """Show ``done`` of ``total``."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        frac = done / total if total else 1.0
        filled = int(frac * self.width)
        elapsed = now - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else 0.0
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(
            f"\r[{bar}] {done}/{total} rounds  {rate:6.1f}/s  eta {eta:5.0f}s"
        )
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()
