"""Server messages are typed, and each event knows its public JSON: nothing hidden in it."""

from __future__ import annotations

import json

from nertz.cards import Card
from nertz.events import (
    Called,
    CardRevealed,
    CardsMoved,
    Ended,
    FalseCallPenalty,
    ResetDone,
    RoundEnded,
    StockTurned,
    StuckDeclared,
    StuckLapsed,
)
from nertz.server import protocol
from nertz.server.room.messages import Ack, Error, Rejected

AS, TWO = Card.parse("AS"), Card.parse("2S")


def test_every_event_says_its_public_json() -> None:
    events = [
        CardsMoved(0, "N-F", (AS,), "N", "F", 1, True),
        CardRevealed(1, 2, TWO),
        StockTurned(0, 3, False, TWO),
        StuckDeclared(2, "S"),
        ResetDone(("S", "N")),
        Called(0, 1500, False, "Nertz"),
        FalseCallPenalty(1, (AS, TWO), 10),
        RoundEnded(Ended.NERTZ, 0),
    ]
    kinds = [e.to_json()["kind"] for e in events]  # type: ignore[index]
    assert kinds == ["moved", "revealed", "turned", "stuck", "reset", "called", "false_call",
                     "ended"]
    assert StuckLapsed(0).to_json() is None  # its effect shows in the stuck flag


def test_a_false_call_tells_a_count_never_the_cards() -> None:
    public = FalseCallPenalty(1, (AS, TWO), 10).to_json()
    assert public == {"kind": "false_call", "seat": 1, "count": 2, "each": 10}
    assert "AS" not in json.dumps(public) and "2S" not in json.dumps(public)


def test_answers_encode_as_the_protocol_says() -> None:
    assert json.loads(protocol.encode(Ack("a1", "T", 120, 7))) == {
        "type": "ack", "id": "a1", "move": "T", "t": 120, "v": 7}
    assert json.loads(protocol.encode(Rejected("a2", "Q-Z", "not a move"))) == {
        "type": "rejected", "id": "a2", "move": "Q-Z", "error": "not a move"}
    assert json.loads(protocol.encode(Error("too_fast", "slow down"))) == {
        "type": "error", "code": "too_fast", "message": "slow down"}
    assert json.loads(protocol.encode(Error("bad_id", "x", "a3")))["id"] == "a3"
