"""Players: guest identity across rooms, a rated match moving ratings and landing in the
history with its replay, openskill's own figures, accounts, the leaderboard, quick match."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from openskill.models import PlackettLuce
from server_support import hello, hub_of, in_loop, live_server, recv
from starlette.testclient import TestClient

from nertz.bots.driver import BotDriver
from nertz.rules import PRESETS
from nertz.server.edge.app import create_app
from nertz.server.players import accounts, listing
from nertz.server.players.identity import COOKIE
from nertz.server.players.ratings import NEW, Skill, bot_skill, display, family, rate
from nertz.server.players.tables import profiles
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


def play_rated_match(client: TestClient, name: str = "Ann",
                     rules: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
    """``name`` (played by an in-process driver) against an expert bot, to the end; the
    results and the room's id."""
    host = client.post("/api/rooms", json={"name": name, "seats": 2,
                                           "rules": rules or QUICK_RULES}).json()
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
        # A deadline for the whole match: the room's periodic messages would keep a plain
        # per-message wait going for ever if the match never ended.
        deadline = time.monotonic() + 300
        while True:
            assert time.monotonic() < deadline, "the match did not end"
            m = recv(ws, 60)
            assert m["type"] != "error", m
            if m["type"] == "round_over" and m["result"]["over"]:
                return m["result"], host["room"]


@pytest.fixture
def both(store_url: str) -> Iterator[TestClient]:
    """The app on SQLite and on PostgreSQL."""
    with TestClient(create_app(store_url)) as c:
        yield c


@pytest.mark.usefixtures("fast_bots")
def test_a_duplicate_deal_match_is_not_rated(client: TestClient) -> None:
    # Its later rounds deal each seat the hand another seat played in the open: a seat that
    # kept the broadcasts knows most of its cards. Not a contest to rate.
    result, _room = play_rated_match(client, rules={**QUICK_RULES, "duplicate_deal": "on"})
    assert client.get(f"/api/matches/{result['match']}/ratings").status_code == 404
    assert client.get("/api/me").json()["ratings"] == []


@pytest.mark.usefixtures("fast_bots")
def test_a_rated_match_moves_the_rating_and_lands_in_the_history(both: TestClient) -> None:
    client = both
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
    assert row["play_ms"] > 0
    assert fig["cards_per_minute"] == round(row["cards"] / (row["play_ms"] / 60000), 1)
    board = client.get("/api/leaderboard/fairy_fly").json()["players"]
    assert [p["player"] for p in board] == [me["player"]["id"]]
    assert board[0]["guest"] is me["player"]["guest"]  # a guest may take any name: it says so
    room_ratings = client.get(f"/api/rooms/{room}/ratings").json()
    assert room_ratings["family"] == "fairy_fly"
    export = client.get("/api/me/history")
    assert "attachment" in export.headers["content-disposition"]
    assert [m["match"] for m in export.json()["matches"]] == [match_id]


def test_sign_up_sign_in_wrong_password_and_deletion(both: TestClient) -> None:
    client = both
    guest = client.post("/api/rooms", json={"name": "Ann", "seats": 2}).json()
    r = client.post("/api/account/signup", json={"name": "Ann", "password": "short"})
    assert r.status_code == 400 and "8 to 256" in r.json()["error"]
    r = client.post("/api/account/signup", json={"name": "Ann", "password": "correct horse"})
    assert r.status_code == 200
    account = r.json()["player"]
    assert account["id"] == guest["profile"] and not account["guest"]
    # The name is taken now, whatever its case, by anyone else.
    saved = dict(client.cookies)
    client.cookies.clear()
    r = client.post("/api/account/signup", json={"name": "ANN", "password": "another one"})
    assert r.status_code == 409 and "taken" in r.json()["error"]
    client.cookies.clear()
    client.cookies.update(saved)
    # Signing out forgets this device; signing in again gives a new identity, same player.
    assert client.post("/api/account/signout").json() == {"ok": True}
    client.cookies.clear()
    assert client.get("/api/me").json()["player"] is None
    wrong_password = client.post("/api/account/signin", json={"name": "ann",
                                                              "password": "wrong horse"})
    wrong_name = client.post("/api/account/signin", json={"name": "Zed",
                                                          "password": "correct horse"})
    assert wrong_password.status_code == wrong_name.status_code == 401
    assert wrong_password.json() == wrong_name.json()
    r = client.post("/api/account/signin", json={"name": "ann", "password": "correct horse"})
    assert r.status_code == 200 and r.json()["player"]["id"] == guest["profile"]
    assert client.get("/api/me").json()["player"]["id"] == guest["profile"]
    # The password changes only with the old one.
    r = client.post("/api/account/password", json={"old": "nope nope", "new": "battery staple"})
    assert r.status_code == 401
    r = client.post("/api/account/password", json={"old": "correct horse",
                                                    "new": "battery staple"})
    assert r.status_code == 200
    # Deletion asks for the password, then the player is gone.
    assert client.post("/api/account/delete", json={"password": "correct horse"}
                       ).status_code == 401
    assert client.post("/api/account/delete", json={"password": "battery staple"}
                       ).status_code == 200
    assert client.get(f"/api/players/{guest['profile']}").status_code == 404
    client.cookies.clear()
    r = client.post("/api/account/signin", json={"name": "ann", "password": "battery staple"})
    assert r.status_code == 401


def test_sign_in_is_rate_limited(client: TestClient) -> None:
    # Ten at once, then one every six seconds: a slow machine may earn one more try meanwhile,
    # so ask until refused (a refusal costs no hashing: it comes at once).
    codes = []
    while 429 not in codes and len(codes) < 30:
        codes.append(client.post("/api/account/signin",
                                 json={"name": "x", "password": "y"}).status_code)
    assert codes[:10] == [401] * 10 and codes[-1] == 429
    r = client.post("/api/account/signin", json={"name": "x", "password": "y"})
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1


def wait_matched(client: TestClient, identity: str, timeout: float = 60.0) -> dict[str, Any]:
    """Ask how the quick match goes until it is matched (as the page does, every so often)."""
    deadline = time.monotonic() + timeout
    while True:
        status = client.get("/api/quick", headers={"authorization": f"Bearer {identity}"}
                            ).json()
        if status["status"] == "matched":
            return status
        assert status["status"] == "waiting", status
        assert time.monotonic() < deadline, "no match found"
        time.sleep(0.05)


def test_quick_match_pairs_two_and_fills_the_third_seat_with_a_bot(both: TestClient) -> None:
    client = both
    ask = {"rules": "pagat", "seats": 3, "bots_after": 1.0}
    ann = client.post("/api/quick", json=ask | {"name": "Ann"}).json()
    client.cookies.clear()
    bob = client.post("/api/quick", json=ask | {"name": "Bob"}).json()
    client.cookies.clear()
    assert ann["status"] == bob["status"] == "waiting"
    a = wait_matched(client, ann["identity"])
    b = wait_matched(client, bob["identity"])
    assert a["room"] == b["room"] and a["player"] != b["player"]
    # Handed over once: asked again, nothing is pending.
    assert client.get("/api/quick", headers={"authorization": f"Bearer {ann['identity']}"}
                      ).json() == {"status": "none"}
    room = client.get(f"/api/rooms/{a['room']}").json()
    people = {p["name"] for p in room["players"] if p["bot"] is None}
    bots = [p for p in room["players"] if p["bot"] is not None]
    assert people == {"Ann", "Bob"} and len(bots) == 1
    assert all(p["seat"] is not None for p in room["players"])
    # Their seat tokens open the room's socket as themselves.
    with client.websocket_connect(f"/ws/{a['room']}") as ws:
        you = hello(ws, a["token"])
        assert you is not None
    # The seats are tied to the right players.
    ratings = client.get(f"/api/rooms/{a['room']}/ratings").json()["players"]
    by_player = {p["player"]: p for p in ratings}
    me_a = client.get("/api/me", headers={"authorization": f"Bearer {ann['identity']}"}).json()
    assert by_player[a["player"]]["profile"] == me_a["player"]["id"]


def test_signing_out_leaves_the_quick_match_queue(both: TestClient) -> None:
    # Ann asks, then signs out: Bob's ask, the next one, must not be grouped with her (she
    # can no longer come). Grouping runs at each status call, so one call decides it.
    client = both
    ask = {"rules": "pagat", "seats": 2, "bots_after": 60.0}
    ann = client.post("/api/quick", json=ask | {"name": "Ann"}).json()
    assert ann["status"] == "waiting"
    client.cookies.clear()
    out = client.post("/api/account/signout", headers=bearer(ann["identity"]))
    assert out.status_code == 200
    client.cookies.clear()
    bob = client.post("/api/quick", json=ask | {"name": "Bob"}).json()
    status = client.get("/api/quick", headers=bearer(bob["identity"])).json()
    assert status["status"] == "waiting", status


def test_quick_match_refuses_bad_asks(client: TestClient) -> None:
    r = client.post("/api/quick", json={"rules": "nope", "name": "Ann"})
    assert r.status_code == 400 and "no preset" in r.json()["error"]
    r = client.post("/api/quick", json={"seats": 2})
    assert r.status_code == 401
    r = client.post("/api/quick", json={"seats": 9, "name": "Ann"})
    assert r.status_code == 400 and "seats" in r.json()["error"]


def test_only_public_rooms_are_listed(client: TestClient) -> None:
    public = client.post("/api/rooms", json={"seats": 2, "public": True,
                                             "rules": "standard"}).json()
    private = client.post("/api/rooms", json={"seats": 2}).json()
    listed = client.get("/api/rooms").json()["rooms"]
    assert [r["room"] for r in listed] == [public["room"]]
    assert listed[0]["preset"] == "standard" and listed[0]["family"] == "nertz5"
    assert listed[0]["url"].endswith(f"/r/{public['code']}")
    assert private["room"] not in {r["room"] for r in listed}
    # A full table is not offered.
    client.post(f"/api/rooms/{public['room']}/join", json={"name": "Ann"})
    client.post(f"/api/rooms/{public['room']}/join", json={"name": "Bob"})
    assert client.get("/api/rooms").json()["rooms"] == []


def test_the_rating_range_widens_with_the_wait(client: TestClient) -> None:
    from nertz.server.players.quickmatch import BASE_RANGE, WIDEN_PER_SECOND, QuickMatch

    players = client.app.state.players  # type: ignore[attr-defined]
    now = [1000.0]
    quick = QuickMatch(players.quick.db, players.identities, players.hub.create,
                       clock=lambda: now[0])

    async def setup() -> tuple[str, str]:
        low, _ = await players.identities.guest("Low")
        high, _ = await players.identities.guest("High")
        await quick.enter(low, "pagat", 2, 600.0, 1000.0)
        await quick.enter(high, "pagat", 2, 600.0, 1400.0)
        return low.id, high.id

    low, high = in_loop(client, setup)
    assert in_loop(client, quick.matchmake, "pagat", 2) == 0
    # Just short of the gap, then past it: 400 points apart.
    now[0] += (400 - BASE_RANGE) / WIDEN_PER_SECOND - 1
    assert in_loop(client, quick.matchmake, "pagat", 2) == 0
    now[0] += 2
    assert in_loop(client, quick.matchmake, "pagat", 2) == 1
    a, b = in_loop(client, quick.status, low), in_loop(client, quick.status, high)
    assert a["status"] == b["status"] == "matched" and a["room"] == b["room"]


class _FakeRoom:
    """A room as the quick match uses it, without a table (for two "processes" racing)."""

    def __init__(self, n: int) -> None:
        self.id = f"room{n}"
        self.table = type("T", (), {"code": f"CODE{n}"})()
        self.seated: list[str] = []

    async def join(self, name: str, spectator: bool) -> tuple[Any, str]:
        self.seated.append(name)
        return type("P", (), {"id": f"{self.id}-{len(self.seated)}"})(), f"token-{name}"

    def submit(self, player: Any, message: Any) -> None:
        self.seated.append("bot")


@pytest.mark.anyio
async def test_two_processes_never_seat_a_player_twice_nor_rate_a_match_twice(
        store_url: str) -> None:
    from nertz.server.players.history import History, Sitter
    from nertz.server.players.identity import Identities
    from nertz.server.players.quickmatch import QuickMatch
    from nertz.server.store import Store

    # Two stores on one database: what two processes of the server share.
    one, two = await Store.open(store_url), await Store.open(store_url)
    try:
        rooms: list[_FakeRoom] = []

        async def make_room(rules: Any, seats: int) -> _FakeRoom:
            rooms.append(_FakeRoom(len(rooms)))
            return rooms[-1]

        ids = Identities(one)
        queues = [QuickMatch(s, Identities(s), make_room) for s in (one, two)]
        people = [(await ids.guest(f"P{i}"))[0] for i in range(6)]
        for p in people:
            await queues[0].enter(p, "pagat", 2, 600.0, 1000.0)
        made = await asyncio.gather(*(q.matchmake("pagat", 2) for q in queues * 2))
        assert sum(made) == 3
        seated = [name for room in rooms for name in room.seated]
        assert sorted(seated) == sorted(p.name for p in people)  # each once, nobody twice
        # The same finished match told to both processes: rated once.
        match = play_fixture_match()
        seats = [[Sitter("P0", people[0].id)], [Sitter("P1", people[1].id)]]
        rated = await asyncio.gather(History(one).record("m1", "r1", match, seats),
                                     History(two).record("m1", "r1", match, seats))
        assert sorted(rated) == [False, True]
        mine = await History(one).ratings_of(people[0].id)
        assert [r["matches"] for r in mine] == [1]
    finally:
        await one.close()
        await two.close()


def play_fixture_match() -> dict[str, Any]:
    """A two-seat round's replay file (a golden one)."""
    import json
    from pathlib import Path

    golden = Path(__file__).resolve().parents[1] / "golden" / "02_auto_call.nertz.json"
    data: dict[str, Any] = json.loads(golden.read_text())
    return data


def count_profiles(client: TestClient) -> int:
    """Players the database holds."""
    async def count() -> int:
        async with hub_of(client).store.connection() as conn:
            return int((await conn.execute(
                sa.select(sa.func.count()).select_from(profiles))).scalar_one())
    return int(in_loop(client, count))


def bearer(identity: str) -> dict[str, str]:
    """The headers of a program that names its player by ``identity``."""
    return {"authorization": f"Bearer {identity}"}


def test_a_refused_sign_up_leaves_nobody_behind_and_sign_ups_are_rate_limited(
        client: TestClient) -> None:
    r = client.post("/api/account/signup", json={"name": "Ann", "password": "correct horse"})
    assert r.status_code == 200 and not r.json()["player"]["guest"]
    assert count_profiles(client) == 1
    codes = []
    while 429 not in codes and len(codes) < 20:
        client.cookies.clear()
        r = client.post("/api/account/signup", json={"name": "ANN", "password": "another one"})
        codes.append(r.status_code)
    # Taken, four times (five sign-ups a minute from one address), then refused; and none of
    # the refusals left a guest behind (it used to make one first, then fail).
    assert codes[:4] == [409] * 4 and codes[-1] == 429, codes
    assert "new accounts from one address" in r.json()["error"]
    assert int(r.headers["retry-after"]) >= 1
    assert count_profiles(client) == 1


def test_sign_up_gives_the_account_a_new_identity(client: TestClient) -> None:
    guest = client.post("/api/rooms", json={"name": "Ann", "seats": 2}).json()
    r = client.post("/api/account/signup", json={"name": "Ann", "password": "correct horse"})
    account = r.json()
    assert account["player"]["id"] == guest["profile"]
    # A guest token someone else may hold (planted, or seen on a shared machine) does not
    # open the account: the account has a new one, also set as the cookie.
    assert account["identity"] != guest["identity"]
    assert client.cookies.get(COOKIE) == account["identity"]
    client.cookies.clear()
    assert client.get("/api/me", headers=bearer(guest["identity"])).json()["player"] is None
    me = client.get("/api/me", headers=bearer(account["identity"])).json()["player"]
    assert me["id"] == guest["profile"] and not me["guest"]


def test_a_password_change_signs_the_other_devices_out(client: TestClient) -> None:
    here = client.post("/api/account/signup",
                       json={"name": "Ann", "password": "correct horse"}).json()["identity"]
    client.cookies.clear()
    there = client.post("/api/account/signin",
                        json={"name": "Ann", "password": "correct horse"}).json()["identity"]
    client.cookies.clear()
    r = client.post("/api/account/password", headers=bearer(here),
                    json={"old": "correct horse", "new": "battery staple"})
    assert r.status_code == 200
    assert client.get("/api/me", headers=bearer(there)).json()["player"] is None
    assert client.get("/api/me", headers=bearer(here)).json()["player"]["name"] == "Ann"


def test_password_guesses_are_rate_limited_per_player(client: TestClient) -> None:
    # Whoever holds a player's identity token may not guess the password faster than a
    # sign-in: ten checks a minute for the player, then refusals that cost no hashing.
    me = client.post("/api/account/signup",
                     json={"name": "Ann", "password": "correct horse"}).json()["identity"]
    codes = []
    while 429 not in codes and len(codes) < 30:
        codes.append(client.post("/api/account/password", headers=bearer(me),
                                 json={"old": "wrong horse", "new": "x" * 8}).status_code)
    assert codes[:10] == [401] * 10 and codes[-1] == 429, codes
    r = client.post("/api/account/delete", headers=bearer(me), json={"password": "guess one"})
    assert r.status_code == 429 and "password checks for this player" in r.json()["error"]


def test_password_hashing_refuses_rather_than_queue_without_end(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(accounts, "_waiting", accounts.HASHES_WAITING)
    r = client.post("/api/account/signin", json={"name": "Ann", "password": "correct horse"})
    assert r.status_code == 503 and "busy checking passwords" in r.json()["error"]
    monkeypatch.setattr(accounts, "_waiting", 0)
    r = client.post("/api/account/signin", json={"name": "Ann", "password": "correct horse"})
    assert r.status_code == 401


def test_quick_match_asks_count_against_the_rooms_an_address_makes(db_url: str) -> None:
    with TestClient(create_app(db_url, rooms_per_minute=2)) as client:
        ask = {"rules": "pagat", "seats": 2, "bots_after": 0.0}
        codes = []
        for name in ("Ann", "Bob", "Cy"):
            client.cookies.clear()
            codes.append(client.post("/api/quick", json=ask | {"name": name}).status_code)
        assert codes == [200, 200, 429]
        r = client.post("/api/rooms", json={"seats": 2})
        assert r.status_code == 429 and "new rooms from one address" in r.json()["error"]


def test_an_address_makes_a_bounded_number_of_guests(db_url: str) -> None:
    # Three guests a minute per room it may make: past that a join still seats the person,
    # tied to no player (unrated), and the database does not grow.
    with TestClient(create_app(db_url, rooms_per_minute=1)) as client:
        room = client.post("/api/rooms", json={"seats": 8}).json()["room"]
        joins = []
        for name in ("Ann", "Bob", "Cy", "Di"):
            client.cookies.clear()
            r = client.post(f"/api/rooms/{room}/join", json={"name": name})
            assert r.status_code == 200
            joins.append(r.json())
        assert [("profile" in j, "identity" in j) for j in joins] == [(True, True)] * 3 + [
            (False, False)]
        assert count_profiles(client) == 3
        client.cookies.clear()
        r = client.post("/api/quick", json={"rules": "pagat", "seats": 2, "name": "Ed"})
        assert r.status_code == 429


def test_one_address_cannot_fill_the_public_list(client: TestClient,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    made = [client.post("/api/rooms", json={"seats": 2, "public": True}).json()["room"]
            for _ in range(listing.PER_LISTER)]
    r = client.post("/api/rooms", json={"seats": 2, "public": True})
    assert r.status_code == 429 and "public rooms open already" in r.json()["error"]
    assert client.post("/api/rooms", json={"seats": 2}).status_code == 201  # private: fine
    # Rooms in play or full are passed over, not counted against the list's length: with
    # room for two, the two newest full, the oldest still shows.
    monkeypatch.setattr(listing, "LISTED", 2)
    for room in made[-2:]:
        for name in ("Ann", "Bob"):
            client.cookies.clear()
            assert client.post(f"/api/rooms/{room}/join", json={"name": name}).is_success
    assert [r["room"] for r in client.get("/api/rooms").json()["rooms"]] == made[2::-1][:2]


@pytest.mark.usefixtures("fast_bots")
def test_a_match_dealt_from_a_public_replays_seed_is_not_rated(client: TestClient) -> None:
    # A same-deal room's first match deals a finished match's cards again, and that match's
    # replay shows every card: the history refuses to rate it, and rates the same match
    # under another id when its seed is not known.
    result, room_id = play_rated_match(client)
    data = client.get(f"/api/matches/{result['match']}/replay").json()
    api = client.app.state.players  # type: ignore[attr-defined]
    room = hub_of(client).rooms[room_id]

    async def record(match_id: str, known: int | str | None) -> bool:
        seats = api.seating(room, await api.identities.members(room_id))
        return bool(await api.history.record(match_id, room_id, data, seats, known_seed=known))

    assert in_loop(client, record, "again-known", data["seed"]) is False
    assert in_loop(client, record, "again-fresh", None) is True


def test_account_routes_take_only_json_so_no_other_site_can_post_a_form(
        client: TestClient) -> None:
    # A text/plain form can spell a JSON body ({"name":"M","password":"x=y..."}) and would sign
    # its visitor in as the attacker: refused, naming what to send.
    body = b'{"name":"Mallory","password":"pass=word123"}'
    for path in ("/api/account/signup", "/api/account/signin"):
        for kind in ("text/plain", "application/x-www-form-urlencoded", None):
            headers = {"content-type": kind} if kind else {}
            r = client.post(path, content=body, headers=headers)
            assert r.status_code == 415 and "Content-Type: application/json" in r.json()["error"]
    assert client.get("/api/me").json()["player"] is None
    r = client.post("/api/account/signup", content=body,
                    headers={"content-type": "application/json; charset=utf-8"})
    assert r.status_code == 200


def test_one_address_hashes_two_passwords_at_a_time(client: TestClient,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # The hashing threads are everyone's: one address's burst waits its turn (and says so).
    from nertz.server.players import routes

    monkeypatch.setitem(routes._hashing_from, "testclient", routes.HASHES_PER_ADDRESS)
    r = client.post("/api/account/signin", json={"name": "Ann", "password": "correct horse"})
    assert r.status_code == 429 and "being checked already" in r.json()["error"]
    monkeypatch.setitem(routes._hashing_from, "testclient", routes.HASHES_PER_ADDRESS - 1)
    r = client.post("/api/account/signin", json={"name": "Ann", "password": "correct horse"})
    assert r.status_code == 401
    assert routes._hashing_from["testclient"] == routes.HASHES_PER_ADDRESS - 1  # given back


def test_two_sign_ups_at_once_with_one_guest_token_make_one_account(db_url: str) -> None:
    # The guest check came before the hash, the write after it: both went through, the last
    # one's name and password standing and its new token revoking the other's.
    async def both(base: str) -> list[int]:
        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            guest = (await http.post("/api/rooms", json={"name": "Ann", "seats": 2})).json()
            ask = [http.post("/api/account/signup", json={"name": name, "password": "x" * 9},
                             headers=bearer(guest["identity"])) for name in ("Ann", "Mal")]
            return sorted(r.status_code for r in await asyncio.gather(*ask))

    with live_server(create_app(db_url)) as base:
        assert asyncio.run(both(base)) == [200, 409]
