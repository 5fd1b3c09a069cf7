"""The how-to-play lesson: from home, a newcomer plays a guided round on a fixed deal, moving
the card each step points at (by drag, as at a real table) until the call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from page_checks import assert_fits, assert_no_axe_violations, shot


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
    play_lesson(page, steps)


def play_lesson(page: Any, steps: list[dict[str, Any]], touch: bool = False) -> None:
    """Make each step the lesson points at, checking the page fits the screen with the step's
    card and place in view: drags for card moves, a click (a tap on a phone) for the rest."""
    for i, step in enumerate(steps):
        page.wait_for_selector(f"#learn-step[data-step='{i}']")
        move = step["move"]
        assert page.get_attribute("#learn-step", "data-move") == move
        if move in ("T", "NERTZ"):
            target = '#me [data-pile="S"] .stack.hint' if move == "T" else "#call.hint"
            assert_fits(page, [target])
            if touch:
                page.tap(target)
            else:
                page.click(target)
        else:
            # "Move the 2 of hearts from work pile 1 to work pile 2": where from, and where to.
            said = page.text_content("#learn-step .learn-do") or ""
            assert said.startswith("Move the ") and " from " in said and " to " in said, said
            assert_fits(page, ["#me .card.hint", ".hint-target"])
            drag(page, "#me .card.hint", ".hint-target")
    page.wait_for_selector("#learn-step[data-step='done']")
    assert "called" in (page.text_content("#learn-step") or "")


def test_the_lesson_fits_a_phone_to_the_call(server: Any, new_page: Any) -> None:
    # Upright on a phone the lesson's words sit above the table, and the table keeps to the
    # rest of the screen: every step's card, its place and the call button are in view.
    page = new_page(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page.goto(server.base + "/learn")
    page.wait_for_selector("#learn-step[data-step='0']")
    play_lesson(page, server.get("/api/tutorial")["steps"], touch=True)


def test_the_lesson_fits_a_sideways_phone_to_the_call(server: Any, new_page: Any,
                                                      artifacts: Path) -> None:
    # Held sideways, the lesson's title and words took a third of the height and the table
    # under them did not fit: the foundations squeezed to nothing, the work piles cut off.
    page = new_page(viewport={"width": 844, "height": 390}, has_touch=True, is_mobile=True)
    page.goto(server.base + "/learn")
    page.wait_for_selector("#learn-step[data-step='0']")
    shot(page, artifacts, "learn-844x390")
    assert_fits(page)  # the whole table, the foundations' room included
    assert_fits(page, ["#learn-step", "#learn a[href='/']"])
    play_lesson(page, server.get("/api/tutorial")["steps"], touch=True)
