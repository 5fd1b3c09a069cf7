"""The WebSocket in-process: hello, malformed messages, host commands, play, de-duplication,
throttling, spectators, races, catching up, the Origin check, a whole match."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from server_support import (
    RACE_RULES,
    FixedMatch,
    apply_update,
    ask,
    create_room,
    drain,
    hello,
    hub_of,
    in_loop,
    join,
    moves_of,
    public,
    quiet,
    race_layouts,
    recv,
    recv_until,
    reply,
    table_of,
    two_players,
    wait_phase,
)
from starlette.testclient import TestClient, WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

import nertz.server.edge.fanout as fanout_module
import nertz.server.room.entries as entries_module
from nertz.bots import SPEEDS, GreedyBot, Observation, SpeedProfile
from nertz.rules import Rules
from nertz.server.edge.app import create_app
from nertz.server.protocol import MAX_MESSAGE_BYTES
from nertz.server.room.table import Table


@pytest.fixture
def race_deal(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Rooms deal the race layouts (seat 0: AH on its Nertz pile, 2H on its waste; seat 1: 2H on
    its Nertz pile)."""
    monkeypatch.setattr(FixedMatch, "LAYOUTS", [race_layouts()])
    monkeypatch.setattr(entries_module, "Match", FixedMatch)
    yield RACE_RULES


# --------------------------------------------------------------------------- hello


def test_hello_bad_token_then_good(client: TestClient) -> None:
    ann = create_room(client)
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        ws.send_json({"type": "ping", "id": "p", "sent": 1})
        assert recv(ws)["code"] == "no_hello"
        assert hello(ws, "not-a-token")["code"] == "bad_token"
        other = create_room(client, name="Zed")
        assert hello(ws, other.token)["code"] == "bad_token"  # a token of another room
        state = hello(ws, ann.token)
        assert state["type"] == "state"
        assert state["you"] == {"player": ann.player, "name": "Ann", "seat": 0, "hand": 0,
                                "host": True}
        assert state["table"] is None and state["room"]["phase"] == "lobby"
        assert ask(ws, {"type": "hello", "token": ann.token})["code"] == "bad_message"


def test_no_room(client: TestClient) -> None:
    with client.websocket_connect("/ws/nope") as ws:
        assert recv(ws)["code"] == "no_room"
        with pytest.raises(WebSocketDisconnect):
            recv(ws)


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "",
        "[1, 2]",
        '"hello"',
        "{}",
        '{"type": "nope"}',
        '{"type": "play"}',
        '{"type": "play", "id": "a", "move": "T", "extra": 1}',
        '{"type": "play", "id": 5, "move": "T"}',
        '{"type": "ping", "id": "a", "sent": "yesterday"}',
        '{"type": "start", "countdown_ms": 1.5}',
        '{"type": "ping", "id": "' + "x" * MAX_MESSAGE_BYTES + '"}',
        '{"type": "hello", "token": null}',
    ],
)
def test_malformed_messages(client: TestClient, raw: str) -> None:
    ann = create_room(client)
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        for said_hello in (False, True):
            ws.send_text(raw)
            m = reply(ws)
            assert m["type"] == "error" and m["code"] in ("bad_message", "no_hello"), m
            assert m["message"]
            if said_hello:
                assert m["code"] == "bad_message"
            else:
                hello(ws, ann.token)
        assert ask(ws, {"type": "ping", "id": "p", "sent": 2.5}) == {
            "type": "pong", "id": "p", "sent": 2.5, "server": pytest.approx(0, abs=1e12)}


def test_host_only_commands(client: TestClient) -> None:
    ann = create_room(client, seats=3)
    bob = join(client, ann.room, "Bob")
    commands: list[dict[str, Any]] = [
        {"type": "add_bot", "seat": 2, "bot": "greedy", "level": "expert"},
        {"type": "kick", "player": ann.player},
        {"type": "assign", "player": ann.player, "seat": None},
        {"type": "start", "countdown_ms": 0},
        {"type": "next_round"},
        {"type": "rematch"},
        {"type": "bot_seat", "seat": 0, "bot": "greedy", "level": "expert"},
    ]
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        hello(ws, bob.token)
        before = client.get(f"/api/rooms/{ann.room}").json()
        for command in commands:
            m = ask(ws, command)
            assert m["type"] == "error" and m["code"] == "not_host", (command, m)
        after = client.get(f"/api/rooms/{ann.room}").json()
        assert [p["seat"] for p in after["players"]] == [p["seat"] for p in before["players"]]
        assert after["host"] == ann.player and after["phase"] == "lobby"


def test_host_commands_checked(client: TestClient) -> None:
    ann = create_room(client, seats=2)
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        hello(ws, ann.token)
        checks: list[tuple[dict[str, Any], str]] = [
            ({"type": "add_bot", "seat": 5}, "bad_seat"),
            ({"type": "add_bot", "seat": 0}, "seat_taken"),
            ({"type": "add_bot", "bot": "nobody"}, "bad_bot"),
            ({"type": "add_bot", "level": "instant"}, "bad_bot"),
            ({"type": "kick", "player": ann.player}, "bad_target"),
            ({"type": "kick", "player": "ghost"}, "no_player"),
            ({"type": "start"}, "empty_seats"),
            ({"type": "next_round"}, "bad_phase"),
            ({"type": "rematch"}, "bad_phase"),
            ({"type": "play", "id": "a", "move": "T"}, "no_round"),
            ({"type": "assign", "player": ann.player, "seat": 0, "hand": 1}, "bad_hand"),
        ]
        for command, code in checks:
            m = ask(ws, command)
            assert m["type"] == "error" and m["code"] == code, (command, m)
        # Numbers out of their range are refused as they are read, the field named (nothing
        # quietly clamped, and no seat named that the client never sent).
        for command, field in (({"type": "add_bot", "seat": -1}, "$.seat"),
                               ({"type": "assign", "player": ann.player, "seat": -1}, "$.seat"),
                               ({"type": "bot_seat", "seat": -3}, "$.seat"),
                               ({"type": "start", "countdown_ms": -5000}, "$.countdown_ms"),
                               ({"type": "next_round", "countdown_ms": 10_001}, "$.countdown_ms"),
                               ({"type": "pointer", "at": "F", "y": -1e308}, "$.y")):
            m = ask(ws, command)
            assert m["code"] == "bad_message" and field in m["message"], (command, m)


def test_kick_in_lobby(client: TestClient) -> None:
    ann = create_room(client, seats=2)
    bob = join(client, ann.room, "Bob")
    with client.websocket_connect(f"/ws/{ann.room}") as a, \
            client.websocket_connect(f"/ws/{ann.room}") as b:
        hello(a, ann.token)
        hello(b, bob.token)
        a.send_json({"type": "kick", "player": bob.player})
        recv_until(b, "kicked")
        with pytest.raises(WebSocketDisconnect):
            recv(b)  # the close follows the message (however busy the machine)
    room = client.get(f"/api/rooms/{ann.room}").json()
    assert [p["name"] for p in room["players"]] == ["Ann"]
    with client.websocket_connect(f"/ws/{ann.room}") as b:
        assert hello(b, bob.token)["code"] == "bad_token"


# --------------------------------------------------------------------------- play


def test_spectators_cannot_play(client: TestClient) -> None:
    with two_players(client) as (ann, _bob, _a, _b):
        cy = join(client, ann.room, "Cy")
        assert cy.seat is None  # mid-match newcomers watch
        with client.websocket_connect(f"/ws/{ann.room}") as c:
            state = hello(c, cy.token)
            assert state["you"]["seat"] is None and state["table"]["seat"] == -1
            for move in ("T", "N-F", "1-2"):
                m = ask(c, {"type": "play", "id": move, "move": move})
                assert m["type"] == "error" and m["code"] == "not_seated", m
                assert m["id"] == move


def test_play_acks_and_rejects(client: TestClient) -> None:
    with two_players(client) as (_ann, _bob, a, b):
        m = ask(a, {"type": "play", "id": "t1", "move": "T"})
        assert m["type"] == "ack" and m["move"] == "T" and m["id"] == "t1"
        update, _ = recv_until(b, "update", v=m["v"])
        assert update["seat"] == 0 and update["move"] == "T"
        assert update["t"] == m["t"] and update["events"][0]["kind"] == "turned"
        m = ask(a, {"type": "play", "id": "bad", "move": "Q-Z"})
        assert m["type"] == "rejected" and m["id"] == "bad" and m["error"]
        m = ask(a, {"type": "play", "id": "bad2", "move": "5-F"})  # four work piles
        assert m["type"] == "rejected"
        for bad_id in ("", "x" * 65, "a\x1b[2J", "b\u202e", "c\n"):
            m = ask(a, {"type": "play", "id": bad_id, "move": "T"})
            assert m["type"] == "error" and m["code"] == "bad_id"
            assert m.get("id") is None, m  # refused because it is echoed: so never echoed
            m = ask(a, {"type": "ping", "id": bad_id, "sent": 1.0})
            assert m["type"] == "error" and m["code"] == "bad_id" and m.get("id") is None, m
        # The server decides who plays: a claimed partner slot counts for nothing.
        m = ask(a, {"type": "play", "id": "t2", "move": "T", "hand": 1})
        assert m["type"] == "ack"


def test_action_ids_are_deduplicated(client: TestClient, race_deal: Any) -> None:
    with two_players(client, race_deal) as (ann, _bob, a, b):
        first = ask(a, {"type": "play", "id": "n1", "move": "N-F"})
        assert first["type"] == "ack"
        again = ask(a, {"type": "play", "id": "n1", "move": "N-F"})
        assert again == first
        # A different move under the same id is an error, and is not applied either.
        again = ask(a, {"type": "play", "id": "n1", "move": "T"})
        assert (again["type"], again["code"], again["id"]) == ("error", "reused_id", "n1")
        rejected = ask(a, {"type": "play", "id": "r1", "move": "1-F"})
        assert rejected["type"] == "rejected"
        assert ask(a, {"type": "play", "id": "r1", "move": "1-F"}) == rejected
        assert ask(a, {"type": "play", "id": "r1", "move": "N-F"})["code"] == "reused_id"
        table = table_of(client, ann.room)
        moves = in_loop(client, lambda: [str(m.m) for m in moves_of(table)])
        assert moves == ["N-F"]
        updates = [m for m in quiet(b) if m["type"] == "update"]
        assert [u["move"] for u in updates] == ["N-F"]
        # Bob's ids are his own: the same id from him is a new action.
        m = ask(b, {"type": "play", "id": "n1", "move": "T"})
        assert m["type"] == "ack" and m["move"] == "T"


def test_too_fast(client: TestClient) -> None:
    with two_players(client) as (ann, _bob, a, _b):
        for i in range(20):
            a.send_json({"type": "play", "id": f"t{i}", "move": "T"})
        answers: dict[str, dict[str, Any]] = {}
        while len(answers) < 20:
            m = recv(a)
            if (m.get("id", "").startswith("t") and "code" in m) or m["type"] == "ack":
                answers[m["id"]] = m
        fast = [m for m in answers.values() if m["type"] == "error"]
        acks = [m for m in answers.values() if m["type"] == "ack"]
        assert fast and all(m["code"] == "too_fast" for m in fast)
        assert 8 <= len(acks) <= 12
        table = table_of(client, ann.room)
        assert in_loop(client, lambda: len(moves_of(table))) == len(acks)


def test_lost_race_names_the_winner(client: TestClient, race_deal: Any) -> None:
    with two_players(client, race_deal) as (_ann, _bob, a, b):
        assert ask(a, {"type": "play", "id": "1", "move": "N-F"})["type"] == "ack"
        won = ask(a, {"type": "play", "id": "2", "move": "W-F1"})
        assert won["type"] == "ack"
        lost = ask(b, {"type": "play", "id": "3", "move": "N-F1"})
        assert lost["type"] == "rejected" and lost["move"] == "N-F1"
        race = lost["race"]
        assert race["winner"] == 0 and race["winner_name"] == "Ann" and race["foundation"] == 1
        assert race["margin_ms"] >= 0
        assert "race for F1 lost to seat 0" in lost["error"]
        assert race["card"] == "2H"
        # The winner is told too, with the same margin.
        told = reply(a)
        assert told == {"type": "race_won", "loser": 1, "loser_name": "Bob", "foundation": 1,
                        "card": "2H", "margin_ms": race["margin_ms"]}
        # Everyone sees it happen, as at a real table: a watcher too.
        with client.websocket_connect(f"/ws/{_ann.room}") as w:
            hello(w, join(client, _ann.room, "Cy", spectator=True).token)
            lost = ask(b, {"type": "play", "id": "3b", "move": "N-F1"})
            assert lost["type"] == "rejected" and lost["race"]["winner"] == 0
            seen = recv_until(w, "race")[0]
            assert seen == {"type": "race", "winner": 0, "winner_name": "Ann", "loser": 1,
                            "loser_name": "Bob", "foundation": 1, "card": "2H",
                            "margin_ms": lost["race"]["margin_ms"]}
            assert reply(a)["type"] == "race_won"
        lost = ask(b, {"type": "play", "id": "4", "move": "N-F"})
        assert lost["type"] == "rejected" and lost["race"]["winner"] == 0
        assert reply(a)["type"] == "race_won"
        # Bob's 2H stays where it was.
        b.send_json({"type": "sync", "since": None})
        state = recv_until(b, "state")[0]
        assert state["table"]["tableaus"][1]["nertz_top"] == "2H"
        # Both races are in the race log: the match's replay file, and so the table's log.
        table = table_of(client, _ann.room)
        assert table.recorder is not None
        races = in_loop(client, lambda: table.recorder.file.to_json()["rounds"][-1]["races"])
        assert [(r["winner"], r["loser"], r["card"], r["foundation"]) for r in races] == [
            (0, 1, "2H", 1)] * 3
        assert races[0]["margin_ms"] == race["margin_ms"]
        store = hub_of(client).store
        entries = in_loop(client, store.load_log, table.id)
        rebuilt = in_loop(client, Table.restore, store, table.id, table.code, table.rules,
                          table.seats, entries)
        assert rebuilt.recorder is not None
        assert rebuilt.recorder.file.to_json()["rounds"][-1]["races"] == races
        in_loop(client, rebuilt.close)


def test_full_match_with_a_bot(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A person (played by the test from its views alone) and a bot play a whole match, on a
    fixed deal (a random one now and then takes the two beyond the test's patience)."""
    with TestClient(create_app(db_url, deal_seed=4)) as client:
        _full_match_with_a_bot(client, monkeypatch)


def _full_match_with_a_bot(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    # A bot slow enough that the test's person, polling every 0.12 s, gets moves in too.
    monkeypatch.setitem(SPEEDS, "beginner", SpeedProfile("beginner", 400, 200))
    spec = {"preset": "pagat", "rounds": 1, "nertz_pile_size": 5}
    ann = create_room(client, spec, 2, "Ann")
    rules = Rules.from_spec(spec)
    with client.websocket_connect(f"/ws/{ann.room}") as a:
        hello(a, ann.token)
        a.send_json({"type": "add_bot", "seat": 1, "bot": "greedy", "level": "beginner"})
        a.send_json({"type": "start", "countdown_ms": 0})
        view = wait_phase(a, "playing")["table"]
        bot = GreedyBot()
        bot.start(0, rules, 1)
        n = 0
        mine = 0
        waiting = 0
        rejected: list[dict[str, Any]] = []
        result = None
        deadline = time.monotonic() + 240  # a whole match, on a busy machine
        while result is None:
            assert time.monotonic() < deadline, (view, rejected[-5:])
            for m in drain(a, 0.12):
                if m["type"] == "update":
                    apply_update(view, m)
                elif m["type"] == "ack":
                    mine += 1
                elif m["type"] == "rejected":
                    rejected.append(m)
                elif m["type"] == "round_over":
                    result = m["result"]
                elif m["type"] == "error":
                    # A move that reached the table after the round closed: no round to play.
                    assert m["code"] == "no_round", m
                else:
                    assert m["type"] in ("room", "latency"), m
            if result is None and view["ended"] is None:
                choice = bot.decide(Observation.from_view(view, rules))
                waiting = 0 if choice is not None else waiting + 1
                # The bot waits for the table; a person who waits long says stuck.
                move = str(choice) if choice is not None else "STUCK" if waiting % 8 == 0 else ""
                if move:
                    n += 1
                    a.send_json({"type": "play", "id": str(n), "move": move})
        assert result["over"] and result["match"]
        assert mine >= 1, rejected
        table = table_of(client, ann.room)
        seats = in_loop(client, lambda: {tm.p for tm in moves_of(table)})
        assert seats == {0, 1}


# --------------------------------------------------------------------------- catching up


def test_catch_up_with_since(client: TestClient) -> None:
    with two_players(client) as (ann, bob, a, b):
        quiet(b)
        b.send_json({"type": "sync", "since": None})
        state = recv_until(b, "state")[0]
        view, seen = state["table"], state["v"]
    # Bob is gone (both sockets closed); Ann comes back and plays on.
    with client.websocket_connect(f"/ws/{ann.room}") as a:
        hello(a, ann.token)
        for i in range(5):
            assert ask(a, {"type": "play", "id": f"x{i}", "move": "T"})["type"] == "ack"
    with client.websocket_connect(f"/ws/{ann.room}") as b:
        b.send_json({"type": "hello", "token": bob.token, "since": seen})
        caught, missed = recv_until(b, "caught_up")
        versions = [m["v"] for m in missed]
        assert versions == list(range(seen + 1, caught["v"] + 1))
        assert caught["you"]["seat"] == 1
        updates = [m for m in missed if m["type"] == "update"]
        assert [u["move"] for u in updates] == ["T"] * 5
        for u in updates:
            apply_update(view, u)
        b.send_json({"type": "sync", "since": None})
        fresh = recv_until(b, "state")[0]
        assert public(view) == public(fresh["table"])
        # Nothing missed: just caught_up.
        b.send_json({"type": "sync", "since": fresh["v"]})
        caught, missed = recv_until(b, "caught_up")
        assert caught["v"] == fresh["v"] and missed == []


def test_too_old_since_gets_the_whole_state(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fanout_module, "HISTORY", 4)
    with two_players(client) as (_ann, _bob, a, b):
        quiet(b)
        for i in range(6):
            assert ask(a, {"type": "play", "id": f"x{i}", "move": "T"})["type"] == "ack"
        b.send_json({"type": "sync", "since": 1})
        state = recv_until(b, "state")[0]
        assert state["you"]["seat"] == 1
        assert state["table"]["tableaus"][0]["waste_count"] > 0
        b.send_json({"type": "sync", "since": state["v"] + 100})  # from the future: resync
        assert recv_until(b, "state")[0]["v"] == state["v"]


# --------------------------------------------------------------------------- origin


@pytest.mark.parametrize(
    ("origin", "ok"),
    [
        (None, True),
        ("http://testserver", True),
        ("https://TESTSERVER", True),
        ("http://evil.example", False),
        ("http://testserver.evil.example", False),
        ("null", False),
    ],
)
def test_origin(client: TestClient, origin: str | None, ok: bool) -> None:
    ann = create_room(client)
    headers = {} if origin is None else {"origin": origin}
    if ok:
        with client.websocket_connect(f"/ws/{ann.room}", headers=headers) as ws:
            assert hello(ws, ann.token)["type"] == "state"
    else:
        # Refused at the handshake as the HTTP routes refuse: a status and a JSON error.
        with pytest.raises(WebSocketDenialResponse) as info, \
                client.websocket_connect(f"/ws/{ann.room}", headers=headers):
            pass
        assert info.value.status_code == 403
        assert "origin not allowed" in info.value.json()["error"]
