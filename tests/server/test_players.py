"""Players: guest identity across rooms, a rated match moving ratings and landing in the
history with its replay, openskill's own figures, accounts, the leaderboard, quick match."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from openskill.models import PlackettLuce
from server_support import hello, hub_of, in_loop, recv
from starlette.testclient import TestClient

from nertz.bots.driver import BotDriver
from nertz.rules import PRESETS
from nertz.server.players.identity import COOKIE
from nertz.server.players.ratings import NEW, Skill, bot_skill, display, family, rate
from nertz.server.room.bots import RoomSeat

QUICK_RULES = {"preset": "fairy_fly", "nertz_pile_size": 3}
"""One round, ends at once when a Nertz pile empties: a short rated match."""


def test_ratings_follow_openskills_own_figures() -> None:
    # Ann wins, Bob second, an expert bot third: what openskill's model itself says.
    model = PlackettLuce()
    ann, bob = model.rating(mu=27.0, sigma=6.0), model.rating()
    bot = model.rating(mu=bot_skill("expert").mu, sigma=bot_skill("expert").sigma)
    expected = model.rate([[ann], [bob], [bot]], scores=[30, 12, 5])
    got = rate([[Skill(27.0, 6.0)], [NEW], [bot_skill("expert")]], [30, 12, 5])
    for mine, theirs in zip(got, expected, strict=True):
        assert mine[0].mu == pytest.approx(theirs[0].mu)
        assert mine[0].sigma == pytest.approx(theirs[0].sigma)
    # Pinned, so a change of model or defaults shows (openskill 6, Plackett-Luce defaults).
    assert got[0][0].mu == pytest.approx(29.0036, abs=1e-3)
    assert got[1][0].mu == pytest.approx(27.0967, abs=1e-3)
    assert display(NEW.mu, NEW.sigma) == pytest.approx(1000.0)


def test_every_preset_has_a_family() -> None:
    fams = {name: family(rules) for name, rules in PRESETS.items()}
    assert fams["pagat"] == fams["hoorah"] == "pounce"
    assert fams["standard"] == "nertz5"
    assert fams["fairy_fly"] == "fairy_fly"
    assert fams["evil_jacks"] == fams["starter9"] == "starter9"


def test_a_guest_is_the_same_player_in_every_room(client: TestClient) -> None:
    first = client.post("/api/rooms", json={"name": "Ann", "seats": 2}).json()
    assert first["profile"] and first["identity"]
    assert client.cookies.get(COOKIE) == first["identity"]
    cookie = client.cookies.get(COOKIE)
    second = client.post("/api/rooms", json={"seats": 2}).json()
    joined = client.post(f"/api/rooms/{second['room']}/join", json={"name": "Annie"}).json()
    assert joined["profile"] == first["profile"]
    assert "identity" not in joined  # known: no new identity
    me = client.get("/api/me").json()
    assert me["player"]["id"] == first["profile"] and me["player"]["name"] == "Annie"
    # A program sends the same identity as a bearer token, with no cookie.
    client.cookies.clear()
    third = client.post("/api/rooms", json={"seats": 2}).json()
    again = client.post(f"/api/rooms/{third['room']}/join", json={"name": "Ann"},
                        headers={"authorization": f"Bearer {cookie}"}).json()
    assert again["profile"] == first["profile"]
    # Someone else (no identity) is someone else.
    other = client.post(f"/api/rooms/{third['room']}/join", json={"name": "Bob"}).json()
    assert other["profile"] != first["profile"]


def play_rated_match(client: TestClient, name: str = "Ann") -> tuple[dict[str, Any], str]:
    """``name`` (played by an in-process driver) against an expert bot, to the end; the
    results and the room's id."""
    host = client.post("/api/rooms", json={"name": name, "seats": 2,
                                           "rules": QUICK_RULES}).json()
    room = hub_of(client).rooms[host["room"]]
    with client.websocket_connect(f"/ws/{host['room']}") as ws:
        hello(ws, host["token"])
        ws.send_json({"type": "add_bot", "seat": None, "bot": "greedy", "level": "expert"})
        me = room.table.players[host["player"]]

        async def drive() -> None:
            driver = BotDriver(RoomSeat(room, me), "greedy", "expert", "test")
            room.tasks.add(asyncio.get_running_loop().create_task(driver.run()))

        ws.send_json({"type": "start", "countdown_ms": 0})
        in_loop(client, drive)
        while True:
            m = recv(ws, 60)
            assert m["type"] != "error", m
            if m["type"] == "round_over" and m["result"]["over"]:
                return m["result"], host["room"]


@pytest.mark.usefixtures("fast_bots")
def test_a_rated_match_moves_the_rating_and_lands_in_the_history(client: TestClient) -> None:
    result, room = play_rated_match(client)
    match_id = result["match"]
    me = client.get("/api/me").json()
    assert [r["family"] for r in me["ratings"]] == ["fairy_fly"]
    assert me["ratings"][0]["matches"] == 1
    # The results' rating change: the person's moved, the bot's stayed.
    rated = client.get(f"/api/matches/{match_id}/ratings").json()
    ann, bot = (s["players"][0] for s in rated["seats"])
    assert ann["profile"] == me["player"]["id"] and ann["rating_after"] != ann["rating_before"]
    assert bot["bot"] == "greedy" and bot["rating_after"] == bot["rating_before"]
    won = result["winner"] == 0
    assert (ann["rating_after"] > ann["rating_before"]) == won
    page = client.get(f"/api/players/{me['player']['id']}").json()
    [row] = page["matches"]
    assert row["match"] == match_id and row["preset"] == "custom" and row["won"] == won
    assert row["replay"] == f"/?replay={match_id}"
    assert client.get(f"/api/matches/{match_id}/replay").status_code == 200
    [fig] = page["figures"]
    assert fig["matches"] == 1 and fig["win_share"] == (1.0 if won else 0.0)
    assert fig["cards_per_minute"] > 0
    board = client.get("/api/leaderboard/fairy_fly").json()["players"]
    assert [p["player"] for p in board] == [me["player"]["id"]]
    room_ratings = client.get(f"/api/rooms/{room}/ratings").json()
    assert room_ratings["family"] == "fairy_fly"
    export = client.get("/api/me/history")
    assert "attachment" in export.headers["content-disposition"]
    assert [m["match"] for m in export.json()["matches"]] == [match_id]
