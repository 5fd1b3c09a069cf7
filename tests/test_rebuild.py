"""The view rebuilder: the same round as ``determinize`` for a view kept as the client keeps it.

A network bot's view is the client's mirror: the whole table once, then each ``update`` putting
the tableaus and foundations it carries in place of the old ones (``apply_update``). These
tests play rounds in-process, keep such a mirror for every seat from the updates the moves make,
and check at every decision that :class:`ViewRebuilder` gives the very round ``determinize``
gives, and that bots fed by it decide as bots fed ``Observation.from_view`` and as bots fed the
live round.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from nertz.bots import ExpertBot, GreedyBot, Observation, PounceBot, RandomBot, determinize
from nertz.bots.base import Bot
from nertz.bots.rebuild import ViewRebuilder
from nertz.engine import Round
from nertz.match import Match
from nertz.moves import TURN
from nertz.net.client import apply_update
from nertz.rules import Rules, preset
from nertz.views import view

ROUND_FIELDS = ("tableaus", "foundations", "_accepting", "_open_piles", "stuck", "called_by",
                "called_at", "ended", "false_calls", "moves_played", "resets", "_starter",
                "_progress", "_positions", "rules", "policy")
"""Every slot of a round: two rounds with these equal are the same for any bot."""


def state(rnd: Round) -> dict[str, Any]:
    """A round's whole state as plain values (cards compare by identity: one value each)."""
    out: dict[str, Any] = {}
    for name in ROUND_FIELDS:
        value = getattr(rnd, name)
        if name == "tableaus":
            value = [(t.nertz, t.work, t.down, t.stock, t.waste) for t in value]
        elif name == "foundations":
            value = [(f.suit, f.ranks, f.cards, f.owners, f.times, f.direction, f.needs)
                     for f in value]
        out[name] = value
    return out


def test_the_comparison_covers_every_slot_of_a_round() -> None:
    # The compiled class has no __slots__ to read: the source's declaration is the list.
    import ast

    import nertz

    tree = ast.parse((Path(nertz.__file__).parent / "engine.py").read_text())
    (cls,) = (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Round")
    (slots,) = (n.value for n in cls.body if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in n.targets))
    assert set(ROUND_FIELDS) == set(ast.literal_eval(slots)), "a new slot: compare it too"


def wire(data: Any) -> Any:
    """What a client decodes: fresh objects, as off the socket."""
    return json.loads(json.dumps(data))


def update_for(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """An ``update`` carrying the tableaus and foundations that differ, as the server's does
    (it carries the mover's tableau, every one after a reset, and the foundations played on)."""
    return {
        "tableaus": [b for a, b in zip(before["tableaus"], after["tableaus"], strict=True)
                     if a != b],
        "foundations": [f for i, f in enumerate(after["foundations"])
                        if i >= len(before["foundations"]) or before["foundations"][i] != f],
        "ended": after["ended"], "called_by": after["called_by"], "t": 0,
    }


def play_with_mirrors(rules: Rules, make: type[Bot], seats: int, seed: int,
                      steps: int) -> int:
    """Play a round; every seat keeps a mirror fed by updates. At each decision the rebuilt
    round must be determinize's, and bots fed the live round, ``from_view`` and the rebuilder
    must decide alike. Returns how many decisions were compared."""
    rnd = Match(rules, seats, seed=seed).deal()
    live, viewed, rebuilt = ([make() for _ in range(seats)] for _ in range(3))
    for group in (live, viewed, rebuilt):
        for s, b in enumerate(group):
            b.start(s, rules, seed)
    mirrors = [wire(view(rnd, s).to_json()) for s in range(seats)]
    rebuilders = [ViewRebuilder() for _ in range(seats)]
    shown = wire(view(rnd, 0).to_json())
    rng = random.Random(seed)
    compared = 0
    for _ in range(steps):
        if rnd.ended is not None:
            break
        seat = rng.randrange(seats)
        table = mirrors[seat]
        got = rebuilders[seat].round(table, rules)
        assert state(got) == state(determinize(table, rules))
        a = live[seat].decide(Observation.from_round(rnd, seat))
        b = viewed[seat].decide(Observation.from_view(table, rules))
        c = rebuilt[seat].decide(Observation(got, seat))
        assert a == b == c, (compared, seat, str(a), str(b), str(c))
        compared += 1
        if a is None:
            continue
        rnd.play(seat, a)
        now = wire(view(rnd, 0).to_json())
        update = update_for(shown, now)
        shown = now
        for mirror in mirrors:
            apply_update(mirror, wire(update))
    return compared


@pytest.mark.parametrize("make", [GreedyBot, ExpertBot, RandomBot, PounceBot])
def test_bots_fed_by_the_rebuilder_decide_as_from_the_view(make: type[Bot]) -> None:
    steps = 120 if make is ExpertBot else 400
    assert play_with_mirrors(preset("pagat"), make, 4, seed=3, steps=steps) > steps // 2


@pytest.mark.parametrize("rules", [preset("fairy_fly").replace(jokers=True), preset("standard"),
                                   preset("pagat").replace(turn_count=1)])
def test_the_rebuilder_under_other_rules(rules: Rules) -> None:
    for seed in range(3):
        assert play_with_mirrors(rules, GreedyBot, 3, seed=seed, steps=300) > 100


def test_a_view_seen_again_gives_the_same_round_and_a_new_one() -> None:
    rules = preset("pagat")
    rnd = Match(rules, 4, seed=1).deal()
    for _ in range(9):
        rnd.play(2, TURN)
    table = wire(view(rnd, 2).to_json())
    rebuilder = ViewRebuilder()
    first = rebuilder.round(table, rules)
    # The bot may play on its round: the next one given for the same view is untouched.
    first.play(2, TURN)
    first.tableaus[0].stock.clear()
    again = rebuilder.round(table, rules)
    assert again is not first
    assert state(again) == state(determinize(table, rules))
    bot, fresh = GreedyBot(), GreedyBot()
    bot.start(2, rules, 1)
    fresh.start(2, rules, 1)
    for _ in range(3):  # the same view, looked at again and again
        assert (bot.decide(rebuilder.observe(table, rules))
                == fresh.decide(Observation.from_view(table, rules)))


def test_the_rebuilder_follows_a_new_deal_and_other_rules() -> None:
    rebuilder = ViewRebuilder()
    for rules_name, seats, seed in (("pagat", 4, 1), ("pagat", 4, 2), ("standard", 2, 1),
                                    ("pagat", 3, 5)):
        rules = preset(rules_name)
        rnd = Match(rules, seats, seed=seed).deal()
        for seat in range(seats):
            table = wire(view(rnd, seat).to_json())
            assert state(rebuilder.round(table, rules)) == state(determinize(table, rules))


def test_views_the_server_does_not_make_still_rebuild_as_determinize() -> None:
    rules = preset("pagat")
    rnd = Match(rules, 2, seed=4).deal()
    table = wire(view(rnd, 0).to_json())
    # Non-canonical notation ("10H" for "TH", lower case) parses as determinize parses it.
    for tv in table["tableaus"]:
        for pile in tv["work"]:
            pile["up"] = [c.replace("T", "10").lower() for c in pile["up"]]
    assert state(ViewRebuilder().round(table, rules)) == state(determinize(table, rules))
    # A seat's card on a foundation while its tableau stayed the same object (no deal does
    # that: the card would have left the tableau); its hidden cards are not the same then.
    # (One card fewer in its stock first, so that the view stays one determinize can fill.)
    tv = table["tableaus"][1]
    table["tableaus"][1] = dict(tv, stock_count=tv["stock_count"] - 1)
    rebuilder = ViewRebuilder()
    assert state(rebuilder.round(table, rules)) == state(determinize(table, rules))
    hidden = str(rnd.tableaus[1].stock[0])
    table["foundations"] = [*table["foundations"],
                            {"number": len(table["foundations"]) + 1, "cards": [hidden],
                             "owners": [1], "finished": False}]
    assert state(rebuilder.round(table, rules)) == state(determinize(table, rules))
    # More hidden cards than a deck holds: determinize's own failure, not another answer.
    table["tableaus"][1] = dict(table["tableaus"][1], stock_count=60)
    with pytest.raises(Exception) as theirs:
        determinize(table, rules)
    with pytest.raises(type(theirs.value)):
        ViewRebuilder().round(table, rules)


def test_a_view_that_fails_half_way_leaves_nothing_trusted_behind() -> None:
    rules = preset("pagat")
    rnd = Match(rules, 3, seed=2).deal()
    for seat in (0, 1, 2, 0, 1, 2):
        move = GreedyBot().decide(Observation.from_round(rnd, seat))
        if move is not None:
            rnd.play(seat, move)
    table = wire(view(rnd, 1).to_json())
    rebuilder = ViewRebuilder()
    rebuilder.round(table, rules)
    # A foundation whose owners do not match its cards: determinize refuses it, and so does
    # the rebuilder, after taking in the foundations before it.
    broken = dict(table, foundations=[*table["foundations"],
                                      {"number": 99, "cards": ["AS", "2S"], "owners": [0],
                                       "finished": False}])
    with pytest.raises(ValueError):
        determinize(broken, rules)
    with pytest.raises(ValueError):
        rebuilder.round(broken, rules)
    assert state(rebuilder.round(table, rules)) == state(determinize(table, rules))
