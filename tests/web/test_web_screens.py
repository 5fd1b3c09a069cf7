"""The page on every screen size players bring: at 1366x768, 1280x720, 768x1024, 390x844 and
844x390 a whole round is played by drags and clicks with everything in view (no scrolling,
however long the piles get), axe-core finds nothing on any screen, and screenshots of every
screen are kept in ``artifacts/``. Then what a passing update must not disturb: the lobby's
picked bot level and focus, a key press on *Start*, Space on a focused top-bar button."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import pytest
from page_checks import assert_fits, assert_no_axe_violations, press, shot
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_web_game import add_bots, against_a_bot, seat_room, wait_name, wait_table
from web_player import Player, fits_work

VIEWPORTS = [(1366, 768), (1280, 720), (768, 1024), (390, 844), (844, 390)]
"""Laptop, small laptop, tablet upright, phone upright, phone sideways."""

LONG_NAME = "Bartholomew Fairweather-Longbottom"[:24]
"""As long as a name may be (24 characters)."""

QUICK_RULES = {"preset": "pagat", "nertz_pile_size": 3, "target_score": 1}
"""A round that ends after a few plays; the match ends with it."""

LONG_PILES = """() => {
  const S = window.nertz.S;
  const run = ['KS', 'QH', 'JC', 'TD', '9S', '8H', '7C', '6D', '5S', '4H', '3C', '2D'];
  for (const tab of S.table.tableaus) {
    tab.work = tab.work.map((p, i) => ({down: 6, up: run.slice(i, 12), hidden_top: false}));
  }
  window.nertz.render();
}"""
"""Every work pile of every seat made as long as a round can make it (six face-down cards and
up to twelve face-up), drawn as the page would draw them."""


def size_id(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def open_page(new_page: Any, size: tuple[int, int]) -> Any:
    """A page at `size`; the two phone sizes as a phone (touch, mobile viewport)."""
    w, h = size
    phone = min(w, h) < 500
    return new_page(viewport={"width": w, "height": h}, has_touch=phone, is_mobile=phone)


def play_to_the_results(page: Any) -> None:
    """Play one's seat (a quick one-round match) until the match is over and its results are
    counted up."""
    player = Player(page)
    deadline = time.monotonic() + 240  # a round on a busy machine
    while page.evaluate("() => window.nertz.S.room.phase") != "match_over":
        assert time.monotonic() < deadline, "the round did not end"
        player.act()
        page.wait_for_timeout(40)
    page.wait_for_selector("#results:not(.counting)")


@pytest.mark.parametrize("size", VIEWPORTS, ids=size_id)
def test_a_round_by_pointer_fits_every_screen(size: tuple[int, int], server: Any, new_page: Any,
                                              axe: str, artifacts: Path) -> None:
    page = open_page(new_page, size)
    name = size_id(size)
    seat_room(server, page, LONG_NAME, rules=QUICK_RULES, seats=4)
    add_bots(page, "beginner", 3)
    shot(page, artifacts, f"lobby-{name}")
    assert_no_axe_violations(page, axe, f"lobby at {name}")
    press(page, "#start")
    wait_table(page)
    assert_fits(page)
    assert_no_axe_violations(page, axe, f"table at {name}")

    player = Player(page, pointer_only=True)
    actions: list[str] = []
    deadline = time.monotonic() + 240  # a round on a busy machine
    shown = False
    while page.evaluate("() => window.nertz.S.room.phase") not in ("round_over", "match_over"):
        assert time.monotonic() < deadline, f"the round did not end: {actions[-30:]}"
        actions.append(player.act())
        if not shown and player.moves >= 2:
            player.settle()
            assert_fits(page)
            shot(page, artifacts, f"table-{name}")
            shown = True
        page.wait_for_timeout(40)
    assert player.moves >= 1, (actions, player.misses)
    page.wait_for_selector("#results:not(.counting)")
    shot(page, artifacts, f"results-{name}")
    assert_no_axe_violations(page, axe, f"results at {name}")

    # However long the piles get, the table still fits with everything in view.
    press(page, "#hide-results")
    # Nothing covers the foundations of a table looked back on (the call's banner did).
    assert page.evaluate("() => document.querySelector('.banner').textContent") == ""
    page.evaluate(LONG_PILES)
    assert_fits(page)
    shot(page, artifacts, f"long-piles-{name}")


def test_home_join_help_and_replay_screens_pass_axe(server: Any, new_page: Any, axe: str,
                                                     artifacts: Path) -> None:
    demo = Path(__file__).resolve().parents[2] / "examples" / "demo.nertz.json"
    for size in ((1280, 720), (390, 844)):
        page = open_page(new_page, size)
        name = size_id(size)
        page.goto(server.base + "/")
        page.wait_for_selector("#create")
        shot(page, artifacts, f"home-{name}")
        assert_no_axe_violations(page, axe, f"home at {name}")
        r = server.post("/api/rooms", {"rules": "pagat", "seats": 2, "name": "Host"})
        page.goto(f"{server.base}/r/{r['code']}")
        page.wait_for_selector("#join-room")
        shot(page, artifacts, f"join-{name}")
        assert_no_axe_violations(page, axe, f"join at {name}")
        page.fill("#name", "Guest")
        page.click("#join-room")
        page.wait_for_selector("#lobby")
        page.keyboard.press("?")
        page.wait_for_selector("#help")
        shot(page, artifacts, f"help-{name}")
        assert_no_axe_violations(page, axe, f"help at {name}")
        page.goto(server.base + "/")
        page.set_input_files("#replay-file", str(demo))
        page.wait_for_selector("#replay #replay-slider")
        page.click("#replay-next")
        # The viewer's board grows to hold its foundations: none of them over a seat.
        boxes = page.evaluate("""() => {
            const box = (e) => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; };
            return {founds: box(document.querySelector('.replay-board .foundations')),
                    seats: [...document.querySelectorAll('.replay-board .opp')].map(box)};
        }""")
        top, bottom = boxes["founds"]
        assert bottom - top > 40, boxes
        assert all(seat_bottom <= top + 0.5 or seat_top >= bottom - 0.5
                   for seat_top, seat_bottom in boxes["seats"]), boxes
        shot(page, artifacts, f"replay-{name}")
        assert_no_axe_violations(page, axe, f"replay at {name}")


def test_the_lobby_keeps_what_the_player_is_touching(server: Any, new_page: Any) -> None:
    """A passing update (the latency report every few seconds, another player joining) keeps
    the bot level the host picked, the keyboard focus, and a Space press on *Start*."""
    host, guest = new_page(), new_page()
    r = seat_room(server, host, "Ann", rules=QUICK_RULES, seats=3)
    level = "#bot-level-2"
    host.select_option(level, "expert")
    host.focus(level)
    lobby = host.locator("#lobby")
    lobby.evaluate("(el) => { el.dataset.mark = 'before'; }")
    # The latency report arrives and changes nothing in the lobby: nothing is redrawn.
    host.evaluate("() => { window.__lat = window.nertz.S.latency; }")
    host.wait_for_function("() => window.nertz.S.latency !== window.__lat", timeout=30_000)
    assert host.get_attribute("#lobby", "data-mark") == "before"
    # A guest joins: the lobby is drawn again, and keeps the level and the focus.
    guest.goto(f"{server.base}/r/{r['code']}")
    guest.fill("#name", "Ben")
    guest.click("#join-room")
    guest.wait_for_selector("#lobby")
    wait_name(host, "Ben")
    assert host.get_attribute("#lobby", "data-mark") is None  # redrawn
    assert host.input_value(level) == "expert"
    assert host.evaluate("() => document.activeElement.id") == "bot-level-2"
    host.click("#seats .add-bot")
    host.wait_for_function("() => [...document.querySelectorAll('#seats .tag')]"
                           ".some((t) => t.textContent === 'expert bot')")
    # Start keeps the focus through a redraw (the guest gets ready), and Space on it starts
    # the match at once (on key-down: a redraw before the key comes up cannot lose it).
    host.focus("#start")
    guest.click("#ready")
    host.wait_for_function("() => window.nertz.S.room.players.some((p) => p.ready)")
    assert host.evaluate("() => document.activeElement.id") == "start"
    host.keyboard.down(" ")
    host.wait_for_function("() => window.nertz.S.room.phase !== 'lobby'")
    host.keyboard.up(" ")
    wait_table(host)


def test_space_on_a_focused_top_bar_button_presses_it(server: Any, new_page: Any) -> None:
    page = against_a_bot(server, new_page)
    sent = page.evaluate("() => window.nertz.S.sent")
    before = page.get_attribute("#four-colour", "aria-pressed")
    page.click("#four-colour")  # the top bar is drawn again: the button keeps the focus
    assert page.evaluate("() => document.activeElement.id") == "four-colour"
    assert page.get_attribute("#four-colour", "aria-pressed") != before
    page.keyboard.press("Space")
    assert page.get_attribute("#four-colour", "aria-pressed") == before
    assert page.evaluate("() => window.nertz.S.sent") == sent  # the stock was not turned


def test_a_card_dropped_on_the_wrong_work_pile_is_told_in_words(server: Any,
                                                               new_page: Any) -> None:
    page = against_a_bot(server, new_page)
    player = Player(page)
    for _ in range(40):
        st = player.settle()
        assert st is not None
        card = st["nertz"] or st["waste"]
        src = "N" if st["nertz"] else "W"
        wrong = [i for i, p in enumerate(st["work"]) if p["up"] and not fits_work(card, p)]
        if card and wrong:
            break
        page.keyboard.press("Space")
    else:
        pytest.fail("no card that misfits a work pile in 40 turns")
    pile = str(wrong[0] + 1)
    sent = page.evaluate("() => window.nertz.S.sent")
    box = page.locator(f'#me [data-pile="{src}"] .card[data-card="{card}"]').bounding_box()
    target = page.locator(f'#me [data-pile="{pile}"] .stack').bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 10)
    page.mouse.down()
    for k in range(1, 6):
        page.mouse.move(box["x"] + (target["x"] - box["x"]) * k / 5 + box["width"] / 2,
                        box["y"] + (target["y"] + target["height"] - 10 - box["y"]) * k / 5)
    page.mouse.up()
    toast = page.locator("#toasts .toast").last
    text = toast.text_content() or ""
    assert "does not go on the" in text, text
    assert card not in text.split(), text  # the card's name, not its code
    assert page.evaluate("() => window.nertz.S.sent") == sent  # nothing was sent


def test_the_countdown_has_the_middle_to_itself(server: Any, new_page: Any) -> None:
    """The countdown hides the "Foundations start here" note, and the last round's call banner
    is gone when the next round counts down."""
    page = new_page()
    seat_room(server, page, "Ann", rules=QUICK_RULES, seats=2)
    add_bots(page, "beginner", 1)
    page.evaluate("() => { window.nertz.countdownMs = 3000; }")
    page.click("#start")
    page.wait_for_selector(".countdown:not(.hidden)")
    assert page.locator("#foundations .empty-note").count() == 0
    wait_table(page)
    assert page.locator("#foundations .empty-note").count() == 1
    play_to_the_results(page)
    # The sheet's button bar keeps to its foot: nothing after it hides under it (the ratings'
    # heading did, at a laptop's size).
    page.wait_for_selector("#rating-changes h3, #rating-changes p")
    assert page.evaluate("""() => {
        const bar = document.querySelector('#results > .actions');
        const heading = document.querySelector('#rating-changes > *');
        heading.scrollIntoView({block: 'start'});
        const r = heading.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + 4, r.top + 4);
        return !bar.contains(hit) && bar === bar.parentElement.lastElementChild;
    }""")
    page.click("#rematch")  # the server counts a rematch down (3 s)
    # What the page shows, read in the first frame that shows the countdown: reading it after
    # the wait could land after the countdown on a machine that starves the browser.
    shown = page.wait_for_function(
        """() => {
            const c = document.querySelector(".countdown");
            if (!c || c.classList.contains("hidden")) return null;
            return {
                banner: document.querySelector(".banner")?.textContent ?? null,
                calls: document.querySelectorAll(".badge.call").length,
                notes: document.querySelectorAll("#foundations .empty-note").length,
            };
        }""").json_value()
    assert shown == {"banner": "Get ready…", "calls": 0, "notes": 0}


def test_static_files_are_compressed_and_cached_and_head_answers(server: Any) -> None:
    import urllib.request

    req = urllib.request.Request(server.base + "/", method="HEAD")
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200
    req = urllib.request.Request(server.base + "/static/js/table.js",
                                 headers={"accept-encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.headers["content-encoding"] == "gzip"
        assert r.headers["cache-control"] == "no-cache"
        etag = r.headers["etag"]
    req = urllib.request.Request(server.base + "/static/js/table.js",
                                 headers={"if-none-match": etag})
    with pytest.raises(urllib.error.HTTPError) as answer:  # urllib raises on a 304
        urllib.request.urlopen(req, timeout=10)
    assert answer.value.code == 304
    # Starting the server did not print a line per migration.
    assert "alembic" not in server.log.read_text()


def test_sound_is_on_by_default_and_a_mute_is_remembered(server: Any, new_page: Any) -> None:
    page = against_a_bot(server, new_page)
    assert page.get_attribute("#sound", "aria-pressed") == "false"  # not muted
    page.click("#sound")
    assert page.get_attribute("#sound", "aria-pressed") == "true"
    page.reload()
    wait_table(page)
    assert page.get_attribute("#sound", "aria-pressed") == "true"


def test_play_now_goes_from_home_to_a_table_against_bots(server: Any, new_page: Any) -> None:
    page = new_page()
    page.goto(server.base + "/")
    page.click("#play-now")
    wait_table(page)
    names = page.locator(".opp .nm").all_text_contents()
    assert len(names) == 2 and all("bot" in n for n in names), names


def test_rules_are_named_in_words_and_code_names_kept_to_the_details(server: Any,
                                                                       new_page: Any) -> None:
    page = new_page()
    page.goto(server.base + "/")
    page.wait_for_selector("#create")
    assert page.text_content('#preset option[value="pagat"]') == "Pounce (pagat.com)"
    page.click("#options summary")
    options = page.text_content("#options") or ""
    assert "Work piles" in options and "work_piles" not in options
    page.fill('input[name="nertz_pile_size"]', "3")
    page.dispatch_event('input[name="nertz_pile_size"]', "input")
    page.click("#rules-details summary")
    codes = page.text_content("#rules-codes") or ""
    assert "preset: pagat (rulebook 003)" in codes and "nertz_pile_size: 3" in codes


def test_the_page_is_installable_and_starts_offline(server: Any, new_page: Any) -> None:
    """A web app manifest, and a service worker that keeps the page's own files: once loaded,
    the page starts again with the network gone."""
    web = Path(__file__).resolve().parents[2] / "nertz" / "web"
    worker = (web / "sw.js").read_text()
    for module in (web / "js").glob("*.js"):  # every script the page loads is kept
        assert f"/static/js/{module.name}" in worker, module.name
    page = new_page()
    page.goto(server.base + "/")
    manifest = page.evaluate("""async () => {
      const href = document.querySelector('link[rel=manifest]').href;
      return (await fetch(href)).json();
    }""")
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    assert {"192x192", "512x512"} <= {i["sizes"] for i in manifest["icons"]}
    page.evaluate("() => navigator.serviceWorker.ready")
    # The worker claims the open page once it has kept the files.
    page.wait_for_function("() => !!navigator.serviceWorker.controller")
    page.context.set_offline(True)
    try:
        page.reload()
        page.wait_for_selector("#home #name")
        assert page.evaluate("() => !!navigator.serviceWorker.controller")
    finally:
        page.context.set_offline(False)


def test_a_seat_whose_player_went_away_is_marked_with_a_countdown(server: Any,
                                                                   new_page: Any) -> None:
    host, guest = new_page(), new_page()
    r = seat_room(server, host, "Ann", rules={"preset": "pagat"}, seats=2)
    guest.goto(f"{server.base}/r/{r['code']}")
    guest.fill("#name", "Ben")
    guest.click("#join-room")
    guest.wait_for_selector("#lobby")
    wait_name(host, "Ben")
    host.click("#start")
    wait_table(host)
    mark = '.opp[data-seat="1"] .away'
    assert host.locator(mark).is_hidden()
    guest.close()  # Ben's page goes: his socket closes
    # The five minutes' countdown, however long a busy machine took to show it.
    counting = (f"() => /^away: seat free in [45]:[0-5][0-9]$/.test("
                f"(document.querySelector('{mark}') || {{}}).textContent || '')")
    host.wait_for_function(counting)
    ben = next(p for p in server.get(f"/api/rooms/{r['code']}")["players"] if p["name"] == "Ben")
    assert ben["away_until"] is not None

    def shows_the_servers_deadline() -> None:
        left = host.evaluate("(until) => until - Date.now()", ben["away_until"])
        shown = host.text_content(mark) or ""
        minutes, seconds = shown.rsplit(" ", 1)[1].split(":")
        assert 0 < left <= 300_000 and abs(int(minutes) * 60 + int(seconds) - left / 1000) < 5

    shows_the_servers_deadline()
    # The deadline is the server's: a page opened after Ben went counts to the same moment.
    host.reload()
    wait_table(host)
    host.wait_for_function(counting)
    shows_the_servers_deadline()


@pytest.mark.parametrize("size", [(1280, 720), (390, 844)], ids=size_id)
def test_a_long_name_stays_beside_its_seat_mark(size: tuple[int, int], server: Any,
                                               new_page: Any) -> None:
    page = open_page(new_page, size)
    seat_room(server, page, LONG_NAME, rules=QUICK_RULES, seats=2)
    beside = """() => {
      const li = document.querySelector('#seats li[data-seat="0"]');
      const mark = li.querySelector('.owner').getBoundingClientRect();
      const name = li.querySelector('.player-name').getBoundingClientRect();
      return name.top < mark.bottom && name.left > mark.right;
    }"""
    assert page.evaluate(beside)
    add_bots(page, "beginner", 1)
    page.click("#start")
    wait_table(page)
    head = page.locator("#me .mehead").bounding_box()
    mark = page.locator("#me .mehead .owner").bounding_box()
    assert head is not None and mark is not None and head["height"] < 2 * mark["height"] + 16


def test_a_newcomer_reads_how_to_play_in_the_rooms_own_rules(server: Any, new_page: Any) -> None:
    # Someone invited by a link may never have played: the join page and the help say what
    # the game is, with this room's numbers (one card a turn, a penalty of one), and count a
    # team room's places rather than its seats.
    r = server.post("/api/rooms", {"rules": {"preset": "pagat", "turn_count": 1,
                                             "nertz_penalty": 1, "teams": "shared"},
                                   "seats": 2, "name": "Host"})
    page = new_page()
    page.goto(f"{server.base}/r/{r['code']}")
    page.wait_for_selector("#join-room")
    assert "1 of 4 places taken" in (page.text_content("#join-screen") or "")
    how = page.text_content("#join-how") or ""
    assert "one card at a time" in how and "costs 1 point." in how, how
    page.fill("#name", "Guest")
    page.click("#join-room")
    page.wait_for_selector("#lobby")
    page.keyboard.press("?")
    page.wait_for_selector("#help")
    assert "empty your Nertz pile first" in (page.text_content("#help") or "")


def test_home_errors_show_beside_what_caused_them(server: Any, new_page: Any,
                                                  tmp_path: Path) -> None:
    # On a tablet the page's top is a screen away from the create button and the replay
    # field: each refusal shows in view, beside its control, in words.
    page = open_page(new_page, (820, 1180))
    page.goto(server.base + "/")
    page.wait_for_selector("#create")
    page.fill("#name", "Ann")
    page.click("#options summary")
    page.fill("#seats", "9")
    page.click("#create")
    page.wait_for_selector("#create-error:not(:empty)")
    assert "seats" in (page.text_content("#create-error") or "")
    assert page.locator("#create-error").is_visible()
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    page.set_input_files("#replay-file", str(bad))
    page.wait_for_selector("#replay-error:not(:empty)")
    text = page.text_content("#replay-error") or ""
    assert text.startswith("That file is not a replay this page can show"), text
    assert page.evaluate("""() => {
        const r = document.querySelector('#replay-error').getBoundingClientRect();
        return r.top >= 0 && r.bottom <= innerHeight;
    }""")


CARD_SIZES = """() => {
  const width = (sel) => {
    const e = document.querySelector(sel);
    return e ? e.getBoundingClientRect().width : null;
  };
  const middle = document.querySelector('#table-screen .middle').getBoundingClientRect();
  const count = document.querySelector('#me [data-pile="N"] .count');
  const name = document.querySelector('#me [data-pile="N"] .pile-label');
  return {own: width('#me [data-pile="N"] .card'), seats: width('.opp [data-pile="N"] .card'),
          middle: middle.height, h: innerHeight,
          badge_over_name: count
            && count.getBoundingClientRect().bottom - name.getBoundingClientRect().top};
}"""
"""The width of one's own cards and of the other seats' (the Nertz piles'), how tall the
table's middle is (the felt left over around the foundations), and by how much the Nertz pile's
count overlaps the pile's name under it."""

NEXT_FRAMES = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
"""Resolves once the page has drawn after a change of the viewport (its resize handlers ran)."""


def test_cards_grow_with_the_screen_and_a_spectator_sees_them_large(server: Any,
                                                                     new_page: Any) -> None:
    """A large screen gets large cards (they had a cap in pixels, and a 1920x1080 table was
    half empty felt), and a spectator, who has no tableau of their own, gets the seats laid out
    over the whole screen with cards near a player's own size (they had the small cards a
    player sees of the others). Everything still fits, however long the piles."""
    player = open_page(new_page, (1920, 1080))
    r = seat_room(server, player, "Ann", rules={"preset": "pagat"}, seats=4)
    add_bots(player, "beginner", 3)
    spectator = open_page(new_page, (1920, 1080))
    spectator.goto(f"{server.base}/r/{r['code']}")
    spectator.fill("#name", "Sam")
    spectator.click("#watch-only")
    spectator.wait_for_selector("#lobby")
    player.click("#start")
    wait_table(player)
    spectator.wait_for_selector('#table-screen[data-phase="playing"] .opp [data-pile="N"] .card')
    sizes = {}
    for size in ((1920, 1080), (1366, 768), (1024, 768), (768, 1024), (1024, 1366)):
        for page in (player, spectator):
            page.set_viewport_size({"width": size[0], "height": size[1]})
            page.evaluate(NEXT_FRAMES)
        mine, watched = player.evaluate(CARD_SIZES), spectator.evaluate(CARD_SIZES)
        sizes[size] = mine["own"]
        # Watching is about as legible as playing: the seats' cards near one's own size, and
        # far larger than the other seats' cards a player sees beside their own tableau.
        assert watched["seats"] >= 0.7 * mine["own"], (size, mine, watched)
        assert watched["seats"] >= 1.5 * mine["seats"], (size, mine, watched)
        if size[0] > size[1]:
            # The player's table uses the height it has: what is left around the foundations
            # is under a third of the screen.
            assert mine["middle"] <= 0.32 * mine["h"], (size, mine)
        else:
            # Upright, the width is the limit: seven cards and their gaps take most of it.
            assert mine["own"] >= 0.1 * size[0], (size, mine)
        # The count's badge grows with the card: the pile's name keeps below it.
        assert mine["badge_over_name"] <= 0, (size, mine)
        for page in (player, spectator):
            page.evaluate(LONG_PILES)
            assert_fits(page)
    # Cards scale with the screen: 1920x1080 has 1.4 times the height of 1366x768.
    assert sizes[(1920, 1080)] >= 1.3 * sizes[(1366, 768)], sizes


COVERED_LABELS = """(selector) => {
  const labels = [...document.querySelectorAll('.opp .name > *, #me .mehead > *')]
    .map((e) => [e, e.getBoundingClientRect()]).filter(([, r]) => r.width && r.height);
  const out = [];
  for (const pop of document.querySelectorAll(selector)) {
    const p = pop.getBoundingClientRect();
    if (!p.width || !p.height) continue;
    if (p.left < -0.5 || p.top < -0.5 || p.right > innerWidth + 0.5 || p.bottom > innerHeight + 0.5)
      out.push(`"${pop.textContent}" is off the screen`);
    for (const [e, r] of labels) {
      const w = Math.min(p.right, r.right) - Math.max(p.left, r.left);
      const h = Math.min(p.bottom, r.bottom) - Math.max(p.top, r.top);
      if (w > 0.5 && h > 0.5) {
        const seat = e.closest('[data-seat]');
        const at = seat ? seat.dataset.seat : '?';
        out.push(`"${pop.textContent}" covers "${e.textContent}" of seat ${at}`);
      }
    }
  }
  return out;
}"""
"""What the messages `selector` finds cover of the seats' labels (each seat's mark, name,
round trip and badges), or leave off the screen."""

NOTE_ON_EACH_CARD = """async () => {
  const {note} = await import('/static/js/dom.js');
  const tops = [...document.querySelectorAll('#me [data-pile]')]
    .map((p) => [...p.querySelectorAll('.card[data-card]')].pop()).filter(Boolean);
  const found = [];
  window.__covered = [];
  for (const card of tops) {
    note(card, 'No place for the 7 of hearts right now');
    const b = document.querySelector('.note-bubble').getBoundingClientRect();
    found.push({card: card.dataset.card, box: [b.left, b.top, b.right, b.bottom].map(Math.round)});
    window.__covered.push(
      ...window.__coverCheck('.note-bubble').map((c) => `by ${card.dataset.card}: ${c}`));
  }
  return found;
}"""
"""The note a card with no place gets, shown by each of one's own top cards in turn (as a tap
on it shows it): what each covered lands in ``window.__covered``."""


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080), (1024, 768), (768, 1024),
                                  (390, 844), (844, 390)], ids=size_id)
def test_passing_messages_cover_no_seats_name(size: tuple[int, int], server: Any,
                                              new_page: Any) -> None:
    """Messages at the table (three at once), the note by a card that has no place, and a
    reaction's bubble cover nobody's name: they sat over the other seats' names at the top of
    the screen, over one's own name above the Nertz pile, and over the name they belonged to."""
    page = open_page(new_page, size)
    seat_room(server, page, LONG_NAME, rules={"preset": "pagat"}, seats=4)
    add_bots(page, "beginner", 3)
    page.click("#start")
    wait_table(page)
    page.evaluate(f"() => {{ window.__coverCheck = {COVERED_LABELS}; }}")
    # Three different messages at once (a screen with no room for them all keeps the newest).
    for key, words in (("c", "Empty your Nertz pile"), ("Enter", "Pick up a card first"),
                       ("w", "Your waste is empty")):
        page.keyboard.press(key)
        page.wait_for_function("(w) => [...document.querySelectorAll('#toasts .toast')]"
                               ".some((t) => t.textContent.startsWith(w))", arg=words)
        assert page.evaluate(COVERED_LABELS, "#toasts .toast") == []
    notes = page.evaluate(NOTE_ON_EACH_CARD)
    assert len(notes) >= 5, notes  # the Nertz pile's top and every work pile's
    assert page.evaluate("() => window.__covered") == [], notes
    page.click("#react")
    page.click('#emote-menu .emote[data-emote="wave"]')
    page.wait_for_selector('.emote-bubble[data-seat="0"]')
    # Where it is once it has popped up (it grows from smaller for a tenth of its time).
    page.wait_for_function("() => document.querySelector('.emote-bubble').getAnimations()"
                           ".every((a) => a.currentTime > 400)")
    assert page.evaluate(COVERED_LABELS, ".emote-bubble") == []


def test_the_lobby_says_what_its_parts_mean(server: Any, new_page: Any, axe: str) -> None:
    """What a newcomer met in the lobby without a word on it: empty seats (waiting for what?),
    an "I'm ready" on the host's own page (ready for whom?), bare rating numbers, and the help
    behind a ? that nothing mentioned."""
    host, guest = new_page(), new_page()
    r = seat_room(server, host, "Ann", rules=QUICK_RULES, seats=3)
    assert "empty: send a friend the link, or add a bot" in (host.text_content("#seats") or "")
    assert host.locator("#ready").count() == 0  # the host starts the match: nobody to tell
    # How to play, from a button the keyboard reaches; closing it gives the focus back.
    host.focus("#lobby-help")
    host.keyboard.press("Enter")
    host.wait_for_selector("#help")
    assert "The goal:" in (host.text_content("#help") or "")
    host.keyboard.press("Escape")
    host.wait_for_selector("#help", state="detached")
    assert host.evaluate("() => document.activeElement.id") == "lobby-help"
    host.wait_for_selector("#ratings-how")
    assert "A new player starts at 1000" in (host.text_content("#ratings-how") or "")
    guest.goto(f"{server.base}/r/{r['code']}")
    guest.fill("#name", "Ben")
    guest.click("#join-room")
    guest.wait_for_selector("#lobby")
    assert "empty: waiting for a player" in (guest.text_content("#seats") or "")
    assert guest.get_attribute("#ready", "aria-describedby") == "ready-how"
    assert "shows the host you are set" in (guest.text_content("#ready-how") or "")
    for page, who in ((host, "host"), (guest, "guest")):
        assert_no_axe_violations(page, axe, f"lobby of the {who}")


IN_SHEET = "(sel) => !!document.activeElement && !!document.activeElement.closest(sel)"


def test_tab_stays_in_an_open_sheet(server: Any, new_page: Any) -> None:
    # The help and the results are modal dialogs: Tab walked out of the help into the table
    # behind it (the top bar, the piles), and a keyboard player lost the dialog.
    page = against_a_bot(server, new_page)
    page.keyboard.press("?")
    page.wait_for_selector("#help")
    assert page.evaluate(IN_SHEET, "#help")  # its title
    for key in ["Tab"] * 6 + ["Shift+Tab"] * 6:
        page.keyboard.press(key)
        assert page.evaluate(IN_SHEET, "#help"), f"{key} left the help for " + page.evaluate(
            "() => document.activeElement.outerHTML.slice(0, 80)")
    page.keyboard.press("Escape")
    page.wait_for_selector("#help", state="detached")


def test_a_room_link_that_fails_says_why_and_offers_a_retry(server: Any, new_page: Any) -> None:
    # A link whose room could not be fetched said "No such room" whatever the cause: a player
    # whose connection dropped for a moment was told their friend's room did not exist.
    page = new_page()
    page.goto(server.base + "/r/NOSUCH")
    page.wait_for_selector("#room-error")
    assert page.text_content("#room-error h1") == "No such room"
    assert "No room has the code NOSUCH" in (page.text_content("#room-error") or "")
    assert page.locator("#room-retry").count() == 0  # nothing to try again
    # A room that has closed (nobody was in it) cannot be tried again either.
    page.route("**/api/rooms/SHUT", lambda route: route.fulfill(
        status=410, content_type="application/json",
        body='{"error": "room SHUT has closed (nobody was in it)"}'))
    page.goto(server.base + "/r/SHUT")
    page.wait_for_selector("#room-error")
    assert page.text_content("#room-error h1") == "This room has closed"
    assert "has closed (nobody was in it)" in (page.text_content("#room-error") or "")
    assert page.locator("#room-retry").count() == 0
    r = server.post("/api/rooms", {"rules": "pagat", "seats": 2, "name": "Host"})
    page.route("**/api/rooms/*", lambda route: route.abort())
    page.goto(f"{server.base}/r/{r['code']}")
    page.wait_for_selector("#room-error")
    assert page.text_content("#room-error h1") == "Cannot reach the server"
    page.unroute("**/api/rooms/*")
    page.click("#room-retry")
    page.wait_for_selector("#join-room")


TOAST_OVER_SHEET = """() => {
  const t = document.querySelector('#toasts .toast').getBoundingClientRect();
  return [...document.querySelectorAll('.overlay .sheet :is(h2, h3, th, button, a)')]
    .filter((e) => {
      const b = e.getBoundingClientRect();
      return b.width && Math.min(t.right, b.right) > Math.max(t.left, b.left)
        && Math.min(t.bottom, b.bottom) > Math.max(t.top, b.top);
    }).map((e) => e.textContent.trim());
}"""
"""The headings and buttons of the open sheet that the first passing message covers."""


def test_a_message_keeps_off_the_results_headings(server: Any, new_page: Any) -> None:
    # The call's message shows just before the results open, and it stayed where the table
    # had room for it: over the results' heading and its columns' names.
    page = new_page(viewport={"width": 1280, "height": 800})
    seat_room(server, page, "Ann", rules=QUICK_RULES, seats=2)
    add_bots(page, "beginner", 1)
    page.click("#start")
    wait_table(page)
    play_to_the_results(page)
    page.click("#hide-results")
    page.wait_for_selector("#results", state="detached")
    # A message at the table, as the call's is, then the results over it.
    page.evaluate("""async () => {
        const dom = await import('/static/js/dom.js');
        dom.toast('Ann: Nertz!', 'good', 60000);
    }""")
    page.click("#show-results")
    page.wait_for_selector("#results:not(.counting)")
    # The sheet's later parts load after it opens, and move its headings (it is centred).
    page.wait_for_selector("#rating-changes h3, #rating-changes p")
    # (An analysis the server would not make just now leaves its slot empty.)
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_selector(".analysis-slot > *")
    page.evaluate(NEXT_FRAMES)  # the sheet's new size seen, the message placed again
    assert page.evaluate(TOAST_OVER_SHEET) == []


def test_escape_closes_the_menu_and_the_reactions(server: Any, new_page: Any) -> None:
    # The phone's menu and the reactions' set stayed open on Esc (only a tap elsewhere shut
    # the menu): a keyboard on a phone or tablet had no way out but a tap.
    page = open_page(new_page, (390, 844))
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=2)
    add_bots(page, "beginner", 1, tap=True)
    page.tap("#start")
    wait_table(page)
    page.tap("#menu-btn")
    page.wait_for_selector("#tools.open")
    page.keyboard.press("Escape")
    page.wait_for_selector("#tools.open", state="detached")
    assert page.evaluate("() => document.activeElement.id") == "menu-btn"
    page.tap("#react")
    page.wait_for_selector("#emote-menu", state="visible")
    page.keyboard.press("Escape")
    page.wait_for_selector("#emote-menu", state="hidden")
    assert page.evaluate("() => document.activeElement.id") == "react"
    assert page.get_attribute("#react", "aria-expanded") == "false"


LOOK = """(sel) => {
  const b = document.querySelector(sel);
  return [getComputedStyle(b).backgroundColor, getComputedStyle(b, '::before').content];
}"""
"""How a button looks: its background and what is drawn before its words."""


def test_a_toggle_that_is_on_looks_pressed(server: Any, new_page: Any, axe: str) -> None:
    # Mute looked the same on and off: a press showed nothing, and nothing said the sound was
    # off (aria-pressed told screen readers only).
    page = against_a_bot(server, new_page)
    off = page.evaluate(LOOK, "#sound")
    assert page.evaluate(LOOK, "#four-colour") == off
    page.click("#sound")
    page.wait_for_selector('#sound[aria-pressed="true"]')
    on = page.evaluate(LOOK, "#sound")
    assert on[0] != off[0], (on, off)
    assert "\u2713" in on[1], on
    assert page.evaluate(LOOK, "#four-colour") == off  # the other, still off, unchanged
    assert_no_axe_violations(page, axe, "the table with Mute pressed")
    page.click("#sound")
    page.wait_for_selector('#sound[aria-pressed="false"]')
    assert page.evaluate(LOOK, "#sound") == off


ACTION_ENDS = """() => {
  const row = document.querySelector('#me .actions'), css = getComputedStyle(row);
  const a = row.getBoundingClientRect();
  const turn = document.querySelector('#turn').getBoundingClientRect();
  const stuck = document.querySelector('#stuck').getBoundingClientRect();
  return {turn: turn.left - a.left - parseFloat(css.paddingLeft),
          stuck: a.right - parseFloat(css.paddingRight) - stuck.right,
          rows: Math.abs(turn.top - stuck.top)};
}"""
"""How far *Turn* is from its row's start and *I'm stuck* from its end (px), and how far apart
their tops are."""


def test_turn_and_stuck_sit_at_the_two_ends_of_a_touch_tablets_row(server: Any,
                                                                    new_page: Any) -> None:
    # On a tablet held upright the tip beside the buttons took the row's end: I'm stuck sat
    # mid-row, the tip past it, where a thumb looks for it at the edge.
    page = new_page(viewport={"width": 768, "height": 1024}, has_touch=True, is_mobile=True)
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=2)
    add_bots(page, "beginner", 1, tap=True)
    page.tap("#start")
    wait_table(page)
    ends = page.evaluate(ACTION_ENDS)
    assert ends["rows"] < 1 and abs(ends["turn"]) < 1 and abs(ends["stuck"]) < 1, ends
    assert_fits(page)
