"""The command line (SPEC sections 4 and 5), run as a subprocess: bad input exits non-zero with a
one-line message naming the problem and never a traceback; good input prints what SPEC says."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _support import layout

from nertz.match import Match
from nertz.rules import PRESETS, Rules


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nertz.cli", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=60,
        cwd=cwd,
    )


def assert_refused(proc: subprocess.CompletedProcess[str], *keywords: str) -> None:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {proc.stderr!r}"
    for word in keywords:
        assert word.lower() in lines[0].lower(), f"{word!r} not in {lines[0]!r}"


def dealt_layouts(rules: Rules, seats: int = 2, seed: int = 3) -> list[dict[str, Any]]:
    rnd = Match(rules, seats, seed).deal()
    return [t.to_layout().to_json() for t in rnd.tableaus]


def replay_doc(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": "nertz-replay/1",
        "rules": "pagat",
        "players": ["Ann", "Ben"],
        "seed": 7,
        "rounds": [{"moves": [{"t": 100, "p": 0, "m": "T"}]}],
    }
    doc.update(changes)
    return doc


def write(tmp_path: Path, doc: Any, name: str = "game.nertz.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


def with_layouts(layouts: list[dict[str, Any]], rules: Any = "pagat") -> dict[str, Any]:
    return replay_doc(rules=rules, rounds=[{"layouts": layouts, "moves": []}])


# ------------------------------------------------------------------------ bad replay files

BAD_FILES: list[tuple[str, Any, tuple[str, ...]]] = [
    ("malformed_json", '{"format": "nertz-replay/1", "rules": ', ("JSON",)),
    ("not_json_at_all", "hello", ("JSON",)),
    ("empty_file", "", ("JSON",)),
    ("non_object", [1, 2, 3], ("object",)),
    ("string", '"pagat"', ("object",)),
    ("no_format", {k: v for k, v in replay_doc().items() if k != "format"}, ("format",)),
    ("wrong_format", replay_doc(format="nertz-replay/2"), ("format", "nertz-replay/2")),
    ("unknown_preset", replay_doc(rules="klondike"), ("preset", "klondike")),
    ("unknown_option", replay_doc(rules={"preset": "pagat", "colour": "red"}), ("colour",)),
    ("bad_value", replay_doc(rules={"preset": "pagat", "work_piles": 7}), ("work_piles", "7")),
    ("bad_bool", replay_doc(rules={"preset": "pagat", "jokers": 1}), ("jokers",)),
    ("bad_rules_type", replay_doc(rules=5), ("rules",)),
    ("no_players", replay_doc(players=[]), ("players",)),
    ("bad_move_text", replay_doc(rounds=[{"moves": [{"t": 1, "p": 0, "m": "Q-Z"}]}]), ("Q-Z",)),
    ("pile_seven", replay_doc(rounds=[{"moves": [{"t": 1, "p": 0, "m": "7-F"}]}]), ("7-F",)),
    ("seat_out_of_range", replay_doc(rounds=[{"moves": [{"t": 1, "p": 2, "m": "T"}]}]),
     ("seat", "2")),
    ("negative_seat", replay_doc(rounds=[{"moves": [{"t": 1, "p": -1, "m": "T"}]}]), ("seat",)),
    ("negative_t", replay_doc(rounds=[{"moves": [{"t": -5, "p": 0, "m": "T"}]}]), ("t",)),
    ("move_missing_m", replay_doc(rounds=[{"moves": [{"t": 1, "p": 0}]}]), ("'m'",)),
    ("rounds_not_list", replay_doc(rounds={"moves": []}), ("rounds",)),
    ("no_seed_no_layouts", {**replay_doc(), "seed": None}, ("seed",)),
]


@pytest.mark.parametrize(("doc", "words"), [pytest.param(d, w, id=n) for n, d, w in BAD_FILES])
def test_replay_refuses_bad_files(tmp_path: Path, doc: Any, words: tuple[str, ...]) -> None:
    path = write(tmp_path, doc)
    assert_refused(cli("replay", str(path)), *words)
    assert_refused(cli("replay", str(path), "--json"), *words)


def _pagat_layouts() -> list[dict[str, Any]]:
    return dealt_layouts(Rules.from_spec("pagat"))


def test_good_layouts_are_accepted(tmp_path: Path) -> None:
    proc = cli("replay", str(write(tmp_path, with_layouts(_pagat_layouts()))), "--json")
    assert proc.returncode == 0, proc.stderr


def test_duplicate_card_is_refused(tmp_path: Path) -> None:
    layouts = _pagat_layouts()
    seat1 = layouts[1]
    dup = seat1["nertz"][0]
    seat1["stock"][0] = dup  # the first stock card is now missing and dup appears twice
    assert_refused(cli("replay", str(write(tmp_path, with_layouts(layouts)))), dup, "seat 1")


def test_missing_card_is_refused(tmp_path: Path) -> None:
    layouts = _pagat_layouts()
    gone = layouts[0]["stock"].pop()
    assert_refused(cli("replay", str(write(tmp_path, with_layouts(layouts)))), gone, "missing")


def test_extra_joker_is_refused(tmp_path: Path) -> None:
    layouts = _pagat_layouts()
    layouts[0]["stock"].append("X1")
    assert_refused(cli("replay", str(write(tmp_path, with_layouts(layouts)))), "X1")


def test_nertz_pile_of_wrong_size_is_refused(tmp_path: Path) -> None:
    layouts = _pagat_layouts()
    layouts[0]["stock"].append(layouts[0]["nertz"].pop(0))
    proc = cli("replay", str(write(tmp_path, with_layouts(layouts))))
    assert_refused(proc, "Nertz pile", "12")


def test_wrong_number_of_work_piles_is_refused(tmp_path: Path) -> None:
    layouts = _pagat_layouts()
    for lay in layouts:
        for cell in lay["work"].pop():
            lay["stock"].append(cell.lstrip("~"))
    assert_refused(cli("replay", str(write(tmp_path, with_layouts(layouts)))), "work piles", "3")


def test_four_piles_under_five_pile_rules_is_refused(tmp_path: Path) -> None:
    doc = with_layouts(_pagat_layouts(), rules="standard")
    assert_refused(cli("replay", str(write(tmp_path, doc))), "work piles")


def test_bad_layout_run_is_refused(tmp_path: Path) -> None:
    rules = Rules.from_spec("pagat")
    good = layout(rules, "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", ["7H 5S", "8S", "9S", "TS"])
    doc = with_layouts([good.to_json(), good.to_json()])
    assert_refused(cli("replay", str(write(tmp_path, doc))), "work pile 1")


def test_face_down_above_face_up_is_refused(tmp_path: Path) -> None:
    rules = Rules.from_spec("pagat")
    lay = layout(rules, "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", ["7H ~5S", "8S", "9S", "TS"])
    doc = with_layouts([lay.to_json(), lay.to_json()])
    assert_refused(cli("replay", str(write(tmp_path, doc))), "face-down")


def test_wrong_number_of_layouts_is_refused(tmp_path: Path) -> None:
    layouts = _pagat_layouts()[:1]
    assert_refused(cli("replay", str(write(tmp_path, with_layouts(layouts)))), "layouts")


def test_bad_card_in_layout_is_refused(tmp_path: Path) -> None:
    layouts = _pagat_layouts()
    layouts[0]["stock"][3] = "ZZ"
    assert_refused(cli("replay", str(write(tmp_path, with_layouts(layouts)))), "ZZ")


def test_missing_file_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "nope.nertz.json"
    assert_refused(cli("replay", str(missing)), "nope.nertz.json")
    assert_refused(cli("replay", str(tmp_path)), str(tmp_path.name))


def test_binary_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bin.nertz.json"
    path.write_bytes(b"\x80\x81\xfe\x00garbage")
    assert_refused(cli("replay", str(path)), "JSON")


def test_rounds_after_the_match_is_over_are_refused(tmp_path: Path) -> None:
    doc = replay_doc(rules="fairy_fly", rounds=[{"moves": []}, {"moves": []}])
    assert_refused(cli("replay", str(write(tmp_path, doc))), "round 2")


def test_deeply_nested_json_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "[" * 100_000 + "]" * 100_000)
    assert_refused(cli("replay", str(path)))


def test_unprintable_player_name_is_no_traceback(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps(replay_doc(players=["\ud800", "Ben"])))
    proc = cli("replay", str(path))
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (0, 2)


# ------------------------------------------------------------------------------ rules

@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("rules", "klondike"), ("klondike",)),
        (("rules", "pagat", "--set", "work_piles=7"), ("work_piles",)),
        (("rules", "pagat", "--set", "colour=red"), ("colour",)),
        (("rules", "pagat", "--set", "colour"), ("OPTION=VALUE",)),
        (("rules", "pagat", "--set", "turn_count=2"), ("turn_count",)),
        (("rules", "pagat", "--set", "jokers=maybe"), ("jokers",)),
        (("rules", "{bad json"), ("JSON",)),
        (("rules", '{"preset": "pagat", "rounds": 0}'), ("rounds",)),
        (("rules", '{"preset": "nope"}'), ("nope",)),
    ],
)
def test_rules_refuses_bad_input(args: tuple[str, ...], words: tuple[str, ...]) -> None:
    assert_refused(cli(*args), *words)


def test_unknown_command_is_no_traceback() -> None:
    proc = cli("bogus")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr


def test_rules_lists_every_preset() -> None:
    proc = cli("rules")
    assert proc.returncode == 0, proc.stderr
    for name in PRESETS:
        assert name in proc.stdout


def test_rules_json_lists_every_preset() -> None:
    proc = cli("rules", "--json")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert set(data) == set(PRESETS)


def test_rules_sanna_json() -> None:
    proc = cli("rules", "sanna", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["rules"] == "sanna"
    opts = data["options"]
    assert opts["nertz_pile_size"] == 10
    assert opts["adaptive_nertz_pile"] is True
    assert opts["stock_end"] == "continuous"
    assert opts["call"] == "auto"
    assert opts["caller_bonus"] == 5
    assert opts["work_piles"] == 4
    assert Rules.from_spec({"preset": "pagat", **opts}) == PRESETS["sanna"]


def test_rules_readable_shows_every_option() -> None:
    proc = cli("rules", "fairy_fly")
    assert proc.returncode == 0
    for name in Rules().to_options():
        assert name in proc.stdout
    assert "staircase" in proc.stdout and "rotate_either" in proc.stdout


def test_rules_set_overrides() -> None:
    proc = cli("rules", "standard", "--set", "nertz_pile_size=10", "--set", "jokers=on",
               "--set", "target_score=none", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["options"]["nertz_pile_size"] == 10
    assert data["options"]["jokers"] is True
    assert data["options"]["target_score"] is None
    assert data["options"]["work_piles"] == 5
    assert data["rules"] == {
        "preset": "standard", "nertz_pile_size": 10, "jokers": True, "target_score": None
    }


def test_rules_set_numeric_choice() -> None:
    proc = cli("rules", "pagat", "--set", "turn_count=1", "--set", "work_piles=5", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["options"]["turn_count"] == 1
    assert data["options"]["work_piles"] == 5


# ---------------------------------------------------------------------------- good replays


def called_game() -> dict[str, Any]:
    """Ann empties a one-card Nertz pile and calls; Ben's bad move and late move are rejected."""
    rules = Rules.from_spec({"preset": "pagat", "nertz_pile_size": 1})
    ann = layout(rules, "AH", ["9C", "8D", "QS", "JD"]).to_json()
    ben = layout(rules, "KS", ["9H", "8S", "QD", "JC"]).to_json()
    return replay_doc(
        rules={"preset": "pagat", "nertz_pile_size": 1},
        rounds=[{
            "layouts": [ann, ben],
            "moves": [
                {"t": 300, "p": 0, "m": "NERTZ"},  # i 0: played third
                {"t": 100, "p": 0, "m": "N-F"},  # i 1: played first
                {"t": 200, "p": 1, "m": "N-F3"},  # i 2: no F3
                {"t": 300, "p": 1, "m": "2-1"},  # i 3: same t as the call, after it: void
            ],
        }],
    )


def test_replay_json_shape(tmp_path: Path) -> None:
    proc = cli("replay", str(write(tmp_path, called_game())), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) >= {"rounds", "totals", "winner"}
    (rnd,) = data["rounds"]
    assert set(rnd) >= {"moves", "ended", "caller", "scores"}
    assert [m["i"] for m in rnd["moves"]] == [0, 1, 2, 3]
    oks = {m["i"]: m["ok"] for m in rnd["moves"]}
    assert oks == {0: True, 1: True, 2: False, 3: False}
    for m in rnd["moves"]:
        assert ("error" in m) == (not m["ok"])
        if not m["ok"]:
            assert isinstance(m["error"], str) and m["error"]
    assert rnd["ended"] == "nertz"
    assert rnd["caller"] == 0
    assert rnd["scores"] == [1, -2]
    assert data["totals"] == [1, -2]
    assert data["winner"] is None


def test_replay_open_round_json(tmp_path: Path) -> None:
    proc = cli("replay", str(write(tmp_path, replay_doc())), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    (rnd,) = data["rounds"]
    assert rnd["ended"] == "open" and rnd["caller"] is None
    assert rnd["moves"] == [{"i": 0, "ok": True}]
    assert rnd["scores"] == [-26, -26] == data["totals"]
    assert data["winner"] is None


def test_replay_finished_match_names_the_winner(tmp_path: Path) -> None:
    doc = called_game()
    doc["rules"] = {"preset": "fairy_fly", "nertz_pile_size": 1}
    doc["rounds"][0]["moves"] = [{"t": 100, "p": 0, "m": "N-F"}]
    proc = cli("replay", str(write(tmp_path, doc)), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    # fairy_fly: call auto, caller_bonus 10, nertz_penalty 1, one round.
    assert data["rounds"][0]["ended"] == "nertz"
    assert data["rounds"][0]["scores"] == [11, -1]
    assert data["winner"] == 0


def test_replay_readable(tmp_path: Path) -> None:
    proc = cli("replay", str(write(tmp_path, called_game())))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "ok" in out and "rejected" in out
    assert "no foundation F3" in out
    assert "Ann" in out and "Ben" in out
    assert "1" in out and "-2" in out
    assert proc.stderr == ""


def test_replay_of_a_recorded_file_round_trips(tmp_path: Path) -> None:
    doc = called_game()
    path = write(tmp_path, doc)
    first = json.loads(cli("replay", str(path), "--json").stdout)
    doc2 = copy.deepcopy(doc)
    doc2["rules"] = {"preset": "pagat", "nertz_pile_size": 1, "call_word": "Nertz"}
    second = json.loads(cli("replay", str(write(tmp_path, doc2, "b.json")), "--json").stdout)
    assert first["rounds"][0]["scores"] == second["rounds"][0]["scores"]
