"""A table's snapshot: everything its log has built, so that a rebuild reads a bounded amount.

A room's log grows with every move of every match it plays, and a table is rebuilt from it on
every failover and reload. So at the deal of a round (the ``start`` of a match, the ``next``
round), once :attr:`~nertz.server.room.log.TableLog.snapshot_every` entries have been logged
since the last snapshot, the table stores with that deal's entry a snapshot of its state just
before it: :func:`capture`. A rebuild (:meth:`nertz.server.store.Store.load_room`) loads the
newest snapshot and the entries from that deal on, and :func:`restore` puts the state back.

A deal is where a snapshot is small and exact: the round just played is over, and the deal
replaces it, so the snapshot holds no round at all (no engine state, which only the engine could
write down faithfully); what it holds is the room's people (with every answer a resent action
id gets again: issue 8's durable idempotency), the match so far (totals, results, the next
piles' sizes, the lotto's pot), its replay file so far, the automation watch and flags, and the
room's finished matches. Rebuilt from a snapshot, a table is the table the whole log rebuilds
(``tests/server/test_server_snapshots.py`` compares everything a table holds).

The store writes the snapshot in the transaction that stores its deal's entry, under the same
epoch check (:meth:`nertz.server.store.Store.append_nowait`): a former owner can no more write
a snapshot than an entry. The log's rows stay (the log is the record; replays of finished
matches are stored apart, in ``matches``); a snapshot of another :data:`FORMAT` (written by
another version) is ignored and the whole log replayed.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Final

import msgspec

from nertz.events import Ended
from nertz.match import Match, RoundResult
from nertz.replay import Recorder, from_json
from nertz.rules import Rules
from nertz.scoring import RoundScore, SeatScore
from nertz.server.room.lobby import Player
from nertz.server.room.messages import Ack, Rejected
from nertz.server.room.phase import Phase
from nertz.server.room.races import Flag, ReactionWatch

if TYPE_CHECKING:
    from nertz.server.room.core import TableCore

FORMAT: Final = 1
"""The snapshot's form: a rebuild reads only snapshots of this form (others: the whole log)."""

EVERY_ENV: Final = "NERTZ_SNAPSHOT_EVERY"
"""Sets :data:`SNAPSHOT_EVERY` for a server's process (tests make rebuilds go through
snapshots often with it)."""


def _every() -> int:
    raw = os.environ.get(EVERY_ENV, "200")
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{EVERY_ENV}={raw!r}: give a whole number of log entries, 1 or more")
    return value


SNAPSHOT_EVERY: Final = _every()
"""A deal stores a snapshot once at least this many entries were logged since the last one
(200 unless :data:`EVERY_ENV` says): a rebuild then reads fewer than this many entries before
the current round's deal, plus the round's own."""

_SEAT_SCORE: Final = ("foundation_cards", "card_points", "nertz_left", "nertz_penalty",
                      "caller_bonus", "variant_bonus", "false_calls", "lotto")
"""The fields of :class:`~nertz.scoring.SeatScore` (its ``total`` is worked out from them)."""

_ENDINGS: Final = frozenset(e.value for e in Ended)


def capture(table: TableCore) -> dict[str, Any]:
    """The table's state as JSON values, taken just before a deal's entry is applied."""
    match = table.match
    last = None
    if table.last_result is not None:
        assert match is not None and table.last_result in match.results
        last = match.results.index(table.last_result)
    return {
        "rules": table.rules.to_spec(),
        "seats": table.lobby.seats,
        "players": [_player(p) for p in table.players.values()],
        "host": table.lobby.host,
        "same_deal": None if table.same_deal is None else list(table.same_deal),
        "fair_option": table.fair_option,
        "phase": str(table.phase),
        "match_number": table.match_number,
        "match_id": table.match_id,
        "match": None if match is None else _match(match),
        "last_result": last,
        "recorder": None if table.recorder is None else table.recorder.to_json(),
        "watch": table.watch.to_json(),
        "flags": [f.to_json() for f in table.flags],
        "finished": list(table.archive.finished),
        "last_t": table.last_t,
        "countdown_ms": table.countdown_ms,
    }


def restore(table: TableCore, state: dict[str, Any]) -> None:
    """Put a :func:`capture` back on a fresh table (the entries after it follow)."""
    table.rules = Rules.from_spec(state["rules"])
    table.lobby.seats = int(state["seats"])
    table.lobby.teams = table.rules.teams
    for raw in state["players"]:
        player = _player_from(raw)
        table.lobby.players[player.id] = player
        # As when its joining is replayed: the reconnect window counts from the rebuild.
        player.went()
    table.lobby.host = state["host"]
    same = state["same_deal"]
    table.same_deal = None if same is None else (str(same[0]), same[1])
    table.fair_option = state["fair_option"]
    table.phase = Phase(state["phase"])
    table.match_number = int(state["match_number"])
    table.match_id = state["match_id"]
    raw_match = state["match"]
    table.match = None if raw_match is None else _match_from(table.rules, raw_match)
    last = state["last_result"]
    table.last_result = None if last is None or table.match is None else table.match.results[last]
    recorded = state["recorder"]
    if recorded is None:
        table.recorder = None
    else:
        file = from_json(recorded)
        recorder = Recorder(file.rules, file.players, file.seed)
        recorder.file = file
        table.recorder = recorder
    table.watch = ReactionWatch.from_json(state["watch"])
    table.flags = [Flag.from_json(f) for f in state["flags"]]
    table.archive.finished = [str(m) for m in state["finished"]]
    table.last_t = int(state["last_t"])
    table.countdown_ms = int(state["countdown_ms"])


def _player(p: Player) -> list[Any]:
    answers = [[aid, msgspec.to_builtins(answer)] for aid, answer in p.answers.items()]
    return [p.id, p.name, p.token_hash, p.seat, p.hand, p.bot, p.level, p.ready, answers]


def _player_from(raw: list[Any]) -> Player:
    pid, name, token, seat, hand, bot, level, ready, answers = raw
    player = Player(pid, name, token, seat, hand, bot, level, bool(ready))
    player.answers = OrderedDict(
        (aid, msgspec.convert(answer, Ack | Rejected)) for aid, answer in answers)
    return player


def _match(match: Match) -> dict[str, Any]:
    return {
        "seed": match.seed,
        "seats": match.seats,
        "totals": list(match.totals),
        "nertz_sizes": list(match.nertz_sizes),
        "pot": match.pot,
        "results": [_result(r) for r in match.results],
    }


def _match_from(rules: Rules, raw: dict[str, Any]) -> Match:
    match = Match(rules, int(raw["seats"]), raw["seed"])
    match.totals = [int(t) for t in raw["totals"]]
    match.nertz_sizes = [int(n) for n in raw["nertz_sizes"]]
    match.pot = int(raw["pot"])
    match.results = [_result_from(r) for r in raw["results"]]
    return match


def _result(r: RoundResult) -> dict[str, Any]:
    return {
        "index": r.index,
        "ended": r.score.ended,
        "caller": r.score.caller,
        "seats": [[getattr(s, name) for name in _SEAT_SCORE] for s in r.score.seats],
        "nertz_sizes": list(r.nertz_sizes),
        "pot_in": r.pot_in,
        "pot_out": r.pot_out,
    }


def _result_from(raw: dict[str, Any]) -> RoundResult:
    seats = [SeatScore(**dict(zip(_SEAT_SCORE, (int(v) for v in values), strict=True)))
             for values in raw["seats"]]
    ended = raw["ended"]
    score = RoundScore(Ended(ended) if ended in _ENDINGS else str(ended), raw["caller"], seats)
    return RoundResult(int(raw["index"]), score, [int(n) for n in raw["nertz_sizes"]],
                       int(raw["pot_in"]), int(raw["pot_out"]))


__all__ = ["EVERY_ENV", "FORMAT", "SNAPSHOT_EVERY", "capture", "restore"]
