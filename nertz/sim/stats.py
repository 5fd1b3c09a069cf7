"""Statistics of a run: per player and per round, with 95% confidence intervals.

A round is won by the top round score; a tie splits the win (two seats tied on top get half a
win each), so win shares over all players add up to 1. Players named alike in ``--bots`` are
pooled: with ``expert,greedy,greedy`` the share of ``greedy`` is that of both greedy seats
together, and parity for ``expert`` is 1/3.

Intervals: the win share's is Wilson's score interval (good near 0 and 1, where the normal one
fails); mean points use the normal interval of a mean (thousands of rounds: the central limit
theorem holds well).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from nertz.sim.runner import RoundRecord

Z95: Final = 1.959963984540054
"""The two-sided 95% quantile of the normal distribution."""


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``successes / n``.

    >>> lo, hi = wilson(50, 100)
    >>> round(lo, 3), round(hi, 3)
    (0.404, 0.596)
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_ci(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """The mean and its normal 95% interval."""
    n = len(values)
    if n == 0:
        return (0.0, 0.0, 0.0)
    mean = sum(values) / n
    if n == 1:
        return (mean, mean, mean)
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    return (mean, mean - half, mean + half)


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """One player name's figures, pooled over all its seats."""

    name: str
    seats: int
    """Seat-rounds played (rounds times the seats this name held)."""
    wins: float
    win_share: float
    win_share_ci: tuple[float, float]
    mean_points: float
    mean_points_ci: tuple[float, float]
    call_rate: float
    """Share of its seat-rounds in which this player called."""
    points: tuple[int, ...]
    """Every round score, for the plots."""


@dataclass(frozen=True, slots=True)
class RunStats:
    """A whole run's figures."""

    rounds: int
    players: dict[str, PlayerStats]
    blocked_rate: float
    open_rate: float
    call_rate: float
    mean_moves: float
    mean_seconds: float
    races_per_round: float
    resets_per_round: float
    seat_win_share: tuple[float, ...]
    """Share of rounds won by each seat, whoever sat there (the first-seat advantage)."""

    def to_json(self, rounds_per_second: float, extra: dict[str, Any] | None = None) -> dict[
        str, Any
    ]:
        """The ``--json`` shape of the issue, with more fields after the required ones."""
        return {
            "rounds": self.rounds,
            "rounds_per_second": round(rounds_per_second, 2),
            "bots": {
                name: {
                    "win_share": round(p.win_share, 4),
                    "win_share_ci": [round(p.win_share_ci[0], 4), round(p.win_share_ci[1], 4)],
                    "mean_points": round(p.mean_points, 3),
                    "mean_points_ci": [
                        round(p.mean_points_ci[0], 3), round(p.mean_points_ci[1], 3)
                    ],
                    "nertz_call_rate": round(p.call_rate, 4),
                    "seat_rounds": p.seats,
                }
                for name, p in self.players.items()
            },
            "blocked_rate": round(self.blocked_rate, 4),
            "open_rate": round(self.open_rate, 4),
            "nertz_call_rate": round(self.call_rate, 4),
            "mean_moves": round(self.mean_moves, 2),
            "mean_seconds": round(self.mean_seconds, 3),
            "races_per_round": round(self.races_per_round, 3),
            "resets_per_round": round(self.resets_per_round, 3),
            "seat_win_share": [round(x, 4) for x in self.seat_win_share],
            **(extra or {}),
        }


def summarize(records: Sequence[RoundRecord]) -> RunStats:
    """The figures of a run's records."""
    n = len(records)
    wins: dict[str, float] = {}
    points: dict[str, list[int]] = {}
    calls: dict[str, int] = {}
    seat_wins = [0.0] * (len(records[0].scores) if records else 0)
    for r in records:
        top = r.winners
        share = 1 / len(top)
        for s, name in enumerate(r.players):
            points.setdefault(name, []).append(r.scores[s])
            wins.setdefault(name, 0.0)
            calls.setdefault(name, 0)
            if s in top:
                wins[name] += share
                seat_wins[s] += share
            if r.caller == s:
                calls[name] += 1
    players = {}
    for name, pts in points.items():
        mean, lo, hi = mean_ci(pts)
        w = wins[name]
        players[name] = PlayerStats(
            name=name,
            seats=len(pts),
            wins=w,
            win_share=w / n if n else 0.0,
            win_share_ci=wilson(w, n),
            mean_points=mean,
            mean_points_ci=(lo, hi),
            call_rate=calls[name] / len(pts),
            points=tuple(pts),
        )

    def rate(pred: Any) -> float:
        return sum(1 for r in records if pred(r)) / n if n else 0.0

    return RunStats(
        rounds=n,
        players=players,
        blocked_rate=rate(lambda r: r.ended == "blocked"),
        open_rate=rate(lambda r: r.ended == "open"),
        call_rate=rate(lambda r: r.ended == "nertz"),
        mean_moves=sum(r.moves for r in records) / n if n else 0.0,
        mean_seconds=sum(r.ms for r in records) / n / 1000 if n else 0.0,
        races_per_round=sum(r.races for r in records) / n if n else 0.0,
        resets_per_round=sum(r.resets for r in records) / n if n else 0.0,
        seat_win_share=tuple(w / n for w in seat_wins) if n else (),
    )


def table(stats: RunStats) -> str:
    """The human-readable report."""
    lines = [
        f"{'bot':<16} {'seats':>6} {'win share':>10} {'95% CI':>17} {'points':>8} "
        f"{'95% CI':>17} {'calls':>7}"
    ]
    for p in stats.players.values():
        lo, hi = p.win_share_ci
        plo, phi = p.mean_points_ci
        lines.append(
            f"{p.name:<16} {p.seats:>6} {p.win_share:>10.1%} {f'[{lo:.1%}, {hi:.1%}]':>17} "
            f"{p.mean_points:>8.2f} {f'[{plo:.2f}, {phi:.2f}]':>17} {p.call_rate:>7.1%}"
        )
    lines.append("")
    lines.append(
        f"rounds {stats.rounds}: called {stats.call_rate:.1%}, blocked {stats.blocked_rate:.1%}"
        f", open {stats.open_rate:.1%}; mean {stats.mean_moves:.1f} moves, "
        f"{stats.mean_seconds:.1f} simulated s, {stats.races_per_round:.2f} races, "
        f"{stats.resets_per_round:.2f} resets"
    )
    lines.append(
        "win share by seat: " + ", ".join(f"{s + 1}: {w:.1%}"
                                          for s, w in enumerate(stats.seat_win_share))
    )
    return "\n".join(lines)
