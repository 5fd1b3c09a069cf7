"""Focused unit tests of engine mechanics on hand-built positions (SPEC sections 2 and 3)."""

from __future__ import annotations

from typing import Any

import pytest
from _support import cards

from nertz.engine import Round
from nertz.errors import IllegalMoveError, LostRace
from nertz.events import CardRevealed, ResetDone, StuckLapsed
from nertz.match import Match
from nertz.rules import Rules
from nertz.scoring import score_round
from nertz.state import Tableau


def tab(nertz: str = "KD", work: tuple[str, ...] = ("", "", "", ""), stock: str = "",
        waste: str = "") -> Tableau:
    """A tableau from text: ``nertz`` and ``waste`` bottom to top, ``stock`` top first (as in a
    layout), work piles bottom to top with ``~`` for face down. Not a full deck."""
    piles = []
    downs = []
    for pile in work:
        toks = pile.split()
        downs.append(sum(t.startswith("~") for t in toks))
        piles.append(cards(" ".join(t.lstrip("~") for t in toks)))
    return Tableau(cards(nertz), piles, downs, cards(stock)[::-1], cards(waste))


def rnd_of(spec: Any, *tabs: Tableau) -> Round:
    rules = Rules.from_spec(spec if not isinstance(spec, dict) else {**spec})
    return Round(rules, list(tabs))


def stock_text(t: Tableau) -> str:
    return " ".join(str(x) for x in reversed(t.stock))


def waste_text(t: Tableau) -> str:
    return " ".join(str(x) for x in t.waste)


NO_BLOCK = {"preset": "pagat", "blocked_round_end": False}


# --------------------------------------------------------------------------- turning


def test_turn_three_short_turn() -> None:
    r = rnd_of(NO_BLOCK, tab(stock="AS 2S 3S 4S 5S"))
    t = r.tableaus[0]
    r.play(0, "T")
    assert waste_text(t) == "AS 2S 3S" and stock_text(t) == "4S 5S"
    r.play(0, "T")
    assert waste_text(t) == "AS 2S 3S 4S 5S" and stock_text(t) == ""
    r.play(0, "T")  # the waste turned over: order kept
    assert waste_text(t) == "" and stock_text(t) == "AS 2S 3S 4S 5S"
    r.play(0, "T")
    assert t.waste[-1] == cards("3S")[0]


def test_turn_one_short_turn() -> None:
    r = rnd_of({**NO_BLOCK, "turn_count": 1}, tab(stock="AS 2S"))
    t = r.tableaus[0]
    r.play(0, "T")
    assert waste_text(t) == "AS"
    r.play(0, "T")
    assert waste_text(t) == "AS 2S"
    r.play(0, "T")
    assert stock_text(t) == "AS 2S" and not t.waste


def test_turn_three_continuous() -> None:
    r = rnd_of({**NO_BLOCK, "stock_end": "continuous"}, tab(stock="AS 2S 3S 4S 5S"))
    t = r.tableaus[0]
    r.play(0, "T")
    assert waste_text(t) == "AS 2S 3S"
    # 4S 5S go onto the waste, the waste turns over, and AS completes the turn.
    r.play(0, "T")
    assert waste_text(t) == "AS" and stock_text(t) == "2S 3S 4S 5S"
    r.play(0, "T")
    assert waste_text(t) == "AS 2S 3S 4S" and stock_text(t) == "5S"


def test_turn_one_continuous_from_empty_stock() -> None:
    r = rnd_of({**NO_BLOCK, "stock_end": "continuous", "turn_count": 1},
               tab(stock="", waste="AS 2S 3S"))
    t = r.tableaus[0]
    r.play(0, "T")
    assert waste_text(t) == "AS" and stock_text(t) == "2S 3S"


def test_turn_with_nothing_left_is_illegal() -> None:
    r = rnd_of(NO_BLOCK, tab(stock=""))
    assert "T" not in [str(m) for m in r.legal_moves(0)]
    with pytest.raises(IllegalMoveError):
        r.play(0, "T")


# -------------------------------------------------------------------- work piles


def test_staircase_reveal() -> None:
    r = rnd_of({**NO_BLOCK, "move_partial_runs": False},
               tab(work=("9H", "~2C ~3C 8C", "", "")))
    events = r.play(0, "2-1")
    t = r.tableaus[0]
    assert [str(x) for x in t.work[0]] == ["9H", "8C"]
    assert t.down[1] == 1 and t.work[1][-1] == cards("3C")[0]
    assert any(isinstance(e, CardRevealed) and e.card == cards("3C")[0] for e in events)


def test_face_down_card_cannot_move() -> None:
    r = rnd_of(NO_BLOCK, tab(work=("9H", "~8C 4D", "", "")))
    with pytest.raises(IllegalMoveError):
        r.play(0, "2:8C-1")


def test_partial_run_off_refuses_split() -> None:
    r = rnd_of({**NO_BLOCK, "move_partial_runs": False}, tab(work=("TH 9C", "TS", "", "")))
    with pytest.raises(IllegalMoveError, match="whole runs"):
        r.play(0, "1:9C-2")
    r.play(0, "1:TH-3")  # naming the run's bottom card is the whole run


def test_five_work_pile_moves_need_five_piles() -> None:
    r = rnd_of(NO_BLOCK, tab(nertz="AS"))
    with pytest.raises(IllegalMoveError, match="work pile 5"):
        r.play(0, "N-5")
    with pytest.raises(IllegalMoveError, match="work pile 5"):
        r.play(0, "5-F")


# ---------------------------------------------------------------------- foundations


def test_bare_f_takes_the_lowest_numbered_foundation() -> None:
    a = tab(nertz="KD AH", waste="2H")
    b = tab(nertz="KD AH")
    r = rnd_of(NO_BLOCK, a, b)
    r.play(1, "N-F")
    r.play(0, "N-F")
    r.play(0, "W-F")
    assert [len(f.cards) for f in r.foundations] == [2, 1]
    assert r.foundations[0].owners == [1, 0]


def test_numbered_foundation_does_not_start_a_pile() -> None:
    r = rnd_of(NO_BLOCK, tab(nertz="KD AH"))
    with pytest.raises(IllegalMoveError):
        r.play(0, "N-F1")


def test_race_is_lost_with_the_winner_named() -> None:
    a = tab(nertz="KD AH", waste="2H")
    b = tab(nertz="KD 2H")
    r = rnd_of(NO_BLOCK, a, b)
    r.play(0, "N-F", t=50)
    r.play(0, "W-F1", t=100)
    before = [x.copy() for x in r.tableaus]
    for move in ("N-F1", "N-F"):
        with pytest.raises(LostRace) as info:
            r.play(1, move, t=120)
        assert info.value.winner == 0
        assert info.value.margin_ms == 20
        assert info.value.foundation == 1
    assert r.tableaus == before  # the card stays where it was


# --------------------------------------------------------------------- stuck resets


def test_rotate_stock_reset_order() -> None:
    a = tab(stock="AS 2S 3S 4S 5S")
    b = tab(stock="AC 2C")
    r = rnd_of(NO_BLOCK, a, b)
    r.play(0, "T")
    r.play(0, "STUCK")
    events = r.play(1, "STUCK")
    assert any(isinstance(e, ResetDone) for e in events)
    # As if nothing had been turned, then the top card to the bottom.
    assert stock_text(r.tableaus[0]) == "2S 3S 4S 5S AS" and not r.tableaus[0].waste
    assert stock_text(r.tableaus[1]) == "2C AC"
    assert r.stuck == ["", ""]


def test_rotate_either_reset() -> None:
    spec = {"preset": "fairy_fly", "blocked_round_end": False}
    a = tab(nertz="2D 3D 4D", stock="AS 2S")
    b = tab(nertz="2C 3C", stock="AH 2H 3H")
    r = rnd_of(spec, a, b)
    r.play(0, "STUCK N")
    r.play(1, "STUCK S")
    assert [str(x) for x in r.tableaus[0].nertz] == ["4D", "2D", "3D"]
    assert stock_text(r.tableaus[0]) == "AS 2S"
    assert stock_text(r.tableaus[1]) == "2H 3H AH"
    assert [str(x) for x in r.tableaus[1].nertz] == ["2C", "3C"]


def test_declaration_lapses_on_another_move() -> None:
    r = rnd_of(NO_BLOCK, tab(stock="AS 2S 3S 4S"), tab(stock="AC"))
    r.play(0, "STUCK")
    events = r.play(0, "T")
    assert any(isinstance(e, StuckLapsed) for e in events)
    events = r.play(1, "STUCK")
    assert not any(isinstance(e, ResetDone) for e in events)
    assert r.stuck == ["", "S"]


def test_stuck_n_refused_under_rotate_stock() -> None:
    r = rnd_of(NO_BLOCK, tab())
    with pytest.raises(IllegalMoveError):
        r.play(0, "STUCK N")


# ------------------------------------------------------------------------- calling


def test_false_call_penalised_card_order() -> None:
    spec = {"preset": "standard", "blocked_round_end": False}
    r = rnd_of(spec, tab(nertz="KD QC", work=("",) * 5, stock="AS 2S 3S 4S"), tab(), tab())
    r.play(0, "NERTZ")
    t = r.tableaus[0]
    assert [str(x) for x in t.nertz] == ["KD", "QC", "3S", "2S", "AS"]
    assert stock_text(t) == "4S"
    assert r.ended is None
    s = score_round(r)
    assert [x.false_calls for x in s.seats] == [-20, 10, 10]


def test_false_call_refills_from_the_waste() -> None:
    spec = {"preset": "standard", "blocked_round_end": False, "card_points": "aces_double"}
    r = rnd_of(spec, tab(nertz="KD", work=("",) * 5, stock="7S", waste="AS 2S 3S"), tab())
    r.play(0, "NERTZ")
    t = r.tableaus[0]
    # 7S first (the stock's top, ending on top), then the waste turned over: AS, 2S.
    assert [str(x) for x in t.nertz] == ["KD", "2S", "AS", "7S"]
    assert stock_text(t) == "3S" and not t.waste
    assert [x.false_calls for x in score_round(r).seats] == [-20, 20]  # an Ace: 20


def test_false_call_rejected_by_default() -> None:
    r = rnd_of(NO_BLOCK, tab(nertz="KD", stock="AS 2S 3S"))
    assert "NERTZ" not in [str(m) for m in r.legal_moves(0)]
    with pytest.raises(IllegalMoveError):
        r.play(0, "NERTZ")


def test_next_correct_caller_bonus_and_undone_payment() -> None:
    spec = {"preset": "standard", "blocked_round_end": False}
    w = ("",) * 5
    r = rnd_of(spec, tab(nertz="AH", work=w, stock="9S"), tab(nertz="AD", work=w))
    r.play(0, "NERTZ")  # false: 9S joins the Nertz pile
    r.play(1, "N-F")
    r.play(1, "NERTZ")
    s = score_round(r)
    assert s.caller == 1
    assert [x.false_calls for x in s.seats] == [-10, 10 + 25]

    r = rnd_of(spec, tab(nertz="AH", work=w, stock="9S"), tab(nertz="AD 2D", work=w))
    r.play(0, "NERTZ")
    r.play(0, "N-2")  # 9S into an empty pile
    r.play(0, "N-F")
    r.play(0, "NERTZ")  # the false caller calls correctly: payment undone
    s = score_round(r)
    assert s.caller == 0
    assert [x.false_calls for x in s.seats] == [25, 0]


def test_auto_call_ends_the_round() -> None:
    spec = {"preset": "sanna", "blocked_round_end": False}
    r = rnd_of(spec, tab(nertz="AH"), tab(nertz="AD"))
    r.play(0, "N-F", t=10)
    assert r.ended == "nertz" and r.called_by == 0
    with pytest.raises(IllegalMoveError):
        r.play(0, "NERTZ", t=20)
    with pytest.raises(IllegalMoveError):
        r.play(1, "N-F", t=10)


def test_grace_window() -> None:
    spec = {"preset": "pagat", "blocked_round_end": False, "call_grace_ms": 400}
    r = rnd_of(spec, tab(nertz="AH"), tab(nertz="2D AD", stock="AC 2C 3C"))
    r.play(0, "N-F", t=100)
    r.play(0, "NERTZ", t=300)
    r.play(1, "N-F", t=500)  # 200 ms after the call: in the air
    with pytest.raises(IllegalMoveError):
        r.play(1, "N-F1", t=1000)
    with pytest.raises(IllegalMoveError):
        r.play(1, "STUCK", t=310)


def test_no_grace_same_time_is_void() -> None:
    r = rnd_of(NO_BLOCK, tab(nertz="AH"), tab(nertz="AD"))
    r.play(0, "N-F", t=100)
    r.play(0, "NERTZ", t=300)
    with pytest.raises(IllegalMoveError):
        r.play(1, "N-F", t=300)


# ------------------------------------------------------------------- stuck, blocked

STUCK_WORK = ("9C", "9S", "KD", "KH")


def test_is_stuck_depends_on_turn_count() -> None:
    # Turning three at a time only ever shows 3S: the AS never comes up without a reset.
    r = rnd_of(NO_BLOCK, tab(nertz="4C 5H", work=STUCK_WORK, stock="AS 2S 3S"))
    assert r.is_stuck(0)
    assert not r.is_blocked()  # resets rotate the stock: the AS comes up in time
    r1 = rnd_of({**NO_BLOCK, "turn_count": 1},
                tab(nertz="4C 5H", work=STUCK_WORK, stock="AS 2S 3S"))
    assert not r1.is_stuck(0)


def test_reset_frees_a_stuck_seat() -> None:
    r = rnd_of(NO_BLOCK, tab(nertz="4C 5H", work=STUCK_WORK, stock="AS 2S 3S"))
    r.play(0, "STUCK")
    assert stock_text(r.tableaus[0]) == "2S 3S AS"
    r.play(0, "T")
    assert r.can_play(0, "W-F")


def test_blocked_round_ends_at_once() -> None:
    t = tab(nertz="4C 5H", work=STUCK_WORK, stock="2S 3S 4S")
    r = rnd_of("pagat", t)
    assert r.ended == "blocked"
    assert r.legal_moves(0) == []
    r2 = rnd_of(NO_BLOCK, tab(nertz="4C 5H", work=STUCK_WORK, stock="2S 3S 4S"))
    assert r2.ended is None and r2.is_blocked() and r2.all_stuck()


def test_rotate_either_reaches_the_whole_nertz_pile() -> None:
    t = ("9C", "9S", "KD", "KH")
    either = rnd_of({"preset": "fairy_fly", "blocked_round_end": False},
                    tab(nertz="AS 5H", work=t, stock="2S 3S 4S"))
    assert not either.is_blocked()
    assert either.is_stuck(0)
    plain = rnd_of(NO_BLOCK, tab(nertz="AS 5H", work=t, stock="2S 3S 4S"))
    assert plain.is_blocked()


def test_stuck_search_sees_partial_runs() -> None:
    seat1 = tab(nertz="QC 2H AH")
    seat0 = tab(nertz="KC KD", work=("4S 3H 2S", "3D", "9C", "9S"))
    r = rnd_of(NO_BLOCK, seat0, seat1)
    r.play(1, "N-F")
    r.play(1, "N-F1")
    assert not r.is_stuck(0)  # 1:2S-2 uncovers 3H for F1
    off = rnd_of({**NO_BLOCK, "move_partial_runs": False}, seat0.copy(), tab(nertz="QC 2H AH"))
    off.play(1, "N-F")
    off.play(1, "N-F1")
    assert off.is_stuck(0)


def test_blocked_is_decided_after_each_move() -> None:
    # Seat 0's last useful card goes up; after it nothing can ever move again.
    r = rnd_of("pagat", tab(nertz="4C AH", work=STUCK_WORK, stock="2S 3S 4S"))
    assert r.ended is None
    r.play(0, "N-F")
    assert r.ended == "blocked"
    assert score_round(r).ended == "blocked"


# ------------------------------------------------------------------------ scoring


def _up_pile(preset: str, three_by: int, seats: int = 2) -> list[int]:
    spec = {"preset": preset, "blocked_round_end": False}
    t0 = tab(nertz="KD 2S AS KS QS JS TS 9S", work=("",) * 5)
    others = [tab(nertz="KD 3S", work=("",) * 5) for _ in range(seats - 1)]
    if three_by == 0:
        t0 = tab(nertz="KD 3S 2S AS KS QS JS TS 9S", work=("",) * 5)
    r = rnd_of(spec, t0, *others)
    r.play(0, "N-F")
    for _ in range(6):
        r.play(0, "N-F1")
    r.play(three_by, "N-F1")
    assert r.foundations[0].ranks == [9, 10, 11, 12, 13, 1, 2, 3]
    assert r.foundations[0].finished
    return [s.variant_bonus for s in score_round(r).seats]


def test_starter9_three_up_earns_60() -> None:
    assert _up_pile("starter9", 1) == [0, 60]


def test_evil_jacks_jack_pays() -> None:
    assert _up_pile("evil_jacks", 1) == [-15, 15 + 40]
    assert _up_pile("evil_jacks", 1, seats=3) == [-30, 15 + 40, 15]


def test_evil_jacks_one_seat_both() -> None:
    assert _up_pile("evil_jacks", 0, seats=3) == [100, -5, -5]


def test_one_eyed_jack_takes() -> None:
    # JS is one-eyed: its seat takes 15 from each other seat; the 3 still earns 40.
    assert _up_pile("evil_jacks_one_eyed", 1) == [15, -15 + 40]
    assert _up_pile("evil_jacks_one_eyed", 0, seats=3) == [150, -25, -25]


def test_starter9_down_pile_earns_40() -> None:
    spec = {"preset": "starter9", "blocked_round_end": False}
    r = rnd_of(spec, tab(nertz="KD 3S 4S 5S 6S 7S 8S 9S", work=("",) * 5))
    r.play(0, "N-F")
    for _ in range(6):
        r.play(0, "N-F1")
    assert r.foundations[0].finished
    assert score_round(r).seats[0].variant_bonus == 40


# ------------------------------------------------------------------------- matches


def test_adaptive_nertz_pile_sizes() -> None:
    rules = Rules.from_spec({"preset": "sanna", "nertz_pile_size": 1})
    match = Match(rules, 2, seed=1)
    rnd = match.deal()
    assert [len(t.nertz) for t in rnd.tableaus] == [1, 1]
    top = rnd.tableaus[0].nertz[-1]
    # Play seat 0's card out if it can; either way score the round.
    if rnd.can_play(0, "N-F"):
        rnd.play(0, "N-F")
    match.finish(rnd)
    for size in match.nertz_sizes:
        assert 1 <= size <= 20
    assert top is not None


def test_adaptive_caller_grows_and_negative_shrinks() -> None:
    rules = Rules.from_spec({"preset": "sanna", "blocked_round_end": False})
    match = Match(rules, 2, seed=1)
    rnd = Round(rules, [tab(nertz="AH"), tab(nertz="KD QD")])
    rnd.play(0, "N-F")
    result = match.finish(rnd)
    assert result.scores == [1 + 5, -4]
    assert match.nertz_sizes == [11, 9]


def test_lotto_pot_goes_to_next_top_scorer() -> None:
    rules = Rules.from_spec({"preset": "pagat", "lotto": True, "blocked_round_end": False})
    match = Match(rules, 3, seed=1)
    # Round 1: seat 0 scores +1, seats 1 and 2 keep two Nertz cards each: -4, -4 -> pot 8.
    r1 = Round(rules, [tab(nertz="AH"), tab(nertz="KD QD"), tab(nertz="KD QD")])
    r1.play(0, "N-F")
    res1 = match.finish(r1)
    assert res1.scores == [1, -4, -4]
    assert match.pot == 8
    # Round 2: seats 1 and 2 tie on top (+1 each) and split the pot; seat 0 goes to -2.
    r2 = Round(rules, [tab(nertz="KD"), tab(nertz="AH"), tab(nertz="AD")])
    r2.play(1, "N-F")
    r2.play(2, "N-F")
    res2 = match.finish(r2)
    assert res2.scores == [-2, 1 + 4, 1 + 4]
    assert match.pot == 2  # the round's own negatives, measured before the pot
    assert match.totals == [-1, 1, 1]
