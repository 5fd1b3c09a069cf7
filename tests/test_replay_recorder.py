"""The replay recorder: what it writes is the file, however its moves wait in memory."""

from __future__ import annotations

import gc

from nertz.match import Match
from nertz.moves import Move
from nertz.playout import play_round
from nertz.replay import Recorder, from_json
from nertz.rules import PRESETS


def _recorded(moves: int) -> tuple[Recorder, list[tuple[int, int, Move]]]:
    """A round of greedy play, its moves recorded (over and over until there are ``moves``:
    the recorder writes what it is told, it does not play)."""
    rules = PRESETS["pagat"]
    rnd = Match(rules, 3, 11).deal()
    recorder = Recorder(rules, ["a", "b", "c"], 11)
    recorder.start_round(rnd)
    round_moves: list[tuple[int, Move]] = []
    play_round(rnd, on_move=lambda seat, move: round_moves.append((seat, move)))
    played: list[tuple[int, int, Move]] = []
    while len(played) < moves:
        for seat, move in round_moves[:moves - len(played)]:
            t = 100 * (len(played) + 1)
            recorder.record(t, seat, move)
            played.append((t, seat, move))
    return recorder, played


def test_the_file_holds_every_move_as_recorded_and_its_json_is_the_files() -> None:
    recorder, played = _recorded(120)
    assert len(played) > 20
    early = recorder.to_json()
    file = recorder.file  # the waiting moves go into the file
    assert [(m.t, m.p, m.m, m.h) for m in file.rounds[0].moves] == [
        (t, p, m, None) for t, p, m in played]
    assert early == file.to_json() == recorder.to_json()
    # Recording goes on after a look, and a look again finds everything in order.
    recorder.start_round()
    recorder.record(5, 1, Move.parse("N-F"), 0)
    assert recorder.file.rounds[1].moves[0].h == 0
    assert recorder.to_json() == recorder.file.to_json()
    assert recorder.to_json()["rounds"][1]["moves"] == [{"t": 5, "p": 1, "m": "N-F", "h": 0}]


def test_a_file_read_back_records_on_as_before() -> None:
    recorder, _ = _recorded(60)
    saved = recorder.to_json()
    again = Recorder(recorder.file.rules, recorder.file.players, recorder.file.seed)
    again.file = from_json(saved)  # a room rebuilt from its snapshot
    assert again.to_json() == saved
    again.record(9_999, 2, Move.parse("W-F"))
    assert again.to_json()["rounds"][0]["moves"][-1] == {"t": 9_999, "p": 2, "m": "W-F"}
    assert again.file.rounds[0].moves[-1].m == Move.parse("W-F")


def test_recorded_moves_are_not_left_for_the_cyclic_collector_to_walk() -> None:
    # A server holds every move of every match in play; each full collection walks every
    # tracked object, so a tracked object per move made the collection's pause grow with play.
    gc.collect()
    before = len(gc.get_objects())
    recorder, played = _recorded(2_000)
    count = len(played)
    del played  # the test's own list of moves, which the collector does walk
    gc.collect()
    grown = len(gc.get_objects()) - before
    assert grown < count // 10, (grown, count)
    assert recorder.to_json()["rounds"][0]["moves"]
