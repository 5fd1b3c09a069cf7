"""Notation (SPEC sections 1, 2, 4): cards, moves and layouts read back what they write."""

from __future__ import annotations

import json

import pytest
from _support import layout
from hypothesis import given, settings
from hypothesis import strategies as st

from nertz.cards import JOKERS, RANKS, STANDARD_DECK, SUITS, Card, deck
from nertz.errors import NotationError
from nertz.match import Match
from nertz.moves import CALL, STUCK, STUCK_NERTZ, TURN, Kind, Move, to_foundation, to_work
from nertz.rules import PRESETS, Rules
from nertz.state import Layout

ALL_CARDS = list(deck(True))


# ------------------------------------------------------------------------------- cards


def test_deck_sizes_and_uniqueness() -> None:
    assert len(deck()) == 52 == len(set(deck()))
    assert len(deck(True)) == 54 == len(set(deck(True)))
    assert {str(x) for x in STANDARD_DECK} == {r + s for r in RANKS for s in SUITS}
    assert [str(x) for x in JOKERS] == ["X1", "X2"]


@pytest.mark.parametrize("card", ALL_CARDS, ids=str)
def test_every_card_round_trips(card: Card) -> None:
    text = str(card)
    assert Card.parse(text) == card
    assert Card.parse(text.lower()) == card
    assert card.code == text
    assert len(text) == 2


@pytest.mark.parametrize(
    ("text", "canonical"),
    [("10H", "TH"), ("10h", "TH"), ("th", "TH"), ("Th", "TH"), ("10s", "TS"), ("as", "AS"),
     ("kd", "KD"), ("x1", "X1"), ("X2", "X2"), (" 7c ", "7C"), ("qH", "QH")],
)
def test_card_parse_accepts_ten_and_lower_case(text: str, canonical: str) -> None:
    assert str(Card.parse(text)) == canonical


def test_card_colours() -> None:
    assert Card.parse("TH").red and Card.parse("2D").red
    assert not Card.parse("TS").red and not Card.parse("2C").red


@pytest.mark.parametrize(
    "text", ["", "1H", "11H", "14S", "ZH", "AZ", "A", "H", "X3", "X0", "AHH", "10", "1 0H", "T-H"]
)
def test_bad_cards_raise_notation_error_quoting_the_text(text: str) -> None:
    with pytest.raises(NotationError) as info:
        Card.parse(text)
    assert repr(text) in str(info.value) or text.strip() in str(info.value)


# ------------------------------------------------------------------------------- moves

SOURCES = ["N", "W", "1", "2", "3", "4", "5"]
PILES = ["1", "2", "3", "4", "5"]


@st.composite
def moves(draw: st.DrawFn) -> Move:
    shape = draw(st.integers(0, 7))
    if shape == 0:
        return draw(st.sampled_from([TURN, CALL, STUCK, STUCK_NERTZ]))
    if shape <= 2:
        return to_foundation(draw(st.sampled_from(SOURCES)), draw(st.integers(0, 60)))
    if shape <= 4:
        return to_work(draw(st.sampled_from(SOURCES)), int(draw(st.sampled_from(PILES))))
    src = draw(st.sampled_from(PILES))
    return to_work(src, int(draw(st.sampled_from(PILES))), draw(st.sampled_from(ALL_CARDS)))


@settings(max_examples=300, derandomize=True)
@given(moves())
def test_every_move_round_trips(move: Move) -> None:
    text = str(move)
    assert Move.parse(text) == move
    assert Move.parse(text.lower()) == move
    assert Move.parse(f"  {text}  ") == move
    assert str(Move.parse(text)) == text


def test_every_move_shape_round_trips_exhaustively() -> None:
    texts = ["T", "NERTZ", "STUCK", "STUCK N"]
    for src in SOURCES:
        texts += [f"{src}-F", *(f"{src}-F{k}" for k in range(1, 25))]
        texts += [f"{src}-{d}" for d in PILES]
    for src in PILES:
        for card in ALL_CARDS:
            texts += [f"{src}:{card}-{d}" for d in PILES]
    for text in texts:
        move = Move.parse(text)
        assert str(move) == text
        assert Move.parse(str(move)) == move


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("n-f", "N-F"), ("w-f3", "W-F3"), ("3:10h-1", "3:TH-1"), ("3:th-1", "3:TH-1"),
        ("STUCK S", "STUCK"), ("stuck", "STUCK"), ("stuck n", "STUCK N"), ("t", "T"),
        ("Nerts", "NERTZ"), ("POUNCE", "NERTZ"), ("hoorah", "NERTZ"), ("Squeal", "NERTZ"),
        ("nertz", "NERTZ"), ("5-F", "5-F"), ("5-1", "5-1"), ("N-F12", "N-F12"),
        ("  N-2 ", "N-2"),
    ],
)
def test_move_parse_canonical(text: str, canonical: str) -> None:
    assert str(Move.parse(text)) == canonical


def test_move_fields() -> None:
    m = Move.parse("3:7H-1")
    assert m.kind is Kind.TO_WORK and m.src == "3" and m.dst == "1"
    assert m.card == Card.parse("7H") and m.work_src == 2 and m.work_dst == 0
    f = Move.parse("N-F4")
    assert f.kind is Kind.TO_FOUNDATION and f.foundation == 4 and f.work_src == -1
    assert Move.parse("W-F").foundation == 0
    assert Move.parse("STUCK N").stuck == "N"


@pytest.mark.parametrize(
    "text",
    [
        "Q-Z", "7-F", "6-1", "1-6", "0-1", "S-1", "S-F", "F-1", "N-N", "N-W", "W-S", "3:ZZ-1",
        "3:7H-F", "N:7H-1", "W:7H-2", "3:1H-1", "N-F0", "N-", "-F", "N--F", "X", "TT", "STUCK W",
        "STUCK NN", "NERTZZ", "", "   ", "3-1-2", "3:7H", "N-FF", "N-F-1", "N->F", "7-1",
        "3:7H:6S-1", "N-F1.5", "N-F-", "3 : 7H - 1 - 1",
    ],
)
def test_malformed_moves_raise_notation_error(text: str) -> None:
    with pytest.raises(NotationError) as info:
        Move.parse(text)
    message = str(info.value)
    if text.strip():
        assert repr(text) in message, f"{message!r} does not quote {text!r}"


def test_non_text_move_is_notation_error() -> None:
    with pytest.raises(NotationError):
        Move.parse(3)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- layouts


@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("seed", [0, 1, 99])
def test_dealt_layouts_round_trip(name: str, seed: int) -> None:
    rules = Rules.from_spec(name)
    rnd = Match(rules, 3, seed).deal()
    for tab in rnd.tableaus:
        lay = tab.to_layout()
        data = lay.to_json()
        text = json.dumps(data)
        again = Layout.from_json(json.loads(text))
        assert again == lay
        assert again.to_tableau() == tab
        assert again.to_json() == data


def test_layout_json_shape() -> None:
    rules = Rules.from_spec({"preset": "pagat", "nertz_pile_size": 2})
    lay = layout(rules, "5C KD", ["7H", "QS", "~3C 2D", "9C"], waste="4S 4H")
    data = lay.to_json()
    assert data["nertz"] == ["5C", "KD"]
    assert data["work"] == [["7H"], ["QS"], ["~3C", "2D"], ["9C"]]
    assert data["waste"] == ["4S", "4H"]
    assert data["stock"][0] == "AS"  # deck order, top first
    tab = lay.to_tableau()
    assert tab.stock[-1] == Card.parse("AS")  # the engine's stock is bottom to top
    assert tab.down == [0, 0, 1, 0]
    assert Layout.from_json(data) == lay
    # Without a waste the key is left out, and a file may leave it out.
    plain = layout(rules, "5C KD", ["7H", "QS", "~3C 2D", "9C"])
    assert "waste" not in plain.to_json()
    assert Layout.from_json(plain.to_json()) == plain


def test_layout_parse_accepts_ten_and_lower_case() -> None:
    data = {"nertz": ["10h"], "work": [["~th"], ["9c", "8h"]], "stock": ["as"]}
    lay = Layout.from_json(data)
    assert lay.to_json() == {"nertz": ["TH"], "work": [["~TH"], ["9C", "8H"]], "stock": ["AS"]}


@pytest.mark.parametrize(
    ("data", "word"),
    [
        ([], "object"),
        ({"work": [], "stock": []}, "nertz"),
        ({"nertz": [], "stock": []}, "work"),
        ({"nertz": [], "work": []}, "stock"),
        ({"nertz": ["ZZ"], "work": [], "stock": []}, "ZZ"),
        ({"nertz": [], "work": [["~QQ"]], "stock": []}, "QQ"),
        ({"nertz": [], "work": "7H", "stock": []}, "work"),
        ({"nertz": [], "work": [], "stock": [], "deck": []}, "deck"),
        ({"nertz": "AS", "work": [], "stock": []}, "nertz"),
        ({"nertz": [7], "work": [], "stock": []}, "7"),
    ],
)
def test_bad_layout_json_names_the_problem(data: object, word: str) -> None:
    with pytest.raises(NotationError) as info:
        Layout.from_json(data)
    assert word in str(info.value)


@pytest.mark.parametrize("text", ["N-" + "F" * 4000, "STUCK " + "Q" * 4000, "x" * 4000])
def test_a_bad_move_is_named_short(text: str) -> None:
    # A server sends the refusal back and stores it: a 4 KB move must not come back whole.
    with pytest.raises(NotationError, match=r"^bad move '") as caught:
        Move.parse(text)
    assert len(str(caught.value)) < 140 and "\u2026" in str(caught.value)
