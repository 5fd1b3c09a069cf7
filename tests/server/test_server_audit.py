"""Findings of a security audit, each kept as a test of its fix: bounded replay uploads,
throttled messages of every kind, capped sockets, a hello deadline that frames do not extend,
limited room creation, names nobody can pass for another's."""

from __future__ import annotations

import json
import time

import pytest
from server_support import (
    StuckSocket,
    create_room,
    hello,
    hub_of,
    in_loop,
    join,
    quiet,
    recv,
    recv_until,
    table_of,
    through,
    two_players,
)
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

import nertz.server.edge.app as app_module
import nertz.server.edge.connection as connection_module
from nertz import replay

# --------------------------------------------------------------------------- HTTP: frames upload


def test_frames_upload_is_bounded(client: TestClient) -> None:
    moves = [{"t": i, "p": i % 8, "m": "T"} for i in range(app_module.MAX_REPLAY_MOVES + 1)]
    data = {"format": replay.FORMAT, "rules": "pagat", "players": [f"p{i}" for i in range(8)],
            "seed": 1, "rounds": [{"moves": moves}]}
    raw = json.dumps(data, separators=(",", ":")).encode()  # under the byte cap
    assert len(raw) < app_module.MAX_REPLAY_BYTES
    # One move too many: refused before any of it is played (the frames of a replay are about
    # ten times its size, and making them is real work).
    r = client.post("/api/replays/frames", content=raw)
    assert r.status_code == 413 and "moves" in r.json()["error"], r.text


def test_frames_upload_is_bounded_in_rounds_and_names_bad_numbers(client: TestClient) -> None:
    # Each round costs a deal and a whole table's frames, however few its moves.
    data = {"format": replay.FORMAT, "rules": "pagat", "players": ["a", "b"], "seed": 1,
            "rounds": [{} for _ in range(app_module.MAX_REPLAY_ROUNDS + 1)]}
    r = client.post("/api/replays/frames", content=json.dumps(data).encode())
    assert r.status_code == 413 and "rounds" in r.json()["error"], r.text
    # A number past the interpreter's digit cap is bad JSON, said so (it was a 500).
    raw = ('{"format":"nertz-replay/1","players":["a","b"],"seed":' + "1" * 5000
           + ',"rounds":[{}]}').encode()
    for path in ("/api/replays/frames", "/api/replays/analysis"):
        r = client.post(path, content=raw)
        assert r.status_code == 400 and r.json()["error"].startswith("not JSON"), r.text
    # A move naming a foundation past that cap: a 400 naming it, not a plain-text 500.
    data = {"format": replay.FORMAT, "rules": "pagat", "players": ["a", "b"], "seed": 1,
            "rounds": [{"moves": [{"t": 0, "p": 0, "m": "N-F" + "9" * 5000}]}]}
    for path in ("/api/replays/frames", "/api/replays/analysis"):
        r = client.post(path, content=json.dumps(data).encode())
        assert r.status_code == 400 and "play through" in r.json()["error"], r.text


def test_bodies_are_refused_by_their_declared_size(client: TestClient) -> None:
    """A body over the limit is refused on its Content-Length, before it is read."""
    big = b"x" * (app_module.MAX_REPLAY_BYTES + 1)
    r = client.post("/api/replays/frames", content=big)
    assert r.status_code == 413 and "at most" in r.json()["error"]
    r = client.post("/api/rooms", content=b"{" + b" " * 10_000 + b"}")
    assert r.status_code == 413


def test_every_answer_carries_the_security_headers(client: TestClient) -> None:
    for path in ("/", "/healthz", "/api/rooms/nope"):
        headers = client.get(path).headers
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["x-frame-options"] == "DENY"
        assert headers["x-content-type-options"] == "nosniff"


# --------------------------------------------------------------------------- throttling / DoS


def test_sync_is_throttled(client: TestClient) -> None:
    with two_players(client) as (_ann, _bob, a, _b):
        quiet(a, 0.2)
        for _ in range(200):
            a.send_json({"type": "sync", "since": None})
        got = through(a)
        states = [m for m in got if m["type"] == "state"]
        refused = [m for m in got if m.get("code") == "too_fast"]
        assert refused or len(states) < 50, (len(states), len(refused))
        # Full catch-ups have their own, lower limit: each is the whole table, and a socket
        # that asks for them and never reads piled them up in the server's memory. One past
        # the limit is held for its turn, not refused (the client waits for it).
        assert len(states) < 20, len(states)
        assert not any("sync" in m.get("message", "") for m in refused)
        a.send_json({"type": "sync", "since": None})
        assert recv_until(a, "state", timeout=60)[0]["type"] == "state"


def test_a_message_refused_as_too_many_carries_its_id(client: TestClient) -> None:
    """A play refused by the socket's message limit names its ``id``: the client can tell
    which move was refused instead of waiting for an answer that never comes."""
    with two_players(client) as (_ann, _bob, a, _b):
        quiet(a, 0.2)
        for i in range(120):
            a.send_json({"type": "play", "id": f"p{i}", "move": "T"})
        got = through(a)
        refused = [m for m in got if m.get("code") == "too_fast" and m.get("id") != "through"
                   and m.get("message", "").startswith("too many messages")]
        assert refused, [m.get("code") for m in got]
        assert all(m.get("id", "").startswith("p") for m in refused), refused[:3]


def test_host_commands_are_throttled(client: TestClient) -> None:
    ann = create_room(client, seats=4)
    bob = join(client, ann.room, "Bob")
    table = table_of(client, ann.room)
    with client.websocket_connect(f"/ws/{ann.room}") as a:
        hello(a, ann.token)
        seq0 = in_loop(client, lambda: table.seq)
        for i in range(150):
            a.send_json({"type": "assign", "player": bob.player, "seat": 1 + i % 3, "hand": 0})
        got = through(a)
        grew = in_loop(client, lambda: table.seq) - seq0
        assert any(m.get("code") == "too_fast" for m in got) or grew < 50, grew


def test_sockets_per_player_are_capped(client: TestClient) -> None:
    ann = create_room(client)
    from contextlib import ExitStack

    with ExitStack() as stack:
        accepted = 0
        for _ in range(40):
            ws = stack.enter_context(client.websocket_connect(f"/ws/{ann.room}"))
            if hello(ws, ann.token)["type"] == "state":
                accepted += 1
        assert accepted <= 8, accepted


def test_room_creation_is_limited(client: TestClient) -> None:
    codes = [client.post("/api/rooms", json={"seats": 2}).status_code for _ in range(300)]
    assert 429 in codes or len(hub_of(client).tables) < 300, (set(codes),
                                                             len(hub_of(client).tables))


def test_hello_timeout_cannot_be_refreshed(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "HELLO_TIMEOUT", 0.3)
    ann = create_room(client)
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        codes = []
        # A frame every half timeout: were the deadline refreshed by frames, the server would
        # never hang up, and the test would fail at this (generous, busy-machine) deadline.
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                ws.send_text("garbage")
                codes.append(recv(ws)["code"])
            except WebSocketDisconnect:
                codes.append("closed")
                break
            time.sleep(0.15)
        # Without a hello the server has given up and hung up, frames notwithstanding.
        assert codes[-2:] == ["no_hello", "closed"], codes


# --------------------------------------------------------------------------- names


def test_names_cannot_impersonate(client: TestClient) -> None:
    ann = create_room(client, seats=3)
    r1 = client.post(f"/api/rooms/{ann.room}/join", json={"name": "Ann"})
    r2 = client.post(f"/api/rooms/{ann.room}/join", json={"name": "Expert bot 2"})
    r3 = client.post(f"/api/rooms/{ann.room}/join", json={"name": "\u3164\u3164",
                                                         "spectator": True})
    assert {r1.status_code, r2.status_code, r3.status_code} != {200}
    # A bot's name by look, with a Cyrillic o, is a bot's name all the same.
    for looks_like_a_bot in ("Expert b\u043et 2", "Expert bot I", "Casual bot O"):
        r = client.post(f"/api/rooms/{ann.room}/join", json={"name": looks_like_a_bot})
        assert r.status_code == 409 and "bots' names" in r.json()["error"], r.text


def test_a_socket_that_stops_reading_is_cut_at_once() -> None:
    """Past :data:`MAX_QUEUE` waiting messages the socket is closed now (code 1008), not after
    its queue drains: a client that stopped reading would never drain it."""
    import asyncio

    async def main() -> tuple[bool, int | None]:
        ws = StuckSocket()
        conn = connection_module.Connection(ws)
        for _ in range(connection_module.MAX_QUEUE + 2):
            conn.send(b"{}")
        await asyncio.sleep(0.05)
        return conn.closed, ws.closed_with

    closed, code = asyncio.run(main())
    assert closed and code == 1008
