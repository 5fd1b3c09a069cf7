"""``nertz analyse`` and the replay file's optional ``races`` section.

Every ``tests/golden_analysis/NN_name.nertz.json`` has a sibling ``NN_name.analysis.json``, the
expected ``nertz analyse FILE --json``. The two scenarios were worked out by hand first
(tests/golden_analysis/README.md shows the working), then compared with the output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nertz import analysis, replay
from nertz.cards import card
from nertz.errors import ReplayError
from nertz.moves import Move
from nertz.rules import PRESETS

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden_analysis"
FILES = sorted(GOLDEN.glob("*.nertz.json"))
ROOT = HERE.parent


def expected_of(path: Path) -> dict[str, Any]:
    stem = path.name.removesuffix(".nertz.json")
    data: dict[str, Any] = json.loads((GOLDEN / f"{stem}.analysis.json").read_text())
    return data


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name.removesuffix(".nertz.json"))
def test_golden_analysis(path: Path) -> None:
    assert analysis.analyse(replay.load(path)).to_json() == expected_of(path)


def test_golden_analysis_command_line() -> None:
    path = FILES[0]
    proc = subprocess.run(
        [sys.executable, "-m", "nertz.cli", "analyse", str(path), "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == expected_of(path)
    text = subprocess.run(
        [sys.executable, "-m", "nertz.cli", "analyse", str(path)],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=True,
    ).stdout
    assert "2 missed plays: AH at 0:01 (waste, 3000 ms, covered)" in text
    assert "races won 1: 3S against Ben by 100 ms; lost 1: 2S to Ben by 10 ms" in text


def test_analyse_bad_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.nertz.json"
    bad.write_text('{"format": "nertz-replay/1", "players": ["A", "B"], "seed": 1, '
                   '"rounds": [{"moves": [], "races": [{"t": 5}]}]}')
    proc = subprocess.run(
        [sys.executable, "-m", "nertz.cli", "analyse", str(bad)],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "nertz analyse: round 1, race 0: no 'winner'"


def test_a_real_match_is_analysed() -> None:
    """The demo match (three bots, nine rounds): every seat's figures add up."""
    file = replay.load(ROOT / "examples" / "demo.nertz.json")
    report = analysis.analyse(file)
    result = replay.run(file)
    assert [r.length_ms for r in report.rounds] and all(r.length_ms > 0 for r in report.rounds)
    assert [r.caller for r in report.rounds] == [rr.result.score.caller for rr in result.rounds]
    cards = [sum(rr.result.score.seats[s].foundation_cards for rr in result.rounds)
             for s in range(len(file.players))]
    assert [s.foundation_cards for s in report.seats] == cards
    for s in report.seats:
        spell = s.longest_spell
        assert spell is not None and 0 < spell.ms <= max(r.length_ms for r in report.rounds)
        assert 0 <= s.stuck_ms <= report.played_ms
    # A pure function of the file: the same file, the same analysis.
    assert analysis.analyse(file).to_json() == report.to_json()


def test_race_section_round_trips_and_changes_no_result() -> None:
    path = FILES[0]
    file = replay.load(path)
    races = file.rounds[0].races
    assert races == [replay.Race(6010, 1, 0, card("2S"), 1, 10)]
    again = replay.loads(file.dumps())
    assert again.rounds[0].races == races
    data = json.loads(path.read_text())
    del data["rounds"][0]["races"]
    without = replay.from_json(data)
    assert without.rounds[0].races == []
    assert replay.run(without).to_json() == replay.run(file).to_json()


def test_recorder_writes_races_only_when_there_were_some() -> None:
    rec = replay.Recorder(PRESETS["pagat"], ["Ann", "Ben"], 3)
    rec.start_round()
    rec.record(100, 0, Move.parse("T"))
    assert "races" not in rec.file.to_json()["rounds"][0]
    rec.race(replay.Race(200, 0, 1, card("AS"), 1, None))
    assert rec.file.to_json()["rounds"][0]["races"] == [
        {"t": 200, "winner": 0, "loser": 1, "card": "AS", "foundation": 1, "margin_ms": None}]


@pytest.mark.parametrize(("race", "message"), [
    ("nope", "round 1: 'races' must be a list"),
    (["x"], "round 1, race 0: must be an object"),
    ([{"t": -1, "winner": 0, "loser": 1, "card": "AS", "foundation": 1}], "t -1"),
    ([{"t": 1, "winner": 2, "loser": 1, "card": "AS", "foundation": 1}], "winner 2 is not a seat"),
    ([{"t": 1, "winner": 1, "loser": 1, "card": "AS", "foundation": 1}], "cannot race itself"),
    ([{"t": 1, "winner": 0, "loser": 1, "card": "ZZ", "foundation": 1}], "race 0:"),
    ([{"t": 1, "winner": 0, "loser": 1, "card": "AS", "foundation": 0}], "foundation 0"),
    ([{"t": 1, "winner": 0, "loser": 1, "card": "AS", "foundation": 1, "margin_ms": 1.5}],
     "margin_ms 1.5"),
])
def test_bad_race_section_is_refused_by_name(race: object, message: str) -> None:
    data = {"format": "nertz-replay/1", "players": ["A", "B"], "seed": 1,
            "rounds": [{"moves": [], "races": race}]}
    with pytest.raises(ReplayError, match=message.replace("(", r"\(")):
        replay.from_json(data)


def test_card_words_and_clock() -> None:
    assert analysis.card_words(card("5H")) == "5 of hearts"
    assert analysis.card_words(card("QS")) == "queen of spades"
    assert analysis.card_words(card("TD")) == "10 of diamonds"
    assert analysis.clock(41_999) == "0:41"
    assert analysis.clock(61_000) == "1:01"
