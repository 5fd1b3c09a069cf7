"""The page takes the rules from the server, never from the room's options: whether the seat
may call (each tableau's ``can_call``), which ranks open a foundation (the table's ``starts``)
and which of the seat's piles a player plays (each player's ``piles``).

The test's wire rewrites those fields in what the server sends, to values no option would give
(a call offered under ``false_call: rejected`` with cards left, Kings opening foundations, a
whole seat told it plays only its Nertz pile): the page must follow the message. The old page
worked each of them out from the options and would show the opposite.
"""

from __future__ import annotations

from typing import Any

from test_web_game import seat_room, wait_table

REWRITING_WIRE = """(() => {
  // The test's wire: every server message passes through window.__rewrite (when set) first.
  const Real = window.WebSocket;
  class Rewriting extends Real {
    get onmessage() { return super.onmessage; }
    set onmessage(fn) {
      super.onmessage = (ev) => {
        const f = window.__rewrite;
        if (!f) return fn(ev);
        const lines = String(ev.data).split('\\n').map((l) => JSON.stringify(f(JSON.parse(l))));
        fn({data: lines.join('\\n')});
      };
    }
  }
  window.WebSocket = Rewriting;
})();"""

REWRITE = """() => {
  const fixTable = (t) => {
    if (!t) return;
    for (const tab of t.tableaus || []) tab.can_call = true;
    t.starts = [13];
  };
  const fixRoom = (r) => { if (r) for (const p of r.players) p.piles = ['N']; };
  window.__rewrite = (m) => {
    fixTable(m.table);
    fixRoom(m.room);
    if (m.type === 'update') for (const tab of m.tableaus) tab.can_call = true;
    return m;
  };
}"""


def test_the_page_follows_what_the_server_says_of_the_rules(server: Any, new_page: Any) -> None:
    told, plain = new_page(), new_page()
    for page in (told, plain):
        page.add_init_script(REWRITING_WIRE)
    # Calling too soon is refused, Aces open foundations, and a seat plays all its piles.
    rules = {"preset": "pagat", "false_call": "rejected"}
    for page in (told, plain):
        if page is told:
            page.goto(server.base + "/")
            page.evaluate(REWRITE)
        seat_room(server, page, "Ann", rules=rules, seats=2)
        if page is told:
            page.evaluate(REWRITE)  # again: the room's page is a new document
        page.locator("#seats select.bot-level").first.select_option("beginner")
        page.locator("#seats .add-bot").first.click()
        page.wait_for_function("() => document.querySelectorAll('#seats .player-name').length > 1")
        page.click("#start")
        wait_table(page)
    # As the server really says: no call with cards left, the whole seat's piles, Aces.
    assert plain.locator("#call").count() == 0
    assert not plain.is_disabled("#turn")
    assert plain.evaluate(FITS_KING) is None
    # As the rewritten messages say, though no option says so.
    told.wait_for_selector("#call")
    assert told.is_disabled("#turn")
    assert "partner-pile" in (told.get_attribute('#me [data-pile="S"]', "class") or "")
    assert told.evaluate(FITS_KING) == "new"
    assert "play a King" in told.text_content("#foundations")


FITS_KING = """async () => {
  const rules = await import('/static/js/rules.js');
  return rules.fitFoundation('KS', window.nertz.S.table);
}"""


FLAG_OPPONENT = """() => {
  const flag = {seat: 1, player: 'p1', name: 'Rob', why: 'reaction', plays: 31,
    median_reaction_ms: 92, interval_cv: 0.4, text: 'median reaction 92 ms over 31 plays'};
  window.__rewrite = (m) => {
    if (m.room) m.room.flags = [flag];
    return m;
  };
}"""


def test_a_flagged_seat_is_marked_for_everyone(server: Any, new_page: Any) -> None:
    """The page marks the seat the server flagged (``room.flags``), with the server's figures."""
    page = new_page()
    page.add_init_script(REWRITING_WIRE)
    seat_room(server, page, "Ann", rules="pagat", seats=2)
    page.evaluate(FLAG_OPPONENT)
    page.locator("#seats select.bot-level").first.select_option("beginner")
    page.locator("#seats .add-bot").first.click()
    page.wait_for_function("() => document.querySelectorAll('#seats .player-name').length > 1")
    page.click("#start")
    wait_table(page)
    badge = page.locator('.opp[data-seat="1"] .badge.flag')
    badge.wait_for()
    assert "too fast" in badge.text_content()
    assert badge.get_attribute("title") == "median reaction 92 ms over 31 plays"
    assert page.locator("#me .badge.flag").count() == 0


def test_a_click_never_sends_a_card_sideways_for_nothing(server: Any, new_page: Any) -> None:
    # The J of hearts on the Q of clubs, the Q of spades alone on another pile: clicking the
    # jack moved it across, and the next click moved it back. Now it goes across only when
    # what it leaves behind then plays (here: the Nertz pile's J of diamonds onto the Q).
    page = new_page()
    page.goto(server.base + "/")
    best = """async (nertzTop) => {
      const {bestMove} = await import('/static/js/rules.js');
      const table = {foundations: [], starts: [1]};
      const tab = {nertz_top: nertzTop, waste_top: null,
                   work: [{down: 0, up: ['QC', 'JH']}, {down: 0, up: ['8S']},
                          {down: 0, up: ['QS']}, {down: 0, up: ['2D']}]};
      return [bestMove(table, tab, {}, '1'), bestMove(table, tab, {}, '1', 0)];
    }"""
    assert page.evaluate(best, "5C") == [None, None]
    assert page.evaluate(best, "JD") == ["1:JH-3", None]
