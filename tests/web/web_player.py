"""A test player for the browser: reads its table off the page's data attributes and plays by
real mouse drags, taps and keys, as a person would. It knows the ``up`` foundations and the work
piles' alternating colours, enough to find a legal move in the short ``pagat`` rounds the tests
deal; the server still judges every move."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from page_checks import box_of, in_view, press

RANKS = "A23456789TJQK"

READ_TABLE = """() => {
  const me = document.querySelector('#me');
  const screen = document.querySelector('#table-screen');
  if (!me || me.classList.contains('hidden') || !screen) return null;
  const pile = (p) => me.querySelector(`[data-pile="${p}"]`);
  const top = (p) => {
    const c = pile(p) && pile(p).querySelector('.card[data-card]');
    return c ? c.dataset.card : null;
  };
  const work = [];
  for (const el of me.querySelectorAll('.work [data-pile]')) {
    work.push({up: [...el.querySelectorAll('.card[data-card]')].map((c) => c.dataset.card),
               down: el.querySelectorAll('.card.back').length});
  }
  const founds = [...document.querySelectorAll('#foundations .fnd')].map((f) => ({
    pile: f.dataset.pile, top: f.querySelector('.card:not(.under)').dataset.card,
    finished: f.classList.contains('finished')}));
  const count = (sel) => {
    const m = /(\\d+)/.exec((document.querySelector(sel) || {}).textContent || '');
    return m ? Number(m[1]) : null;
  };
  return {seat: Number(me.dataset.seat), nertz: top('N'), nertz_count: count('#my-nertz-count'),
          waste: top('W'), stock_back: !!pile('S').querySelector('.card.back'), work, founds,
          pending: Number(screen.dataset.pending || 0), phase: screen.dataset.phase,
          stuck: me.classList.contains('stuck'), call: !!document.querySelector('#call')};
}"""


def rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def red(card: str) -> bool:
    return card[1] in "HD"


def fits_foundation(card: str, founds: list[dict[str, Any]]) -> bool:
    """Under ``up`` foundations: an Ace starts one; else the next card of its suit."""
    if rank(card) == 1:
        return True
    return any(not f["finished"] and f["top"][1] == card[1] and rank(f["top"]) == rank(card) - 1
               for f in founds)


def fits_work(card: str, pile: dict[str, Any]) -> bool:
    if not pile["up"]:
        return pile["down"] == 0
    t = pile["up"][-1]
    return rank(card) == rank(t) - 1 and red(card) != red(t)


@dataclass
class Move:
    """A move found on the page: from pile ``src`` (card ``card``) to ``dst`` ('F' or '1'..)."""

    src: str
    card: str
    dst: str

    @property
    def text(self) -> str:
        return f"{self.src}-{self.dst}"


def find_move(state: dict[str, Any]) -> Move | None:
    """A productive legal move: something to a foundation, else a Nertz or waste card onto a
    work pile (an empty one only for the Nertz card)."""
    founds = state["founds"]
    tops = [("N", state["nertz"]), ("W", state["waste"])]
    tops += [(str(i + 1), p["up"][-1]) for i, p in enumerate(state["work"]) if p["up"]]
    for src, card in tops:
        if card and fits_foundation(card, founds):
            return Move(src, card, "F")
    for src, card in tops[:2]:
        if not card:
            continue
        for i, p in enumerate(state["work"]):
            if p["up"] and fits_work(card, p):
                return Move(src, card, str(i + 1))
    if state["nertz"]:
        for i, p in enumerate(state["work"]):
            if not p["up"] and not p["down"]:
                return Move("N", state["nertz"], str(i + 1))
    return None


class Player:
    """One person at the table, in one browser page."""

    def __init__(self, page: Any, use_keys: bool = False, pointer_only: bool = False) -> None:
        """`use_keys`: foundation plays by keyboard. `pointer_only`: every action by the
        pointer where it is shown (the stock, *I'm stuck*, *Call*), each checked to be in view
        without scrolling, as are the cards dragged and where they go."""
        self.page = page
        self.use_keys = use_keys
        self.pointer_only = pointer_only
        self.turns_without_play = 0
        self.moves = 0
        self.misses: list[tuple[str, tuple[float, float]]] = []

    def state(self) -> dict[str, Any] | None:
        return self.page.evaluate(READ_TABLE)  # type: ignore[no-any-return]

    def settle(self, timeout: float = 15.0) -> dict[str, Any] | None:
        """Wait until every move this page sent is answered; the state then."""
        end = time.monotonic() + timeout
        while True:
            st = self.state()
            if st is None or st["pending"] == 0 or time.monotonic() > end:
                return st
            self.page.wait_for_timeout(25)

    def drag(self, move: Move) -> None:
        """Drag the card with the mouse: press on it, move in steps, release over the target."""
        page = self.page
        src = page.locator(f'#me [data-pile="{move.src}"] .card[data-card="{move.card}"]')
        box = None
        for _ in range(5):
            src.wait_for(state="visible", timeout=15_000)  # a missed drop flies home first
            # A redraw between finding the card and measuring it detaches the old element.
            box = src.bounding_box()
            if box is not None:
                break
            page.wait_for_timeout(20)
        assert box is not None, f"no card {move.card} on pile {move.src}"
        x0, y0 = box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.2
        target = box_of(page, "#foundations" if move.dst == "F"
                        else f'#me [data-pile="{move.dst}"] .stack')
        assert target is not None, f"no drop target {move.dst}"
        if move.dst == "F":
            x1, y1 = target["x"] + 12, target["y"] + target["height"] / 2
        else:
            x1, y1 = target["x"] + target["width"] / 2, target["y"] + target["height"] - 8
        if self.pointer_only:
            in_view(page, box, f"the {move.card} on pile {move.src}")
            in_view(page, target, f"the drop target {move.dst}")
        sent = page.evaluate("() => window.nertz.S.sent")
        page.mouse.move(x0, y0)
        page.mouse.down()
        for k in range(1, 7):
            page.mouse.move(x0 + (x1 - x0) * k / 6, y0 + (y1 - y0) * k / 6)
        page.mouse.up()
        if page.evaluate("() => window.nertz.S.sent") == sent:  # this drop sent nothing
            self.misses.append((move.text, (x1, y1)))
            self.moves -= 1

    def press(self, selector: str) -> None:
        """Press what `selector` finds by pointer; it must be shown while the round is on."""
        if not press(self.page, selector):
            phase = self.page.evaluate("() => window.nertz.S.room.phase")
            assert phase != "playing", f"{selector} is not shown during play"

    def keys(self, move: Move) -> None:
        """The same move by keyboard: pick up the source, then F or the pile's number."""
        kb = self.page.keyboard
        kb.press(move.src.lower() if move.src in "NW" else move.src)
        kb.press("f" if move.dst == "F" else move.dst)

    def act(self) -> str:
        """Make one move: play a card if one fits, else call, else turn the stock, else stuck."""
        st = self.settle()
        if st is None or st["phase"] != "playing":
            return "wait"
        if st["call"]:
            if self.pointer_only:
                self.press("#call")
            else:
                self.page.keyboard.press("c")
            return "call"
        move = find_move(st)
        if move is not None:
            # Keyboard for foundation plays on the keyboard player, drags for everything else.
            self.moves += 1
            if self.use_keys and move.dst == "F":
                self.keys(move)
            else:
                self.drag(move)
            self.turns_without_play = 0
            return move.text
        if st["stuck"]:
            return "stuck"
        self.turns_without_play += 1
        if self.turns_without_play > 30:
            if self.pointer_only:
                self.press("#stuck")
            else:
                self.page.keyboard.press("s")
            self.turns_without_play = 0
            return "STUCK"
        if self.pointer_only:
            self.press('#me [data-pile="S"] .card')
        else:
            self.page.keyboard.press("Space")
        return "T"
