"""A crowded table on a phone: six or eight seats at 390x844 (upright), 844x390 (sideways)
and 360x640 (a small phone), and eight on a tablet held upright (768x1024), with every
foundation the seats can start (four a seat, 32 at eight seats) and every work pile as long as
a round makes it. Measured on the live page:
nothing overlaps or leaves the screen, the page does not scroll, one's own cards are a thumb's
size, and the foundations' and the other seats' top cards and Nertz counts are large enough to
read. Screenshots land in ``artifacts/``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from page_checks import assert_fits, assert_no_axe_violations, shot
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_web_game import seat_room, wait_table
from test_web_screens import LONG_NAME, open_page, size_id

TABLES = [((390, 844), 8), ((390, 844), 6), ((844, 390), 8), ((360, 640), 8), ((768, 1024), 8)]
"""(viewport, seats): the sizes a review found cramped, the smallest phone still common, and
an upright tablet (its other seats' cards were 18 px, their index 5 px)."""

OWN_CARD = 40
"""The least width of one's own cards (px): tapped and dragged by a thumb."""

TAP = 32
"""The least width and height of anything tapped or dropped on (px)."""

GLYPH = 12
"""The least height (px) of the box of a rank's or a suit's character on a card read at a
glance (the foundations' and the other seats' top cards): about a 10 px font."""

FILL_TABLE = """() => {
  const S = window.nertz.S;
  const suits = 'SHDC', ranks = 'A23456789TJQK';
  const seats = S.table.tableaus.length;
  // Every foundation the seats' decks can start, of every height (a King's is finished).
  S.table.foundations = Array.from({length: 4 * seats}, (_, i) => {
    const k = 1 + (i * 5) % 13;
    return {number: i + 1, suit: suits[i % 4], finished: k === 13,
      cards: Array.from({length: k}, (_, j) => ranks[j] + suits[i % 4]),
      owners: Array.from({length: k}, (_, j) => (i + j) % seats)};
  });
  const run = ['KS', 'QH', 'JC', 'TD', '9S', '8H', '7C', '6D', '5S', '4H', '3C', '2D'];
  for (const tab of S.table.tableaus) {
    tab.work = tab.work.map((p, i) => ({down: 6, up: run.slice(i, 12), hidden_top: false}));
  }
  window.nertz.render();
}"""
"""The most a table can show at once, drawn as the page would draw it."""

MEASURE = """() => {
  // A card flying to where it was played (the bots play on) is measured where it lands.
  for (const a of document.getAnimations()) {
    if (!(a instanceof CSSAnimation) && !(a instanceof CSSTransition)) a.finish();
  }
  const box = (e) => {
    const r = e.getBoundingClientRect();
    return {l: r.left, t: r.top, r: r.right, b: r.bottom, w: r.width, h: r.height};
  };
  const shown = (e) => e.getClientRects().length > 0;
  const name = (e) => e.id || e.dataset.seat && `seat ${e.dataset.seat}` || e.className;
  const overlap = (a, b) => Math.min(a.r, b.r) - Math.max(a.l, b.l) > 0.5
    && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 0.5;
  const inside = (a, b) => a.l >= b.l - 0.5 && a.t >= b.t - 0.5
    && a.r <= b.r + 0.5 && a.b <= b.b + 0.5;
  const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];
  const out = [];
  // The table's regions: the top bar, each other seat, the foundations, one's own seat.
  const regions = [...$$('.topbar, .opp, #foundations, #me')].filter(shown);
  for (let i = 0; i < regions.length; i++) {
    for (let j = i + 1; j < regions.length; j++) {
      if (overlap(box(regions[i]), box(regions[j])))
        out.push(`${name(regions[i])} overlaps ${name(regions[j])}`);
    }
  }
  // The tallest character of a card's face as drawn (its rank or its suit).
  const glyphs = (card) => $$('svg text', card).filter(shown).map((t) => box(t).h);
  const founds = box(document.querySelector('#foundations'));
  const tops = $$('#foundations .fnd .card:not(.under)');
  const fnd = tops.map((c) => ({card: c.dataset.card, box: box(c), glyph: Math.min(...glyphs(c))}));
  fnd.forEach((f, i) => {
    if (!inside(f.box, founds)) out.push(`foundation ${i + 1} (${f.card}) is cut off`);
    fnd.slice(i + 1).forEach((g) => {
      if (overlap(f.box, g.box)) out.push(`foundations ${f.card} and ${g.card} overlap`);
    });
  });
  // Another seat's top cards: each pile's last card, within the seat's panel.
  const opp = [];
  for (const seat of $$('.opp')) {
    const panel = box(seat);
    for (const pile of $$('[data-pile]', seat)) {
      const top = $$('.card', pile).pop();
      if (!top || !top.dataset.card) continue;
      const b = box(top);
      if (!inside(b, panel)) {
        out.push(`seat ${seat.dataset.seat}'s ${pile.dataset.pile} is cut off`);
      }
      opp.push({w: b.w, glyph: Math.min(...glyphs(top))});
    }
    // Its Nertz count: the figure beside the name, or the badge on the pile.
    const count = $$('.name .ncount, [data-pile="N"] .count', seat).filter(shown)[0];
    if (!count) { out.push(`seat ${seat.dataset.seat} shows no Nertz count`); continue; }
    const c = box(count);
    if (!inside(c, panel)) out.push(`seat ${seat.dataset.seat}'s Nertz count is cut off`);
    opp.push({count: parseFloat(getComputedStyle(count).fontSize), countText: count.textContent});
  }
  // One's own cards and what is tapped: the piles' top cards, the work piles (dropped on),
  // the buttons.
  const own = $$('#me [data-pile]').map((p) => {
    const top = $$('.card', p).pop();
    return {pile: p.dataset.pile, w: box(top).w, h: box(top).h};
  });
  const taps = $$('#me .actions button, #me #react, .topbar button, .topbar a, #me .work .stack')
    .filter(shown).map((e) => ({what: name(e), w: box(e).w, h: box(e).h}));
  return {out, fnd, opp, own, taps, founds, seats: $$('.opp').length,
          scroll: [document.documentElement.scrollWidth, document.documentElement.scrollHeight],
          view: [innerWidth, innerHeight]};
}"""
"""What a phone player sees of the table: what overlaps or is cut off (``out``), and the sizes
of the foundations' and the other seats' top cards, the seats' Nertz counts, one's own cards
and everything tapped."""


FILL_AND_MEASURE = f"() => {{ ({FILL_TABLE})(); return ({MEASURE})(); }}"
"""The fullest table drawn and measured in one go: nothing the bots do comes between."""


TOP_BAR_MIDDLES = """() => [...document.querySelectorAll('.topbar > *, .topbar .tools > *')]
  .map((e) => e.getBoundingClientRect()).filter((r) => r.width && r.height)
  .map((r) => (r.top + r.bottom) / 2)"""
"""Where the middle of each of the top bar's controls is (px from the top)."""


def declare_stuck(page: Any) -> None:
    """Press S until the page shows this seat stuck. The bots may all be stuck already,
    waiting on the person (who plays nothing here): the press then resets the round at once,
    and the seat's stuck goes with it before the page can show it."""
    deadline = time.monotonic() + 60
    while True:
        page.keyboard.press("s")
        try:
            page.wait_for_selector("#stuck-undo", timeout=5000)
            return
        except PlaywrightTimeout:
            assert time.monotonic() < deadline, "the page never showed the seat stuck"


def table_id(table: tuple[tuple[int, int], int]) -> str:
    return f"{size_id(table[0])}-{table[1]}seats"


@pytest.mark.parametrize("table", TABLES, ids=table_id)
def test_a_crowded_table_fits_a_phone_and_reads_at_a_glance(
        table: tuple[tuple[int, int], int], server: Any, new_page: Any, axe: str,
        artifacts: Path) -> None:
    size, seats = table
    page = open_page(new_page, size)
    seat_room(server, page, LONG_NAME, rules={"preset": "pagat"}, seats=seats)
    page.click("#fill-bots")
    page.wait_for_selector("#start:not([disabled])")
    page.click("#start")
    wait_table(page)
    page.wait_for_function("(n) => document.querySelectorAll('.opp .piles').length === n",
                           arg=seats - 1)
    name = table_id(table)
    assert_fits(page)
    assert_no_axe_violations(page, axe, f"a crowded table at {name}")

    # The bots play on: drawing and measuring happen in one go, so they measure one table.
    m = page.evaluate(FILL_AND_MEASURE)
    shot(page, artifacts, f"crowded-{name}")
    assert m["scroll"] == m["view"], f"the page scrolls: {m['scroll']} in {m['view']}"
    assert m["out"] == [], m["out"]
    assert m["seats"] == seats - 1 and len(m["fnd"]) == 4 * seats, m
    assert_fits(page)

    # Every foundation's top card reads at a glance (its rank and suit drawn large, each
    # about half the card's width tall).
    least = min(f["box"]["w"] for f in m["fnd"])
    assert least >= 24, (least, m["founds"])
    assert min(f["glyph"] for f in m["fnd"]) >= GLYPH, m["fnd"]
    # The strip they are dropped on is a thumb's size and more.
    assert m["founds"]["h"] >= 3 * TAP and m["founds"]["w"] >= 3 * TAP, m["founds"]

    # The other seats: small, and still their top cards and Nertz counts read.
    cards = [o for o in m["opp"] if "w" in o]
    counts = [o for o in m["opp"] if "count" in o]
    assert len(counts) == seats - 1, m["opp"]
    assert min(o["glyph"] for o in cards) >= GLYPH, cards
    assert min(o["w"] for o in cards) >= 18, cards
    assert all(o["count"] >= 11 and o["countText"].isdigit() for o in counts), counts

    # One's own cards and what a thumb presses.
    assert min(o["w"] for o in m["own"]) >= OWN_CARD, m["own"]
    assert {t["what"] for t in m["taps"]} >= {"turn", "stuck", "react"}, m["taps"]
    # A phone, or a tablet held upright: held in the hands whatever pointer its browser
    # reports (the tablet's top bar was 25 px where the browser said the pointer was fine).
    assert all(t["w"] >= TAP and t["h"] >= TAP for t in m["taps"]), m["taps"]
    # The top bar keeps to one row (on the upright tablet it wrapped to two, taking a row's
    # height from the table): every control's middle on one line.
    middles = page.evaluate(TOP_BAR_MIDDLES)
    assert max(middles) - min(middles) < 8, middles
    assert_no_axe_violations(page, axe, f"a full crowded table at {name}")

    # Stuck: the words under the buttons take room from the foundations, never the screen's.
    declare_stuck(page)
    m = page.evaluate(FILL_AND_MEASURE)
    shot(page, artifacts, f"crowded-stuck-{name}")
    assert m["scroll"] == m["view"] and m["out"] == [], m["out"]
    assert min(f["glyph"] for f in m["fnd"]) >= 10, m["fnd"]
    assert min(o["w"] for o in m["own"]) >= OWN_CARD, m["own"]
    assert_fits(page)
