"""What a newcomer's review of the page in a real browser found (at 1280x800, 390x844, 844x390,
768x1024 and 1024x1366): races told truthfully (a card most of a second late was late, not
beaten in a race), a watcher of a full room told how to get a seat and the host able to seat
them, the match's scores on a phone during play, messages off a phone's full-height dialog,
the sideways phone's menu on one line a setting, a changed option read cleanly, the lobby's
fill button clear of the seats, the service worker registered once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from page_checks import assert_no_axe_violations, shot
from test_web_game import add_bots, seat_room, wait_name, wait_table
from test_web_screens import NEXT_FRAMES, QUICK_RULES, open_page, play_to_the_results

TOASTS = "() => [...document.querySelectorAll('#toasts .toast')].map((t) => t.textContent)"
"""The messages on screen now (each goes after about 3 s, and a fourth pushes out the first)."""

TOAST_LOG = """(() => {
  window.__toasts = [];
  const watch = () => {
    const box = document.getElementById('toasts');
    if (!box) return;
    new MutationObserver((records) => {
      for (const r of records) {
        for (const n of r.addedNodes) {
          if (n.classList && n.classList.contains('toast')) window.__toasts.push(n.textContent);
        }
      }
    }).observe(box, {childList: true});
  };
  document.addEventListener('DOMContentLoaded', watch);
})();"""
"""Installed with ``page.add_init_script``: records every message shown from the page's load
(``window.__toasts``), so that an assertion cannot pass because a message had already gone."""

SEEN = "() => [...(window.__toasts || []), ...(" + TOASTS + ")()]"
"""Every message recorded (TOAST_LOG), and those on screen."""


SEND_LOG = """() => {
  const real = window.nertz.send;
  window.__sent = [];
  window.nertz.send = (m) => { window.__sent.push(m); return real(m); };
}"""
"""Records what the page sends from then on (in `window.__sent`)."""


TONE_LOG = """(() => {
  // Every oscillator frequency the page sets (its sounds are made of them): window.__tones.
  const d = Object.getOwnPropertyDescriptor(AudioParam.prototype, 'value');
  window.__tones = [];
  Object.defineProperty(AudioParam.prototype, 'value', {configurable: true,
    get() { return d.get.call(this); },
    set(v) { window.__tones.push(v); d.set.call(this, v); }});
})()"""
"""Records the page's tones (installed with ``add_init_script``)."""


def come_to_watch(page: Any, server: Any, code: str, name: str) -> Any:
    """``page`` joins room ``code`` by its link as a watcher called ``name``; returns it."""
    page.goto(f"{server.base}/r/{code}")
    page.fill("#name", name)
    page.click("#watch-only")
    page.wait_for_selector("#watch-how")
    return page


def wait_toast(page: Any, text: str) -> None:
    page.wait_for_function(f"() => ({SEEN})().includes({json.dumps(text)})")


def test_a_close_race_is_announced_and_a_late_card_is_told_it_was_late(
        server: Any, new_page: Any, artifacts: Path) -> None:
    # "You beat Casual bot 3 by 799 ms": a card most of a second later was no race, it was
    # late. The server's messages stay as they are (docs/protocol.md); the page words them:
    # within a reaction time (250 ms) a race, for all to see; beyond it, only the late player
    # hears, that they were too late, the margin in seconds.
    page = new_page(viewport={"width": 1280, "height": 800})
    sockets: list[Any] = []

    def through(ws: Any) -> None:  # the room's socket, passed through; the test adds messages
        ws.connect_to_server()
        sockets.append(ws)

    page.route_web_socket("**/ws/**", through)
    page.add_init_script(TOAST_LOG)
    page.add_init_script(TONE_LOG)
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=3)
    add_bots(page, "beginner", 2)
    page.click("#start")
    wait_table(page)
    assert page.evaluate("() => window.nertz.S.you.seat") == 0
    ws = sockets[-1]

    def say(**m: Any) -> None:
        ws.send(json.dumps(m))

    race = {"foundation": 3, "card": "5H"}
    # Late: neither the winner nor the onlookers hear of a "race"; then a close one, which
    # both hear (messages are handled in order: the late ones were seen first).
    say(type="race_won", loser=1, loser_name="Bea", margin_ms=799, **race)
    say(type="race", winner=1, winner_name="Bea", loser=2, loser_name="Cy", margin_ms=1234,
        **race)
    say(type="race_won", loser=1, loser_name="Bea", margin_ms=12, **race)
    say(type="race", winner=1, winner_name="Bea", loser=2, loser_name="Cy", margin_ms=40, **race)
    wait_toast(page, "You beat Bea by 12 ms")
    wait_toast(page, "Bea beat Cy to foundation 3 by 40 ms")
    shown = page.evaluate("() => window.__toasts")  # all of them, gone or not
    assert "You beat Bea by 12 ms" in shown, shown  # the record works
    assert not any("799" in t or "0.8 s" in t or "1234" in t or "1.2 s" in t for t in shown), shown
    # The loser of a late card is told it was late, in seconds; of a close race, by whom and
    # by how much; a margin the server could not measure still reads as words.
    page.evaluate("() => { window.__tones = []; }")
    say(type="rejected", id="x1", move="N-F3", error="lost the race",
        race={"winner": 1, "winner_name": "Bea", "loser": 0, "margin_ms": 799, **race})
    wait_toast(page, "Too late: Bea's 5 of hearts reached foundation 3 first"
                     " (0.8 s before yours)")
    shot(page, artifacts, "race-late-1280x800")
    # A late card sounds like any refused play (196 Hz), not like a lost race (392, 294);
    # the bots' plays sound meanwhile too (440), so only these tones are compared.
    tones = "() => window.__tones.filter((f) => [196, 392, 294].includes(f))"
    assert page.evaluate(tones) == [196]
    say(type="rejected", id="x2", move="N-F3", error="lost the race",
        race={"winner": 1, "winner_name": "Bea", "loser": 0, "margin_ms": 40, **race})
    wait_toast(page, "Beaten by Bea by 40 ms")
    assert page.evaluate(tones) == [196, 392, 294]
    say(type="rejected", id="x3", move="N-F3", error="lost the race",
        race={"winner": 1, "winner_name": "Bea", "loser": 0, "margin_ms": None, **race})
    wait_toast(page, "Beaten to it by Bea")
    say(type="race_won", loser=1, loser_name="Bea", margin_ms=None, **race)
    wait_toast(page, "You beat Bea to it")
    say(type="race", winner=1, winner_name="Bea", loser=2, loser_name="Cy", margin_ms=None,
        **race)
    wait_toast(page, "Bea beat Cy to foundation 3")
    seen = page.evaluate("() => window.__toasts")
    assert not any("null" in t or "undefined" in t for t in seen), seen
    # The words themselves, at the threshold and for long margins.
    words = page.evaluate("""async () => {
        const n = await import('/static/js/names.js');
        return [n.CLOSE_RACE_MS, n.closeRace(250), n.closeRace(251), n.closeRace(null),
                ...[0, 250, 799, 1234, 12345].map(n.gapWords)];
    }""")
    assert words == [250, True, False, True, "0 ms", "250 ms", "0.8 s", "1.2 s", "12 s"], words


def test_a_replay_tells_a_late_card_from_a_race(server: Any, new_page: Any) -> None:
    # The viewer and the analysis worded every lost foundation play as a race "by 799 ms".
    src = Path(__file__).resolve().parents[1] / "golden_analysis" / "01_missed_and_races.nertz.json"
    data = json.loads(src.read_text())
    # Ben's 3 of spades, refused 100 ms after Ann's: made 800 ms.
    late = [m for m in data["rounds"][0]["moves"] if m["t"] == 9100 and m["p"] == 1]
    assert len(late) == 1, "the golden file's 100 ms race moved"
    late[0]["t"] = 9800
    page = new_page()
    page.goto(server.base + "/")
    page.set_input_files("#replay-file", files=[{
        "name": "late.nertz.json", "mimeType": "application/json",
        "buffer": json.dumps(data).encode()}])
    page.wait_for_selector("#replay-analysis .analysis-jump")
    ann = page.text_content('#replay-analysis .analysis-seat[data-seat="0"]') or ""
    # The counts are the log's (a race won is won, whatever its margin: "Races won 0" had
    # disagreed with `nertz analyse` and the player page); only a margin's words change.
    want = "Races won 1 (beat Ben, whose card was 0.8 s late), lost 1 (to Ben by 10 ms)."
    assert want in ann, ann
    ben = page.text_content('#replay-analysis .analysis-seat[data-seat="1"]') or ""
    assert "Races won 1 (beat Ann by 10 ms), lost 1 (to Ann, 0.8 s too late)." in ben, ben
    # At the winning play, the viewer says the card came too late, not that it lost a race.
    for _ in range(10):
        said = page.text_content("#replay-step") or ""
        if "0.8 s" in said:
            break
        page.keyboard.press("ArrowRight")
    assert "Ben's 3 of spades came 0.8 s after Ann's: too late for foundation 1" in said, said


PILL_CONTRAST = """(sel) => {
  // The words' contrast on a pill (a translucent dark ground) over the felt, at its lightest
  // and darkest: the lower of the two (WCAG's ratio). axe leaves it undecided (the felt is a
  // gradient), so it is measured here.
  const rgba = (c) => c.match(/[\\d.]+/g).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const el = document.querySelector(sel);
  const [tr, tg, tb] = rgba(getComputedStyle(el).color);
  const [br, bg, bb, ba = 1] = rgba(getComputedStyle(el).backgroundColor);
  const ratios = [[0x1d, 0x5b, 0x3a], [0x15, 0x4a, 0x2e]].map((felt) => {
    const ground = [br, bg, bb].map((v, i) => v * ba + felt[i] * (1 - ba));
    const [a, b] = [lum([tr, tg, tb]), lum(ground)].sort((x, y) => y - x);
    return (a + 0.05) / (b + 0.05);
  });
  return Math.min(...ratios);
}"""
"""The contrast of the words on a pill drawn over the felt."""


def test_a_watcher_of_a_full_room_is_told_how_to_get_a_seat(server: Any, new_page: Any,
                                                             axe: str, artifacts: Path) -> None:
    # A spectator of a full room was not told that only the host can seat them, and only
    # between matches; the host saw a "Watching: Sam" line with no way to seat Sam.
    host = new_page(viewport={"width": 1280, "height": 800})
    r = seat_room(server, host, "Ann", rules={"preset": "pagat"}, seats=2)
    add_bots(host, "beginner", 1)
    sam = open_page(new_page, (390, 844))
    sam.goto(f"{server.base}/r/{r['code']}")
    sam.wait_for_selector("#watch-only")
    said = sam.text_content("#join-screen") or ""
    assert "Every seat is taken" in said and "the host" in said, said
    assert sam.locator("#join-room").count() == 0  # no seat to take: watching, said so
    assert sam.text_content("#watch-only") == "Join to watch"
    sam.fill("#name", "Sam")
    sam.tap("#watch-only")
    sam.wait_for_selector("#lobby #watch-how")
    how = sam.text_content("#watch-how") or ""
    assert "You are watching: every seat is taken." in how, how
    assert "Only the host, Ann, can give you a seat, between matches: ask them." in how, how
    shot(sam, artifacts, "watcher-lobby-390x844")
    # The note is with the seats, where the watcher looks for one.
    assert sam.evaluate("() => !!document.querySelector('#seats ~ #watch-how')")
    # The host sees the watcher, and seats them in the bot's place in one pick.
    host.wait_for_selector("#watchers li[data-player]")
    assert "Sam" in (host.text_content("#watchers") or "")
    shot(host, artifacts, "host-watchers-1280x800")
    assert_no_axe_violations(host, axe, "the host's lobby with a watcher")
    assert_no_axe_violations(sam, axe, "a watcher's lobby")
    pick = host.locator("#watchers select")
    options = pick.locator("option").all_text_contents()
    assert any("seat 2" in o and "leaves" in o for o in options), options
    # A person's seat is not offered (the host would go to watching): they are moved first.
    assert not any("seat 1" in o for o in options), options
    # Choosing does nothing by itself: an arrow key on the closed select (Chromium fires
    # `change` at once) had moved the host to watching.
    host.evaluate(SEND_LOG)
    pick.focus()
    host.keyboard.press("ArrowDown")
    host.wait_for_function("() => document.querySelector('#watchers select').value !== ''")
    assert host.evaluate("() => window.__sent") == []
    assert host.evaluate("() => window.nertz.S.you.seat") == 0
    assert "Sam" in (host.text_content("#watchers") or "")
    # The Seat button gives the chosen place; the keyboard goes to Sam's row in the seats.
    host.click("#watchers button:text-is('Seat')")
    wait_name(host, "Sam")
    host.wait_for_function("() => document.activeElement"
                           " && document.activeElement.closest('#seats li')"
                           " && document.activeElement.closest('li').textContent.includes('Sam')")
    kinds = [m["type"] for m in host.evaluate("() => window.__sent")]
    assert kinds == ["kick", "assign"], kinds
    sam.wait_for_function("() => window.nertz.S.you.seat === 1")
    sam.wait_for_selector("#watch-how", state="detached")
    assert host.locator("#watchers").count() == 0
    # At the table, a watcher's mark says the same.
    guest = come_to_watch(open_page(new_page, (1280, 800)), server, r["code"], "Tia")
    host.click("#start")
    wait_table(host)
    guest.click("#watching")
    wait_toast(guest, "You are watching."
               " Only the host can give you a seat, between matches: ask them.")
    # The mark is a button drawn as a pill: it had the buttons' dark words on the dark pill.
    guest.wait_for_selector('#table-screen[data-phase="playing"]')
    assert_no_axe_violations(guest, axe, "a watcher's table")
    for pill in ("#watching", "#totals", "#round-no"):
        ratio = guest.evaluate(PILL_CONTRAST, pill)
        assert ratio >= 4.5, f"{pill}: contrast {ratio:.1f}"


def test_a_watcher_who_left_is_not_seated_after_the_bot_goes(server: Any, new_page: Any) -> None:
    # The page sent `kick` (the bot) and `assign` (the watcher) at once: with the watcher gone
    # meanwhile, the assign was refused ("Nobody with id '…' is in this room"). It now waits
    # for the room to show the place free, and sends nothing for a watcher no longer there.
    host = new_page(viewport={"width": 1280, "height": 800})
    hold: list[bool] = [False]
    held: list[Any] = []
    sockets: list[Any] = []

    def through(ws: Any) -> None:  # the server's messages to the page, held on demand
        server_ws = ws.connect_to_server()
        server_ws.on_message(lambda m: held.append(m) if hold[0] else ws.send(m))
        ws.on_message(lambda m: server_ws.send(m))
        sockets.append(ws)

    host.route_web_socket("**/ws/**", through)
    r = seat_room(server, host, "Ann", rules={"preset": "pagat"}, seats=2)
    add_bots(host, "beginner", 1)
    come_to_watch(new_page(), server, r["code"], "Sam")
    host.wait_for_selector("#watchers li[data-player]")
    sam_id = host.evaluate("() => window.nertz.S.room.players.find((p) => p.name === 'Sam').id")
    host.evaluate(SEND_LOG)
    # Sam goes (here: removed) while the host's page has not heard yet; the host seats Sam.
    hold[0] = True
    host.evaluate(f"() => window.nertz.send({{type: 'kick', player: {json.dumps(sam_id)}}})")
    pick = host.locator("#watchers select")
    pick.select_option(pick.locator("option", has_text="seat 2").get_attribute("value"))
    host.click("#watchers button:text-is('Seat')")
    while held:
        sockets[-1].send(held.pop(0))
    hold[0] = False
    host.wait_for_function("() => !window.nertz.S.room.players.some((p) => p.bot)")
    host.wait_for_selector("#watchers", state="detached")
    sent = [m["type"] for m in host.evaluate("() => window.__sent")]
    assert sent == ["kick", "kick"], sent  # no assign for Sam, who had gone
    # A refusal of that kind reads as words.
    sockets[-1].send(json.dumps({"type": "error", "code": "no_player",
                                 "message": f"nobody with id {sam_id!r} is in this room"}))
    wait_toast(host, "That player has left the room")


def test_the_host_seats_a_watcher_from_a_finished_matchs_results(server: Any, new_page: Any,
                                                                  artifacts: Path) -> None:
    # Seats change only between matches, and after the first one the page shows the results,
    # not the lobby: the host seats the watcher there, before the rematch.
    host = new_page()
    r = seat_room(server, host, "Ann", rules=QUICK_RULES, seats=2)
    add_bots(host, "beginner", 1)
    sam = come_to_watch(new_page(), server, r["code"], "Sam")
    host.click("#start")
    wait_table(host)
    play_to_the_results(host)
    sam.wait_for_selector("#results #watch-how")
    assert sam.locator("#results tr.me").count() == 0  # a watcher has no seat to mark
    # Only as full as it is: both seats are taken.
    assert "every seat is taken" in (sam.text_content("#results #watch-how") or "")
    # A newcomer to the finished match is not told that one is being played.
    tia = new_page()
    tia.goto(f"{server.base}/r/{r['code']}")
    tia.wait_for_selector("#join-watch-how")
    said = tia.text_content("#join-watch-how") or ""
    assert said.startswith("A match is under way or just finished: you join as a watcher."), said
    host.wait_for_selector("#results #watchers select")
    host.locator("#results #watchers").scroll_into_view_if_needed()
    shot(host, artifacts, "results-watchers-1280x860")
    pick = host.locator("#results #watchers select")
    pick.select_option(pick.locator("option", has_text="seat 2").get_attribute("value"))
    # The sheet is not drawn again as seats change (it went back to the top, the focus jumped,
    # the scores counted up again, the analysis was fetched again): only its watchers part.
    host.evaluate("() => { window.__sheet = document.querySelector('#results'); }")
    host.click("#results #watchers button:text-is('Seat')")
    sam.wait_for_function("() => window.nertz.S.you.seat === 1")
    host.wait_for_selector("#results #watchers", state="detached")
    assert host.evaluate("() => document.querySelector('#results') === window.__sheet")
    assert host.evaluate("() => !!document.activeElement.closest('#results')")
    # Sam's sheet marks Sam's seat as their own at once (it did only at the next result), in
    # the round's breakdown and the standings; the host's still marks the host's alone.
    marked = "() => [...document.querySelectorAll('#results tr.me')].map((r) => r.dataset.seat)"
    sam.wait_for_function(f"() => ({marked})().join() === '1,1'")
    assert host.evaluate(marked) == ["0", "0"]
    host.click("#rematch")
    wait_table(sam)


def test_a_phone_shows_the_match_scores_during_play(server: Any, new_page: Any, axe: str,
                                                     artifacts: Path) -> None:
    # On a phone the scores were hidden (the top bar has no room): a player had to wait for
    # the results to know the match. The menu holds them, without crowding the table.
    page = open_page(new_page, (390, 844))
    # The match's figures come from the server, each `room` (or `state`, `table`) message
    # replacing them: written into the page's state, they were gone at the next one. Every
    # message to the page has them rewritten instead, from the moment the test says.
    fake = {"round": 3, "totals": [42, -7, 15]}
    faking: list[bool] = [False]
    sockets: list[Any] = []

    def rewrite(m: str | bytes) -> str | bytes:
        if not faking[0] or not isinstance(m, str):
            return m
        msg = json.loads(m)
        room = msg.get("room")
        if not isinstance(room, dict) or not room.get("match"):
            return m
        room["match"] = {**room["match"], **fake}
        return json.dumps(msg)

    def through(ws: Any) -> None:
        server_ws = ws.connect_to_server()
        server_ws.on_message(lambda m: ws.send(rewrite(m)))
        ws.on_message(lambda m: server_ws.send(m))
        sockets.append(ws)

    page.route_web_socket("**/ws/**", through)
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=3)
    add_bots(page, "beginner", 2, tap=True)
    page.tap("#start")
    wait_table(page)
    faking[0] = True
    # A `room` message now (without `v`: outside the versions' count), the real ones after it
    # rewritten the same.
    room = page.evaluate("() => window.nertz.S.room")
    room["match"] = {**room["match"], **fake}
    sockets[-1].send(json.dumps({"type": "room", "room": room}))
    page.wait_for_function("() => window.nertz.S.room.match.totals[0] === 42")
    assert not page.locator("#menu-scores").is_visible()  # the table keeps its room
    page.tap("#menu-btn")
    page.wait_for_selector("#menu-scores", state="visible")
    rows = page.evaluate("""() => [...document.querySelectorAll('#menu-scores tbody tr')].map(
        (r) => [r.cells[0].textContent, r.querySelector('.seatname > :last-child').textContent,
                r.cells[2].textContent])""")
    assert len(rows) == 3, rows
    assert rows[0] == ["1", "Ann", "42"], rows  # by total, best first
    assert [r[2] for r in rows[1:]] == ["15", "-7"], rows
    assert "Round 3" in (page.text_content("#menu-scores") or "")
    # The names line up at their marks (they were aligned right, a ragged edge of marks).
    lefts = page.evaluate("""() => [...document.querySelectorAll('#menu-scores .seatname')]
        .map((e) => Math.round(e.getBoundingClientRect().left))""")
    assert len(set(lefts)) == 1, lefts
    box = page.locator("#tools").bounding_box()
    assert box and box["y"] + box["height"] <= 844 and box["x"] >= 0, box
    shot(page, artifacts, "menu-scores-390x844")
    assert_no_axe_violations(page, axe, "the phone's menu with the scores")


SHEET_COVERED = """() => {
  const s = document.querySelector('.overlay .sheet').getBoundingClientRect();
  return [...document.querySelectorAll('#toasts .toast')].map((e) => e.getBoundingClientRect())
    .filter((t) => t.width && Math.min(t.right, s.right) > Math.max(t.left, s.left)
      && Math.min(t.bottom, s.bottom) > Math.max(t.top, s.top))
    .map((t) => [t.left, t.top, t.right, t.bottom]);
}"""
"""Where the shown messages overlap the open sheet (none may)."""


def test_a_message_keeps_off_a_full_height_dialog_on_a_phone(server: Any, new_page: Any,
                                                              artifacts: Path) -> None:
    # The help fills a phone's screen: a message shown over it sat on its words.
    page = open_page(new_page, (390, 844))
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=2)
    add_bots(page, "beginner", 1, tap=True)
    page.tap("#start")
    wait_table(page)
    page.keyboard.press("?")
    page.wait_for_selector("#help")
    page.evaluate("""async () => {
        const dom = await import('/static/js/dom.js');
        dom.toast('Everyone was stuck: the stocks were turned and rotated.', '', 60000);
        dom.toast('Bea: Nertz!', 'good', 60000);
    }""")
    page.evaluate(NEXT_FRAMES)
    shot(page, artifacts, "help-message-390x844")
    assert page.evaluate(SHEET_COVERED) == []
    # The sheet is still whole on the screen (it gave the messages room, it did not go under).
    box = page.locator(".overlay .sheet").bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= 844 + 0.5, box
    # Once they go, the sheet has its room back.
    page.evaluate("() => document.querySelectorAll('#toasts .toast').forEach((t) => t.remove())")
    page.wait_for_function("() => document.querySelector('.overlay .sheet')"
                           ".getBoundingClientRect().top < 20")


def test_a_message_leaves_a_large_screens_dialog_as_it_is(server: Any, new_page: Any) -> None:
    # The strip above the sheet is for a phone's: at 1280x800 any message had shrunk and moved
    # the open help (its words jumped), though there was room beside it.
    page = new_page(viewport={"width": 1280, "height": 800})
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=2)
    add_bots(page, "beginner", 1)
    page.click("#start")
    wait_table(page)
    page.keyboard.press("?")
    page.wait_for_selector("#help")
    page.evaluate(NEXT_FRAMES)
    before = page.locator(".overlay .sheet").bounding_box()
    page.evaluate("""async () => {
        const dom = await import('/static/js/dom.js');
        dom.toast('Everyone was stuck: the stocks were turned and rotated.', '', 60000);
    }""")
    page.wait_for_selector("#toasts .toast")
    page.evaluate(NEXT_FRAMES)
    assert page.locator(".overlay .sheet").bounding_box() == before
    assert page.evaluate("() => document.querySelector('.overlay').style"
                         ".getPropertyValue('--msg-room')") == ""


ONE_LINE = """(sel) => [...document.querySelectorAll(sel)].filter((b) => {
  const r = document.createRange();
  r.selectNodeContents(b);
  const rows = [...r.getClientRects()].filter((x) => x.width).map((x) => Math.round(x.top));
  const tops = new Set(rows);
  return tops.size > 1;
}).map((b) => b.textContent)"""
"""The buttons whose words take more than one line."""


def six_seats_sideways(server: Any, new_page: Any) -> Any:
    """A phone held sideways (844x390) at a six-seat pagat table, its seats filled with bots
    and the round under way: the top bar's tightest fit."""
    page = open_page(new_page, (844, 390))
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=6)
    page.tap("#fill-bots")
    page.wait_for_function("() => document.querySelectorAll('#seats .player-name').length === 6")
    page.tap("#start")
    wait_table(page)
    return page


def test_the_sideways_phones_settings_keep_to_one_line(server: Any, new_page: Any,
                                                      artifacts: Path) -> None:
    # Held sideways, a phone's top bar holds the settings; with six seats' scores beside them
    # "Four colours" broke over two lines (the scores must give way, not the buttons).
    page = six_seats_sideways(server, new_page)
    shot(page, artifacts, "topbar-844x390")
    assert page.evaluate(ONE_LINE, "#tools > button, #tools > a, #menu-btn") == []
    tops = page.evaluate("""() => [...document.querySelectorAll('.topbar button, .topbar a')]
        .filter((b) => b.getClientRects().length)
        .map((b) => { const r = b.getBoundingClientRect(); return [r.top, r.right]; })""")
    assert tops and max(t for t, _ in tops) - min(t for t, _ in tops) < 4, tops  # one row
    assert max(r for _, r in tops) <= 844, tops


CUT_SHORT = """() => { const t = document.querySelector('#totals > span');
  return !!t && t.scrollWidth > t.clientWidth + 0.5; }"""
"""Whether the top bar's scores are cut short (an ellipsis)."""

POP_ROWS = """() => [...document.querySelectorAll('#scores-pop tbody tr')].map((r) => {
  const clipped = [...r.cells].some((c) => c.scrollWidth > c.clientWidth + 0.5);
  const b = r.getBoundingClientRect();
  const inView = b.left >= -0.5 && b.top >= -0.5 && b.right <= innerWidth + 0.5
    && b.bottom <= innerHeight + 0.5;
  return {name: r.querySelector('.seatname > :last-child').textContent,
          total: r.cells[2].textContent, clipped, inView};
})"""
"""The rows of the opened scores: each seat's name and total, whether any is cut or out of view."""


def test_the_sideways_phones_scores_open_in_full(server: Any, new_page: Any, axe: str,
                                                 artifacts: Path) -> None:
    # Held sideways, the bar's scores give way to the settings and are cut short ("Ann 0 ·
    # Casual bot 2 0 · …"): a player could not read the others' scores until the results.
    # A tap on them opens every seat's score in full under the bar.
    page = six_seats_sideways(server, new_page)
    assert page.evaluate(CUT_SHORT), "six seats' scores fit the bar: nothing to test"
    assert page.get_attribute("#totals", "aria-expanded") == "false"
    page.tap("#totals")
    page.wait_for_selector("#scores-pop", state="visible")
    assert page.get_attribute("#totals", "aria-expanded") == "true"
    rows = page.evaluate(POP_ROWS)
    shot(page, artifacts, "scores-open-844x390")
    assert len(rows) == 6, rows
    assert sorted(r["name"] for r in rows) == sorted(
        ["Ann"] + [f"Casual bot {n}" for n in range(2, 7)]), rows
    assert all(r["total"] == "0" and not r["clipped"] and r["inView"] for r in rows), rows
    assert "Round 1" in (page.text_content("#scores-pop") or "")
    assert_no_axe_violations(page, axe, "the sideways phone's opened scores")
    # A tap elsewhere closes them, as the menu does; Esc too, the keyboard back on the scores.
    page.tap(".topbar .pill:has-text('Room')")
    page.wait_for_selector("#scores-pop", state="detached")
    page.focus("#totals")
    page.keyboard.press("Enter")
    page.wait_for_selector("#scores-pop", state="visible")
    page.keyboard.press("Escape")
    page.wait_for_selector("#scores-pop", state="detached")
    assert page.evaluate("() => document.activeElement.id") == "totals"


def test_a_changed_target_score_reads_cleanly(server: Any, new_page: Any, artifacts: Path) -> None:
    # "Changed: play to (points): 50." — a unit in brackets and two colons in a row.
    page = new_page(viewport={"width": 1280, "height": 800})
    page.goto(server.base + "/")
    page.wait_for_selector("#create")
    page.click("#options summary")
    page.fill('[name="target_score"]', "50")
    page.fill('[name="nertz_pile_size"]', "10")
    said = page.text_content("#preset-summary") or ""
    assert said.endswith(" Changed from the preset: Nertz pile size 10; play to 50 points."), said
    assert "(" not in said and ": :" not in said
    page.locator("#preset-summary").screenshot(path=str(artifacts / "summary-changed.png"))
    page.fill("#name", "Ann")
    page.click("#create")
    page.wait_for_selector("#lobby")
    rules = page.text_content("#lobby .rules-text") or ""
    want = "Rules: Pounce (pagat.com), changed: Nertz pile size 10; play to 50 points"
    assert rules == want, rules


def test_fill_the_seats_stands_clear_of_the_seat_list_on_a_phone(server: Any,
                                                                 new_page: Any,
                                                                 artifacts: Path) -> None:
    page = open_page(new_page, (390, 844))
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=4)
    page.wait_for_selector("#fill-bots")
    gap = page.evaluate("""() => document.querySelector('#seats').getBoundingClientRect().top
        - document.querySelector('#fill-bots').getBoundingClientRect().bottom""")
    shot(page, artifacts, "lobby-fill-390x844")
    assert gap >= 10, gap


START_SHOWN = """() => {
  const b = document.querySelector('#start');
  if (!b || b.disabled || document.activeElement !== b) return false;
  const r = b.getBoundingClientRect();
  return r.top >= -0.5 && r.bottom <= innerHeight + 0.5 && r.left >= -0.5
    && r.right <= innerWidth + 0.5;
}"""
"""Start is enabled, has the keyboard's focus and is wholly in view."""


def test_filling_the_seats_brings_start_into_view_on_a_phone(server: Any, new_page: Any,
                                                             artifacts: Path) -> None:
    # Once the bots filled the seats, their rows (Remove, Move to…, Move) pushed Start below
    # the screen of a phone: a newcomer who had just pressed Fill was left looking for it.
    page = open_page(new_page, (390, 844))
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=4)
    page.tap("#fill-bots")
    page.wait_for_function("() => document.querySelectorAll('#seats .player-name').length === 4")
    page.wait_for_function(START_SHOWN)
    shot(page, artifacts, "lobby-filled-start-390x844")
    # Space there starts the match, as anywhere (Start acts on key-down).
    page.keyboard.press("Space")
    wait_table(page)


FLAGS_NOTE = """async (text) => {
  const {resultsSheet} = await import('/static/js/screens.js');
  const room = {options: {}, phase: 'round_over', players: [], host: 'h', seats: 2,
    flags: [{seat: 1, player: 'p1', name: 'Rob', why: 'reaction', plays: 31,
             median_reaction_ms: 92, interval_cv: 0.4, text}]};
  const app = {S: {room, you: null}, initial: () => 'R', send: () => {}, go: () => {}};
  const result = {round: 1, ended: 'nertz', caller: 0, scores: [3, 1], totals: [3, 1],
    over: false, breakdown: [0, 1].map(() => ({foundation_cards: 3, card_points: 3,
      nertz_left: 0, nertz_penalty: 0}))};
  const sheet = resultsSheet(app, result, (s) => ['Ann', 'Rob'][s], 0);
  return sheet.querySelector('#flags li').textContent;
}"""
"""The automation flags' line on a results sheet drawn for a flag with the server's `text`."""


def test_an_automation_flag_names_the_seat_once(server: Any, new_page: Any) -> None:
    # The server's line names the seat ("Rob: median reaction …"), and the sheet put the name
    # before it again: "Rob: Rob: median reaction 92 ms …".
    page = new_page()
    page.goto(server.base + "/")
    page.wait_for_selector("#create")
    line = "median reaction 92 ms over 31 plays (no person is under 150 ms)"
    assert page.evaluate(FLAGS_NOTE, f"Rob: {line}") == f"Rob: {line}"
    assert page.evaluate(FLAGS_NOTE, line) == f"Rob: {line}"  # a line without the name


COUNT_REGISTERS = """(() => {
  const real = ServiceWorkerContainer.prototype.register;
  window.__swRegisters = 0;
  ServiceWorkerContainer.prototype.register = function (...args) {
    window.__swRegisters += 1;
    return real.apply(this, args);
  };
})();"""


def test_the_service_worker_is_registered_once(server: Any, new_page: Any) -> None:
    # It was registered as the page loaded and again at every move between screens.
    page = new_page()
    page.add_init_script(COUNT_REGISTERS)
    page.goto(server.base + "/")
    page.wait_for_selector("#create")
    page.click("#learn")
    page.wait_for_function("() => location.pathname === '/learn'")
    page.go_back()
    page.wait_for_selector("#create")
    page.evaluate("() => navigator.serviceWorker.ready")
    assert page.evaluate("() => window.__swRegisters") == 1


def test_each_work_piles_key_sits_on_its_pile(server: Any, new_page: Any, artifacts: Path) -> None:
    # A work pile's room reaches far below its cards (a fan of the whole run fits in it), and
    # its key under that room sat some 220 px below the cards at 1366x768: four stray digits
    # at the foot of the panel. Each key now sits on its pile's first card, at its corner.
    page = open_page(new_page, (1366, 768))
    seat_room(server, page, "Ann", seats=2)
    add_bots(page, "beginner", 1)
    page.click("#start")
    wait_table(page)
    piles = page.evaluate("""() => [...document.querySelectorAll('#me .pile')]
      .filter((p) => /^[1-5]$/.test(p.dataset.pile)).map((p) => {
        const box = (e) => {
          const r = e.getBoundingClientRect();
          return [r.left, r.top, r.right, r.bottom];
        };
        const key = p.querySelector('.pile-label');
        return {pile: p.dataset.pile, key: box(key), text: key.textContent,
                card: box(p.querySelector('.stack > *'))};
      })""")
    shot(page, artifacts, "work-keys-1366x768")
    assert [p["text"] for p in piles] == ["1", "2", "3", "4"], piles
    for p in piles:
        k_left, k_top, k_right, _ = p["key"]
        c_left, c_top, c_right, _ = p["card"]
        assert abs(k_top - c_top) < 16 and abs(k_right - c_right) < 16, p
        assert c_left < k_left, p
