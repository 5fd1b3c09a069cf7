"""Others at the table, in the browser: a seat's drag shows on the other pages (the card it
holds, where its pointer is) and goes when the drag ends; a quick reaction shows by the seat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from page_checks import shot
from test_web_game import two_at_a_table


def test_a_drag_shows_on_the_other_pages(server: Any, new_page: Any, artifacts: Path) -> None:
    ann, ben = two_at_a_table(server, new_page)
    card = ann.get_attribute('#me [data-pile="N"] .card[data-card]', "data-card")
    box = ann.locator('#me [data-pile="N"] .card[data-card]').bounding_box()
    target = ann.locator("#foundations").bounding_box()
    assert card and box and target
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    ann.mouse.move(x, y)
    ann.mouse.down()
    held = f'.remote-drag[data-seat="0"] .card[data-card="{card}"]'
    # Ann's pointer moves towards the foundations until Ben's page shows her card in hand.
    tx, ty = target["x"] + target["width"] / 2, target["y"] + target["height"] / 2
    for step in range(1, 21):
        ann.mouse.move(x + (tx - x) * step / 20, y + (ty - y) * step / 20)
        ann.wait_for_timeout(30)  # pacing the pointer as a hand would, not a wait for a result
    ann.mouse.move(tx + 1, ty + 1)
    ben.wait_for_selector(held)
    assert ann.locator(".remote-drag").count() == 0  # her own drag is not drawn twice
    # Over the foundations, Ben sees it over his foundations.
    ben.wait_for_function("""() => {
      const el = document.querySelector('.remote-drag[data-seat="0"]');
      if (!el) return false;
      const f = document.querySelector('#foundations').getBoundingClientRect();
      const m = new DOMMatrixReadOnly(getComputedStyle(el).transform);
      return m.m41 >= f.left && m.m41 <= f.right && m.m42 >= f.top && m.m42 <= f.bottom;
    }""")
    shot(ben, artifacts, "others-drag")
    ann.mouse.move(x, y)
    ann.mouse.up()  # dropped where it came from: nothing played, the drag ends
    ben.wait_for_function("() => !document.querySelector('.remote-drag')")


def test_a_quick_reaction_shows_by_the_seat(server: Any, new_page: Any) -> None:
    ann, ben = two_at_a_table(server, new_page)
    ann.click("#react")
    ann.click('#emote-menu .emote[data-emote="wave"]')
    for page in (ben, ann):
        page.wait_for_selector('.emote-bubble[data-seat="0"][data-emote="wave"]')
    assert ben.get_attribute('.emote-bubble[data-seat="0"]', "aria-label") == "Ann: Wave"
    # It goes after a moment.
    ben.wait_for_function("() => !document.querySelector('.emote-bubble')")
