"""The HTTP API in-process: health, presets, rooms, joining, names, 404s, replay downloads."""

from __future__ import annotations

import time
from typing import Any

import pytest
from server_support import create_room, hello, join, recv, table_of, two_players, wait_phase
from starlette.testclient import TestClient

from nertz import analysis, replay
from nertz.server.edge.app import create_app
from nertz.server.protocol import MAX_NAME


def test_healthz(client: TestClient) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}


def test_presets(client: TestClient) -> None:
    data = client.get("/api/presets").json()
    names = [p["name"] for p in data["presets"]]
    assert "pagat" in names and "standard" in names
    pagat = data["presets"][names.index("pagat")]
    assert pagat["options"]["work_piles"] == 4
    assert pagat["summary"] and pagat["source"]
    options = {o["name"]: o for o in data["options"]}
    assert {"work_piles", "call_grace_ms", "target_score"} <= set(options)
    assert all(o["doc"] for o in options.values())


@pytest.mark.parametrize(
    "rules", ["pagat", "standard", {"preset": "pagat", "work_piles": 5}, {"turn_count": 1}]
)
def test_create_room(client: TestClient, rules: Any) -> None:
    r = client.post("/api/rooms", json={"rules": rules, "seats": 3})
    assert r.status_code == 201, r.text
    d = r.json()
    assert set(d) == {"room", "code", "url"}
    assert d["url"].endswith(f"/r/{d['code']}")
    room = client.get(f"/api/rooms/{d['room']}").json()
    assert room["seats"] == 3 and room["phase"] == "lobby" and room["players"] == []
    if isinstance(rules, dict) and "work_piles" in rules:
        assert room["options"]["work_piles"] == 5


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"rules": {"preset": "pagat", "nope": 1}}, "nope"),
        ({"rules": {"work_piles": 6}}, "work_piles"),
        ({"rules": {"target_score": "x"}}, "target_score"),
        ({"rules": "no_such_preset"}, "no_such_preset"),
        ({"rules": 5}, "rules"),
        ({"rules": {"preset": "pagat", "call_word": "T"}}, "call_word 'T' is already a move"),
        ({"seats": 1}, "seats"),
        ({"seats": 9}, "seats"),
        ({"seats": "4"}, "seats"),
        ({"extra": True}, "extra"),
    ],
)
def test_create_room_refused(client: TestClient, body: dict[str, Any], named: str) -> None:
    r = client.post("/api/rooms", json=body)
    assert r.status_code == 400, r.text
    assert named in r.json()["error"]


def test_create_room_not_json(client: TestClient) -> None:
    r = client.post("/api/rooms", content=b"{not json")
    assert r.status_code == 400
    assert "JSON" in r.json()["error"]
    r = client.post("/api/rooms", content=b"x" * 10_000)
    assert r.status_code == 413


def test_create_with_name_makes_the_host(client: TestClient) -> None:
    r = client.post("/api/rooms", json={"rules": "pagat", "seats": 2, "name": "Ann"})
    d = r.json()
    assert d["host"] is True and d["seat"] == 0 and d["hand"] == 0 and d["token"]
    room = client.get(f"/api/rooms/{d['room']}").json()
    assert room["host"] == d["player"]
    assert "token" not in str(room) and d["token"] not in str(room)


def test_get_by_id_and_code(client: TestClient) -> None:
    d = client.post("/api/rooms", json={"seats": 2}).json()
    by_id = client.get(f"/api/rooms/{d['room']}").json()
    by_code = client.get(f"/api/rooms/{d['code']}").json()
    by_lower = client.get(f"/api/rooms/{d['code'].lower()}").json()
    assert by_id == by_code == by_lower
    assert by_id["id"] == d["room"] and by_id["code"] == d["code"]
    joined = client.post(f"/api/rooms/{d['code']}/join", json={"name": "Cy"}).json()
    assert joined["room"] == d["room"]


def test_join_seats_then_spectators(client: TestClient) -> None:
    ann = create_room(client, seats=2)
    bob = join(client, ann.room, "Bob")
    cy = join(client, ann.room, "Cy")
    dee = join(client, ann.room, "Dee", spectator=True)
    assert (ann.seat, bob.seat, cy.seat, dee.seat) == (0, 1, None, None)
    assert ann.host and not bob.host
    assert len({ann.token, bob.token, cy.token, dee.token}) == 4


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("<script>alert(1)</script>", "<script>alert(1)</script>"[:MAX_NAME]),
        ("<b>Ann</b> & \"co\"", "<b>Ann</b> & \"co\""),
        ("An\x00n\x1b[31m\u200b", "Ann[31m"),
        ("  Ann \t\n  Lee  ", "Ann Lee"),
        ("x" * 100, "x" * MAX_NAME),
        ("Zoë 🂡", "Zoë 🂡"),
        # Invisible marks the format test misses (a variation selector, the grapheme joiner)
        # go; a tower of combining marks keeps two.
        ("Ann\ufe0f", "Ann"),
        ("Jo\u034fe", "Joe"),
        ("A" + "\u0300" * 23, "A\u0300\u0300"),
        ("Re\u0301my", "Re\u0301my"),
    ],
)
def test_join_names(client: TestClient, name: str, kept: str) -> None:
    d = client.post("/api/rooms", json={"seats": 2}).json()
    r = client.post(f"/api/rooms/{d['room']}/join", json={"name": name})
    assert r.status_code == 200, r.text
    room = client.get(f"/api/rooms/{d['room']}")
    # HTML stays text, verbatim in the JSON (the page shows names with textContent).
    assert room.json()["players"][0]["name"] == kept
    assert len(kept) <= MAX_NAME


@pytest.mark.parametrize("name", ["", "   ", "\x00\x01\x7f", "\u200b\u200e", "\u034f\u034f",
                                  "\u17b4\u17b5", "\u0301\u0301\u0301", "\ufe0f \u0300"])
def test_join_empty_name_refused(client: TestClient, name: str) -> None:
    d = client.post("/api/rooms", json={"seats": 2}).json()
    r = client.post(f"/api/rooms/{d['room']}/join", json={"name": name})
    assert r.status_code == 400
    assert "name" in r.json()["error"]


@pytest.mark.parametrize("body", [{}, {"name": 5}, {"name": "A", "seat": 1}, {"name": None}])
def test_join_bad_body(client: TestClient, body: dict[str, Any]) -> None:
    d = client.post("/api/rooms", json={"seats": 2}).json()
    r = client.post(f"/api/rooms/{d['room']}/join", json=body)
    assert r.status_code == 400
    assert r.json()["error"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/rooms/NOROOM"),
        ("GET", "/api/rooms/" + "x" * 200),
        ("POST", "/api/rooms/NOROOM/join"),
        ("GET", "/api/matches/0123456789abcdef/replay"),
        ("GET", "/api/matches/" + "y" * 200 + "/replay"),
        ("GET", "/api/matches/0123456789abcdef/analysis"),
    ],
)
def test_not_found(client: TestClient, method: str, path: str) -> None:
    r = client.request(method, path, json={"name": "Ann"})
    assert r.status_code == 404
    assert "no " in r.json()["error"]


@pytest.mark.usefixtures("fast_bots")
def test_replay_download_scores_identically(client: TestClient) -> None:
    host = create_room(client, {"preset": "pagat", "rounds": 2}, 3, "Ann")
    with client.websocket_connect(f"/ws/{host.room}") as ws:
        hello(ws, host.token)
        ws.send_json({"type": "assign", "player": host.player, "seat": None, "hand": 0})
        for bot in ("greedy", "expert", "random"):
            ws.send_json({"type": "add_bot", "seat": None, "bot": bot, "level": "expert"})
        ws.send_json({"type": "start", "countdown_ms": 0})
        results = []
        while True:
            m = recv(ws, 30)
            assert m["type"] != "error", m
            if m["type"] == "round_over":
                results.append(m["result"])
                if m["result"]["over"]:
                    break
                ws.send_json({"type": "next_round"})
                wait_phase(ws, "playing")
    match_id = results[-1]["match"]
    assert match_id and len(results) == 2
    room = client.get(f"/api/rooms/{host.room}").json()
    assert room["matches"] == [match_id] and room["phase"] == "match_over"
    r = client.get(f"/api/matches/{match_id}/replay")
    assert r.status_code == 200
    assert "attachment" in r.headers["content-disposition"]
    file = replay.loads(r.content)
    assert len(file.players) == 3 and len(file.rounds) == 2
    assert sum(len(rd.moves) for rd in file.rounds) > 10
    done = replay.run(file)
    assert all(o.ok for rd in done.rounds for o in rd.outcomes)
    for rd, res in zip(done.rounds, results, strict=True):
        assert rd.result.scores == res["scores"]
        assert [s.to_json() for s in rd.result.score.seats] == res["breakdown"]
        assert rd.result.score.ended == res["ended"]
    assert done.match.totals == results[-1]["totals"]
    assert done.match.winner == results[-1]["winner"]
    # The viewer's frames say when the match was played (its title shows the date).
    frames = client.get(f"/api/matches/{match_id}/frames").json()
    assert abs(frames["finished_at"] / 1000 - time.time()) < 600
    assert frames["rounds"][0]["deal"]["starts"] == [1]
    # The match's analysis is the engine's analysis of that same file, stored or uploaded.
    report = client.get(f"/api/matches/{match_id}/analysis")
    assert report.status_code == 200
    assert report.json() == analysis.analyse(file).to_json()
    uploaded = client.post("/api/replays/analysis", content=r.content)
    assert uploaded.json() == report.json()
    bad = client.post("/api/replays/analysis", content=b'{"format": "nertz-replay/9"}')
    assert bad.status_code == 400 and "unknown format" in bad.json()["error"]
    # "Same deal": a new room whose first match deals this match's cards again.
    r = client.post(f"/api/matches/{match_id}/same_deal", json={"name": "Dee"})
    assert r.status_code == 201, r.text
    dee = r.json()
    assert dee["host"] and dee["seat"] == 0
    room = client.get(f"/api/rooms/{dee['room']}").json()
    assert room["same_deal"] == match_id and room["seats"] == 3
    assert room["rules"] == file.rules.to_spec()
    with client.websocket_connect(f"/ws/{dee['room']}") as ws:
        hello(ws, dee["token"])
        ws.send_json({"type": "assign", "player": dee["player"], "seat": None, "hand": 0})
        for _ in range(3):
            ws.send_json({"type": "add_bot", "seat": None, "bot": "greedy", "level": "expert"})
        ws.send_json({"type": "start", "countdown_ms": 0})
        wait_phase(ws, "playing")
        table = table_of(client, dee["room"])
        assert table.recorder is not None
        assert table.recorder.file.rounds[0].layouts == file.rounds[0].layouts
    assert client.post("/api/matches/0123456789abcdef/same_deal").status_code == 404


def _first_deal(client: TestClient) -> tuple[int, str]:
    """Start a two-seat room; its first match's seed and the first seat's layout."""
    with two_players(client) as (ann, _bob, _a, _b):
        table = table_of(client, ann.room)
        assert table.match is not None and table.round is not None
        return table.match.seed, str(table.round.tableaus[0].nertz)


def test_deal_seed_deals_every_room_alike(db_url: str, tmp_path: Any) -> None:
    """``nertz serve --deal-seed``: the same seed deals every room's first match alike; without
    one, deals are secret and random."""
    with TestClient(create_app(db_url, deal_seed=7)) as c:
        first, second = _first_deal(c), _first_deal(c)
    assert first == second
    with TestClient(create_app(f"sqlite:///{tmp_path / 'other.db'}", deal_seed=7)) as c:
        assert _first_deal(c) == first  # another server, the same seed: the same cards
    with TestClient(create_app(f"sqlite:///{tmp_path / 'random.db'}")) as c:
        assert _first_deal(c) != _first_deal(c)
