"""Fair races at the table (stamps given directly, no sockets) and the automation flag: the
round-trip estimate, the order decided by send time and kept by the log, a seat's later moves
waiting behind its own play, resent ids, the option's default, and flags raised (or not)."""

from __future__ import annotations

import secrets
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from server_support import RACE_RULES, FixedMatch, layout, race_layouts, until_playing

import nertz.server.room.entries as entries_module
from nertz.replay import from_json
from nertz.rules import Rules
from nertz.server import protocol
from nertz.server.edge.latency import RttEstimator, kernel_rtt_ms, network_bound
from nertz.server.room.lobby import Player
from nertz.server.room.messages import Ack, Effects, Error, RaceWon, Rejected, Send, Stamp
from nertz.server.room.races import (
    CAP_MS,
    FLAG_MIN_PLAYS,
    ReactionWatch,
    compensation,
    wall_ms,
)
from nertz.server.room.table import Table
from nertz.server.store import Store

pytestmark = pytest.mark.anyio


# --------------------------------------------------------------------------- estimate, cap


def test_the_estimate_is_a_median_that_spikes_do_not_move() -> None:
    est = RttEstimator(window=15, min_samples=3)
    est.add(40)
    est.add(41)
    assert est.estimate is None  # too few to say
    est.add(39)
    assert est.estimate == 40
    for _ in range(6):
        est.add(40)
    for _ in range(5):
        est.add(900)  # a stalled radio: a third of the window
    assert est.estimate is not None and est.estimate < 900
    for _ in range(15):
        est.add(400)  # a client that holds back every pong is as slow as it makes itself
    assert est.estimate == 400
    est.add(400, bound=network_bound(30))  # the network says 30 ms: the rest was held back
    assert est.estimate == est.bound == 43
    est.add(400)  # the bound holds until the network says otherwise
    assert est.estimate == 43
    with pytest.raises(ValueError, match="negative"):
        est.add(-1)
    with pytest.raises(ValueError, match="min_samples"):
        RttEstimator(window=2, min_samples=3)


def test_the_kernel_tells_a_tcp_sockets_round_trip() -> None:
    # The figure that bounds a socket's estimate, read off a real loopback connection.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()) as client:
            accepted, _ = server.accept()
            with accepted:
                accepted.sendall(b"x")
                assert client.recv(1) == b"x"
                rtt = kernel_rtt_ms(accepted)
                if sys.platform == "linux":
                    assert rtt is not None and 0 < rtt < 50, rtt
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        assert kernel_rtt_ms(udp) is None  # not TCP: no figure
    assert network_bound(None) == network_bound(0) == 10


def test_compensation_is_half_the_round_trip_capped() -> None:
    assert compensation(None) == 0
    assert compensation(20) == 10
    assert compensation(120) == 60
    assert compensation(2 * CAP_MS) == compensation(400) == compensation(10_000) == CAP_MS


# --------------------------------------------------------------------------- at the table


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    s = await Store.open(db_url)
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
def deals(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Rooms deal the layouts put in this list (the race's, unless a test changes them)."""
    layouts: list[Any] = [race_layouts()]
    monkeypatch.setattr(FixedMatch, "LAYOUTS", layouts)
    monkeypatch.setattr(entries_module, "Match", FixedMatch)
    return layouts


async def race_table(store: Store, fair: bool | None = None,
                     bots: bool = False) -> tuple[Table, Player, Player]:
    """A two-seat room of Ann and Bob (Bob a bot with ``bots``), playing the race's deal (with
    :func:`deals`): Ann has played her AH to F1, and both show a 2H."""
    room = secrets.token_hex(8)
    table = await Table.create(store, Rules.from_spec(RACE_RULES), 2, room, room[:8].upper(),
                               fair_races=fair)
    ann, _, _ = table.join("Ann")
    bob, _, _ = table.join("Bob")
    if bots:
        bob.bot = "greedy"
    table.handle(ann, protocol.Start(0))
    await until_playing(table)
    road = Road()
    play(table, ann, "ace", "N-F", Stamp(wall_ms()), road)  # a new foundation: at once
    assert isinstance(road.answers()[0], Ack)
    return table, ann, bob


def no_rival() -> list[Any]:
    """The race's deal with Bob's 2H under his Nertz top (KD): nobody can answer Ann's 2H."""
    layouts = race_layouts()
    layouts[1] = layout("2H KD", "3C 4C 5C 6C")
    return layouts


class Road:
    """Where a socket's answers go, now or later."""

    def __init__(self) -> None:
        self.heard: list[Any] = []
        self.sends: list[Send] = []

    def __call__(self, fx: Effects) -> None:
        self.heard += [s.message for s in fx.sends]
        self.sends += fx.sends

    def answers(self) -> list[Any]:
        return [m for m in self.heard if isinstance(m, Ack | Rejected)]


def play(table: Table, who: Player, action: str, move: str, stamp: Stamp, road: Road) -> None:
    road(table.handle(who, protocol.Play(action, move), stamp, road))


async def test_the_play_sent_first_wins_though_it_arrived_last(
    store: Store, deals: list[Any],
) -> None:
    table, ann, bob = await race_table(store)
    assert table.fair_races and table.room_info()["fair_races_option"] == "auto"
    now = wall_ms()
    ann_road, bob_road = Road(), Road()
    # Ann (20 ms) arrives first, sent 10 ms before; Bob (120 ms) arrives 30 ms later, sent
    # 60 ms before that: Bob pressed 20 ms sooner.
    play(table, ann, "a1", "W-F1", Stamp(now, 20.0), ann_road)
    assert ann_road.answers() == []  # waits: Bob shows a 2H that fits
    play(table, bob, "b1", "N-F1", Stamp(now + 30, 120.0), bob_road)
    await table.settled()
    (bob_answer,) = bob_road.answers()
    (ann_answer,) = ann_road.answers()
    assert isinstance(bob_answer, Ack)
    assert isinstance(ann_answer, Rejected) and ann_answer.race is not None
    assert ann_answer.race["winner"] == 1 and ann_answer.race["margin_ms"] == 20
    # Its text says the same margin (the engine's is of the arrival times, here 0).
    assert ann_answer.error == "race for F1 lost to seat 1 by 20 ms"
    # The winner is told, on their sockets ("You beat Ann by 20 ms").
    (won,) = [s for s in ann_road.sends + bob_road.sends if isinstance(s.message, RaceWon)]
    assert won.to == bob.id and won.message.loser_name == "Ann"
    assert won.message.margin_ms == 20
    entries = await store.load_log(table.id)
    moves = [e.data for e in entries if e.kind == "move"]
    assert [m["m"] for m in moves][-1] == "N-F1" and moves[-1]["a"] is not None
    races = [e.data for e in entries if e.kind == "race"]
    assert races[-1]["winner"] == 1 and races[-1]["margin_ms"] == 20
    # The log is the truth: a rebuilt table has the same foundation and race log.
    rebuilt = await Table.restore(store, table.id, table.code, table.rules, 2, entries)
    assert table.recorder is not None and rebuilt.recorder is not None
    assert rebuilt.recorder.file.to_json()["rounds"] == table.recorder.file.to_json()["rounds"]
    table.close()
    rebuilt.close()


async def test_by_arrival_when_the_option_is_off(store: Store, deals: list[Any]) -> None:
    table, ann, bob = await race_table(store, fair=False)
    assert not table.fair_races and table.room_info()["fair_races_option"] == "off"
    now = wall_ms()
    ann_road, bob_road = Road(), Road()
    play(table, ann, "a1", "W-F1", Stamp(now, 20.0), ann_road)
    play(table, bob, "b1", "N-F1", Stamp(now + 30, 120.0), bob_road)
    await table.settled()
    assert isinstance(ann_road.answers()[0], Ack)
    assert isinstance(bob_road.answers()[0], Rejected)
    table.close()


async def test_a_play_nobody_could_answer_is_decided_at_once(
    store: Store, deals: list[Any],
) -> None:
    deals[0] = no_rival()
    table, ann, _ = await race_table(store)
    road = Road()
    play(table, ann, "a1", "W-F1", Stamp(wall_ms(), 20.0), road)
    assert isinstance(road.answers()[0], Ack)  # in this call's own effects
    # Both foundation plays so far (the ace, the 2H) decided at once; none waited.
    assert table.hold_stats.decided_at_once == 2 and not table.hold_stats.held
    table.close()


async def test_a_seats_later_moves_wait_behind_its_play_and_a_resent_id_is_answered_once(
    store: Store, deals: list[Any],
) -> None:
    table, ann, _ = await race_table(store)
    road, again = Road(), Road()
    now = wall_ms()
    play(table, ann, "a1", "W-F1", Stamp(now, 20.0), road)
    play(table, ann, "a2", "T", Stamp(now + 1, 20.0), road)
    play(table, ann, "a1", "W-F1", Stamp(now + 2, 20.0), again)  # resent (a new socket)
    assert road.answers() == [] and again.answers() == []
    await table.settled()
    answers = road.answers() + again.answers()
    assert [a.id for a in answers] == ["a2", "a1"] or [a.id for a in answers] == ["a1", "a2"]
    assert [a.id for a in again.answers()] == ["a1"]  # the resend's socket hears it, once
    entries = await store.load_log(table.id)
    assert [e.data["m"] for e in entries if e.kind == "move"][-2:] == ["W-F1", "T"]
    table.close()


async def test_a_waiting_plays_id_with_another_move_is_an_error(
    store: Store, deals: list[Any],
) -> None:
    table, ann, _ = await race_table(store)
    road, other = Road(), Road()
    now = wall_ms()
    play(table, ann, "a1", "W-F1", Stamp(now, 20.0), road)
    fx = table.handle(ann, protocol.Play("a1", "T"), Stamp(now + 1, 20.0), other)
    errors = [s.message for s in fx.sends if isinstance(s.message, Error)]
    assert [(e.code, e.id) for e in errors] == [("reused_id", "a1")]
    await table.settled()
    assert [a.move for a in road.answers()] == ["W-F1"] and other.answers() == []
    entries = await store.load_log(table.id)
    assert [e.data["m"] for e in entries if e.kind == "move"][-1] == "W-F1"  # no T
    table.close()

async def test_the_default_is_on_with_people_and_off_for_bots_alone(
    store: Store, deals: list[Any],
) -> None:
    table, ann, bob = await race_table(store)
    assert table.fair_races
    for p in (ann, bob):
        p.bot = "greedy"  # as if every seat were a bot's
    assert not table.fair_races
    table.fair_option = True
    assert table.fair_races
    table.close()


# --------------------------------------------------------------------------- automation flag


def feed(watch: ReactionWatch, who: str, reactions: list[float], rtt: float = 40.0) -> None:
    """Plays each ``reaction`` ms after the change before it (and a change after each)."""
    t = 1000.0
    for r in reactions:
        watch.change(int(t))
        arrived = t + rtt + r  # the change reached them rtt/2 later; their play rtt/2 back
        watch.play(who, arrived, rtt)
        t = arrived + 5


def test_reactions_beyond_any_person_raise_the_flag() -> None:
    import random

    rng = random.Random(4)
    watch = ReactionWatch()
    feed(watch, "bot-like", [rng.uniform(60, 120) for _ in range(FLAG_MIN_PLAYS)])
    verdict = watch.verdict("bot-like")
    assert verdict is not None and verdict[0] == "reaction" and verdict[2] < 150
    feed(watch, "person", [rng.lognormvariate(6.2, 0.5) for _ in range(80)])
    assert watch.verdict("person") is None
    few = ReactionWatch()
    feed(few, "early", [80.0] * (FLAG_MIN_PLAYS - 1))
    assert few.verdict("early") is None  # not before 30 plays


def test_an_impossibly_even_rhythm_raises_the_flag() -> None:
    watch = ReactionWatch()
    feed(watch, "metronome", [600.0 + (i % 3) for i in range(40)])
    verdict = watch.verdict("metronome")
    assert verdict is not None and verdict[0] == "rhythm" and (verdict[3] or 1) < 0.1


def test_the_rhythm_figure_is_the_intervals_coefficient_of_variation() -> None:
    import itertools
    import random
    import statistics

    rng = random.Random(9)
    watch = ReactionWatch()
    feed(watch, "p", [rng.lognormvariate(6.0, 0.6) for _ in range(70)])
    figures = watch.figures("p")
    assert figures is not None and figures[2] is not None
    arrivals = list(watch.people["p"].arrivals)
    gaps = [b - a for a, b in itertools.pairwise(arrivals) if b > a]
    assert figures[2] == round(statistics.pstdev(gaps) / statistics.fmean(gaps), 3)


async def test_a_flag_is_shown_in_the_room_and_kept_in_the_match_record(
    store: Store, deals: list[Any],
) -> None:
    deals[0] = no_rival()
    table, ann, bob = await race_table(store)
    t = table.now_t()
    for i in range(FLAG_MIN_PLAYS):  # Ann's earlier plays, quicker than any person
        table.watch.change(t + i * 300)
        table.watch.play(ann.id, t + i * 300 + 90, 40.0)
        table.watch.play(bob.id, t + i * 300 + 90, 40.0)
    bob.bot = "greedy"  # bots are never flagged, however quick
    road = Road()
    play(table, ann, "a1", "W-F1", Stamp(wall_ms(), 40.0), road)
    play(table, bob, "b1", "T", Stamp(wall_ms()), road)
    await table.settled()
    flags = table.room_info()["flags"]
    assert [(f["name"], f["why"]) for f in flags] == [("Ann", "reaction")]
    assert flags[0]["median_reaction_ms"] < 150 and "median reaction" in flags[0]["text"]
    assert table.recorder is not None
    record = from_json(table.recorder.file.to_json())
    assert record.flags[0]["player"] == ann.id
    entries = await store.load_log(table.id)
    rebuilt = await Table.restore(store, table.id, table.code, table.rules, 2, entries)
    assert [f.to_json() for f in rebuilt.flags] == [f.to_json() for f in table.flags]
    table.close()
    rebuilt.close()
