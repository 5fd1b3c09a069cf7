"""Pure against compiled: run one benchmark script on both forms of the engine, side by side.

Used by ``bench/engine.py --compare`` and ``bench/simulate.py --compare`` (issue 11): three runs
of each form in turn, alternating, one process each (the pure modules with ``NERTZ_PURE=1``),
so that a change of load on a shared machine hits both forms alike; each figure is the median
of its three runs, and the ratio is compiled over pure.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence

FORMS = ("pure", "compiled")


def _env(form: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NERTZ_PURE"}
    if form == "pure":
        env["NERTZ_PURE"] = "1"
    return env


def compare_forms(
    script: str, argv: Sequence[str], keys: Sequence[str], runs: int = 3
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Run ``script argv --json`` ``runs`` times on each form; (medians by form, ratios).

    Exits naming the form if one of them is not available (a stale or missing build)."""
    results: dict[str, list[dict[str, float]]] = {form: [] for form in FORMS}
    for form in FORMS:
        loaded = subprocess.run(
            [sys.executable, "-c", "import nertz; print(nertz.FORM)"], env=_env(form),
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        if loaded.split()[0] != form:
            raise SystemExit(f"bench: the {form} engine is not available ({loaded})")
    for _ in range(runs):
        for form in FORMS:
            out = subprocess.run(
                [sys.executable, script, *argv, "--json"], env=_env(form),
                capture_output=True, text=True, check=True,
            ).stdout
            results[form].append(json.loads(out))
    medians = {form: {k: statistics.median(r[k] for r in rs) for k in keys}
               for form, rs in results.items()}
    ratios = {k: medians["compiled"][k] / medians["pure"][k] for k in keys}
    return medians, ratios


def print_comparison(
    medians: dict[str, dict[str, float]], ratios: dict[str, float], labels: dict[str, str]
) -> None:
    """One line a figure: pure, compiled, and the ratio."""
    for k, label in labels.items():
        print(f"{label:<30} pure {medians['pure'][k]:>10,.1f}   compiled "
              f"{medians['compiled'][k]:>10,.1f}   {ratios[k]:.2f}x")
