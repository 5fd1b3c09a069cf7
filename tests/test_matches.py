"""Every preset plays a whole match, and `nertz replay` scores the recorded file identically."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nertz import replay
from nertz.match import Match
from nertz.playout import play_round, record_match
from nertz.rules import PRESETS

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_plays_a_full_match_through_the_cli(name: str, tmp_path: Path) -> None:
    file = record_match(PRESETS[name], ["Ann", "Ben", "Cat"], seed=11)
    path = tmp_path / f"{name}.nertz.json"
    path.write_text(file.dumps())
    expected = replay.run(replay.loads(path.read_text()))
    assert expected.match.over
    out = subprocess.run(
        [sys.executable, "-m", "nertz.cli", "replay", str(path), "--json"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    result = json.loads(out.stdout)
    assert result["over"] is True
    assert result["totals"] == expected.match.totals
    assert result["winner"] == expected.match.winner
    assert all(m["ok"] for r in result["rounds"] for m in r["moves"])
    assert [r["ended"] for r in result["rounds"]].count("open") == 0


def test_replaying_a_recorded_match_reproduces_every_round() -> None:
    rules = PRESETS["standard"]
    file = record_match(rules, ["A", "B", "C", "D"], seed=3)
    again = replay.run(replay.loads(file.dumps()))
    # Play the same deals again directly and compare round by round.
    match = Match(rules, 4, seed=3)
    for rr in again.rounds:
        rnd = match.deal()
        play_round(rnd)
        result = match.finish(rnd)
        assert result.scores == rr.result.scores
        assert [t.to_layout() for t in rnd.tableaus] == [
            t.to_layout() for t in rr.round.tableaus
        ]


def test_demo_file_replays_to_a_finished_match() -> None:
    result = replay.run(replay.load(ROOT / "examples" / "demo.nertz.json"))
    assert result.match.over
    assert result.match.winner is not None


def test_readable_replay_shows_moves_table_and_scores() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "nertz.cli", "replay", str(ROOT / "examples" / "demo.nertz.json")],
        capture_output=True, text=True, check=True, cwd=ROOT,
    ).stdout
    assert " ok" in out
    assert "The table at the end" in out
    assert "Foundations" in out
    assert "totals:" in out
    assert "match over" in out
