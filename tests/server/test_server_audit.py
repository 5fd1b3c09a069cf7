"""Security audit: each test demonstrates one finding. A test marked ``xfail(strict=True)``
shows a real weakness (it fails today; it will pass, and so flag itself, once fixed)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from server_support import (
    RACE_RULES,
    FixedMatch,
    create_room,
    hello,
    hub_of,
    in_loop,
    join,
    layout,
    quiet,
    recv,
    table_of,
    two_players,
)
from starlette.testclient import TestClient

import nertz.server.app as app_module
import nertz.server.table as table_module
from nertz import replay

# --------------------------------------------------------------------------- HTTP: frames upload


@pytest.mark.xfail(strict=True, reason="VULN: /api/replays/frames is an unauthenticated CPU and "
                   "memory amplifier that runs synchronously on the event loop")
def test_frames_upload_is_bounded(client: TestClient) -> None:
    moves = [{"t": i, "p": i % 8, "m": "T"} for i in range(40_000)]
    data = {"format": replay.FORMAT, "rules": "pagat", "players": [f"p{i}" for i in range(8)],
            "seed": 1, "rounds": [{"moves": moves}]}
    raw = json.dumps(data, separators=(",", ":")).encode()  # ~1 MB, well under the 8 MB cap
    t0 = time.monotonic()
    r = client.post("/api/replays/frames", content=raw)
    took = time.monotonic() - t0
    # Either refused (too many moves) or a modest answer, fast: not 10x the bytes, not seconds
    # of a blocked event loop (every room of the server freezes meanwhile).
    assert r.status_code >= 400 or (len(r.content) < 10 * len(raw) and took < 0.5), (
        r.status_code, len(raw), len(r.content), took)


# --------------------------------------------------------------------------- hidden information


def _stuck_layouts(seat1_ace_in_stock: bool) -> list[Any]:
    """Both seats: Nertz top KH (5 cards), work tops 2H 2D 2S 2C, 43 stock cards. Every ace is
    under seat 0's Nertz top; seat 1 has either every ace under its Nertz top too or the AC in
    its stock (the QC under its Nertz top instead). The two deals look the same to everyone."""
    seat0 = layout("AS AH AD AC KH", "2H 2D 2S 2C")
    seat1 = layout("AS AH AD QC KH" if seat1_ace_in_stock else "AS AH AD AC KH",
                   "2H 2D 2S 2C")
    return [seat0, seat1]


def _public_run(client: TestClient, monkeypatch: pytest.MonkeyPatch,
                ace_in_stock: bool) -> tuple[Any, list[str]]:
    monkeypatch.setattr(FixedMatch, "LAYOUTS", [_stuck_layouts(ace_in_stock)])
    monkeypatch.setattr(table_module, "Match", FixedMatch)
    rules = dict(RACE_RULES, nertz_pile_size=5)
    with two_players(client, rules) as (_ann, _bob, a, _b):
        a.send_json({"type": "sync", "since": None})
        msgs = quiet(a, 0.4)
        state = next(m for m in msgs if m["type"] == "state")
        seen = [m["move"] for m in msgs if m["type"] == "update"]
        tabs = state["table"]["tableaus"]
        # What the table shows is the same in both deals (stock rotated or not, its top hidden).
        public = [(t["nertz_top"], t["nertz_count"], t["work"], t["stock_count"]) for t in tabs]
    return public, seen


@pytest.mark.xfail(strict=True, reason="VULN: the server's automatic reset (all_stuck look-ahead "
                   "over stocks and the cards under Nertz tops) tells every client about hidden "
                   "cards of other seats")
def test_auto_reset_does_not_depend_on_hidden_cards(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    public_a, moves_a = _public_run(client, monkeypatch, ace_in_stock=False)
    public_b, moves_b = _public_run(client, monkeypatch, ace_in_stock=True)
    assert public_a == public_b  # identical public tables...
    # ...yet one gets a RESET broadcast at t=0 and the other does not: seat 0 learns whether
    # seat 1's face-down stock holds an ace.
    assert moves_a == moves_b, (moves_a, moves_b)


# --------------------------------------------------------------------------- throttling / DoS


@pytest.mark.xfail(strict=True, reason="VULN: sync is not throttled: each one makes and sends a "
                   "whole state (CPU and bandwidth amplification)")
def test_sync_is_throttled(client: TestClient) -> None:
    with two_players(client) as (_ann, _bob, a, _b):
        quiet(a, 0.2)
        for _ in range(200):
            a.send_json({"type": "sync", "since": None})
        got = quiet(a, 0.5)
        states = [m for m in got if m["type"] == "state"]
        refused = [m for m in got if m.get("code") == "too_fast"]
        assert refused or len(states) < 50, (len(states), len(refused))


@pytest.mark.xfail(strict=True, reason="VULN: host commands (assign/kick/add_bot) are not "
                   "throttled: each writes a log entry forever and broadcasts to everyone")
def test_host_commands_are_throttled(client: TestClient) -> None:
    ann = create_room(client, seats=4)
    bob = join(client, ann.room, "Bob")
    table = table_of(client, ann.room)
    with client.websocket_connect(f"/ws/{ann.room}") as a:
        hello(a, ann.token)
        seq0 = in_loop(client, lambda: table.seq)
        for i in range(150):
            a.send_json({"type": "assign", "player": bob.player, "seat": 1 + i % 3, "hand": 0})
        got = quiet(a, 0.5)
        grew = in_loop(client, lambda: table.seq) - seq0
        assert any(m.get("code") == "too_fast" for m in got) or grew < 50, grew


@pytest.mark.xfail(strict=True, reason="VULN: one token may open any number of sockets "
                   "(every broadcast is sent to each: amplification)")
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


@pytest.mark.xfail(strict=True, reason="VULN: room creation is unlimited and rooms are never "
                   "closed or evicted (memory and restart time grow without bound)")
def test_room_creation_is_limited(client: TestClient) -> None:
    codes = [client.post("/api/rooms", json={"seats": 2}).status_code for _ in range(300)]
    assert 429 in codes or len(hub_of(client).tables) < 300, (set(codes),
                                                             len(hub_of(client).tables))


@pytest.mark.xfail(strict=True, reason="VULN: the hello timeout restarts on every frame: an "
                   "unauthenticated socket stays open forever by sending garbage")
def test_hello_timeout_cannot_be_refreshed(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "HELLO_TIMEOUT", 0.3)
    ann = create_room(client)
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        codes = []
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            ws.send_text("garbage")
            codes.append(recv(ws)["code"])
            time.sleep(0.15)
        # After 1.5 s (five timeouts) without a hello the server should have given up.
        assert "no_hello" in codes, codes


# --------------------------------------------------------------------------- names


@pytest.mark.xfail(strict=True, reason="VULN: names are not unique and may copy a bot's or "
                   "another player's name, or be invisible (U+3164)")
def test_names_cannot_impersonate(client: TestClient) -> None:
    ann = create_room(client, seats=3)
    r1 = client.post(f"/api/rooms/{ann.room}/join", json={"name": "Ann"})
    r2 = client.post(f"/api/rooms/{ann.room}/join", json={"name": "Expert bot 2"})
    r3 = client.post(f"/api/rooms/{ann.room}/join", json={"name": "\u3164\u3164",
                                                         "spectator": True})
    assert {r1.status_code, r2.status_code, r3.status_code} != {200}
