"""Teams at the server: under ``teams: split`` each partner plays only its half of the seat's
tableau (the Nertz pile, or the stock and waste; the work piles are both partners'), a partner
alone at a seat plays the whole tableau, and bots keep to their half too."""

from __future__ import annotations

import time

import pytest
from server_support import ask, create_room, hello, in_loop, join, table_of, wait_phase
from starlette.testclient import TestClient

from nertz.bots import Observation
from nertz.bots.driver import fits_hand, own_half_move
from nertz.match import Match
from nertz.moves import Kind, Move
from nertz.rules import Rules
from nertz.server.edge.app import create_app

SPLIT = {"preset": "pagat", "teams": "split"}


def test_partners_each_play_their_own_half(client: TestClient) -> None:
    ann = create_room(client, SPLIT, 2, "Ann")
    bob = join(client, ann.room, "Bob")
    cat = join(client, ann.room, "Cat")
    assert (bob.seat, cat.seat) == (1, 0)  # Cat partners Ann: the stock and waste
    with client.websocket_connect(f"/ws/{ann.room}") as a, \
            client.websocket_connect(f"/ws/{ann.room}") as c:
        hello(a, ann.token)
        hello(c, cat.token)
        a.send_json({"type": "start", "countdown_ms": 0})
        wait_phase(a, "playing")
        wait_phase(c, "playing")
        m = ask(a, {"type": "play", "id": "a1", "move": "T"})
        assert m["type"] == "rejected" and "other partner" in m["error"], m
        assert ask(c, {"type": "play", "id": "c1", "move": "T"})["type"] == "ack"
        table = table_of(client, ann.room)
        nertz_moves = [str(mv) for mv in table.round.legal_moves(0) if mv.src == "N"]
        for text in nertz_moves[:1]:
            m = ask(c, {"type": "play", "id": "c2", "move": text})
            assert m["type"] == "rejected" and "other partner" in m["error"], m


def test_a_partner_slot_that_is_not_there_is_named(client: TestClient) -> None:
    ann = create_room(client, SPLIT, 2, "Ann")
    bob = join(client, ann.room, "Bob")
    with client.websocket_connect(f"/ws/{ann.room}") as a:
        hello(a, ann.token)
        m = ask(a, {"type": "assign", "player": bob.player, "seat": 0, "hand": 7})
        assert m["code"] == "bad_hand", m
        assert m["message"] == "there is no partner slot 7 (slots: 0, 1)", m


def test_a_partner_alone_plays_the_whole_tableau(client: TestClient) -> None:
    """Nobody in the partner slot: the one partner turns the stock too (or the seat could
    never turn it), and the lobby lets the match start with the slot empty."""
    ann = create_room(client, SPLIT, 2, "Ann")
    join(client, ann.room, "Bob")
    with client.websocket_connect(f"/ws/{ann.room}") as a:
        hello(a, ann.token)
        a.send_json({"type": "start", "countdown_ms": 0})
        wait_phase(a, "playing")
        assert ask(a, {"type": "play", "id": "a1", "move": "T"})["type"] == "ack"


@pytest.mark.usefixtures("fast_bots")
def test_a_bot_alone_plays_a_split_seat(db_url: str) -> None:
    """A bot alone at a split seat turns its stock and plays its Nertz pile (a deal where its
    Nertz top goes somewhere soon)."""
    with TestClient(create_app(db_url, deal_seed=1)) as client:
        _bot_plays(client)


def _bot_plays(client: TestClient) -> None:
    ann = create_room(client, SPLIT, 2, "Ann")
    with client.websocket_connect(f"/ws/{ann.room}") as a:
        hello(a, ann.token)
        a.send_json({"type": "add_bot", "seat": 1, "bot": "greedy", "level": "expert"})
        a.send_json({"type": "start", "countdown_ms": 0})
        wait_phase(a, "playing")
        table = table_of(client, ann.room)
        deadline = time.monotonic() + 60
        kinds: set[str] = set()
        while time.monotonic() < deadline and not {"T", "N"} <= kinds:
            time.sleep(0.05)
            moves = in_loop(client, lambda: list(table.recorder.file.rounds[-1].moves))
            kinds = {"T" if mv.m.kind is Kind.TURN else mv.m.src for mv in moves if mv.p == 1}
        assert {"T", "N"} <= kinds, kinds


def test_a_bot_partner_keeps_to_its_half() -> None:
    rnd = Match(Rules.from_spec(SPLIT), 2, seed=3).deal()
    for hand in (0, 1):
        move = own_half_move(Observation.from_round(rnd, 0), hand)
        if move is not None:
            assert fits_hand(move, hand)
    assert fits_hand(Move.parse("1-2"), 0) and fits_hand(Move.parse("1-2"), 1)
    assert not fits_hand(Move.parse("T"), 0) and not fits_hand(Move.parse("W-F"), 0)
    assert not fits_hand(Move.parse("N-F"), 1)
    # the stock partner can always turn here
    assert own_half_move(Observation.from_round(rnd, 0), 1) is not None
