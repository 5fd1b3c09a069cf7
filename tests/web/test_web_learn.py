"""The how-to-play lesson: from home, a newcomer plays a guided round on a fixed deal, moving
the card each step points at (by drag, as at a real table) until the call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from page_checks import assert_no_axe_violations, shot


def drag(page: Any, source: str, target: str) -> None:
    a = page.locator(source).first.bounding_box()
    b = page.locator(target).first.bounding_box()
    assert a and b, (source, target)
    x, y = a["x"] + a["width"] / 2, a["y"] + min(a["height"] / 2, 12)
    tx, ty = b["x"] + b["width"] / 2, b["y"] + b["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for k in range(1, 9):
        page.mouse.move(x + (tx - x) * k / 8, y + (ty - y) * k / 8)
    page.mouse.up()


def test_a_newcomer_plays_the_guided_round_to_the_call(server: Any, new_page: Any, axe: str,
                                                       artifacts: Path) -> None:
    page = new_page()
    page.goto(server.base + "/")
    page.click("#learn")
    page.wait_for_selector("#learn-step[data-step='0']")
    steps = server.get("/api/tutorial")["steps"]
    assert steps[-1]["move"] == "NERTZ" and len(steps) > 5
    shot(page, artifacts, "learn")
    assert_no_axe_violations(page, axe, "learn")
    # A wrong move (turning the stock when the lesson's first step is a card) is explained
    # and changes nothing.
    assert steps[0]["move"] != "T"
    page.keyboard.press("Space")
    page.wait_for_function(
        "() => document.body.textContent.includes('follow the highlighted card')")
    assert page.get_attribute("#learn-step", "data-step") == "0"
    for i, step in enumerate(steps):
        page.wait_for_selector(f"#learn-step[data-step='{i}']")
        move = step["move"]
        assert page.get_attribute("#learn-step", "data-move") == move
        if move == "T":
            page.click('#me [data-pile="S"] .stack.hint')
        elif move == "NERTZ":
            page.click("#call.hint")
        else:
            # "Move the 2 of hearts from work pile 1 to work pile 2": where from, and where to.
            said = page.text_content("#learn-step .learn-do") or ""
            assert said.startswith("Move the ") and " from " in said and " to " in said, said
            drag(page, "#me .card.hint", ".hint-target")
    page.wait_for_selector("#learn-step[data-step='done']")
    assert "called" in (page.text_content("#learn-step") or "")
