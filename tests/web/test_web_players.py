"""The players' screens in Chromium: a player's page after a rated match, with its replay
link; the leaderboard; making an account, signing out and in again; axe on each screen."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from page_checks import axe_violations

from nertz.net.client import Client
from nertz.net.identity import IdentityFile
from nertz.net.netbot import NetworkBot

SHORT = {"preset": "fairy_fly", "nertz_pile_size": 1}
"""One round that ends once a 1-card Nertz pile is out: a short rated match."""


def rated_match(base: str, identities: IdentityFile, name: str) -> str:
    """``name`` (played by a network bot under the kept identity) against an expert bot, to
    the end of one match; the match's id."""

    async def go() -> str:
        client = await Client.create_room(base, name, SHORT, seats=2, ping_interval=None,
                                          identity=identities)
        await client.connect()
        try:
            await client.add_bot(level="expert")
            player = NetworkBot(client, "greedy", "expert", matches=1, countdown_ms=0,
                                pause_s=0.0)
            await asyncio.wait_for(player.run(), 120)
            assert client.result is not None and client.result["over"]
            return str(client.result["match"])
        finally:
            await client.close()

    # Playwright's sync API runs its own event loop in this thread: the client gets another.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, go()).result()


def test_the_player_page_and_the_leaderboard(server: Any, new_page: Any, tmp_path: Path,
                                             axe: str) -> None:
    identities = IdentityFile(tmp_path / "identities.json")
    match = rated_match(server.base, identities, "Pia")
    token = identities.get(server.base)
    assert token
    page = new_page()
    host = urlsplit(server.base).hostname
    page.context.add_cookies([{"name": "nertz_player", "value": token, "domain": host,
                               "path": "/", "httpOnly": True, "sameSite": "Lax"}])
    page.goto(server.base + "/")
    page.click("#my-page-link")
    row = page.wait_for_selector(f"#history tr[data-match='{match}']")
    assert "Pia" in page.inner_text("#player-page h1")
    assert row.inner_text().count("Pia") == 1
    assert page.inner_text("#ratings").count("Fairy Fly") == 1
    assert page.query_selector("#figures tr[data-preset='custom']") is not None
    assert axe_violations(page, axe) == []
    # The history's replay link opens the replay viewer on that match.
    row.query_selector(".replay-link").click()
    page.wait_for_selector("#replay #replay-slider")
    assert f"replay={match}" in page.url
    # The leaderboard of the family lists her, and leads back to her page.
    page.goto(server.base + "/leaderboard/fairy_fly")
    entry = page.wait_for_selector("#leaderboard tbody tr a")
    assert entry.inner_text() == "Pia"
    # She plays as a guest, who may take any name: the board says so.
    assert (page.text_content("#leaderboard tbody tr th") or "").strip() == "Pia (guest)"
    assert axe_violations(page, axe) == []
    entry.click()
    page.wait_for_selector(f"#history tr[data-match='{match}']")


def test_making_an_account_signing_out_and_in(server: Any, new_page: Any, axe: str) -> None:
    page = new_page()
    page.goto(server.base + "/account")
    page.wait_for_selector("#signup")
    assert axe_violations(page, axe) == []
    page.fill("#signup-name", "Quinn Web")
    page.fill("#signup-password", "a long password")
    page.click("#signup-submit")
    page.wait_for_selector("#signout")
    assert "Signed in as Quinn Web" in page.inner_text("#account-who")
    # A seat this browser keeps (as after joining a room), and a "Play now" under way: a
    # sign-out forgets them, so the next person at this computer does not find them.
    page.evaluate("""() => {
      localStorage.setItem('nertz:room:r1', JSON.stringify({token: 't', player: 'p'}));
      localStorage.setItem('nertz:autostart', JSON.stringify({room: 'r1'}));
      localStorage.setItem('nertz:four-colour', 'true');
    }""")
    page.click("#signout")
    page.wait_for_selector("#signin")
    kept = page.evaluate("() => Object.keys(localStorage).sort()")
    assert "nertz:room:r1" not in kept and "nertz:autostart" not in kept, kept
    assert "nertz:four-colour" in kept  # settings are not the player's seats
    page.fill("#signin-name", "quinn web")
    page.fill("#signin-password", "not the password")
    page.click("#signin-submit")
    page.wait_for_selector("#signin .error-text:has-text('wrong account name or password')")
    page.fill("#signin-password", "a long password")
    page.click("#signin-submit")
    page.wait_for_selector("#signout")
    assert "Quinn Web" in page.inner_text("#account-who")


def test_a_password_change_keeps_this_browsers_seats(server: Any, new_page: Any) -> None:
    """The password changed in one tab ends the player's seat tokens everywhere: the tab at
    the table takes its seat back by itself (same seat, new token), and a room this browser
    comes back to later is entered straight away, with no join screen."""
    page = new_page()
    page.goto(server.base + "/account")
    page.fill("#signup-name", "Rae Web")
    page.fill("#signup-password", "a long password")
    page.click("#signup-submit")
    page.wait_for_selector("#signout")
    made = [page.evaluate("""async () => (await fetch('/api/rooms', {method: 'POST',
        headers: {'content-type': 'application/json'},
        body: JSON.stringify({seats: 2, name: 'Rae'})})).json()""") for _ in range(2)]
    for room in made:
        page.evaluate("([k, v]) => localStorage.setItem(k, v)",
                      [f"nertz:room:{room['room']}",
                       json.dumps({"token": room["token"], "player": room["player"]})])
    page.goto(server.base + f"/r/{made[0]['code']}")
    page.wait_for_selector("#lobby")
    account = page.context.new_page()
    account.goto(server.base + "/account")
    account.fill("#password-old", "a long password")
    account.fill("#password-new", "another long password")
    account.click("#password-submit")
    account.wait_for_selector(".toast:has-text('Password changed')")
    # The tab at the table: signed_out, then its own seat back under a new token.
    page.wait_for_selector(".toast:has-text('Your seat was given a new key')")
    page.wait_for_selector("#lobby")
    kept = page.evaluate(f"() => JSON.parse(localStorage.getItem('nertz:room:{made[0]['room']}'))")
    assert kept["player"] == made[0]["player"] and kept["token"] != made[0]["token"], kept
    assert page.query_selector("#join-screen") is None
    # The other room, entered later: its ended token is not tried; the seat comes back.
    account.goto(server.base + f"/r/{made[1]['code']}")
    account.wait_for_selector("#lobby")
    kept = account.evaluate(
        f"() => JSON.parse(localStorage.getItem('nertz:room:{made[1]['room']}'))")
    assert kept == {"token": kept["token"], "player": made[1]["player"]}, kept
    assert kept["token"] != made[1]["token"]
    assert account.query_selector("#join-screen") is None


def test_quick_match_screen_lists_public_tables(server: Any, new_page: Any, axe: str) -> None:
    public = server.post("/api/rooms", {"rules": "hoorah", "seats": 3, "public": True})
    page = new_page()
    page.goto(server.base + "/quick")
    entry = page.wait_for_selector(f"#public-rooms li[data-room='{public['room']}'] a")
    assert "Hoorah" in entry.inner_text() and "hoorah" not in entry.inner_text()  # named, not coded
    assert axe_violations(page, axe) == []
    page.fill("#quick-name", "Rae")
    page.fill("#quick-wait", "0")
    page.click("#quick-go")
    # Alone with no wait for people: a table with bots, at once.
    page.wait_for_url("**/r/*")
    page.wait_for_selector("#lobby #seats")
    assert page.locator("#seats .player-name", has_text="Rae").count() == 1
    # The lobby shows each seated player's rating in the room's family (a new player: 1000).
    page.wait_for_selector("#room-ratings li:has-text('Rae 1000')")
