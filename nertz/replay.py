"""Replay files (SPEC section 4): read, check, write, and replay them into scores.

A replay is JSON: the rules, the players (one per seat), a seed, and for each round optional
layouts and the moves with their times. :func:`load` refuses every malformed file with a
:class:`ReplayError` whose one-line message names the problem; :func:`run` plays the file and
returns SPEC's result shape, each move accepted or rejected with the reason.

A round may also hold ``races``, the project's optional section (docs/notation.md): the
contested plays the table rejected, which a file of accepted moves cannot show. Replaying never
reads it (a file means the same with or without it); :mod:`nertz.analysis` does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from nertz.cards import Card
from nertz.engine import Round
from nertz.errors import IllegalMoveError, LostRace, NotationError, ReplayError, RulesError
from nertz.events import Event
from nertz.match import Match, RoundResult
from nertz.moves import Move
from nertz.rules import Rules
from nertz.state import Layout

FORMAT: Final = "nertz-replay/1"
"""The ``format`` value of every replay file this version reads and writes."""


@dataclass(frozen=True, slots=True)
class TimedMove:
    """One line of a round's ``moves``: time ``t`` (ms), seat ``p``, the move, and optionally the
    partner ``h`` (0 Nertz pile, 1 stock and waste) under split teams."""

    t: int
    p: int
    m: Move
    h: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The file form: ``{"t": 1200, "p": 0, "m": "N-F"}``."""
        out: dict[str, Any] = {"t": self.t, "p": self.p, "m": str(self.m)}
        if self.h is not None:
            out["h"] = self.h
        return out


@dataclass(frozen=True, slots=True)
class Race:
    """One contested foundation play, as the table saw it: at ``t`` (ms) seat ``loser`` played
    ``card`` to the step of foundation ``foundation`` (1-based) that seat ``winner`` had filled
    ``margin_ms`` earlier (None where the table did not know both times). The loser's card
    stayed where it was: the file's moves do not hold it."""

    t: int
    winner: int
    loser: int
    card: Card
    foundation: int
    margin_ms: int | None

    def to_json(self) -> dict[str, Any]:
        """The file form: ``{"t", "winner", "loser", "card", "foundation", "margin_ms"}``."""
        return {"t": self.t, "winner": self.winner, "loser": self.loser, "card": str(self.card),
                "foundation": self.foundation, "margin_ms": self.margin_ms}


@dataclass(slots=True)
class RoundRecord:
    """One round of a replay file: the deal (None: shuffled from the seed), the moves, and the
    races the table decided (optional: empty where the file has none)."""

    layouts: list[Layout] | None = None
    moves: list[TimedMove] = field(default_factory=list)
    races: list[Race] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The file form of the round (``races`` only when there were any)."""
        out: dict[str, Any] = {}
        if self.layouts is not None:
            out["layouts"] = [layout.to_json() for layout in self.layouts]
        out["moves"] = [m.to_json() for m in self.moves]
        if self.races:
            out["races"] = [r.to_json() for r in self.races]
        return out


@dataclass(slots=True)
class ReplayFile:
    """A whole replay file as values."""

    rules: Rules
    players: list[str]
    seed: int | str | None = None
    rounds: list[RoundRecord] = field(default_factory=list)
    flags: list[dict[str, Any]] = field(default_factory=list)
    """The server's automation flags (optional: seats that played beyond any person, with the
    figures that raised each flag); replaying never reads them."""

    def to_json(self) -> dict[str, Any]:
        """The file form, ready for :func:`json.dumps`."""
        out: dict[str, Any] = {
            "format": FORMAT,
            "rules": self.rules.to_spec(),
            "players": list(self.players),
        }
        if self.seed is not None:
            out["seed"] = self.seed
        out["rounds"] = [r.to_json() for r in self.rounds]
        if self.flags:
            out["flags"] = [dict(f) for f in self.flags]
        return out

    def dumps(self) -> str:
        """The file's text."""
        return json.dumps(self.to_json(), indent=1)


def loads(text: str | bytes) -> ReplayFile:
    """Read and check a replay file's text; raises :class:`ReplayError` naming the problem."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplayError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except UnicodeDecodeError:
        raise ReplayError("not JSON: the file is not UTF-8 text") from None
    except RecursionError:
        raise ReplayError("not JSON: nested too deeply") from None
    except ValueError as exc:  # the interpreter's cap on an integer's digits
        raise ReplayError(f"not JSON: {exc}") from None
    return from_json(data)


def load(path: str | Path) -> ReplayFile:
    """Read and check a replay file from disk."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ReplayError(f"cannot read {path}: {exc.strerror or exc}") from None
    return loads(raw)


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def from_json(data: object) -> ReplayFile:
    """Check a decoded replay file and turn it into values."""
    if not isinstance(data, dict):
        raise ReplayError("a replay file must be a JSON object")
    fmt = data.get("format")
    if fmt is None:
        raise ReplayError(f"no 'format' (expected {FORMAT!r})")
    if fmt != FORMAT:
        raise ReplayError(f"unknown format {fmt!r} (expected {FORMAT!r})")
    try:
        rules = Rules.from_spec(data.get("rules", "pagat"))
    except RulesError as exc:
        raise ReplayError(f"rules: {exc}") from None
    players = data.get("players")
    if not isinstance(players, list) or not players:
        raise ReplayError("'players' must be a non-empty list of names, one per seat")
    if len(players) > 8:
        raise ReplayError(f"{len(players)} players: a table has at most 8 seats")
    for name in players:
        if not isinstance(name, str):
            raise ReplayError(f"player name {name!r} is not text")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise ReplayError(f"player name {name!r} is not valid text") from None
    seed = data.get("seed")
    if seed is not None and not (_int(seed) or isinstance(seed, str)):
        raise ReplayError(f"seed {seed!r} must be a whole number or text")
    rounds_data = data.get("rounds")
    if not isinstance(rounds_data, list):
        raise ReplayError("'rounds' must be a list")
    rounds = []
    for r, rd in enumerate(rounds_data, start=1):
        rounds.append(_round_from_json(rd, r, len(players), seed, rules.call_word))
    flags = data.get("flags")
    if flags is not None and not (isinstance(flags, list)
                                  and all(isinstance(f, dict) for f in flags)):
        raise ReplayError("'flags' must be a list of objects")
    return ReplayFile(rules, list(players), seed, rounds, list(flags or []))


def _round_from_json(
    rd: object, r: int, seats: int, seed: object, call_word: str | None = None
) -> RoundRecord:
    where = f"round {r}"
    if not isinstance(rd, dict):
        raise ReplayError(f"{where}: must be an object with 'moves'")
    layouts = None
    if "layouts" in rd and rd["layouts"] is not None:
        raw = rd["layouts"]
        if not isinstance(raw, list):
            raise ReplayError(f"{where}: 'layouts' must be a list, one per seat")
        if len(raw) != seats:
            raise ReplayError(f"{where}: {len(raw)} layouts for {seats} players")
        layouts = []
        for s, item in enumerate(raw):
            try:
                layouts.append(Layout.from_json(item))
            except NotationError as exc:
                raise ReplayError(f"{where}, seat {s}: {exc}") from None
    elif seed is None:
        raise ReplayError(f"{where}: no layouts and no seed to shuffle from")
    moves_data = rd.get("moves", [])
    if not isinstance(moves_data, list):
        raise ReplayError(f"{where}: 'moves' must be a list")
    moves = []
    for i, md in enumerate(moves_data):
        at = f"{where}, move {i}"
        if not isinstance(md, dict):
            raise ReplayError(f"{at}: must be an object with t, p and m")
        for key in ("t", "p", "m"):
            if key not in md:
                raise ReplayError(f"{at}: no {key!r}")
        t, p, m, h = md["t"], md["p"], md["m"], md.get("h")
        if not _int(t) or t < 0:
            raise ReplayError(f"{at}: t {t!r} must be a whole number of ms, 0 or more")
        if not _int(p) or not 0 <= p < seats:
            raise ReplayError(f"{at}: p {p!r} is not a seat (0 to {seats - 1})")
        if h is not None and (not _int(h) or h not in (0, 1)):
            raise ReplayError(f"{at}: h {h!r} must be 0 or 1")
        if not isinstance(m, str):
            raise ReplayError(f"{at}: m {m!r} is not move text")
        try:
            move = Move.parse(m, call_word)
        except NotationError as exc:
            raise ReplayError(f"{at}: {exc}") from None
        moves.append(TimedMove(t, p, move, h))
    races = _races_from_json(rd.get("races"), where, seats)
    return RoundRecord(layouts, moves, races)


def _races_from_json(raw: object, where: str, seats: int) -> list[Race]:
    """The optional ``races`` section; absent or null is no races."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ReplayError(f"{where}: 'races' must be a list")
    races = []
    for i, item in enumerate(raw):
        at = f"{where}, race {i}"
        if not isinstance(item, dict):
            raise ReplayError(f"{at}: must be an object with t, winner, loser, card, foundation")
        for key in ("t", "winner", "loser", "card", "foundation"):
            if key not in item:
                raise ReplayError(f"{at}: no {key!r}")
        t, margin = item["t"], item.get("margin_ms")
        if not _int(t) or t < 0:
            raise ReplayError(f"{at}: t {t!r} must be a whole number of ms, 0 or more")
        for key in ("winner", "loser"):
            if not _int(item[key]) or not 0 <= item[key] < seats:
                raise ReplayError(f"{at}: {key} {item[key]!r} is not a seat (0 to {seats - 1})")
        if item["winner"] == item["loser"]:
            raise ReplayError(f"{at}: a seat cannot race itself")
        if not _int(item["foundation"]) or item["foundation"] < 1:
            raise ReplayError(f"{at}: foundation {item['foundation']!r} must be 1 or more")
        if margin is not None and (not _int(margin) or margin < 0):
            raise ReplayError(f"{at}: margin_ms {margin!r} must be a whole number, 0 or more")
        if not isinstance(item["card"], str):
            raise ReplayError(f"{at}: card {item['card']!r} is not card text")
        try:
            card = Card.parse(item["card"])
        except NotationError as exc:
            raise ReplayError(f"{at}: {exc}") from None
        races.append(Race(t, item["winner"], item["loser"], card, item["foundation"], margin))
    return races


@dataclass(slots=True)
class MoveOutcome:
    """What happened to one move of the file: ``i`` its index, ``ok``, and the reason if not;
    for analyses, what an accepted move did (``events``) and the race a rejected one lost."""

    i: int
    move: TimedMove
    ok: bool
    error: str | None = None
    events: tuple[Event, ...] = ()
    race: LostRace | None = None

    def to_json(self) -> dict[str, Any]:
        """SPEC's ``{"i": 0, "ok": true}`` or with ``"error"``."""
        out: dict[str, Any] = {"i": self.i, "ok": self.ok}
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(slots=True)
class ReplayedRound:
    """One replayed round: the outcomes in play order, the final round state and its result."""

    outcomes: list[MoveOutcome]
    round: Round
    result: RoundResult


@dataclass(slots=True)
class Replayed:
    """A whole replayed file."""

    file: ReplayFile
    match: Match
    rounds: list[ReplayedRound]

    def to_json(self) -> dict[str, Any]:
        """SPEC's result shape, with a per-seat breakdown added."""
        rounds = []
        for rr in self.rounds:
            score = rr.result.score
            rounds.append(
                {
                    "moves": [o.to_json() for o in sorted(rr.outcomes, key=lambda o: o.i)],
                    "ended": score.ended,
                    "caller": score.caller,
                    "scores": rr.result.scores,
                    "breakdown": [s.to_json() for s in score.seats],
                    "nertz_sizes": rr.result.nertz_sizes,
                }
            )
        return {
            "rounds": rounds,
            "totals": list(self.match.totals),
            "winner": self.match.winner,
            "over": self.match.over,
        }


def run(
    replay: ReplayFile,
    on_move: Callable[[int, MoveOutcome, Round], None] | None = None,
    on_deal: Callable[[int, Round], None] | None = None,
) -> Replayed:
    """Replay every round: moves in ``t`` order (ties in file order), each accepted or rejected.

    ``on_deal(round_index, round)`` is told of each round as it is dealt, before its first move;
    ``on_move(round_index, outcome, round)`` of each move as it is applied. Raises
    :class:`ReplayError` if a layout does not fit the rules or the file has rounds after the
    match is over.
    """
    match = Match(replay.rules, len(replay.players), replay.seed if replay.seed is not None else 0)
    done = []
    for r, record in enumerate(replay.rounds):
        if match.over:
            raise ReplayError(f"round {r + 1}: the match was over after round {r}")
        try:
            rnd = match.deal(record.layouts)
        except (NotationError, ValueError) as exc:
            raise ReplayError(f"round {r + 1}, {exc}") from None
        if on_deal is not None:
            on_deal(r, rnd)
        outcomes = []
        order = sorted(range(len(record.moves)), key=lambda i: record.moves[i].t)
        for i in order:
            tm = record.moves[i]
            try:
                events = rnd.play(tm.p, tm.m, tm.t, tm.h)
                outcome = MoveOutcome(i, tm, True, events=events)
            except IllegalMoveError as exc:
                race = exc if isinstance(exc, LostRace) else None
                outcome = MoveOutcome(i, tm, False, exc.reason, race=race)
            outcomes.append(outcome)
            if on_move is not None:
                on_move(r, outcome, rnd)
        result = match.finish(rnd)
        done.append(ReplayedRound(outcomes, rnd, result))
    return Replayed(replay, match, done)


class Recorder:
    """Builds a replay file while a match is played: one call per accepted move.

    The moves wait as tuples of numbers and text until the file is asked for (:attr:`file`,
    :meth:`to_json`). A server holds every move of every match in play: one object per move,
    each tracked by the cyclic garbage collector, made each of its full collections walk them
    all (at 200 rooms they were the largest class of tracked objects, and a collection paused
    every room for a fifth of a second); a tuple of atoms is not tracked."""

    def __init__(self, rules: Rules, players: Sequence[str], seed: int | str | None) -> None:
        self._file = ReplayFile(rules, list(players), seed)
        self._waiting: list[list[tuple[int, int, str, int | None]]] = []
        """Per round of the file, its moves not yet in it (``t``, seat, the move's text,
        partner), in the order they were recorded, after those that are."""

    @property
    def file(self) -> ReplayFile:
        """The replay file so far (the moves recorded since the last look are put into it)."""
        call_word = self._file.rules.call_word
        for record, waiting in zip(self._file.rounds, self._waiting, strict=True):
            if waiting:
                record.moves.extend(TimedMove(t, p, Move.parse(m, call_word), h)
                                    for t, p, m, h in waiting)
                waiting.clear()
        return self._file

    @file.setter
    def file(self, file: ReplayFile) -> None:
        # A file read back (a room rebuilt from its snapshot): its moves wait as tuples too.
        self._file = file
        self._waiting = []
        for record in file.rounds:
            self._waiting.append([(tm.t, tm.p, str(tm.m), tm.h) for tm in record.moves])
            record.moves.clear()

    def start_round(self, rnd: Round | None = None) -> None:
        """Begin a round; pass the dealt round to store its layouts in the file."""
        layouts = None if rnd is None else [t.to_layout() for t in rnd.tableaus]
        self._file.rounds.append(RoundRecord(layouts))
        self._waiting.append([])

    def record(self, t: int, seat: int, move: Move, hand: int | None = None) -> None:
        """Add one move to the current round."""
        self._waiting[-1].append((t, seat, str(move), hand))

    def race(self, race: Race) -> None:
        """Add a race the table decided to the current round's ``races``."""
        self._file.rounds[-1].races.append(race)

    def flag(self, flag: dict[str, Any]) -> None:
        """Add one of the server's automation flags (:attr:`ReplayFile.flags`)."""
        self._file.flags.append(flag)

    def to_json(self) -> dict[str, Any]:
        """The file form of the replay so far, as :meth:`ReplayFile.to_json` gives it, without
        putting the waiting moves into the file."""
        out = self._file.to_json()
        for record, waiting in zip(out["rounds"], self._waiting, strict=True):
            moves = record["moves"]
            for t, p, m, h in waiting:
                line: dict[str, Any] = {"t": t, "p": p, "m": m}
                if h is not None:
                    line["h"] = h
                moves.append(line)
        return out


def frames(replay: ReplayFile) -> dict[str, Any]:
    """The replay as a viewer steps through it: per round, the table as a spectator sees it at
    the deal, then each move in play order with what it changed (the tableau of its seat and
    every foundation it touched, as in the server's ``update`` message), and the result.

    Only face-up cards appear, as at the table; a viewer needs nothing else to draw every step.
    """
    from nertz.views import foundation_json, tableau_json, view

    out_rounds: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    start: list[dict[str, Any]] = []
    # What the last step left, to send only what each move changed.
    seen: dict[str, Any] = {"round": -1, "sizes": [], "resets": 0}

    def on_move(r: int, outcome: MoveOutcome, rnd: Round) -> None:
        if seen["round"] != r:
            seen.update(round=r, sizes=[], resets=0)
            pending.append({"round": r, "steps": []})
        tm = outcome.move
        step: dict[str, Any] = {"i": outcome.i, "t": tm.t, "seat": tm.p, "move": str(tm.m),
                                "ok": outcome.ok}
        if outcome.ok:
            seats = range(rnd.seats) if rnd.resets != seen["resets"] else (tm.p,)
            sizes = [len(f) for f in rnd.foundations]
            changed = [i for i, n in enumerate(sizes)
                       if i >= len(seen["sizes"]) or seen["sizes"][i] != n]
            seen.update(sizes=sizes, resets=rnd.resets)
            step["tableaus"] = [tableau_json(rnd, s) for s in seats]
            step["foundations"] = [foundation_json(rnd, i) for i in changed]
            step["ended"] = rnd.ended
        else:
            step["error"] = outcome.error
        pending[-1]["steps"].append(step)

    match = Match(replay.rules, len(replay.players),
                  replay.seed if replay.seed is not None else 0)
    # Deal views come from a second match dealt in step with the replay.
    result = run(replay, on_move)
    for r, rr in enumerate(result.rounds):
        rnd0 = match.deal(replay.rounds[r].layouts)
        # ``starts``: the ranks that open a foundation, as the live table sends them.
        start.append(view(rnd0, -1).to_json() | {"starts": [rnd0.policy.starter]})
        match.finish(rr.round)
        steps: list[dict[str, Any]] = next(
            (p["steps"] for p in pending if p["round"] == r), []
        )
        score = rr.result.score
        out_rounds.append({
            "deal": start[r],
            "steps": steps,
            "result": {"ended": score.ended, "caller": score.caller,
                       "scores": rr.result.scores,
                       "breakdown": [s.to_json() for s in score.seats]},
        })
    return {
        "players": list(replay.players),
        "rules": replay.rules.to_spec(),
        "rounds": out_rounds,
        "totals": list(result.match.totals),
        "winner": result.match.winner,
    }
