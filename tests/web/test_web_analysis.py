"""The match analysis on the page: the replay viewer shows what each seat missed and lost, and a
missed play jumps the viewer to the moment the card became playable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FILE = Path(__file__).resolve().parents[1] / "golden_analysis" / "01_missed_and_races.nertz.json"
"""A hand-worked file (tests/golden_analysis/README.md): Ann misses AH (covered, from 1000 ms,
after the first move) and 2S (taken, from 3500 ms, after the second); each seat wins and loses
one race."""


def test_replay_viewer_shows_the_analysis_and_jumps(server: Any, new_page: Any,
                                                    artifacts: Path) -> None:
    page = new_page()
    page.goto(server.base + "/")
    page.set_input_files("#replay-file", str(FILE))
    page.wait_for_selector("#replay-analysis .analysis-jump")
    ann = page.text_content('#replay-analysis .analysis-seat[data-seat="0"]') or ""
    assert "2 missed plays: ace of hearts at 0:01, 2 of spades at 0:03" in ann
    assert "Races won 1 (beat Ben by 100 ms), lost 1 (to Ben by 10 ms)." in ann
    ben = page.text_content('#replay-analysis .analysis-seat[data-seat="1"]') or ""
    assert "1 missed play: 3 of spades at 0:06" in ben
    page.locator("#replay-analysis").screenshot(path=str(artifacts / "analysis.png"))
    jumps = page.locator('#replay-analysis .analysis-seat[data-seat="0"] .analysis-jump')
    jumps.nth(1).click()
    assert (page.text_content("#replay-step") or "").startswith("2/6")
    jumps.nth(0).click()
    assert (page.text_content("#replay-step") or "").startswith("1/6")
