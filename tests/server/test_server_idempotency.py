"""Durable idempotency (issue 8 item 2): a resent action id gets its first answer however old it
is, across restarts, on SQLite and PostgreSQL; the action is never applied twice, and an ack
answered again after a restart names the version of the update that carried the move."""

from __future__ import annotations

import pytest
from server_support import (
    FixedMatch,
    ask,
    hello,
    in_loop,
    layout,
    moves_of,
    recv_until,
    table_of,
    two_players,
)
from starlette.testclient import TestClient

import nertz.server.edge.app as app_module
import nertz.server.room.entries as entries_module
import nertz.server.room.lobby as lobby_module
from nertz.server.edge.app import create_app


def test_an_old_id_is_still_answered_not_applied(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hundreds of moves as fast as the test sends them (the human-speed limits are tested on
    # their own).
    monkeypatch.setattr(lobby_module, "MOVES_PER_SECOND", 1e9)
    monkeypatch.setattr(app_module, "MESSAGE_BURST", 1e9)
    with two_players(client) as (ann, _bob, a, _b):
        first = ask(a, {"type": "play", "id": "first", "move": "T"})
        assert first["type"] == "ack"
        for i in range(300):  # far more than any fixed window of remembered ids
            a.send_json({"type": "play", "id": f"n{i}", "move": "T"})
        recv_until(a, "ack", id="n299", timeout=120)
        table = table_of(client, ann.room)
        played = in_loop(client, lambda: len(moves_of(table)))
        assert ask(a, {"type": "play", "id": "first", "move": "T"}) == first
        assert in_loop(client, lambda: len(moves_of(table))) == played


def test_ids_and_their_answers_survive_a_restart(store_url: str) -> None:
    with TestClient(create_app(store_url)) as client, two_players(client) as (ann, bob, a, b):
        acked = ask(b, {"type": "play", "id": "once", "move": "T"})
        # Pagat has four work piles: refused whatever the (random) deal.
        refused = ask(b, {"type": "play", "id": "no", "move": "5-F"})
        assert acked["type"] == "ack" and refused["type"] == "rejected"
        # Another move after it, so the table's version has moved past the first ack's.
        assert ask(a, {"type": "play", "id": "later", "move": "T"})["type"] == "ack"
        b.send_json({"type": "sync", "since": None})
        before = recv_until(b, "state")[0]["table"]
    with TestClient(create_app(store_url)) as client, \
            client.websocket_connect(f"/ws/{ann.room}") as b:
        hello(b, bob.token)
        # The very same answers: the ack's v is the update that carried the move, from the
        # process before; the refusal is not tried again.
        assert ask(b, {"type": "play", "id": "once", "move": "T"}) == acked
        assert ask(b, {"type": "play", "id": "no", "move": "5-F"}) == refused
        # Another move under the used id is refused as such, not tried.
        assert ask(b, {"type": "play", "id": "no", "move": "T"})["code"] == "reused_id"
        b.send_json({"type": "sync", "since": None})
        after = recv_until(b, "state")[0]["table"]
        assert after["tableaus"] == before["tableaus"]


def test_a_move_that_crosses_the_rounds_end_is_rejected(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seat 0 empties its one-card Nertz pile (an automatic call ends the round); seat 1's
    move, sent before it heard, is refused as too late, not answered with an error."""
    monkeypatch.setattr(FixedMatch, "LAYOUTS", [[layout("AH", "3C 4C 5C 6C"),
                                                 layout("KD", "3D 4D 5D 6D")]])
    monkeypatch.setattr(entries_module, "Match", FixedMatch)
    rules = {"preset": "pagat", "nertz_pile_size": 1, "call": "auto",
             "blocked_round_end": False}
    with two_players(client, rules) as (_ann, _bob, a, b):
        assert ask(a, {"type": "play", "id": "win", "move": "N-F"})["type"] == "ack"
        recv_until(b, "round_over")
        late = ask(b, {"type": "play", "id": "late", "move": "T"})
        assert late["type"] == "rejected" and "over" in late["error"], late
        assert ask(b, {"type": "play", "id": "late", "move": "T"}) == late
