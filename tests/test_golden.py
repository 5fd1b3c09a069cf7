"""Golden replays: hand-checked scenarios replayed through the library and the command line.

Every ``tests/golden/NN_name.nertz.json`` has a sibling ``NN_name.expected.json`` holding SPEC's
part of ``nertz replay FILE --json`` (moves' ``i``/``ok``, ``ended``, ``caller``, ``scores``,
``totals``, ``winner``; optionally a round's ``breakdown``). The expectations were derived by hand
from SPEC; tests/golden/README.md lists each file, what it checks and how its scores come about.
``tests/golden/make_golden.py`` rebuilds the files from their compact description.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nertz import replay
from nertz.rules import OPTIONS, PRESETS, Rules

GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = sorted(GOLDEN.glob("*.nertz.json"))
ROOT = Path(__file__).resolve().parent.parent


def expected_of(path: Path) -> dict[str, Any]:
    stem = path.name.removesuffix(".nertz.json")
    data: dict[str, Any] = json.loads((GOLDEN / f"{stem}.expected.json").read_text())
    return data


def spec_subset(result: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """The fields SPEC fixes (plus ``breakdown`` where the expected file pins it)."""
    rounds = []
    for got, want in zip(result["rounds"], expected["rounds"], strict=False):
        out = {
            "moves": [{"i": m["i"], "ok": m["ok"]} for m in got["moves"]],
            "ended": got["ended"],
            "caller": got["caller"],
            "scores": got["scores"],
        }
        if "breakdown" in want:
            out["breakdown"] = got.get("breakdown")
        rounds.append(out)
    rounds += result["rounds"][len(expected["rounds"]):]
    return {"rounds": rounds, "totals": result["totals"], "winner": result["winner"]}


def ids(path: Path) -> str:
    return path.name.removesuffix(".nertz.json")


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_golden_library(path: Path) -> None:
    expected = expected_of(path)
    result = replay.run(replay.load(path)).to_json()
    assert spec_subset(result, expected) == expected


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_golden_command_line(path: Path) -> None:
    expected = expected_of(path)
    proc = subprocess.run(
        [sys.executable, "-m", "nertz.cli", "replay", str(path), "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    result = json.loads(proc.stdout)
    assert spec_subset(result, expected) == expected
    for rnd in result["rounds"]:
        for move in rnd["moves"]:
            if not move["ok"]:
                assert isinstance(move.get("error"), str) and move["error"]


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_golden_file_is_pure_spec(path: Path) -> None:
    """The files use only SPEC's format: no engine extension keys (such as ``waste``)."""
    data = json.loads(path.read_text())
    assert data["format"] == "nertz-replay/1"
    assert set(data) <= {"format", "rules", "players", "seed", "rounds"}
    rules = Rules.from_spec(data["rules"])
    for rnd in data["rounds"]:
        assert set(rnd) <= {"layouts", "moves"}
        assert len(rnd["layouts"]) == len(data["players"])
        for layout in rnd["layouts"]:
            assert set(layout) == {"nertz", "work", "stock"}
            cards = layout["nertz"] + layout["stock"]
            cards += [c.lstrip("~") for pile in layout["work"] for c in pile]
            assert len(cards) == len(set(cards)) == rules.deck_size
            assert len(layout["work"]) == rules.work_piles
        for move in rnd["moves"]:
            assert set(move) <= {"t", "p", "m", "h"}


def test_golden_every_file_has_expectation() -> None:
    stems = {p.name.removesuffix(".nertz.json") for p in FILES}
    wanted = {p.name.removesuffix(".expected.json") for p in GOLDEN.glob("*.expected.json")}
    assert stems == wanted


def test_golden_coverage() -> None:
    """At least 40 files; together they use every preset and every value of every option."""
    assert len(FILES) >= 40
    seen: dict[str, set[Any]] = {name: set() for name in OPTIONS}
    presets_finished: set[str] = set()
    for path in FILES:
        data = json.loads(path.read_text())
        spec = data["rules"]
        rules = Rules.from_spec(spec)
        for name, value in rules.to_options().items():
            seen[name].add(value)
        name = spec if isinstance(spec, str) else spec.get("preset", "pagat")
        winner_or_over = replay.run(replay.load(path)).match.over
        if winner_or_over:
            presets_finished.add(name)
    assert presets_finished == set(PRESETS), set(PRESETS) - presets_finished
    for name, option in OPTIONS.items():
        default = option.default
        for choice in option.choices:
            assert choice in seen[name], f"{name}={choice!r} never used"
        if option.low is not None:
            numeric = {v for v in seen[name] if isinstance(v, int) and not isinstance(v, bool)}
            assert numeric - {default}, f"{name}: no non-default number used"
        if option.nullable:
            assert None in seen[name], f"{name}: none never used"
            assert seen[name] - {None}, f"{name}: a number never used"
        if option.text:
            assert seen[name] - {default}, f"{name}: no non-default word used"
