"""The rules catalogue (SPEC section 3): options, their values, the presets, overrides."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nertz.errors import RulesError
from nertz.rules import OPTIONS, PRESETS, Rules

DEFAULTS: dict[str, Any] = {
    "work_piles": 4,
    "work_pile_deal": "one_up",
    "nertz_pile_size": 13,
    "adaptive_nertz_pile": False,
    "turn_count": 3,
    "stock_end": "short_turn",
    "move_partial_runs": True,
    "stuck_reset": "rotate_stock",
    "blocked_round_end": True,
    "foundation": "up",
    "call": "manual",
    "call_grace_ms": 0,
    "false_call": "rejected",
    "teams": "off",
    "jokers": False,
    "card_points": "flat",
    "points_per_card": 1,
    "nertz_penalty": 2,
    "caller_bonus": 0,
    "lotto": False,
    "call_word": "Nertz",
    "target_score": 100,
    "rounds": None,
    "duplicate_deal": False,
}

STANDARD = {
    "work_piles": 5, "points_per_card": 10, "nertz_penalty": 10, "false_call": "penalised",
    "target_score": 500,
}
SWINGING = {
    **STANDARD, "foundation": "swinging_door", "card_points": "swinging_door",
    "nertz_penalty": "card_points",
}
PRESET_TABLE: dict[str, dict[str, Any]] = {
    "pagat": {},
    "standard": STANDARD,
    "hoorah": {"call_word": "Hoorah"},
    "fairy_fly": {
        "work_pile_deal": "staircase", "move_partial_runs": False, "stuck_reset": "rotate_either",
        "call": "auto", "nertz_penalty": 1, "caller_bonus": 10, "target_score": None, "rounds": 1,
    },
    "sanna": {
        "nertz_pile_size": 10, "adaptive_nertz_pile": True, "stock_end": "continuous",
        "call": "auto", "caller_bonus": 5,
    },
    "swinging_door": SWINGING,
    "double_swinging_door": {**SWINGING, "foundation": "double_swinging_door"},
    "starter9": {**STANDARD, "foundation": "starter9"},
    "evil_jacks": {**STANDARD, "foundation": "evil_jacks"},
    "evil_jacks_one_eyed": {**STANDARD, "foundation": "evil_jacks_one_eyed"},
}

# Every value SPEC's catalogue lists (a sample for the open-ended ones).
GOOD_VALUES: dict[str, list[Any]] = {
    "work_piles": [4, 5],
    "work_pile_deal": ["one_up", "staircase"],
    "nertz_pile_size": [1, 10, 13, 20],
    "adaptive_nertz_pile": [False, True],
    "turn_count": [3, 1],
    "stock_end": ["short_turn", "continuous"],
    "move_partial_runs": [True, False],
    "stuck_reset": ["rotate_stock", "rotate_either"],
    "blocked_round_end": [True, False],
    "foundation": ["up", "swinging_door", "double_swinging_door", "starter9", "evil_jacks",
                   "evil_jacks_one_eyed"],
    "call": ["manual", "auto"],
    "call_grace_ms": [0, 250],
    "false_call": ["rejected", "penalised"],
    "teams": ["off", "shared", "split"],
    "jokers": [False, True],
    "card_points": ["flat", "aces_double", "face_value", "swinging_door"],
    "points_per_card": [1, 10],
    "nertz_penalty": [2, 1, 10, 0, "card_points"],
    "caller_bonus": [0, 10, 5],
    "lotto": [False, True],
    "call_word": ["Nertz", "Nerts", "Pounce", "Hoorah", "Squeal"],
    "target_score": [100, 500, None],
    "rounds": [None, 1, 3],
    "duplicate_deal": [False, True],
}

BAD_VALUES: dict[str, list[Any]] = {
    "work_piles": [3, 6, 0, "four", True, 4.0, None],
    "work_pile_deal": ["pyramid", 1, True, None],
    "nertz_pile_size": [0, 21, -1, "big", True, 13.5, None],
    "adaptive_nertz_pile": [1, 0, "maybe", None],
    "turn_count": [2, 0, 4, "three", True, None],
    "stock_end": ["wrap", 1, None],
    "move_partial_runs": [1, "sometimes", None],
    "stuck_reset": ["rotate", None, False],
    "blocked_round_end": [2, "x", None],
    "foundation": ["down", "starter8", 1, None],
    "call": ["shout", True, None],
    "call_grace_ms": [-1, "soon", 1.5, True, None],
    "false_call": ["ignored", False, None],
    "teams": ["mixed", 2, True],
    "jokers": [2, "lots", None],
    "card_points": ["double", 1, None],
    "points_per_card": [0, -1, "ten", True, None],
    "nertz_penalty": [-1, "values", True, 2.5, None],
    "caller_bonus": [-5, "lots", True, None],
    "lotto": [1, "x", None],
    "call_word": ["", "   ", 5, None],
    "target_score": [0, -100, "lots", True, 1.5],
    "rounds": [0, -1, "many", True],
    "duplicate_deal": [1, "twice", None],
}


def test_catalogue_names_every_option_in_order() -> None:
    assert list(OPTIONS) == list(DEFAULTS)
    assert Rules().to_options() == DEFAULTS


@pytest.mark.parametrize("name", list(OPTIONS))
def test_defaults(name: str) -> None:
    assert OPTIONS[name].default == DEFAULTS[name]


def test_every_preset_is_in_the_table() -> None:
    assert set(PRESETS) == set(PRESET_TABLE)


@pytest.mark.parametrize("name", list(PRESET_TABLE))
def test_preset_matches_spec(name: str) -> None:
    expected = {**DEFAULTS, **PRESET_TABLE[name]}
    rules = Rules.from_spec(name)
    assert rules.to_options() == expected
    for option, value in expected.items():
        assert getattr(rules, option) == value, option
    assert Rules.from_spec({"preset": name}) == rules
    assert rules.to_spec() == name


def test_default_preset_is_pagat() -> None:
    assert Rules.from_spec({}) == PRESETS["pagat"] == Rules()


@pytest.mark.parametrize("name", list(PRESET_TABLE))
def test_overrides_apply_on_top_of_presets(name: str) -> None:
    rules = Rules.from_spec({"preset": name, "turn_count": 1, "jokers": True, "lotto": True})
    expected = {**DEFAULTS, **PRESET_TABLE[name], "turn_count": 1, "jokers": True, "lotto": True}
    assert rules.to_options() == expected
    assert Rules.from_spec(rules.to_spec()) == rules


def test_override_can_restore_a_default() -> None:
    rules = Rules.from_spec({"preset": "standard", "work_piles": 4})
    assert rules.work_piles == 4 and rules.points_per_card == 10


@pytest.mark.parametrize(
    ("name", "value"), [(n, v) for n, vs in GOOD_VALUES.items() for v in vs]
)
def test_every_listed_value_is_accepted(name: str, value: Any) -> None:
    rules = Rules.from_spec({"preset": "pagat", name: value})
    assert getattr(rules, name) == value
    assert Rules.from_spec(rules.to_spec()) == rules


@pytest.mark.parametrize(
    ("name", "value"), [(n, v) for n, vs in BAD_VALUES.items() for v in vs]
)
def test_every_option_rejects_a_bad_value_naming_it(name: str, value: Any) -> None:
    with pytest.raises(RulesError) as info:
        Rules.from_spec({"preset": "pagat", name: value})
    assert name in str(info.value)


@pytest.mark.parametrize("name", ["adaptive_nertz_pile", "move_partial_runs",
                                  "blocked_round_end", "jokers", "lotto"])
def test_on_off_options_are_json_booleans(name: str) -> None:
    assert getattr(Rules.from_spec({name: True}), name) is True
    assert getattr(Rules.from_spec({name: False}), name) is False
    assert isinstance(getattr(Rules(), name), bool)


@pytest.mark.parametrize("name", ["target_score", "rounds"])
def test_none_for_target_and_rounds(name: str) -> None:
    assert getattr(Rules.from_spec({name: "none"}), name) is None
    assert getattr(Rules.from_spec({name: None}), name) is None
    assert getattr(Rules.from_spec({name: 7}), name) == 7


@pytest.mark.parametrize("name", [n for n in OPTIONS if n not in ("target_score", "rounds")])
def test_other_options_refuse_none(name: str) -> None:
    with pytest.raises(RulesError, match=name):
        Rules.from_spec({name: "none"} if name != "call_word" else {name: None})


def test_unknown_preset_and_option_are_named() -> None:
    with pytest.raises(RulesError, match="klondike"):
        Rules.from_spec("klondike")
    with pytest.raises(RulesError, match="klondike"):
        Rules.from_spec({"preset": "klondike"})
    with pytest.raises(RulesError, match="colour"):
        Rules.from_spec({"preset": "pagat", "colour": "red"})
    with pytest.raises(RulesError):
        Rules.from_spec(42)
    with pytest.raises(RulesError):
        Rules.from_spec({"preset": 3})


def test_too_big_a_deal_is_refused() -> None:
    # 20 + 15 (staircase on 5 piles) = 35 cards is fine; nothing more can be asked for.
    Rules.from_spec({"nertz_pile_size": 20, "work_piles": 5, "work_pile_deal": "staircase"})


@pytest.mark.parametrize("name", list(PRESET_TABLE))
def test_to_spec_round_trip_presets(name: str) -> None:
    rules = PRESETS[name]
    assert Rules.from_spec(rules.to_spec()) == rules
    assert rules.replace() == rules


@st.composite
def rule_specs(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"preset": draw(st.sampled_from(sorted(PRESETS)))}
    for name in draw(st.lists(st.sampled_from(sorted(GOOD_VALUES)), unique=True, max_size=8)):
        spec[name] = draw(st.sampled_from(GOOD_VALUES[name]))
    return spec


@settings(max_examples=200, derandomize=True)
@given(rule_specs())
def test_to_spec_round_trips(spec: dict[str, Any]) -> None:
    rules = Rules.from_spec(spec)
    out = rules.to_spec()
    assert Rules.from_spec(out) == rules
    if isinstance(out, dict):
        # The shortest form: a preset and only options that differ from it.
        base = PRESETS[out["preset"]]
        for key, value in out.items():
            if key != "preset":
                assert getattr(base, key) != value
    for key, value in spec.items():
        if key != "preset":
            assert getattr(rules, key) == value


@pytest.mark.parametrize(("word", "move"), [
    ("T", "turn the stock"), ("t", "turn the stock"), ("T!", "turn the stock"),
    ("Stuck", "declare stuck"), ("STUCK N", "declare stuck"),
    ("1-F", "a play to a foundation"), ("n-f", "a play to a foundation"),
    ("W-3", "a play onto a work pile"),
])
def test_a_call_word_that_is_already_a_move_is_refused(word: str, move: str) -> None:
    # Typed, such a word made its move instead of calling (Move.parse reads moves first): a
    # new ruleset may not have it. A stored one still reads (a room or a replay made before).
    with pytest.raises(RulesError, match="is already a move") as info:
        Rules.from_spec({"call_word": word}).check_new()
    assert f"call_word {word!r}" in str(info.value) and move in str(info.value)
    with pytest.raises(RulesError, match="is already a move"):
        Rules().replace(call_word=word).check_new()
    assert Rules.from_spec({"call_word": word}).call_word == word


@pytest.mark.parametrize("word", ["Nerts", "nertz", "POUNCE!", "Reset", "Go", "\uff34"])
def test_a_call_word_that_is_no_move_or_a_call_is_taken(word: str) -> None:
    assert Rules.from_spec({"call_word": word}).check_new().call_word == word


def test_replace_validates() -> None:
    rules = PRESETS["pagat"].replace(turn_count=1)
    assert rules.turn_count == 1
    with pytest.raises(RulesError, match="turn_count"):
        PRESETS["pagat"].replace(turn_count=2)


def test_deck_size() -> None:
    assert Rules().deck_size == 52
    assert Rules.from_spec({"jokers": True}).deck_size == 54
