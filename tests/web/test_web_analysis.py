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
    # The viewer points at the card that could have been played, where it lay (Ann's work
    # pile 4), and at the foundation it fitted (the ace of spades just played to foundation 1).
    missed = page.locator(".replay-board .card.missed")
    assert missed.count() == 1
    assert missed.get_attribute("data-card") == "2S"
    assert page.locator('.opp[data-seat="0"] [data-pile="4"] .card.missed').count() == 1
    assert "a missed play" in (missed.get_attribute("aria-label") or "")
    assert page.locator('#foundations .fnd.missed-target').get_attribute("data-pile") == "F1"
    said = page.text_content("#replay-missed") or ""
    assert "Ann could play the 2 of spades from work pile 4 to foundation 1" in said, said
    page.locator(".replay-board").screenshot(path=str(artifacts / "analysis-missed.png"))
    jumps.nth(0).click()
    assert (page.text_content("#replay-step") or "").startswith("1/6")
    missed = '.opp[data-seat="0"] [data-pile="W"] .card.missed[data-card="AH"]'
    assert page.locator(missed).count() == 1
    assert page.locator("#foundations .fnd.missed-target").count() == 0  # an ace starts one
    assert "to a new foundation" in (page.text_content("#replay-missed") or "")
    # Stepping on leaves the moment: nothing is marked; back at it, the mark is there again.
    page.keyboard.press("ArrowRight")
    assert page.locator(".replay-board .card.missed").count() == 0
    assert page.locator("#replay-missed").count() == 0
    page.keyboard.press("ArrowLeft")
    assert page.locator(".replay-board .card.missed").count() == 1
    # The races the file records show at the winning play: who beat whom, with which card.
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert (page.text_content("#replay-step") or "").startswith("4/6")
    said = page.text_content("#replay-step .race-note") or ""
    assert "Ben beat Ann's 2 of spades to foundation 1 by 10 ms" in said, said
    assert page.locator('.opp[data-seat="0"] .card.race-lost[data-card="2S"]').count() == 1
    page.keyboard.press("ArrowRight")
    said = page.text_content("#replay-step .race-note") or ""
    assert "Ann beat Ben's 3 of spades to foundation 1 by 100 ms" in said, said
    assert page.locator('.opp[data-seat="1"] .card.race-lost[data-card="3S"]').count() == 1


def test_a_busy_server_is_asked_again_and_a_file_is_not_blamed(server: Any,
                                                               new_page: Any) -> None:
    # "Not now" (429, 503) is not "never": the analysis is asked for again after the server's
    # Retry-After, and an upload refused for being one too many does not call the file bad.
    page = new_page()
    refused: list[str] = []

    def once_busy(route: Any) -> None:
        if not refused:
            refused.append(route.request.url)
            route.fulfill(status=429, headers={"Retry-After": "1"},
                          content_type="application/json",
                          body='{"error": "4 replays from your address are being played"}')
        else:
            route.continue_()

    page.route("**/api/replays/analysis", once_busy)
    page.goto(server.base + "/")
    page.set_input_files("#replay-file", str(FILE))
    page.wait_for_selector("#replay-analysis .analysis-jump")
    assert refused  # the first ask was refused, the second answered

    page = new_page()
    page.route("**/api/replays/frames", lambda route: route.fulfill(
        status=503, headers={"Retry-After": "5"}, content_type="application/json",
        body='{"error": "the server is busy playing replays through"}'))
    page.goto(server.base + "/")
    page.set_input_files("#replay-file", str(FILE))
    # (A selector, not a script: the page's Content Security Policy refuses eval.)
    page.wait_for_selector("#replay-error:not(:empty)")
    text = page.text_content("#replay-error") or ""
    assert "cannot show it just now" in text and "not a replay" not in text, text
