"""Checks of a live page shared by the browser tests: axe-core's accessibility audit, the
table fitting the viewport with every action in view, screenshots of each screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

AXE_RUN = """async () => {
  const r = await window.axe.run(document, {resultTypes: ['violations']});
  return r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ': ' + n.failureSummary)}));
}"""


def axe_violations(page: Any, axe_source: str) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now (every rule axe runs by default).

    axe is evaluated through the DevTools protocol: the page's Content-Security-Policy
    (scripts from its own origin only) rightly refuses an injected script tag."""
    if not page.evaluate("() => !!window.axe"):
        cdp = page.context.new_cdp_session(page)
        try:
            cdp.send("Runtime.evaluate", {"expression": axe_source})
        finally:
            cdp.detach()
    return page.evaluate(AXE_RUN)  # type: ignore[no-any-return]


def assert_no_axe_violations(page: Any, axe_source: str, screen: str) -> None:
    """Fail with axe's findings if the screen has any."""
    found = axe_violations(page, axe_source)
    assert not found, f"axe-core on the {screen} screen: {found}"


OUT_OF_VIEW = """(selectors) => {
  const out = [];
  for (const sel of selectors) {
    for (const el of document.querySelectorAll(sel)) {
      const r = el.getBoundingClientRect();
      if (!r.width && !r.height) continue;  // not shown
      const [x0, y0, x1, y1] = [r.left, r.top, r.right, r.bottom].map(Math.round);
      if (r.top < -0.5 || r.left < -0.5 || r.bottom > innerHeight + 0.5
          || r.right > innerWidth + 0.5)
        out.push(`${sel} ${el.id || el.dataset.pile || ''}: ${x0},${y0}-${x1},${y1}`);
    }
  }
  const doc = document.documentElement;
  // The foundations' strip in the middle keeps the room its cards need (squeezed to nothing
  // by the seats around it, they would be in view and yet covered).
  const middle = document.querySelector('#table-screen .middle');
  const founds = document.querySelector('#foundations');
  const squeezed = middle && founds && middle.getBoundingClientRect().height + 0.5
    < parseFloat(getComputedStyle(founds).minHeight);
  return {out, scrollW: doc.scrollWidth, scrollH: doc.scrollHeight, squeezed,
          w: innerWidth, h: innerHeight, x: scrollX, y: scrollY};
}"""

TABLE_ACTIONS = [
    ".topbar button", ".topbar a", "#me [data-pile]", "#me [data-pile] .card",
    "#me .actions button", "#foundations", "#foundations .card", ".opp", ".opp .card",
]
"""Everything a player at the table uses or needs to see."""


def assert_fits(page: Any, selectors: list[str] = TABLE_ACTIONS) -> None:
    """The page does not scroll, and everything in `selectors` is wholly in the viewport."""
    m = page.evaluate(OUT_OF_VIEW, selectors)
    assert m["scrollW"] <= m["w"] and m["scrollH"] <= m["h"], f"the page scrolls: {m}"
    assert (m["x"], m["y"]) == (0, 0), f"the page was scrolled: {m}"
    assert not m["out"], f"out of view at {m['w']}x{m['h']}: {m['out']}"
    assert not m["squeezed"], f"the foundations have no room at {m['w']}x{m['h']}"


def in_view(page: Any, box: dict[str, float] | None, what: str) -> None:
    """A box (from ``bounding_box()``) lies wholly in the viewport."""
    size = page.viewport_size
    assert box is not None, f"{what} is not shown"
    assert (box["x"] >= -0.5 and box["y"] >= -0.5
            and box["x"] + box["width"] <= size["width"] + 0.5
            and box["y"] + box["height"] <= size["height"] + 0.5), f"{what} out of view: {box}"


def box_of(page: Any, selector: str) -> dict[str, float] | None:
    """Where the first element `selector` finds is, or None if none is shown. Measured again
    for a moment when missing: a redraw can replace the element between finding and measuring
    it (on a busy machine, often)."""
    for _ in range(10):
        box = page.locator(selector).first.bounding_box()
        if box is not None:
            return box  # type: ignore[no-any-return]
        page.wait_for_timeout(30)
    return None


def press(page: Any, selector: str) -> bool:
    """Click (or tap) the centre of what `selector` finds, where it is: never scrolling to it.
    False if nothing is shown there (the caller decides whether that may be)."""
    box = box_of(page, selector)
    if box is None:
        return False
    in_view(page, box, selector)
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    return True


def shot(page: Any, artifacts: Path, name: str) -> None:
    """Keep a screenshot of the page as it is (the viewport only: what the player sees)."""
    page.screenshot(path=str(artifacts / f"{name}.png"))
