"""PNG charts of a run: win shares with their intervals, and each player's round scores.

matplotlib is an optional dependency (``pip install nertz[plot]``); it is imported here only,
with the Agg backend, so plotting never needs a display.
"""

from __future__ import annotations

from pathlib import Path

from nertz.errors import NertzError
from nertz.sim.stats import RunStats


def write_plots(stats: RunStats, directory: str | Path) -> list[Path]:
    """Write ``win_share.png`` and ``scores.png`` into ``directory``; returns their paths."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the installation
        raise NertzError("--plot needs matplotlib (pip install 'nertz[plot]')") from None
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    players = list(stats.players.values())
    names = [p.name for p in players]

    fig, ax = plt.subplots(figsize=(6, 4))
    shares = [p.win_share for p in players]
    errs = [
        [p.win_share - p.win_share_ci[0] for p in players],
        [p.win_share_ci[1] - p.win_share for p in players],
    ]
    ax.bar(names, shares, yerr=errs, capsize=6, color="#4477aa")
    ax.set_ylabel("share of rounds won")
    ax.set_ylim(0, 1)
    ax.set_title(f"Win share, 95% interval ({stats.rounds} rounds)")
    win_path = out / "win_share.png"
    fig.tight_layout()
    fig.savefig(win_path, dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    low = min(min(p.points) for p in players)
    high = max(max(p.points) for p in players)
    bins = range(low, high + 2)
    for p in players:
        ax.hist(p.points, bins=bins, alpha=0.5, label=p.name, density=True)
    ax.set_xlabel("round points")
    ax.set_ylabel("share of seat-rounds")
    ax.set_title("Round scores")
    ax.legend()
    scores_path = out / "scores.png"
    fig.tight_layout()
    fig.savefig(scores_path, dpi=100)
    plt.close(fig)
    return [win_path, scores_path]
