"""Others at the table: a seat's drag (its pointer and the card it holds) and its quick
reactions pass to everyone, unversioned; pointers thinned to ten a second, reactions limited,
and a pointer shows a card only while that card is face up to every seat."""

from __future__ import annotations

import time
from typing import Any

import pytest
from server_support import (
    RACE_RULES,
    FixedMatch,
    ask,
    create_room,
    hello,
    join,
    quiet,
    race_layouts,
    recv_until,
    two_players,
)
from starlette.testclient import TestClient

import nertz.server.room.entries as entries_module
import nertz.server.room.lobby as lobby
from nertz.server.room.lobby import EMOTE_BURST


@pytest.fixture
def race_deal(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Seat 0: KD under AH on its Nertz pile, 2H on its waste, 3C 4C 5C 6C on its work piles."""
    monkeypatch.setattr(FixedMatch, "LAYOUTS", [race_layouts()])
    monkeypatch.setattr(entries_module, "Match", FixedMatch)
    return RACE_RULES


def pointers(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["type"] == "pointer"]


def test_a_drag_shows_its_card_only_while_it_is_face_up(
    client: TestClient, race_deal: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every pointer of this test passes (the thinning has a test of its own).
    monkeypatch.setattr(lobby, "POINTERS_PER_SECOND", 1000.0)
    with two_players(client, race_deal) as (ann, _bob, a, b):
        a.send_json({"type": "pointer", "at": "own", "x": 0.25, "y": 0.5, "card": "AH",
                     "src": "N"})
        m, _ = recv_until(b, "pointer")
        assert m == {"type": "pointer", "seat": 0, "player": ann.player, "at": "own",
                     "x": 0.25, "y": 0.5, "card": "AH", "src": "N"}
        assert "v" not in m  # a passing moment, not state
        # KD lies under the AH (hidden), 7S is nowhere on Ann's piles: the pointer goes on
        # without a card.
        for card, src in (("KD", "N"), ("7S", "1"), ("2H", "N")):
            a.send_json({"type": "pointer", "at": "F", "x": 1, "y": 0, "card": card,
                         "src": src})
            m, _ = recv_until(b, "pointer")
            assert "card" not in m and "src" not in m and (m["x"], m["y"]) == (1.0, 0.0)
        # A place off the region is an error naming it, and nobody sees a pointer.
        a.send_json({"type": "pointer", "at": "F", "x": 9, "y": 0.5})
        m, _ = recv_until(a, "error")
        assert m["code"] == "bad_message" and "$.x" in m["message"], m
        a.send_json({"type": "pointer", "at": "F", "x": 0.5, "y": 0.5, "card": "3C",
                     "src": "1"})
        assert recv_until(b, "pointer")[0]["card"] == "3C"
        # The drag ends: told once; a second end is not passed on.
        a.send_json({"type": "pointer", "at": None})
        a.send_json({"type": "pointer", "at": None})
        m, _ = recv_until(b, "pointer")
        assert m == {"type": "pointer", "seat": 0, "player": ann.player}
        assert ask(a, {"type": "play", "id": "p1", "move": "N-F"})["type"] == "ack"
        # AH is on a foundation now, KD on top of the Nertz pile: both face up.
        a.send_json({"type": "pointer", "at": "own", "x": 0.1, "y": 0.1, "card": "KD",
                     "src": "N"})
        assert recv_until(b, "pointer")[0]["card"] == "KD"


def test_pointers_are_thinned_to_ten_a_second(client: TestClient) -> None:
    with two_players(client) as (_ann, _bob, a, b):
        start = time.monotonic()
        for i in range(30):
            a.send_json({"type": "pointer", "at": "own", "x": i / 30, "y": 0.5})
        a.send_json({"type": "ping", "id": "last"})
        recv_until(a, "pong", id="last")
        elapsed = time.monotonic() - start
        got = pointers(quiet(b, 0.3))
        # A burst of five, then ten a second (over however long a busy machine took to take
        # them in): never all thirty sent at once.
        assert 1 <= len(got) <= 5 + 10 * elapsed + 1, (len(got), elapsed)
        assert len(got) < 30
        assert all(m["type"] == "pointer" for m in got)
        # Nothing came back as an error: pointers are dropped quietly.
        assert not [m for m in quiet(a, 0.1) if m["type"] == "error"]


def test_no_pointer_is_passed_on_outside_play(client: TestClient) -> None:
    ann = create_room(client, "pagat", 2, "Ann")
    bob = join(client, ann.room, "Bob")
    with client.websocket_connect(f"/ws/{ann.room}") as a, \
            client.websocket_connect(f"/ws/{ann.room}") as b:
        hello(a, ann.token)
        hello(b, bob.token)
        a.send_json({"type": "pointer", "at": "own", "x": 0.5, "y": 0.5})
        assert ask(a, {"type": "ping", "id": "x"})["type"] == "pong"
        assert not pointers(quiet(b, 0.2))


def test_emotes_are_a_fixed_set_shown_by_the_seat_and_limited(client: TestClient) -> None:
    with two_players(client) as (ann, bob, a, b):
        a.send_json({"type": "emote", "emote": "wave"})
        for ws in (a, b):
            m, _ = recv_until(ws, "emote")
            assert m == {"type": "emote", "seat": 0, "player": ann.player, "emote": "wave"}
        bad = ask(a, {"type": "emote", "emote": "<b>free chat</b>"})
        assert bad["type"] == "error" and bad["code"] == "bad_message" and "emote" in bad["message"]
        for _ in range(EMOTE_BURST + 1):
            b.send_json({"type": "emote", "emote": "gg"})
        refused = ask(b, {"type": "ping", "id": "after"})  # the one answer before the pong
        assert refused["type"] == "error" and refused["code"] == "too_fast"
        seen = [m for m in quiet(a, 0.2) if m["type"] == "emote" and m["player"] == bob.player]
        assert len(seen) == EMOTE_BURST


def test_a_spectator_sends_no_emote(client: TestClient) -> None:
    ann = create_room(client, "pagat", 2, "Ann")
    eve = join(client, ann.room, "Eve", spectator=True)
    with client.websocket_connect(f"/ws/{ann.room}") as e:
        hello(e, eve.token)
        m = ask(e, {"type": "emote", "emote": "wow"})
        assert m["type"] == "error" and m["code"] == "not_seated"


def test_a_spectator_sends_no_pointer(client: TestClient) -> None:
    # Answered as a spectator's emote is (it went unanswered): a spectator has no cards to drag,
    # so a client that sends one is wrong, not late, and is told.
    with two_players(client) as (ann, _bob, a, _b):
        eve = join(client, ann.room, "Eve", spectator=True)
        with client.websocket_connect(f"/ws/{ann.room}") as e:
            hello(e, eve.token)
            # A drag's end is dropped unanswered: it may come from a drag begun while seated,
            # the host having moved the player to watching meanwhile (no error for that).
            e.send_json({"type": "pointer"})
            assert ask(e, {"type": "ping", "id": "p1"})["type"] == "pong"
            m = ask(e, {"type": "pointer", "at": "F", "x": 0.5, "y": 0.5})
            assert m["type"] == "error" and m["code"] == "not_seated", m
            assert not pointers(quiet(a, 0.2))
