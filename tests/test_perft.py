"""Perft-style legal-move counts: fixed positions whose legal moves were listed by hand from SPEC.

Each entry of ``data/perft.json`` gives a ruleset, one layout per seat (SPEC's form, with the
engine's ``waste`` extension), setup moves played first, the seat to ask, and the expected count
and sorted list of ``legal_moves`` texts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nertz.engine import Round
from nertz.rules import Rules
from nertz.state import Layout

DATA = json.loads((Path(__file__).parent / "data" / "perft.json").read_text())


def position(entry: dict[str, Any]) -> Round:
    rules = Rules.from_spec(entry["rules"])
    rnd = Round.from_layouts(rules, [Layout.from_json(x) for x in entry["layouts"]])
    for i, setup in enumerate(entry["setup"]):
        rnd.play(setup["p"], setup["m"], t=100 * (i + 1))
    return rnd


def test_perft_data_is_sane() -> None:
    assert len(DATA) >= 15
    names = [e["name"] for e in DATA]
    assert len(names) == len(set(names))
    for e in DATA:
        assert e["count"] == len(e["moves"])
        assert e["moves"] == sorted(e["moves"])


@pytest.mark.parametrize("entry", DATA, ids=[e["name"] for e in DATA])
def test_perft(entry: dict[str, Any]) -> None:
    rnd = position(entry)
    seat = entry["seat"]
    got = [str(m) for m in rnd.legal_moves(seat)]
    assert len(got) == len(set(got)), f"duplicates in {got}"
    assert sorted(got) == entry["moves"], entry["note"]
    assert len(got) == entry["count"]
    for text in got:
        assert rnd.can_play(seat, text), text


@pytest.mark.parametrize("entry", DATA, ids=[e["name"] for e in DATA])
def test_perft_layouts_round_trip(entry: dict[str, Any]) -> None:
    rules = Rules.from_spec(entry["rules"])
    rnd = Round.from_layouts(rules, [Layout.from_json(x) for x in entry["layouts"]])
    assert [t.to_layout().to_json() for t in rnd.tableaus] == entry["layouts"]
