"""Build the golden replay files and their hand-derived expected results.

Run ``python tests/golden/make_golden.py`` from the repository root to (re)write every
``NN_name.nertz.json`` and ``NN_name.expected.json`` in this folder. The layouts are built from a
compact description (:func:`lay`): the cards named explicitly, everything else filled in a fixed
order, so the files are reproducible. The expected results below were worked out by hand from
SPEC (the computation is in README.md), not copied from the engine.

Move lines read ``"T SEAT MOVE [hH] +|-"``: time, seat, move text, an optional split-team hand,
then ``+`` (accepted) or ``-`` (rejected).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DECK = [r + s for s in "SHDC" for r in "A23456789TJQK"]
JOKERS = ["X1", "X2"]
PAD_ORDER = [c for c in reversed(DECK) if c[0] != "A"]  # Nertz padding: KC QC ... 2C KD ...
NAMES = ["Ann", "Ben", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal"]


def lay(
    nertz: str | list[str],
    work: list[str],
    stock: str = "",
    tail: str = "",
    n: int = 13,
    jokers: bool = False,
) -> dict[str, Any]:
    """A layout: ``nertz`` the top cards bottom to top (padded below to ``n`` cards), ``work``
    one string a pile bottom to top (``~`` face down), ``stock`` the first cards turned (top
    first), ``tail`` the last cards of the stock; every other card fills the stock between them
    in deck order."""
    top = nertz.split() if isinstance(nertz, str) else list(nertz)
    piles = [p.split() for p in work]
    head, end = stock.split(), tail.split()
    named = top + [c.lstrip("~") for p in piles for c in p] + head + end
    assert len(named) == len(set(named)), f"a card twice in {named}"
    full = DECK + (JOKERS if jokers else [])
    pad = [c for c in PAD_ORDER if c not in named][: n - len(top)]
    assert len(top) + len(pad) == n, "not enough padding"
    rest = [c for c in full if c not in named and c not in pad]
    out = {"nertz": pad + top, "work": piles, "stock": head + rest + end}
    cards = out["nertz"] + [c.lstrip("~") for p in piles for c in p] + out["stock"]
    assert sorted(cards) == sorted(full), "layout is not one whole deck"
    return out


def ts(t0: int, seat: int, count: int, step: int = 10) -> list[str]:
    """``count`` accepted turns by ``seat`` from time ``t0``."""
    return [f"{t0 + k * step} {seat} T +" for k in range(count)]


def spades_down() -> str:
    """A 13-card Nertz pile that plays A..K of spades to one foundation (top AS)."""
    return "KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S AS"


def hearts_down() -> str:
    return "KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H AH"


W4 = ["KH", "QC", "JD", "9C"]          # four quiet work piles
W5 = ["KH", "QC", "JD", "9C", "8D"]    # five quiet work piles


def nf(t0: int, seat: int, count: int, step: int = 10) -> list[str]:
    """``count`` accepted ``N-F`` moves by ``seat``."""
    return [f"{t0 + k * step} {seat} N-F +" for k in range(count)]


# Each scenario: name, rules, players (count), rounds [(layouts, move lines, ended, caller,
# scores)], totals, winner.
S: list[dict[str, Any]] = []


def add(name: str, rules: Any, players: int, rounds: list[tuple[Any, ...]],
        totals: list[int], winner: int | None) -> None:
    S.append({"name": name, "rules": rules, "players": players, "rounds": rounds,
              "totals": totals, "winner": winner})


# 01 manual call, false call rejected, play after the call.
add("manual_call", {"preset": "pagat", "nertz_pile_size": 3}, 2, [(
    [lay("3S 2S AS", W4, n=3), lay("3H 2H AH", W4, n=3)],
    ["100 0 N-F +", "150 1 N-F +", "200 0 N-F +", "250 1 N-F +", "300 0 NERTZ -",
     "400 0 N-F +", "450 0 W-F -", "500 0 NERTZ +", "600 1 N-F -"],
    "nertz", 0, [3, 0])], [3, 0], None)

# 02 automatic call: the round ends as the pile empties; same-t move after it and NERTZ void.
add("auto_call", {"preset": "pagat", "call": "auto", "nertz_pile_size": 2}, 2, [(
    [lay("2S AS", W4, n=2), lay("KD AH", W4, n=2)],
    ["100 1 N-F +", "200 0 N-F +", "300 0 N-F +", "300 1 T -", "400 0 NERTZ -"],
    "nertz", 0, [2, -1])], [2, -1], None)

# 03 grace window 500 ms: 300 and 499 ms after the call count, 500 does not.
add("grace_window", {"preset": "pagat", "nertz_pile_size": 1, "call_grace_ms": 500}, 2, [(
    [lay("AS", W4, n=1), lay("KD", ["AH", "2H", "3H", "8D"], n=1)],
    ["100 0 N-F +", "200 0 NERTZ +", "500 1 1-F +", "699 1 2-F +", "700 1 3-F -"],
    "nertz", 0, [1, 0])], [1, 0], None)

# 04 grace 0: a same-t move before the call (file order) counts, after it is void.
add("grace_zero_same_t", {"preset": "pagat", "nertz_pile_size": 1}, 2, [(
    [lay("AS", W4, n=1), lay("KD", ["AH", "2H", "3H", "8D"], n=1)],
    ["100 0 N-F +", "200 1 1-F +", "200 0 NERTZ +", "200 1 2-F -", "250 1 2-F -"],
    "nertz", 0, [1, -1])], [1, -1], None)

# 05 races: same t decided by file order; a move listed later with an earlier t goes first.
add("race_tie_order", "pagat", 3, [(
    [lay("KD", ["2S", "3S", "9C", "8D"]), lay("KD", ["2S", "3S", "9C", "8D"]),
     lay("KD", ["AS", "5H", "9C", "8D"])],
    ["100 2 1-F +", "300 1 1-F +", "300 0 1-F -", "400 0 2-F -", "400 1 2-F -",
     "350 1 2-F1 +"],
    "open", None, [-26, -24, -25])], [-26, -24, -25], None)

# 06 turn 3, short_turn stock end: last 2 cards turned alone, T turns the waste over.
add("turn3_short_turn", "pagat", 2, [(
    [lay("KD", W4, stock="2D 3C AD AS 7H 9S", tail="5H AC"), lay("KD", W4)],
    ["100 0 T +", "110 0 W-F +", "120 0 W-F -", *ts(200, 0, 10), "400 0 T +",
     "410 0 W-F +", "420 0 T +", "430 0 T +", "440 0 W-F +", "450 0 W-F -", "460 0 5-F -"],
    "open", None, [-23, -26])], [-23, -26], None)

# 07 turn 1.
add("turn1", {"preset": "pagat", "turn_count": 1}, 2, [(
    [lay("KD", W4, stock="2D AD 5S"), lay("KD", W4)],
    ["100 0 T +", "110 0 W-F -", "120 0 T +", "130 0 W-F +", "140 0 W-F +", "150 0 W-F -"],
    "open", None, [-24, -26])], [-24, -26], None)

# 08 continuous stock end with 2 cards left: they go on the waste, the waste turns over, and
# the turn is completed with 1 card from the top (2D).
add("continuous_two_left", {"preset": "pagat", "stock_end": "continuous"}, 2, [(
    [lay("KD", W4, stock="2D 3C AD AS 7H 9S", tail="5H AC"), lay("KD", W4)],
    ["100 0 T +", "110 0 W-F +", *ts(200, 0, 10), "400 0 T +", "410 0 W-F +",
     "420 0 W-F -", "430 0 T +", "440 0 W-F -"],
    "open", None, [-24, -26])], [-24, -26], None)

# 09 rotate_stock reset: waste back on the stock, then top card to the bottom; STUCK N illegal.
add("stuck_rotate_stock", "pagat", 2, [(
    [lay("KD", W4, stock="KC QS 5C AD"), lay("KD", W4, stock="AH 2C 3C 4H")],
    ["100 0 T +", "200 0 STUCK +", "300 1 STUCK +", "400 0 T +", "500 0 W-F +",
     "600 1 T +", "700 1 W-F -", "800 0 STUCK N -"],
    "open", None, [-25, -26])], [-25, -26], None)

# 10 a declaration lapses when its seat moves; the reset happens once every seat is declared.
add("stuck_lapsed", "pagat", 2, [(
    [lay("KD", W4, stock="AD 3H 4H 2C 5S AC"), lay("KD", W4)],
    ["100 0 STUCK +", "200 0 T +", "300 1 STUCK +", "400 0 T +", "500 0 W-F +",
     "600 0 STUCK +", "700 0 T +", "800 0 W-F +", "900 1 STUCK +"],
    "open", None, [-24, -26])], [-24, -26], None)

# 11 rotate_either: STUCK N rotates the Nertz pile, plain STUCK the stock.
add("stuck_rotate_either", {"preset": "pagat", "stuck_reset": "rotate_either"}, 2, [(
    [lay("AS KD", W4), lay("KC", W4, stock="KS 2H 3H AH")],
    ["100 0 STUCK N +", "200 1 STUCK +", "300 0 N-F +", "400 1 T +", "500 1 W-F +",
     "600 1 W-F -"],
    "open", None, [-23, -25])], [-23, -25], None)

# 12 fairy_fly preset to its finished one-round match: staircase, whole runs only, auto call.
_ff_moves = [f"{100 + 100 * k} 0 N-F +" for k in range(13)]
_ff_moves[1:1] = ["150 1 2-1 +", "250 1 2-F +", "350 1 1:5C-2 -", "450 1 1:6H-2 +"]
_ff_moves += ["1400 1 T -"]
add("fairy_fly_match", "fairy_fly", 2, [(
    [lay(spades_down(), ["2D", "~3D 4D", "~5D ~6D 7D", "~8D ~9D ~TD JD"]),
     lay("KD", ["6H", "~AH 5C", "~2C ~3D 7C", "~4S ~8S ~9D 8H"])],
    _ff_moves, "nertz", 0, [23, -12])], [23, -12], 0)

# 13 partial runs (on): moving part of a run, wrong colour, empty pile.
add("partial_runs_on", "pagat", 2, [(
    [lay("KD 5S", ["9C", "8H", "7S", "TD"]), lay("KD", W4)],
    ["100 0 2-1 +", "200 0 3-1 +", "300 0 1:8H-4 -", "400 0 1:9C-4 +", "500 0 4:8H-2 +",
     "600 0 3-2 -", "700 0 N-3 +"],
    "open", None, [-24, -26])], [-24, -26], None)

# 14 illegal moves of many kinds mixed with legal ones.
add("illegal_mix", "pagat", 2, [(
    [lay("AS", ["2S", "KH", "QC", "5D"]), lay("AH", W4)],
    ["100 0 5-F -", "110 0 N-F1 -", "120 0 W-F -", "130 0 1-F -", "140 0 N-F +",
     "150 0 3-2 +", "160 0 4-2 -", "170 0 2:QS-1 -", "180 1 N-F +", "190 0 1-F2 -",
     "200 0 1-F1 +", "210 0 NERTZ -", "220 0 3-F -"],
    "open", None, [-22, -23])], [-22, -23], None)

# 15 standard preset to a finished match (target 30): 5 work piles, 10 a card.
add("standard_match", {"preset": "standard", "target_score": 30}, 2, [(
    [lay(spades_down(), W5), lay("KD", ["KH", "QC", "JD", "9C", "AH"])],
    [*nf(100, 0, 13), "150 1 5-F +", "300 0 NERTZ +"],
    "nertz", 0, [130, -120])], [130, -120], 0)

# 16 false call penalised, 3 seats: the caller pays 10 to each other seat; the next correct
# caller (another seat) gets +25. The stock's top 3 go on the Nertz pile, AS on top.
add("false_call_paid", {"preset": "standard", "nertz_pile_size": 1}, 3, [(
    [lay("KD", W5, stock="AS 2S 3S", n=1), lay("AH", W5, n=1), lay("KD", W5, n=1)],
    ["100 0 NERTZ +", "200 0 N-F +", "300 0 N-F +", "400 0 N-F +", "500 1 N-F +",
     "600 1 NERTZ +", "700 0 N-F -"],
    "nertz", 1, [0, 45, 0])], [0, 45, 0], None)

# 17 false call undone: an Ace among the 3 (aces_double: 20 each); the false caller later
# empties the pile and calls, so the payment is undone and it gets +25.
add("false_call_undone", {"preset": "standard", "nertz_pile_size": 1,
                          "card_points": "aces_double"}, 2, [(
    [lay("KD", ["AH", "QC", "JD", "9C", "8D"], stock="AS 2S 3S", n=1),
     lay("KC", W5, n=1)],
    ["100 0 NERTZ +", "200 0 N-F +", "300 0 N-F +", "400 0 N-F +", "500 0 1-F +",
     "600 0 N-1 +", "700 0 NERTZ +"],
    "nertz", 0, [85, -10],
    [(4, 60, 0, 0, 0, 0, 25, 0, 85), (0, 0, 1, 10, 0, 0, 0, 0, -10)])], [85, -10], None)

# 18 false call with 1 card left in the stock: refilled from the waste; the pile grows to 4.
add("false_call_short_stock", {"preset": "standard", "nertz_pile_size": 1}, 2, [(
    [lay("KD", W5, n=1), lay("KD", W5, n=1)],
    [*ts(100, 0, 15), "400 0 NERTZ +"],
    "open", None, [-50, 0])], [-50, 0], None)

# 19 swinging_door preset (one round): A then K goes down, A then 2 goes up.
add("swinging_door_match", {"preset": "swinging_door", "nertz_pile_size": 2, "rounds": 1},
    2, [(
        [lay("9D TC", ["AS", "KS", "QS", "2H", "3H"], n=2),
         lay("AD 5C", ["AH", "2S", "JS", "4H", "KH"], n=2)],
        ["100 0 1-F +", "110 1 1-F +", "120 0 2-F +", "130 1 2-F -", "140 0 3-F +",
         "150 1 3-F +", "160 0 4-F +", "170 0 5-F +", "180 1 4-F +", "190 1 5-F -"],
        "open", None, [45, 15])], [45, 15], 0)

# 20 double_swinging_door preset: every step up or down, wrapping K <-> 2 past the Ace.
add("double_swinging_door_match",
    {"preset": "double_swinging_door", "nertz_pile_size": 2, "rounds": 1}, 2, [(
        [lay("4C 5C", ["AS", "2S", "KS", "3S", "QS"], n=2),
         lay("TH JH", ["2S", "AD", "KD", "2D", "QD"], n=2)],
        ["100 0 1-F +", "110 0 2-F +", "120 0 3-F +", "130 1 1-F +", "140 0 4-F +",
         "150 0 5-F -", "160 1 2-F +", "170 1 3-F +", "180 1 4-F +", "190 1 5-F -"],
        "open", None, [35, 25])], [35, 25], 0)

# 21 starter9 preset: an up pile to 3 (+60) and a down pile to 3 (+40).
add("starter9_match", {"preset": "starter9", "nertz_pile_size": 5, "rounds": 1}, 2, [(
    [lay("3H 4H 5H 6H 7H", ["9S", "TS", "JS", "QS", "KS"], n=5),
     lay("KD", ["AS", "2S", "3S", "9H", "8H"], n=5)],
    ["50 1 1-F -", "100 0 1-F +", "110 0 2-F +", "120 0 3-F +", "130 0 4-F +",
     "140 0 5-F +", "150 1 1-F +", "160 1 2-F +", "170 1 3-F +", "180 1 4-F +",
     "190 1 5-F +", *nf(200, 0, 5), "300 0 NERTZ +"],
    "nertz", 0, [140, 60])], [140, 60], 0)

# 22 evil_jacks preset, 3 seats: the Jack's seat pays 15 to each, the 3's seat gets +40.
add("evil_jacks_match", {"preset": "evil_jacks", "nertz_pile_size": 1, "rounds": 1}, 3, [(
    [lay("KD", ["9S", "TS", "QS", "KS", "5D"], n=1), lay("KD", ["JS", *W4], n=1),
     lay("KD", ["AS", "2S", "3S", "9C", "8D"], n=1)],
    ["100 0 1-F +", "110 0 2-F +", "120 1 1-F +", "130 0 3-F +", "140 0 4-F +",
     "150 2 1-F +", "160 2 2-F +", "170 2 3-F +"],
    "open", None, [45, -30, 75])], [45, -30, 75], 2)

# 23 evil_jacks: one seat plays the Jack and the 3 (+100, others -5); a down pile's 3 +40.
add("evil_jacks_same_seat", {"preset": "evil_jacks", "nertz_pile_size": 1, "rounds": 1}, 3, [(
    [lay("KD", ["9H", "JH", "3H", "7C", "6C"], n=1),
     lay("KD", ["TH", "QH", "KH", "9C", "8C"], n=1),
     lay("KD", ["AH", "2H", "5C", "4C", "3C"], n=1)],
    ["100 0 1-F +", "110 1 1-F +", "120 0 2-F +", "130 1 2-F +", "140 1 3-F +",
     "150 2 1-F +", "160 2 2-F +", "170 0 3-F +",
     "200 1 4-F +", "210 1 5-F +", "220 0 4-F +", "230 0 5-F +", "240 2 3-F +",
     "250 2 4-F +", "260 2 5-F +"],
    "open", None, [140, 35, 75])], [140, 35, 75], 0)

# 24 evil_jacks_one_eyed, 3 seats: JS one-eyed (seat 1 takes 15 each, 3 by seat 2 +40),
# JD not (seat 0 pays, 3 by seat 2 +40), JH one-eyed with its 3 by seat 0 (+150, others -25).
WC5 = ["KC", "QC", "JC", "TC", "8C"]
_oe0 = "3H 2H AH KH QH JH TH 9H 2D AD KD QD JD TD 9D TS 9S"
add("evil_jacks_one_eyed_match",
    {"preset": "evil_jacks_one_eyed", "nertz_pile_size": 17, "rounds": 1}, 3, [(
        [lay(_oe0, WC5, n=17), lay("2S AS KS QS JS", WC5, n=17), lay("3D 3S", WC5, n=17)],
        ["100 0 N-F +", "110 0 N-F +", *nf(200, 1, 5), "300 2 N-F +",
         *nf(400, 0, 7), "500 2 N-F +", *nf(600, 0, 8), "700 0 NERTZ +"],
        "nertz", 0, [275, -50, -75],
        [(17, 170, 0, 0, 0, 105, 0, 0, 275), (5, 50, 12, 120, 0, 20, 0, 0, -50),
         (2, 20, 15, 150, 0, 55, 0, 0, -75)])], [275, -50, -75], 0)

# 25 lotto over two rounds: round 1's negatives (7) go to round 2's top scorer.
add("lotto_two_rounds", {"preset": "pagat", "lotto": True, "nertz_pile_size": 2, "rounds": 2},
    3, [
        ([lay("2S AS", W4, n=2), lay("KC QD", W4, n=2), lay("KC QD", ["AH", *W4[1:]], n=2)],
         ["100 0 N-F +", "110 0 N-F +", "120 2 1-F +", "130 0 NERTZ +"],
         "nertz", 0, [2, -4, -3]),
        ([lay("KC QD", W4, n=2), lay("2H AH", W4, n=2), lay("KC QD", W4, n=2)],
         ["100 1 N-F +", "110 1 N-F +", "130 1 NERTZ +"],
         "nertz", 1, [-4, 9, -4]),
    ], [-2, 5, -7], 1)

# 26 lotto split between tied top scorers (remainder stays), pot measured before paying out.
add("lotto_split", {"preset": "pagat", "lotto": True, "nertz_pile_size": 2, "rounds": 3}, 3, [
    ([lay("KC QD", W4, n=2), lay("KC QD", ["AH", *W4[1:]], n=2), lay("2S AS", W4, n=2)],
     ["100 2 N-F +", "110 2 N-F +", "120 1 1-F +", "130 2 NERTZ +"],
     "nertz", 2, [-4, -3, 2]),
    ([lay("KC QD", ["AS", *W4[1:]], n=2), lay("KC QD", ["AH", *W4[1:]], n=2),
      lay("KC QD", W4, n=2)],
     ["100 0 1-F +", "110 1 1-F +"],
     "open", None, [0, 0, -4]),
    ([lay("KC QD", W4, n=2), lay("KC QD", W4, n=2), lay("KC QD", ["AD", *W4[1:]], n=2)],
     ["100 2 1-F +"],
     "open", None, [-4, -4, 8]),
], [-8, -7, 6], 2)

# 27 sanna preset, adaptive piles over 3 rounds (caller +1, negative -1, clamped at 1).
add("sanna_adaptive", {"preset": "sanna", "nertz_pile_size": 2, "rounds": 3}, 3, [
    ([lay("2S AS", W4, n=2), lay("KC QD", ["AH", "2H", "3H", "4H"], n=2),
      lay("KC QD", W4, n=2)],
     ["100 1 1-F +", "110 1 2-F +", "120 1 3-F +", "130 1 4-F +", "200 0 N-F +",
      "210 0 N-F +"],
     "nertz", 0, [7, 0, -4]),
    ([lay("KC QD JH", W4, n=3), lay("2D AD", W4, n=2), lay("KC", W4, n=1)],
     ["100 1 N-F +", "110 1 N-F +"],
     "nertz", 1, [-6, 7, -2]),
    ([lay("KC QD", W4, n=2), lay("KC QD JH", W4, n=3), lay("AC", W4, n=1)],
     ["100 2 N-F +", "110 2 NERTZ -"],
     "nertz", 2, [-4, -6, 6]),
], [-3, 1, 0], 1)

# 28 teams shared: the hand field restricts nothing.
add("teams_shared", {"preset": "pagat", "teams": "shared", "nertz_pile_size": 2}, 2, [(
    [lay("2S AS", W4, n=2), lay("KC QD", W4, n=2)],
    ["100 0 N-F h1 +", "110 0 T h0 +", "120 0 N-F h1 +", "130 0 NERTZ h0 +"],
    "nertz", 0, [2, -4])], [2, -4], None)

# 29 teams split: hand 0 the Nertz pile, hand 1 the stock and waste; no hand, no limit.
add("teams_split", {"preset": "pagat", "teams": "split", "nertz_pile_size": 2}, 2, [(
    [lay("2S AS", W4, stock="2D 3D AD", n=2), lay("KC QD", W4, n=2)],
    ["100 0 N-F h1 -", "110 0 N-F h0 +", "120 0 T h0 -", "130 0 T h1 +", "140 0 W-F h0 -",
     "150 0 W-F h1 +", "160 0 N-F +", "170 0 NERTZ +"],
    "nertz", 0, [3, -4])], [3, -4], None)

# 30 jokers on work piles; a joker cannot start a foundation.
add("jokers_work", {"preset": "pagat", "jokers": True, "nertz_pile_size": 2}, 2, [(
    [lay("5C X1", ["9C", "7S", "6H", "KD"], n=2, jokers=True),
     lay("AH X2", ["9C", "7S", "6H", "KD"], n=2, jokers=True)],
    ["100 0 N-2 +", "110 0 N-2 +", "120 1 N-F -", "130 1 N-2 +", "140 1 N-F +",
     "150 1 W-F -", "160 0 NERTZ +"],
    "nertz", 0, [0, 1])], [0, 1], None)

# 31 jokers on foundations (face_value, penalty card_points): a joker scores the card it
# stands for; a joker left in a Nertz pile costs an Ace (14).
add("jokers_foundation", {"preset": "pagat", "jokers": True, "card_points": "face_value",
                          "nertz_penalty": "card_points", "nertz_pile_size": 2, "rounds": 1},
    2, [(
        [lay("KD 7C", ["AS", "X1", "3S", "X2"], n=2, jokers=True),
         lay("X1 9H", ["2S", "5S", "KH", "QC"], n=2, jokers=True)],
        ["100 0 2-F -", "110 0 1-F +", "120 0 2-F +", "130 1 1-F -", "140 0 3-F +",
         "150 0 4-F +", "160 1 2-F +"],
        "open", None, [3, -18])], [3, -18], 0)

# 32 a joker on a swinging_door pile whose direction is open stands for the 2 (up).
add("jokers_swinging_door", {"preset": "swinging_door", "jokers": True, "nertz_pile_size": 1,
                             "rounds": 1}, 2, [(
    [lay("QC", ["AH", "X1", "KH", "3H", "2H"], n=1, jokers=True),
     lay("X2", W5, n=1, jokers=True)],
    ["100 0 1-F +", "110 0 2-F +", "120 0 3-F -", "130 0 5-F -", "140 0 4-F +"],
    "open", None, [25, -20])], [25, -20], 0)

# 33 blocked at the deal: every Ace buried in the Nertz piles, work tops the four 2s.
_blk = "AH AD AC AS KD"
add("blocked_at_deal", "pagat", 2, [(
    [lay(_blk, ["2S", "2H", "2D", "2C"]), lay(_blk, ["2S", "2H", "2D", "2C"])],
    ["100 0 T -", "110 1 STUCK -"],
    "blocked", None, [-26, -26])], [-26, -26], None)

# 34 blocked after a move: seat 0's AS is the last productive move at the table.
_b0 = "AH AD AC 2S 4S 4C KD AS"
_b1 = "AH AD AC AS 2S 4S 4C KD"
_bw = ["2H", "2D", "2C", "5H"]
add("blocked_after_move", "pagat", 2, [(
    [lay(_b0, _bw), lay(_b1, _bw)],
    ["100 1 T +", "200 0 N-F +", "300 1 T -"],
    "blocked", None, [-23, -26])], [-23, -26], None)

# 35 the same position with blocked_round_end off: play goes on, the round stays open.
add("blocked_off_open", {"preset": "pagat", "blocked_round_end": False}, 2, [(
    [lay(_b0, _bw), lay(_b1, _bw)],
    ["100 1 T +", "200 0 N-F +", "300 1 T +", "400 0 STUCK +", "500 1 STUCK +",
     "600 0 N-F -"],
    "open", None, [-23, -26])], [-23, -26], None)

# 36 eight seats: eight Aces start F1..F8; 2S to the lowest pile it fits, N-F8 exactly.
_eight = [lay("KD", ["AS", "2S", "9C", "8D"], n=1) for _ in range(7)]
_eight.append(lay("AH", ["AS", "2S", "9C", "8D"], n=1))
add("eight_seats", {"preset": "pagat", "nertz_pile_size": 1}, 8, [(
    _eight,
    [*(f"{100 + k} {k} 1-F +" for k in range(8)), "200 0 2-F +", "210 1 2-F +",
     "220 2 2-F +", "230 3 2-F8 +", "240 4 2-F3 -", "300 7 N-F +", "310 7 NERTZ +"],
    "nertz", 7, [0, 0, 0, 0, -1, -1, -1, 2])], [0, 0, 0, 0, -1, -1, -1, 2], None)

# 37 pagat preset to a finished match (target 10) in one round.
add("pagat_match", {"preset": "pagat", "target_score": 10}, 2, [(
    [lay(spades_down(), W4), lay("KD", W4)],
    [*nf(100, 0, 13), "300 0 NERTZ +"],
    "nertz", 0, [13, -26])], [13, -26], 0)

# 38 hoorah preset, a 2-round match; the call word HOORAH is the call.
add("hoorah_two_rounds", {"preset": "hoorah", "rounds": 2}, 2, [
    ([lay(spades_down(), W4), lay("KD", W4)],
     [*nf(100, 0, 13), "300 0 HOORAH +"],
     "nertz", 0, [13, -26]),
    ([lay("KD QD TD 9D 8D 7D 7S 6S 5S 4S 3S 2S AS", W4),
      lay(hearts_down(), ["KS", "QC", "JD", "9C"])],
     [*nf(100, 0, 7), *nf(105, 1, 13), "400 1 HOORAH +"],
     "nertz", 1, [-5, 13]),
], [8, -13], 0)

# 39 manual call: the seat with an empty pile plays on before calling; others too.
add("manual_play_on", {"preset": "pagat", "nertz_pile_size": 2}, 2, [(
    [lay("2S AS", ["3S", "4S", "9C", "8D"], n=2),
     lay("KC QD", ["AH", "2H", "JD", "9C"], n=2)],
    ["100 0 N-F +", "110 0 N-F +", "120 0 1-F +", "130 1 1-F +", "140 0 2-F +",
     "150 0 NERTZ +", "160 1 2-F -"],
    "nertz", 0, [4, -3])], [4, -3], None)

# 40 automatic call with a 300 ms grace window.
add("auto_call_grace", {"preset": "pagat", "call": "auto", "call_grace_ms": 300,
                        "nertz_pile_size": 1}, 2, [(
    [lay("AS", W4, n=1), lay("KD", ["AH", "2H", "9C", "8D"], n=1)],
    ["1000 0 N-F +", "1100 0 NERTZ -", "1299 1 1-F +", "1300 1 2-F -"],
    "nertz", 0, [1, -1])], [1, -1], None)

# 41 swinging_door: two Aces start two piles; each card goes to the lowest pile it fits.
add("swinging_door_lowest_pile",
    {"preset": "swinging_door", "nertz_pile_size": 1, "rounds": 1}, 2, [(
        [lay("QD", ["AS", "2S", "3S", "9C", "8D"], n=1),
         lay("7C", ["AS", "KS", "2S", "9C", "8D"], n=1)],
        ["100 0 1-F +", "110 1 1-F +", "120 0 2-F +", "130 1 2-F +", "140 1 3-F -",
         "150 0 3-F2 -", "160 0 3-F1 +"],
        "open", None, [25, 25])], [25, 25], None)

# 42 sanna preset: continuous stock with 1 card left completes the turn with 2 from the top.
add("sanna_continuous_one_left", {"preset": "sanna", "work_piles": 5, "rounds": 1}, 2, [(
    [lay("KD", W5, stock="3C 2D AD 3D", tail="AC", n=10), lay("KD", W5, n=10)],
    ["100 0 T +", "110 0 W-F +", "120 0 W-F +", *ts(200, 0, 11), "400 0 T +",
     "410 0 W-F +", "420 0 W-F -"],
    "open", None, [-17, -20])], [-17, -20], 0)

# 43 staircase deal under pagat: face-down cards turn up, partial runs allowed.
add("staircase_partial", {"preset": "pagat", "work_pile_deal": "staircase"}, 2, [(
    [lay("KD", ["9C", "~AS 8H", "~2S ~5D 7C", "~KC ~QC ~JC TH"]),
     lay("KD", ["9C", "~AS 8H", "~2S ~5D 7C", "~KC ~QC ~JC TH"])],
    ["100 0 3:5D-1 -", "110 0 2-1 +", "120 0 2-F +", "130 0 3-1 +", "140 0 1:8H-2 +",
     "150 0 4-1 -", "160 0 3-F -"],
    "open", None, [-25, -26])], [-25, -26], None)

# 44 face_value cards, nertz_penalty 5 a card, caller_bonus 7.
add("face_value_bonus", {"preset": "pagat", "card_points": "face_value", "nertz_penalty": 5,
                         "nertz_pile_size": 3, "caller_bonus": 7}, 2, [(
    [lay("3H 2H AH", W4, n=3), lay("KC QC JC", ["AD", "2D", "9C", "8D"], n=3)],
    ["100 0 N-F +", "110 1 1-F +", "120 0 N-F +", "130 1 2-F +", "140 0 N-F +",
     "150 0 NERTZ +"],
    "nertz", 0, [26, 1])], [26, 1], None)

# 45 aces_double false call with no Ace among the 3: 10 to the other seat.
add("false_call_no_ace", {"preset": "standard", "card_points": "aces_double",
                          "nertz_pile_size": 2}, 2, [(
    [lay("KC TC", W5, stock="5H 6H 7H", n=2), lay("KC TC", ["AH", *W5[1:]], n=2)],
    ["100 0 NERTZ +", "200 1 1-F +"],
    "open", None, [-60, 10])], [-60, 10], None)

# 46 a false call under pagat (rejected) changes nothing; then a correct call.
add("false_call_rejected", {"preset": "pagat", "nertz_pile_size": 2}, 2, [(
    [lay("2S AS", W4, stock="5H 6H 7H", n=2), lay("KC TC", W4, n=2)],
    ["100 0 NERTZ -", "110 0 N-F +", "120 0 NERTZ -", "130 0 N-F +", "140 0 NERTZ +"],
    "nertz", 0, [2, -4])], [2, -4], None)

# 47 duplicate_deal: two seats, two rounds, the two hands swapped in round 2 (the option deals
# so from a seed; here the layouts say it): the same hand wins for whoever holds it.
add("duplicate_deal", {"preset": "pagat", "nertz_pile_size": 2, "rounds": 2,
                       "duplicate_deal": True}, 2, [
    ([lay("2S AS", W4, n=2), lay("KC TC", W4, n=2)],
     ["100 0 N-F +", "110 0 N-F +", "120 0 NERTZ +"],
     "nertz", 0, [2, -4]),
    ([lay("KC TC", W4, n=2), lay("2S AS", W4, n=2)],
     ["100 1 N-F +", "110 1 N-F +", "120 1 NERTZ +"],
     "nertz", 1, [-4, 2]),
], [-2, -2], None)


BREAKDOWN = ("foundation_cards", "card_points", "nertz_left", "nertz_penalty", "caller_bonus",
             "variant_bonus", "false_calls", "lotto", "total")


def move_json(line: str) -> tuple[dict[str, Any], bool]:
    parts = line.split()
    t, p, m = int(parts[0]), int(parts[1]), parts[2]
    rest = parts[3:]
    if len(rest) == 2 and rest[0] in ("N", "S"):  # "STUCK N"
        m, rest = f"{m} {rest[0]}", rest[1:]
    out: dict[str, Any] = {"t": t, "p": p, "m": m}
    if rest[0].startswith("h"):
        out["h"] = int(rest[0][1:])
        rest = rest[1:]
    assert rest in (["+"], ["-"]), line
    return out, rest == ["+"]


def build(sc: dict[str, Any], number: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    stem = f"{number:02d}_{sc['name']}"
    rounds, expected = [], []
    for layouts, lines, ended, caller, scores, *pinned in sc["rounds"]:
        moves, oks = zip(*(move_json(x) for x in lines), strict=True)
        rounds.append({"layouts": layouts, "moves": list(moves)})
        rnd = {"moves": [{"i": i, "ok": ok} for i, ok in enumerate(oks)],
               "ended": ended, "caller": caller, "scores": scores}
        if pinned:
            rnd["breakdown"] = [dict(zip(BREAKDOWN, row, strict=True)) for row in pinned[0]]
        expected.append(rnd)
    replay = {"format": "nertz-replay/1", "rules": sc["rules"],
              "players": NAMES[: sc["players"]], "seed": number, "rounds": rounds}
    exp = {"rounds": expected, "totals": sc["totals"], "winner": sc["winner"]}
    return stem, replay, exp


def dump(value: Any) -> str:
    """Readable JSON: one layout pile, one move or one expected move a line."""
    def one(v: Any) -> str:
        return json.dumps(v, separators=(", ", ": "))

    lines = ["{"]
    top = [f' "{k}": {one(v)}' for k, v in value.items() if k != "rounds"]
    rounds = []
    for rnd in value["rounds"]:
        parts = []
        for key, val in rnd.items():
            if key == "layouts":
                lays = []
                for lay_ in val:
                    lays.append("    {" + ",\n     ".join(
                        f'"{k}": {one(v)}' for k, v in lay_.items()) + "}")
                parts.append('   "layouts": [\n' + ",\n".join(lays) + "\n   ]")
            elif key in ("moves", "breakdown"):
                items = ",\n".join("    " + one(m) for m in val)
                parts.append(f'   "{key}": [\n{items}\n   ]')
            else:
                parts.append(f'   "{key}": {one(val)}')
        rounds.append("  {\n" + ",\n".join(parts) + "\n  }")
    top.append(' "rounds": [\n' + ",\n".join(rounds) + "\n ]")
    lines.append(",\n".join(top))
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == value
    return text


def main() -> None:
    for old in HERE.glob("*.json"):
        old.unlink()
    for number, sc in enumerate(S, start=1):
        stem, replay, exp = build(sc, number)
        (HERE / f"{stem}.nertz.json").write_text(dump(replay))
        (HERE / f"{stem}.expected.json").write_text(dump(exp))
    print(f"wrote {len(S)} scenarios to {HERE}")


if __name__ == "__main__":
    main()
