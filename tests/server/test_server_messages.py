"""Server messages are typed, and each event knows its public JSON: nothing hidden in it."""

from __future__ import annotations

import json

import pytest

from nertz.cards import Card
from nertz.engine import Round
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
from nertz.match import Match
from nertz.rules import Rules
from nertz.server import protocol
from nertz.server.room.messages import Ack, Error, Rejected, own_piles, table_json, tableau_json

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


# --------------------------------------------------------------------------- what the page is told


def _round(spec: dict[str, object], empty_nertz: bool = False) -> Round:
    rnd = Match(Rules.from_spec(spec), 2, 7).deal()
    if empty_nertz:
        rnd.tableaus[0].nertz.clear()  # seat 0 has played out its Nertz pile
    return rnd


@pytest.mark.parametrize(("spec", "empty", "calls"), [
    ({"preset": "pagat", "false_call": "rejected"}, False, False),
    ({"preset": "pagat", "false_call": "rejected"}, True, True),
    ({"preset": "pagat", "false_call": "penalised"}, False, True),  # calling too soon costs
    ({"preset": "pagat", "call": "auto", "false_call": "rejected"}, True, False),
])
def test_each_tableau_says_whether_its_seat_may_call(spec: dict[str, object], empty: bool,
                                                     calls: bool) -> None:
    rnd = _round(spec, empty)
    table = table_json(rnd, 0)
    assert table["tableaus"][0]["can_call"] is calls
    assert tableau_json(rnd, 0)["can_call"] is calls
    # The seat with cards left under rejected false calls may not; the engine agrees.
    assert table["tableaus"][1]["can_call"] is rnd.can_play(1, "NERTZ")


def test_a_call_is_no_longer_offered_once_the_round_ended() -> None:
    rnd = _round({"preset": "pagat", "false_call": "penalised"}, empty_nertz=True)
    rnd.play(0, "NERTZ")
    assert [t["can_call"] for t in table_json(rnd, -1)["tableaus"]] == [False, False]


@pytest.mark.parametrize(("preset", "starts"), [
    ("pagat", [1]), ("swinging_door", [1]), ("starter9", [9]), ("evil_jacks", [9]),
])
def test_the_table_names_the_ranks_that_open_a_foundation(preset: str, starts: list[int]
                                                          ) -> None:
    assert table_json(_round({"preset": preset}), 1)["starts"] == starts


def test_a_split_partner_is_told_which_piles_are_theirs() -> None:
    # The engine's own refusals decide: partner 0 plays the Nertz pile, partner 1 the stock and
    # the waste; a whole seat plays all three.
    assert own_piles(None) == ["N", "S", "W"]
    assert own_piles(0) == ["N"]
    assert own_piles(1) == ["S", "W"]
