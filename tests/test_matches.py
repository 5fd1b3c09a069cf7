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


def _layouts(rnd: object) -> list[object]:
    return [t.to_layout() for t in rnd.tableaus]  # type: ignore[attr-defined]


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_duplicate_deal_gives_every_seat_every_hand_once(seats: int) -> None:
    rules = PRESETS["pagat"].replace(duplicate_deal=True, target_score=None, rounds=2 * seats)
    match = Match(rules, seats, seed="dup")
    deals = []
    for _ in range(2 * seats):
        rnd = match.deal()
        deals.append(_layouts(rnd))
        match.finish(rnd)
    for block in (0, 1):
        first = deals[block * seats]
        for k in range(seats):
            assert deals[block * seats + k] == [first[(s + k) % seats] for s in range(seats)]
    assert set(map(str, deals[0])).isdisjoint(map(str, deals[seats]))  # a new block, new hands
    # The first round of a block is dealt exactly as without the option.
    plain = Match(rules.replace(duplicate_deal=False), seats, seed="dup")
    assert _layouts(plain.deal()) == deals[0]


def test_duplicate_deal_off_deals_as_before() -> None:
    """Every preset leaves the option off: its deals are the seeds' ordinary shuffles."""
    from nertz.state import deal, shuffled_deck

    for name, preset in PRESETS.items():
        assert preset.duplicate_deal is False, name
        rules = preset.replace(target_score=None, rounds=5)  # fairy_fly plays one round only
        match = Match(rules, 3, seed=5)
        match.finish(match.deal())
        rnd = match.deal()
        want = [deal(rules, shuffled_deck(rules, 5, 1, s), match.nertz_sizes[s]).to_layout()
                for s in range(3)]
        assert _layouts(rnd) == want


def test_duplicate_deal_match_replays_from_its_seed_alone(tmp_path: Path) -> None:
    rules = PRESETS["pagat"].replace(duplicate_deal=True, target_score=None, rounds=2)
    file = record_match(rules, ["Ann", "Ben"], seed=21)
    assert file.rules.to_spec() == {"preset": "pagat", "target_score": None, "rounds": 2,
                                    "duplicate_deal": True}
    recorded = [r.layouts for r in file.rounds]
    assert recorded[1] == [recorded[0][1], recorded[0][0]]
    for r in file.rounds:
        r.layouts = None  # dealt from the seed and the option, as another program would
    dealt: list[list[object]] = []
    replay.run(file, on_deal=lambda _r, rnd: dealt.append(_layouts(rnd)))
    assert dealt == recorded
    path = tmp_path / "dup.nertz.json"
    path.write_text(file.dumps())
    out = subprocess.run(
        [sys.executable, "-m", "nertz.cli", "replay", str(path), "--json"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    assert json.loads(out.stdout)["over"] is True
