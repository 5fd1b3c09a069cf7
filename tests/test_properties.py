"""Property tests of SPEC section 6 (invariants) over every preset and a few override combos.

Random games mix legal moves (from ``legal_moves``), greedy play (to reach foundations, calls and
resets) and random move texts from the whole notation space, played by random seats (out-of-range
ones too). After every step the invariants hold, a rejected move changed nothing, a move by one
seat changed no other seat's tableau (but for the all-stuck reset, which is everyone's), ``apply``
left its input untouched, and no view shows a hidden card. At the end the game is recorded,
written as text, read back and replayed: the same final table and scores come out.
"""

from __future__ import annotations

from typing import Any

import pytest
from _support import check_invariants, greedy_step, shown_cards, snapshot, tableau_snapshot
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from nertz.cards import deck
from nertz.engine import Round, apply
from nertz.errors import IllegalMoveError, LostRace, NotationError
from nertz.events import ResetDone
from nertz.match import Match
from nertz.moves import Move
from nertz.playout import greedy_move
from nertz.replay import Recorder, loads, run
from nertz.rules import PRESETS, Rules
from nertz.scoring import score_round
from nertz.views import foundation_json, hidden_cards, tableau_json, view, visible_cards

COMBOS: dict[str, dict[str, Any]] = {
    "jokers": {"preset": "pagat", "jokers": True},
    "jokers_swinging": {"preset": "double_swinging_door", "jokers": True},
    "teams_split": {"preset": "pagat", "teams": "split"},
    "turn1": {"preset": "pagat", "turn_count": 1},
    "continuous": {"preset": "pagat", "stock_end": "continuous"},
    "continuous_turn1": {"preset": "fairy_fly", "stock_end": "continuous", "turn_count": 1},
    "five_staircase": {"preset": "pagat", "work_piles": 5, "work_pile_deal": "staircase"},
    "grace": {"preset": "pagat", "call_grace_ms": 400, "nertz_pile_size": 3},
    "small_pile_auto": {"preset": "sanna", "nertz_pile_size": 2, "false_call": "penalised"},
    "false_call_aces": {"preset": "standard", "card_points": "aces_double", "nertz_pile_size": 4},
    "either_partial": {"preset": "fairy_fly", "move_partial_runs": True, "jokers": True},
    "no_blocked_end": {"preset": "evil_jacks_one_eyed", "blocked_round_end": False},
}

CASES = [pytest.param(name, id=name) for name in PRESETS] + [
    pytest.param(spec, id=name) for name, spec in COMBOS.items()
]

PROFILE = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

CARD_TEXTS = [str(x) for x in deck(True)] + ["10h", "th", "x1", "ZZ", "1S", "11C"]

# Move texts over the whole notation space, well-formed or not.
_SOURCES = ["N", "W", "1", "2", "3", "4", "5", "6", "9", "S", "F", "Q", "0"]
_DESTS = ["F", "F1", "F2", "F3", "F4", "F7", "F12", "F0", "1", "2", "3", "4", "5", "6", "Z", "N"]
_WORDS = [
    "T", "t", "STUCK", "STUCK N", "STUCK S", "stuck n", "STUCK W", "NERTZ", "Pounce", "nerts",
    "", "  ", "TT", "N-", "-F", "N--F", "N F", "3:7H", "3-1-2",
]


@st.composite
def move_texts(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(st.sampled_from(_WORDS))
    src = draw(st.sampled_from(_SOURCES))
    dst = draw(st.sampled_from(_DESTS))
    if kind == 3:
        return f"{src}:{draw(st.sampled_from(CARD_TEXTS))}-{dst}"
    text = f"{src}-{dst}"
    return text.lower() if kind == 2 else text


def _others(rnd: Round, seat: int) -> list[Any]:
    return [tableau_snapshot(t) for s, t in enumerate(rnd.tableaus) if s != seat]


def _check_views(rnd: Round) -> None:
    hidden = hidden_cards(rnd)
    shown = shown_cards(rnd)
    for s in [-1, *range(rnd.seats)]:
        v = view(rnd, s)
        vis = visible_cards(v)
        assert not vis & hidden, f"seat {s} sees hidden cards {vis & hidden}"
        assert vis == shown
        # The server's direct builders send exactly the views' wire forms.
        assert [tableau_json(rnd, t) for t in range(rnd.seats)] == [
            tv.to_json() for tv in v.tableaus]
        assert [foundation_json(rnd, i) for i in range(len(rnd.foundations))] == [
            fv.to_json() for fv in v.foundations]
        # The wire form of each tableau names none of that tableau's hidden cards.
        for tv in v.tableaus:
            text = str(tv.to_json())
            for owner, card in hidden:
                if owner == tv.seat:
                    assert f"'{card}'" not in text


def step(
    rnd: Round, seat: int, move: Move | str, t: int | None, hand: int | None
) -> str:
    """Play one move through both ``apply`` and ``play`` and check everything; returns
    ``malformed``, ``rejected`` or ``ok``."""
    before = snapshot(rnd)
    try:
        new, events = apply(rnd, seat, move, t, hand)
    except NotationError:
        assert snapshot(rnd) == before
        with pytest.raises(NotationError):
            rnd.play(seat, move, t, hand)
        assert snapshot(rnd) == before
        return "malformed"
    except IllegalMoveError as exc:
        assert exc.reason
        if isinstance(exc, LostRace):
            assert 0 <= exc.winner < rnd.seats and exc.winner != seat
        assert snapshot(rnd) == before, "apply changed its input on a rejected move"
        with pytest.raises(IllegalMoveError):
            rnd.verify(seat, move, t, hand)
        with pytest.raises(IllegalMoveError):
            rnd.play(seat, move, t, hand)
        assert snapshot(rnd) == before, f"rejected move {move!r} by {seat} changed the round"
        return "rejected"
    assert snapshot(rnd) == before, f"apply({move!r}) changed its input"
    others = _others(rnd, seat)
    events2 = rnd.play(seat, move, t, hand)
    assert events2 == events
    assert snapshot(rnd) == snapshot(new)
    if not any(isinstance(e, ResetDone) for e in events):
        assert _others(rnd, seat) == others, f"move {move!r} by seat {seat} changed another seat"
    check_invariants(rnd)
    return "ok"


def _completeness(rnd: Round, seat: int) -> None:
    """Every well-formed move ``verify`` accepts is in ``legal_moves`` (up to the two spellings
    SPEC allows: a bare ``F`` for a numbered foundation, and ``3:C-1`` for ``3-1`` when C is the
    bottom of the run), and every listed move is accepted."""
    listed = {str(m) for m in rnd.legal_moves(seat)}
    for m in listed:
        assert rnd.can_play(seat, m), f"legal_moves lists {m} but verify refuses it"
    tab = rnd.tableaus[seat]
    n = rnd.rules.work_piles
    piles = [str(k) for k in range(1, 6)]
    texts = ["T", "STUCK", "STUCK N", "NERTZ"]
    for src in ["N", "W", *piles]:
        for fk in range(len(rnd.foundations) + 2):
            texts.append(f"{src}-F{fk or ''}")
        for dst in piles:
            texts.append(f"{src}-{dst}")
    for k in range(n):
        for card in tab.work[k]:
            for dst in piles:
                texts.append(f"{k + 1}:{card}-{dst}")
    for text in texts:
        move = Move.parse(text)
        if not rnd.can_play(seat, move):
            assert text not in listed
            continue
        if text in listed:
            continue
        if move.dst == "F" and move.foundation == 0:
            assert any(m.startswith(move.src + "-F") for m in listed), text
        elif move.card is not None:
            k = int(move.src) - 1
            assert tab.work[k][tab.down[k]] == move.card, f"{text} accepted but not listed"
            assert f"{move.src}-{move.dst}" in listed, text
        else:
            raise AssertionError(f"{text} is accepted by verify but not in legal_moves")


@pytest.mark.parametrize("spec", CASES)
@PROFILE
@given(data=st.data(), seed=st.integers(0, 10_000), seats=st.integers(1, 4))
def test_random_games_keep_invariants(
    spec: Any, data: st.DataObject, seed: int, seats: int
) -> None:
    rules = Rules.from_spec(spec)
    match = Match(rules, seats, seed)
    rnd = match.deal()
    recorder = Recorder(rules, [f"p{i}" for i in range(seats)], seed)
    recorder.start_round(rnd)
    check_invariants(rnd)
    _check_views(rnd)
    split = rules.teams == "split"
    t = 0
    outcomes: list[bool] = []
    # Warm up with greedy round-robin play (checked more cheaply) to reach deeper positions.
    warmup = data.draw(st.sampled_from([0, 20, 60, 120, 250]), label="warm-up")
    for i in range(warmup):
        if rnd.ended is not None:
            break
        seat = i % seats
        move = greedy_step(rnd, seat)
        if move is None:
            continue
        t += 10
        events = rnd.play(seat, move, t)
        assert events
        recorder.record(t, seat, move)
        outcomes.append(True)
        check_invariants(rnd)
    steps = data.draw(st.integers(5, 80), label="steps")
    for i in range(steps):
        t += data.draw(st.sampled_from([0, 1, 50, 200, 700]), label="dt")
        action = data.draw(st.integers(0, 9), label="action")
        seat = data.draw(st.integers(0, seats - 1), label="seat")
        hand = data.draw(st.sampled_from([None, 0, 1]), label="hand") if split else None
        move: Move | str | None
        if action <= 3:
            legal = rnd.legal_moves(seat)
            move = data.draw(st.sampled_from(legal), label="legal") if legal else "T"
        elif action <= 6:
            move = greedy_move(rnd, seat) or "T"
        elif action <= 8:
            move = data.draw(move_texts(), label="text")
        else:
            seat = data.draw(st.sampled_from([-1, seats, 8]), label="bad seat")
            move = data.draw(st.sampled_from(["T", "N-F", "STUCK"]))
        result = step(rnd, seat, move, t, hand)
        if i % 5 == 0 or result == "ok":
            _check_views(rnd)
        if result != "malformed" and 0 <= seat < seats:
            recorder.record(t, seat, Move.parse(move) if isinstance(move, str) else move, hand)
            outcomes.append(result == "ok")
    for s in range(seats):
        _completeness(rnd, s)
    event(f"ended {rnd.ended}")
    event(f"foundations {min(len(rnd.foundations), 8) // 4 * 4}+")
    event(f"resets {min(rnd.resets, 1)}")
    event(f"false calls {min(len(rnd.false_calls), 1)}")

    # Record, write, read back, replay: the same table and scores.
    text = recorder.file.dumps()
    replayed = run(loads(text))
    (rr,) = replayed.rounds
    assert [o.ok for o in rr.outcomes] == outcomes
    final = snapshot(rnd)
    again = snapshot(rr.round)
    assert again[0] == final[0], "tableaus differ after replay"
    assert again[1] == final[1], "foundations differ after replay"
    assert again[2:6] == final[2:6]
    assert rr.result.scores == score_round(rnd).totals


# ------------------------------------------------------------- is_stuck against brute force

_BRUTE_LIMIT = 4000


def _brute_stuck(rnd: Round, seat: int) -> bool | None:
    """Search every position ``seat`` reaches by unproductive moves of its own (turns and
    work-pile moves that neither reveal a card nor empty a pile); True when none of them offers
    a productive move (SPEC ``blocked_round_end``). None when the search is too big."""
    start = rnd.copy()
    start.rules = rnd.rules.replace(blocked_round_end=False)
    if not start.tableaus[seat].nertz:
        return False
    seen = {tableau_snapshot(start.tableaus[seat])}
    frontier = [start]
    while frontier:
        nxt = []
        for pos in frontier:
            for move in pos.legal_moves(seat):
                if move.kind.value in ("stuck", "call"):
                    continue
                if move.kind.value == "to_foundation" or move.src in ("N", "W"):
                    return False
                new, events = apply(pos, seat, move)
                if move.kind.value == "to_work":
                    k = move.work_src
                    tab = new.tableaus[seat]
                    if any(e.__class__.__name__ == "CardRevealed" for e in events):
                        return False
                    if not tab.work[k]:
                        return False
                key = tableau_snapshot(new.tableaus[seat])
                if key in seen:
                    continue
                seen.add(key)
                if len(seen) > _BRUTE_LIMIT:
                    return None
                nxt.append(new)
        frontier = nxt
    return True


STUCK_CASES = ["pagat", "fairy_fly", "sanna", "standard", "starter9",
               {"preset": "pagat", "turn_count": 1},
               {"preset": "fairy_fly", "stock_end": "continuous"},
               {"preset": "pagat", "jokers": True}]


@pytest.mark.parametrize("spec", STUCK_CASES, ids=str)
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), seats=st.integers(1, 3), warm=st.integers(0, 400))
def test_is_stuck_matches_brute_force(spec: Any, seed: int, seats: int, warm: int) -> None:
    rules = Rules.from_spec(spec).replace(blocked_round_end=False)
    rnd = Match(rules, seats, seed).deal()
    for i in range(warm):
        if rnd.ended is not None:
            return
        seat = i % seats
        move = greedy_step(rnd, seat)
        if move is None:
            continue
        rnd.play(seat, move)
    if rnd.ended is not None:
        return
    verdicts = []
    for seat in range(seats):
        brute = _brute_stuck(rnd, seat)
        if brute is None:
            continue
        event(f"stuck {brute}")
        assert rnd.is_stuck(seat) == brute, f"seat {seat}: engine {rnd.is_stuck(seat)}"
        verdicts.append(brute)
    if verdicts and not all(verdicts):
        assert not rnd.is_blocked()
    if rnd.is_blocked():
        assert all(verdicts)
