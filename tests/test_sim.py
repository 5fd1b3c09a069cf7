"""The simulator: the virtual clock, races, reproducibility, statistics, the command."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from nertz.bots import SPEEDS, GreedyBot, PlayerSpec
from nertz.cli import main
from nertz.match import Match
from nertz.rules import preset
from nertz.sim.runner import SimConfig, play_one, run, seating
from nertz.sim.stats import mean_ci, summarize, wilson
from nertz.sim.table import play_table


def _config(bots: str = "greedy,greedy,greedy", rules: str = "pagat") -> SimConfig:
    return SimConfig(preset(rules), tuple(PlayerSpec.parse(b) for b in bots.split(",")), seed=7)


def test_same_seed_same_rounds_whatever_the_workers() -> None:
    config = _config("expert,greedy,random")
    one = run(config, 6, workers=1)
    two = run(config, 6, workers=2)
    assert one == two
    assert play_one(config, 4) == one[4]
    other = run(SimConfig(config.rules, config.players, seed=8), 6)
    assert other != one


def test_rotation_pairs_every_deal() -> None:
    config = _config("expert,greedy,random")
    seats = [seating(config, i) for i in range(6)]
    assert [d for d, _ in seats] == [0, 0, 0, 1, 1, 1]
    for d in (0, 1):
        rows = [p for deal, p in seats if deal == d]
        for s in range(3):
            assert {str(r[s]) for r in rows} == {str(p) for p in config.players}


def test_landings_are_in_time_order_and_races_happen() -> None:
    rules = preset("pagat")
    races = 0
    for seed in range(6):
        rnd = Match(rules, 4, seed=seed).deal()
        bots = [GreedyBot() for _ in range(4)]
        for s, b in enumerate(bots):
            b.start(s, rules, seed)
        stats = play_table(rnd, bots, [SPEEDS["skilled"]] * 4, random.Random(seed), True)
        times = [t for t, *_ in stats.log]
        assert times == sorted(times)
        assert rnd.ended is not None
        races += stats.races
        accepted_f: list[tuple[int, int]] = []
        for t, seat, move, ok in stats.log:
            if "-F" in move:
                if ok:
                    accepted_f.append((t, seat))
                elif stats.races:
                    # A lost race: somebody else's card reached a foundation no later.
                    assert any(s != seat and at <= t for at, s in accepted_f)
    assert races > 0


def test_faster_seat_wins_more_races() -> None:
    rules = preset("pagat")
    won = [0.0, 0.0]
    for seed in range(10):
        rnd = Match(rules, 2, seed=seed).deal()
        bots = [GreedyBot(), GreedyBot()]
        for s, b in enumerate(bots):
            b.start(s, rules, seed)
        play_table(rnd, bots, [SPEEDS["expert"], SPEEDS["beginner"]], random.Random(seed))
        scores = Match(rules, 2, seed=seed).finish(rnd).scores
        won[0 if scores[0] >= scores[1] else 1] += 1
    assert won[0] > won[1]


def test_call_grace_window_lets_cards_in_the_air_land() -> None:
    rules = preset("pagat").replace(call_grace_ms=400)
    landed_late = 0
    for seed in range(8):
        rnd = Match(rules, 3, seed=seed).deal()
        bots = [GreedyBot() for _ in range(3)]
        for s, b in enumerate(bots):
            b.start(s, rules, seed)
        stats = play_table(rnd, bots, [SPEEDS["casual"]] * 3, random.Random(seed), True)
        if rnd.called_at is None:
            continue
        for t, _, move, ok in stats.log:
            if t > rnd.called_at and move != "NERTZ":
                assert t - rnd.called_at < 400 or not ok
                landed_late += ok
    assert landed_late > 0


def test_statistics() -> None:
    lo, hi = wilson(50, 100)
    assert round(lo, 3) == 0.404 and round(hi, 3) == 0.596
    assert wilson(0, 0) == (0.0, 1.0)
    mean, lo, hi = mean_ci([1, 2, 3, 4])
    assert mean == 2.5 and lo < 2.5 < hi
    records = run(_config("expert,greedy,greedy"), 6)
    stats = summarize(records)
    assert set(stats.players) == {"expert", "greedy"}
    assert stats.players["greedy"].seats == 12
    assert abs(sum(p.win_share for p in stats.players.values()) - 1) < 1e-9
    assert abs(sum(stats.seat_win_share) - 1) < 1e-9


def test_cli_json_shape_and_pooling(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "--bots", "greedy,random,random", "--rounds", "6", "--seed", "3",
                 "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rounds"] == 6
    assert out["rounds_per_second"] > 0
    assert set(out["bots"]) == {"greedy", "random"}
    for entry in out["bots"].values():
        assert set(entry) >= {"win_share", "win_share_ci", "mean_points"}
        lo, hi = entry["win_share_ci"]
        assert 0 <= lo <= entry["win_share"] <= hi <= 1
    for key in ("blocked_rate", "mean_moves", "mean_seconds", "nertz_call_rate"):
        assert key in out


def test_cli_table_and_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "--rules", "fairy_fly", "--set", "turn_count=1", "--seats", "2",
                 "--bots", "greedy:casual,expert:skilled", "--rounds", "4",
                 "--plot", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "win share" in out and "greedy:casual" in out
    for name in ("win_share.png", "scores.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bots", "greedy,wizard"], "unknown bot 'wizard'"),
        (["--set", "work_piles=9"], "work_piles"),
        (["--set", "nonsense"], "--set takes OPTION=VALUE"),
        (["--rules", "nowhere"], "nowhere"),
        (["--bots", "greedy:warp"], "unknown speed level"),
        (["--rounds", "0"], "--rounds"),
    ],
)
def test_cli_bad_input_exits_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "--rounds", "2", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
