"""The browser game, end to end: Chromium (headless) against a real ``nertz serve``.

Two people and two bots play a whole round by mouse drags and keys until the call, and the
results screen shows the server's scores; a phone plays by touch; a name full of HTML stays
text; reloading mid-round returns to the same seat and view; a live table is photographed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from web_player import Player, find_move, fits_foundation, fits_work

from nertz import replay

SHORT_RULES = {"preset": "pagat", "nertz_pile_size": 3, "target_score": 1}
"""A round that ends quickly: three-card Nertz piles; the match ends after a scoring round."""

HTML_NAME = "<img src=x onerror=z()>"
"""A display name full of HTML (24 characters at most): it must show as these very characters."""


def seat_room(server: Any, page: Any, name: str, rules: Any = SHORT_RULES, seats: int = 2
              ) -> dict[str, Any]:
    """Create a room through the API as `name` and hand this browser the seat token (as the
    home screen does), then open the room's page."""
    r = server.post("/api/rooms", {"rules": rules, "seats": seats, "name": name})
    page.goto(server.base + "/")
    seat = json.dumps({"token": r["token"], "player": r["player"]})
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [f"nertz:room:{r['room']}", seat])
    page.goto(f"{server.base}/r/{r['code']}")
    page.wait_for_selector("#lobby")
    page.evaluate("() => { window.nertz.countdownMs = 0; }")
    return r


def add_bots(page: Any, level: str, count: int, tap: bool = False) -> None:
    """The host seats bots from the lobby, one empty seat at a time."""
    for _ in range(count):
        before = page.locator("#seats .player-name").count()
        page.locator("#seats select.bot-level").first.select_option(level)
        button = page.locator("#seats .add-bot").first
        if tap:
            button.tap()
        else:
            button.click()
        page.wait_for_function(
            f"() => document.querySelectorAll('#seats .player-name').length > {before}")


def against_a_bot(server: Any, new_page: Any) -> Any:
    """A page of Ann's at a two-seat pagat table against a beginner bot, the round begun."""
    page = new_page()
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=2)
    add_bots(page, "beginner", 1)
    page.click("#start")
    wait_table(page)
    return page


def wait_table(page: Any) -> None:
    page.wait_for_selector('#table-screen[data-phase="playing"] #me [data-pile="N"] .card',
                           timeout=30_000)


def wait_name(page: Any, name: str) -> None:
    """Wait until the lobby shows a player named exactly `name`."""
    page.wait_for_function("(n) => [...document.querySelectorAll('#seats .player-name')]"
                           ".some((e) => e.textContent === n)", arg=name)


def two_at_a_table(server: Any, new_page: Any, ann_script: str | None = None
                   ) -> tuple[Any, Any]:
    """Ann and Ben, each in a page of their own, at a two-seat pagat table, the round begun
    (``ann_script`` runs in Ann's page before any of its own scripts)."""
    ann, ben = new_page(), new_page()
    if ann_script is not None:
        ann.add_init_script(ann_script)
    r = seat_room(server, ann, "Ann", rules={"preset": "pagat"}, seats=2)
    ben.goto(f"{server.base}/r/{r['code']}")
    ben.fill("#name", "Ben")
    ben.click("#join-room")
    ben.wait_for_selector("#lobby")
    wait_name(ann, "Ben")
    ann.click("#start")
    for page in (ann, ben):
        wait_table(page)
    return ann, ben


def replay_totals(page: Any) -> list[int]:
    """The scores the replay viewer shows at the end of a round."""
    cells = page.locator('#replay-result td[data-field="total"]').all_text_contents()
    return [int(t) for t in cells]


def test_two_people_and_two_bots_play_a_round_to_the_call(server: Any, new_page: Any,
                                                          artifacts: Path) -> None:
    ann_page, ben_page = new_page(), new_page()
    # Ann creates the room on the home screen: a preset, two options changed, four seats.
    ann_page.goto(server.base + "/")
    ann_page.fill("#name", "Ann")
    ann_page.select_option("#preset", "pagat")
    assert "Pounce" in ann_page.text_content("#preset-summary")
    ann_page.click("#home details summary")
    ann_page.fill('input[name="nertz_pile_size"]', "3")
    ann_page.fill('input[name="target_score"]', "1")
    # The line under the rules says what changed, in words.
    summary = ann_page.text_content("#preset-summary") or ""
    want = "to 100. Changed from the preset: Nertz pile size 3; play to 1 point."
    assert want in summary, summary
    ann_page.fill("#seats", "4")
    ann_page.click("#create")
    ann_page.wait_for_selector("#lobby")
    ann_page.evaluate("() => { window.nertz.countdownMs = 0; }")
    link = ann_page.input_value("#share-link")
    assert "/r/" in link
    # Ben opens the share link and takes a seat.
    ben_page.goto(link)
    ben_page.fill("#name", "Ben")
    ben_page.click("#join-room")
    ben_page.wait_for_selector("#lobby")
    wait_name(ann_page, "Ben")
    add_bots(ann_page, "beginner", 2)
    ann_page.click("#start")
    wait_table(ann_page)
    wait_table(ben_page)
    room_id = ann_page.evaluate("() => window.nertz.S.room.id")

    ann, ben = Player(ann_page), Player(ben_page, use_keys=True)
    shot = False
    deadline = time.monotonic() + 240  # a round on a busy machine
    actions: list[str] = []
    while time.monotonic() < deadline:
        phases = [p.page.evaluate("() => window.nertz.S.room.phase") for p in (ann, ben)]
        if all(ph in ("round_over", "match_over") for ph in phases):
            break
        for p, ph in zip((ann, ben), phases, strict=True):
            if ph == "playing":
                actions.append(p.act())
        if not shot and len(actions) >= 16:
            ann.settle()
            ann_page.screenshot(path=str(artifacts / "table.png"))
            shot = True
        ann_page.wait_for_timeout(60)
    else:
        dump = [p.page.evaluate("() => ({url: location.href, room: window.nertz.S.room, "
                                "text: document.body.innerText.slice(0, 300)})")
                for p in (ann, ben)]
        pytest.fail(f"the round did not end; actions: {actions[-30:]}; pages: {dump}")
    assert ann.moves + ben.moves >= 2, (actions, ann.misses, ben.misses)
    if not shot:
        ann_page.screenshot(path=str(artifacts / "table.png"))

    # The results screen shows what the server scored.
    for p in (ann, ben):
        p.page.wait_for_selector("#results:not(.counting)")  # the scores count up
    result = ann_page.evaluate("() => window.nertz.S.result")
    assert result["ended"] == "nertz", result
    assert "called" in ann_page.text_content("#results-title")
    room = server.get(f"/api/rooms/{room_id}")
    totals = room["match"]["totals"]
    for page in (ann_page, ben_page):
        shown = [int(page.text_content(f'#breakdown tr[data-seat="{s}"] td[data-field="total"]'))
                 for s in range(4)]
        assert shown == totals  # the first round: round scores are the totals
        standings = [
            int(page.text_content(f'#standings tr[data-seat="{s}"] td[data-field="totals"]'))
            for s in range(4)]
        assert standings == totals
        names = page.locator("#breakdown .player-name").all_text_contents()
        assert names[:2] == ["Ann", "Ben"]
    ann_page.screenshot(path=str(artifacts / "results.png"))
    if room["matches"]:
        # The stored replay, scored by the engine, agrees with the page.
        data = server.get(f"/api/matches/{room['matches'][0]}/replay")
        replayed = replay.run(replay.from_json(data))
        assert list(replayed.match.totals) == totals
        # What the match teaches each seat, yours first (docs/analysis.md).
        ann_page.wait_for_selector("#results-analysis .analysis-seat")
        assert ann_page.locator("#results-analysis .analysis-seat").count() == 4
        first = ann_page.locator("#results-analysis .analysis-seat").first
        assert first.get_attribute("data-seat") == "0" and "Ann (you)" in first.text_content()
        # The replay viewer steps through the finished match on a timeline.
        ann_page.click("#results .watch-replay")
        ann_page.wait_for_selector("#replay #replay-slider")
        steps = int(ann_page.get_attribute("#replay-slider", "max"))
        assert steps == len(data["rounds"][0]["moves"])
        assert ann_page.locator("#replay .opp").count() == 4
        # Its title names the players and the date it was played.
        year = str(time.gmtime().tm_year)
        assert year in (ann_page.text_content("#replay h1 time.played-on") or "")
        assert year in ann_page.title() and "Ann" in ann_page.title()
        ann_page.keyboard.press("ArrowRight")
        assert ann_page.text_content("#replay-step").startswith("1/")
        ann_page.click("#replay-next")
        assert ann_page.text_content("#replay-step").startswith("2/")
        # Each step in words, the moved card marked where it landed.
        k = 2
        said = ann_page.text_content("#replay-step") or ""
        while k < steps and (" from " not in said or "refused" in said):
            ann_page.click("#replay-next")
            k += 1
            said = ann_page.text_content("#replay-step") or ""
        assert " to " in said and ("Ann: " in said or "Ben: " in said or "bot" in said), said
        assert ann_page.locator("#replay .card.moved").count() == 1
        # The address opens the viewer at that round and step.
        at = ann_page.evaluate("() => location.pathname + location.search")
        assert f"step={k}" in at and "round=1" in at, at
        ann_page.goto(server.base + at)
        ann_page.wait_for_selector("#replay #replay-slider")
        assert ann_page.text_content("#replay-step") == said
        ann_page.fill("#replay-slider", str(steps))
        ann_page.dispatch_event("#replay-slider", "input")
        ann_page.wait_for_selector("#replay-result table")
        shown = replay_totals(ann_page)
        assert shown == totals
        ann_page.screenshot(path=str(artifacts / "replay.png"))
        assert ann_page.locator("#replay-analysis .analysis-seat").count() == 4
        # Same deal: Ben opens a new room whose first match deals these cards again.
        ben_page.click("#results .same-deal")
        ben_page.wait_for_selector("#join-room")
        code = ben_page.evaluate("() => location.pathname.split('/').pop()")
        assert server.get(f"/api/rooms/{code}")["same_deal"] == room["matches"][0]


def no_place(st: dict[str, Any], src: str) -> bool:
    """Whether the top card of pile ``src`` (N or W) fits nowhere: no foundation, no work
    pile's top, and no work pile is empty."""
    card = st["nertz"] if src == "N" else st["waste"]
    if not card or fits_foundation(card, st["founds"]):
        return False
    return not any(fits_work(card, p) if p["up"] else not p["down"] for p in st["work"])


def test_phone_plays_a_move_by_touch(server: Any, new_page: Any, artifacts: Path) -> None:
    page = new_page(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True,
                    device_scale_factor=2)
    seat_room(server, page, "Pia", rules={"preset": "pagat", "nertz_pile_size": 13})
    add_bots(page, "beginner", 1, tap=True)
    page.locator("#start").tap()
    wait_table(page)
    p = Player(page)
    st = p.settle()
    assert st is not None
    # Nothing wider than the phone.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    # What a thumb touches is a thumb's size, and no button names a key a phone has not got.
    assert page.locator(".topbar #sound").is_hidden()
    menu = page.locator("#menu-btn")
    assert menu.get_attribute("aria-expanded") == "false"
    menu.tap()
    page.wait_for_selector("#tools.open #sound")
    assert menu.get_attribute("aria-expanded") == "true"
    sizes = page.evaluate("""() => [...document.querySelectorAll(
        '.topbar button, .topbar a, #me .actions button')].filter((e) => e.offsetParent)
        .map((e) => [e.id || e.textContent, e.getBoundingClientRect().height])""")
    assert {name for name, _ in sizes} >= {"menu-btn", "sound", "four-colour", "help-btn",
                                           "leave", "turn", "stuck"}, sizes
    assert all(tall >= 34 for _, tall in sizes), sizes
    # A tap anywhere else closes the menu (at the foundations' left end: the menu, with the
    # match's scores at its top, reaches down over their middle).
    page.locator("#foundations").tap(position={"x": 10, "y": 10})
    page.wait_for_selector("#tools.open", state="detached")
    assert menu.get_attribute("aria-expanded") == "false"
    assert page.text_content("#turn") == "Turn (Space)"  # the key's name is in the page...
    assert page.locator("#turn .key").is_hidden()  # ...and not shown on a touch screen
    assert page.locator("#me .tip-touch").is_visible()
    assert page.locator("#me .tip-mouse").is_hidden()
    for _ in range(40):
        move = find_move(st)
        if move is not None:
            before = st
            # A tap sends the card to its best place.
            page.locator(f'#me [data-pile="{move.src}"] .card[data-card="{move.card}"]').tap()
            st = p.settle()
            assert st is not None and st["pending"] == 0
            src_after = st["nertz"] if move.src == "N" else st["waste"] if move.src == "W" \
                else (st["work"][int(move.src) - 1]["up"] or [None])[-1]
            assert src_after != move.card, f"{move.text} did not happen: {before} -> {st}"
            break
        page.locator('#me [data-pile="S"]').tap()
        st = p.settle()
    else:
        pytest.fail("no card found to play in 40 turns")
    page.screenshot(path=str(artifacts / "phone.png"))
    # A tap on a card with nowhere to go says so beside the card, not over the other seats.
    # (Taps in quick succession all count: only a mouse's double-click has a second half to
    # ignore.)
    st = p.settle()
    assert st is not None
    for _ in range(60):
        if no_place(st, "W"):
            sent = page.evaluate("() => window.nertz.S.sent")
            page.locator('#me [data-pile="W"] .card[data-card]').first.tap()
            # The bot may have made a place for it meanwhile: then the tap played it. Read
            # at once, in the page: the note is gone in a moment.
            seen = page.wait_for_function("""(sent) => {
                const b = document.querySelector('.note-bubble');
                if (b) return {text: b.textContent, top: b.getBoundingClientRect().top,
                  opps: document.querySelector('.opponents').getBoundingClientRect().bottom,
                  toasts: [...document.querySelectorAll('#toasts .toast')]
                    .filter((t) => t.textContent.includes('No place')).length};
                return window.nertz.S.sent > sent ? 'played' : null; }""", arg=sent).json_value()
            if seen != "played":
                assert "No place for the" in seen["text"], seen
                assert seen["top"] >= seen["opps"] and seen["toasts"] == 0, seen
                break
        elif st["nertz"] and any(not w["up"] and not w["down"] for w in st["work"]):
            # An empty work pile takes anything: the Nertz top fills it.
            page.locator('#me [data-pile="N"] .card[data-card]').first.tap()
        else:
            page.locator('#me [data-pile="S"]').tap()
        st = p.settle()
        assert st is not None
    else:
        pytest.fail("no card without a place in 60 turns")


def test_a_name_full_of_html_shows_as_text(server: Any, new_page: Any) -> None:
    host, guest = new_page(), new_page()
    r = seat_room(server, host, "Ann", seats=2)
    guest.goto(f"{server.base}/r/{r['code']}")
    guest.evaluate("() => { window.z = () => { window.__pwned = true; }; }")
    guest.fill("#name", HTML_NAME)
    guest.click("#join-room")
    guest.wait_for_selector("#lobby")
    host.evaluate("() => { window.z = () => { window.__pwned = true; }; }")
    wait_name(host, HTML_NAME)
    for page in (host, guest):
        assert page.locator("#seats img").count() == 0
        assert HTML_NAME in page.locator("#seats .player-name").all_text_contents()
    host.click("#start")
    wait_table(host)
    assert host.text_content(".opp .nm") == HTML_NAME
    assert host.locator("#table-screen img").count() == 0
    host.wait_for_timeout(200)
    assert not host.evaluate("() => !!window.__pwned")
    assert not guest.evaluate("() => !!window.__pwned")


def test_reload_mid_round_returns_to_the_same_seat_and_view(server: Any, new_page: Any) -> None:
    page = new_page()
    r = seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=3)
    add_bots(page, "beginner", 2)
    page.click("#start")
    wait_table(page)
    p = Player(page)
    page.keyboard.press("Space")
    page.keyboard.press("Space")
    before = p.settle()
    assert before is not None and before["pending"] == 0
    stock_before = page.get_attribute('#me [data-pile="S"]', "aria-label")
    page.reload()
    wait_table(page)
    after = p.settle()
    assert after is not None
    mine = ("seat", "nertz", "nertz_count", "waste", "work")
    assert {k: after[k] for k in mine} == {k: before[k] for k in mine}
    assert page.get_attribute('#me [data-pile="S"]', "aria-label") == stock_before
    assert page.evaluate("() => window.nertz.S.you.player") == r["player"]
    # And the seat still plays.
    page.keyboard.press("Space")
    assert p.settle()["waste"] is not None


def test_an_uploaded_replay_file_plays_on_the_timeline(server: Any, new_page: Any) -> None:
    demo = Path(__file__).resolve().parents[2] / "examples" / "demo.nertz.json"
    page = new_page()
    page.goto(server.base + "/")
    page.set_input_files("#replay-file", str(demo))
    page.wait_for_selector("#replay #replay-slider")
    expected = replay.run(replay.load(demo)).to_json()
    rounds = page.locator("#replay-round option").count()
    assert rounds == len(expected["rounds"])
    page.click("#replay-play")
    page.wait_for_function("() => Number(document.querySelector('#replay-slider').value) >= 2")
    page.click("#replay-play")  # pause
    page.fill("#replay-slider", page.get_attribute("#replay-slider", "max"))
    page.dispatch_event("#replay-slider", "input")
    shown = replay_totals(page)
    assert shown == expected["rounds"][0]["scores"]


def test_split_partners_each_play_only_their_own_piles(server: Any, new_page: Any) -> None:
    """Under ``teams: split`` the page keeps each partner to their piles: the Nertz partner
    cannot turn the stock, the stock partner cannot lift the Nertz top; nothing is sent."""
    ann, ben, cat = new_page(), new_page(), new_page()
    r = seat_room(server, ann, "Ann", rules={"preset": "pagat", "teams": "split"}, seats=2)
    for page, name in ((ben, "Ben"), (cat, "Cat")):  # Ben takes seat 2, Cat partners Ann
        page.goto(f"{server.base}/r/{r['code']}")
        page.fill("#name", name)
        page.click("#join-room")
        page.wait_for_selector("#lobby")
        wait_name(ann, name)
    # The lobby is drawn from the room's description before the socket's state says who we are.
    cat.wait_for_function("() => !!window.nertz.S.you")
    assert cat.evaluate("() => [window.nertz.S.you.seat, window.nertz.S.you.hand]") == [0, 1]
    ann.click("#start")
    for page in (ann, ben, cat):
        wait_table(page)
    sent = "() => window.nertz.S.sent"
    # Ann plays the Nertz pile: her stock and waste are shown as her partner's.
    assert "partner-pile" in (ann.get_attribute('#me [data-pile="S"]', "class") or "")
    assert ann.is_disabled("#turn")
    before = ann.evaluate(sent)
    ann.keyboard.press("Space")
    ann.locator('#me [data-pile="S"] .card').click()
    assert ann.evaluate(sent) == before
    assert "partner plays the stock" in ann.text_content("body")
    # Cat plays the stock and waste: her Nertz pile is Ann's to play.
    assert "partner-pile" in (cat.get_attribute('#me [data-pile="N"]', "class") or "")
    before = cat.evaluate(sent)
    cat.locator('#me [data-pile="N"] .card').first.click()
    cat.keyboard.press("n")
    cat.keyboard.press("f")
    assert cat.evaluate(sent) == before
    assert "partner plays the Nertz pile" in cat.text_content("body")
    cat.keyboard.press("Space")  # the stock is hers: the turn goes out and is applied
    cat.wait_for_function("() => window.nertz.S.sent > " + str(before))
    cat.wait_for_function("() => document.querySelector('#table-screen').dataset.pending === '0'")
    ann.wait_for_selector('#me [data-pile="W"] .card[data-card]')


def test_the_table_says_when_it_waits_for_you_alone(server: Any, new_page: Any) -> None:
    # Every other seat stuck and this one not: the page says so (the table resets only once
    # all are stuck). Once the round is over, the stuck button no longer says it waits. Each
    # look is one synchronous render, so a bot's update in between cannot change the answer.
    page = against_a_bot(server, new_page)
    look = """(state) => {
      const S = window.nertz.S;
      S.table.tableaus.forEach((t, s) => { t.stuck = s === S.you.seat ? state.mine : 'S'; });
      if (state.ended) S.table.ended = 'nertz';
      window.nertz.render();
      return {nudge: !!document.querySelector('#stuck-nudge'),
              button: document.querySelector('#stuck').textContent};
    }"""
    assert page.evaluate(look, {"mine": "", "ended": False})["nudge"]
    assert not page.evaluate(look, {"mine": "S", "ended": False})["nudge"]
    over = page.evaluate(look, {"mine": "S", "ended": True})
    assert not over["nudge"] and "waiting" not in over["button"], over


def test_a_stuck_declaration_says_how_to_take_it_back(server: Any, new_page: Any) -> None:
    # A declaration lapses at the seat's next move (SPEC): the page says so, and a turn of
    # the stock does take it back.
    page = against_a_bot(server, new_page)
    page.click("#stuck")
    page.wait_for_selector("#stuck-undo")
    assert "Any move takes it back" in page.text_content("#stuck-undo")
    page.click("#turn")
    page.wait_for_selector("#stuck:not([disabled])")
    assert page.locator("#stuck-undo").count() == 0


def test_leaving_mid_round_asks_first(server: Any, new_page: Any) -> None:
    # A slip of the thumb on Leave mid-round must not cost the round: the page asks, and
    # only a yes leaves (the seat then waits for its player's return).
    page = against_a_bot(server, new_page)
    asked: list[str] = []

    def answer(dialog: Any, accept: bool) -> None:
        asked.append(dialog.message)
        if accept:
            dialog.accept()
        else:
            dialog.dismiss()

    page.once("dialog", lambda d: answer(d, False))
    page.evaluate("() => document.querySelector('#leave').click()")
    assert asked and "five minutes" in asked[0], asked
    assert page.locator("#table-screen").count() == 1
    page.once("dialog", lambda d: answer(d, True))
    page.evaluate("() => document.querySelector('#leave').click()")
    page.wait_for_selector("#table-screen", state="detached")
    assert len(asked) == 2


def test_the_keyboard_says_what_it_holds_and_what_enter_wants(server: Any,
                                                              new_page: Any) -> None:
    # A pick-up by key showed only an outline, and Enter with nothing held answered about
    # calling: both now say what to do in words.
    page = against_a_bot(server, new_page)
    page.keyboard.press("n")
    page.wait_for_selector("#holding")
    assert (page.text_content("#holding") or "").startswith("Holding the ")
    page.keyboard.press("Escape")
    page.wait_for_selector("#holding", state="detached")
    page.keyboard.press("Enter")
    page.wait_for_selector("#toasts .toast:has-text('Pick up a card first')")


def test_the_host_puts_partners_together(server: Any, new_page: Any) -> None:
    # Under teams a friend joining by the link lands on a seat of their own; the host's
    # "Move to" offers each seat's two places, so the friend can join the host's team.
    page = new_page()
    r = seat_room(server, page, "Ann", rules={"preset": "pagat", "teams": "shared"}, seats=2)
    bob = server.post(f"/api/rooms/{r['room']}/join", {"name": "Bob"})
    picker = f"#move-{bob['player']}"
    page.wait_for_selector(picker)
    # Choosing moves nobody (Chromium fires `change` on a closed select's arrow key, and one
    # key had moved the player): the Move button does.
    page.evaluate("""() => {
      const real = window.nertz.send; window.__sent = [];
      window.nertz.send = (m) => { window.__sent.push(m); return real(m); };
    }""")
    page.focus(picker)
    page.keyboard.press("ArrowDown")
    page.wait_for_function(f"() => document.querySelector('{picker}').value !== ''")
    assert page.evaluate("() => window.__sent") == []
    page.select_option(picker, "0:1")
    page.click(f"#do-move-{bob['player']}")
    deadline = time.monotonic() + 30
    while True:
        players = server.get(f"/api/rooms/{r['room']}")["players"]
        where = {p["name"]: (p["seat"], p.get("hand")) for p in players}
        if where.get("Bob") == (0, 1):
            break
        assert time.monotonic() < deadline, where
        time.sleep(0.1)
    assert where["Ann"][0] == 0


def test_the_host_fills_every_empty_seat_at_once(server: Any, new_page: Any) -> None:
    page = new_page()
    r = seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=4)
    page.select_option("#bot-level-1", "expert")
    page.select_option("#bot-level-3", "beginner")
    page.click("#fill-bots")
    page.wait_for_selector("#start:not([disabled])")
    assert page.locator("#fill-bots").count() == 0
    names = sorted(p["name"] for p in server.get(f"/api/rooms/{r['room']}")["players"])
    # Each at the level picked beside its seat; seat 3, left alone, at the last one picked.
    assert names == ["Ann", "Beginner bot 3", "Beginner bot 4", "Expert bot 2"], names
