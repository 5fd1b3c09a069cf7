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


EMOJI_DRAWN = r"""() => {
  const c = document.createElement('canvas');
  c.width = c.height = 40;
  const g = c.getContext('2d');
  g.font = '30px sans-serif';
  g.textBaseline = 'top';
  g.fillStyle = '#000';
  g.fillText('\u{1F44B}', 4, 4);
  const px = g.getImageData(0, 0, 40, 40).data;
  for (let i = 0; i < px.length; i += 4)
    if (px[i + 3] && (px[i] !== px[i + 1] || px[i + 1] !== px[i + 2])) return true;
  return false;
}"""
"""Whether this browser draws emoji in colour (an emoji font is installed): Debian's Chromium
without ``fonts-noto-color-emoji`` draws a box."""


def test_a_quick_reaction_shows_by_the_seat(server: Any, new_page: Any) -> None:
    ann, ben = two_at_a_table(server, new_page)
    # The React button needs no emoji font: its face is drawn (it showed an empty box).
    react = ann.locator("#react")
    assert react.locator("svg").count() == 1
    assert (react.text_content() or "").strip() == "React"
    ann.click("#react")
    # Without emoji, each reaction says its word (boxes told nothing apart).
    drawn = ann.evaluate(EMOJI_DRAWN)
    faces = ann.locator("#emote-menu .emote").all_text_contents()
    if not drawn:
        assert faces == ["Wave", "GG", "Wow", "Oops", "Hurry", "Thanks"], faces
    ann.click('#emote-menu .emote[data-emote="wave"]')
    for page in (ben, ann):
        page.wait_for_selector('.emote-bubble[data-seat="0"][data-emote="wave"]')
    assert ben.get_attribute('.emote-bubble[data-seat="0"]', "aria-label") == "Ann: Wave"
    if not drawn:
        assert ben.text_content('.emote-bubble[data-seat="0"]') == "Wave"
    # It goes after a moment.
    ben.wait_for_function("() => !document.querySelector('.emote-bubble')")
