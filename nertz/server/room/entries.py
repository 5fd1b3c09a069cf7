"""What each kind of the room's log entries does to its table: the reducer.

A table changes only by applying entries (:meth:`~nertz.server.room.log.TableLog._apply` calls
``_on_<kind>`` for an entry of that kind), and the same code applies them live and when a table
is rebuilt from its stored log on any process, so a rebuilt table is the table that was. The
entries: ``created``; people ``joined`` and ``left``, a seat ``token`` replaced or forgotten
(a sign-out), ``assigned`` a seat, ``ready``, the
``host`` handed on, a vacant seat given a bot (``bot_seat``); a match's ``start`` and the
``next`` round (each a deal), play's ``begin``; a ``move``, a person's ``rejected`` move, the
referee's ``reset``, a ``race`` lost, an automation ``flag``; and a round's ``close``.

:data:`ENTRY_FIELDS` names every kind and every field this version knows. A stored entry of
another kind, or with a field not named there, was written by a newer version: rebuilding from
it would make a table that differs from the one that wrote it (a field ignored is a rule
ignored), and going on would fork the room's log. :func:`check_entry` refuses it with
:class:`UnknownEntry`, and the hub leaves the room to a process that knows it (docs/deploy.md,
"Upgrading"). So a new kind, or a new field, is a change of the log's format: list it here.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from nertz.cards import Card
from nertz.events import Event, StuckDeclared
from nertz.match import Match
from nertz.moves import OP_TO_FOUNDATION, OP_TO_WORK, STUCK, STUCK_NERTZ, Move
from nertz.replay import Race, Recorder
from nertz.rules import Rules
from nertz.server.room.core import TableCore
from nertz.server.room.lobby import Player
from nertz.server.room.messages import Ack, Rejected
from nertz.server.room.phase import Phase
from nertz.server.room.races import Flag

ENTRY_FIELDS: Final[dict[str, frozenset[str]]] = {
    kind: frozenset(fields.split()) for kind, fields in {
        "created": "rules seats same_deal fair_races",
        "joined": "player name token seat hand bot level",
        "token": "player token",
        "left": "player",
        "assigned": "player seat hand",
        "ready": "player ready",
        "host": "player",
        "bot_seat": "player name seat bot level replaces",
        "start": "seed match countdown_ms",
        "next": "countdown_ms",
        "begin": "",
        "move": "p s h m t id v a r",
        "rejected": "p id a",
        "reset": "t piles",
        "race": "t winner loser card foundation margin_ms",
        "flag": "seat player name why plays median_reaction_ms interval_cv",
        "close": "t",
    }.items()}
"""Every log entry kind this version reads, and the fields each may carry (those any version
up to this one wrote)."""


class UnknownEntry(ValueError):
    """A stored log entry this version does not know (its kind, or some of its fields): the
    room was written by a newer version, and this one must not rebuild it."""

    def __init__(self, kind: str, fields: frozenset[str] = frozenset(), seq: int | None = None,
                 room_id: str | None = None) -> None:
        self.kind = kind
        self.fields = fields
        self.seq = seq
        self.room_id = room_id
        what = (f"log entry kind {kind!r}" if not fields else
                f"field(s) {', '.join(sorted(fields))} of log entry kind {kind!r}")
        where = "" if seq is None else f" (entry {seq})"
        room = "" if room_id is None else f"room {room_id}: "
        super().__init__(f"{room}unknown {what}{where}: written by a newer version of the "
                         "server, which must rebuild the room")

    def at(self, room_id: str, seq: int) -> UnknownEntry:
        """The same refusal, naming the room and the entry."""
        return UnknownEntry(self.kind, self.fields, seq, room_id)


def check_entry(kind: str, data: dict[str, Any]) -> None:
    """Refuse (:class:`UnknownEntry`) a stored entry of a kind, or with a field, that this
    version does not know."""
    known = ENTRY_FIELDS.get(kind)
    if known is None:
        raise UnknownEntry(kind)
    extra = data.keys() - known
    if extra:
        raise UnknownEntry(kind, frozenset(extra))


class Entries(TableCore):
    """A table's log entries applied: one ``_on_<kind>`` method for each kind."""

    def _on_created(self, data: dict[str, Any]) -> None:
        self.rules = Rules.from_spec(data["rules"])
        self.lobby.seats = int(data["seats"])
        self.lobby.teams = self.rules.teams
        same = data.get("same_deal")
        if same is not None:
            self.same_deal = (str(same["match"]), same["seed"])
        fair = data.get("fair_races")
        self.fair_option = None if fair is None else bool(fair)

    def _on_joined(self, data: dict[str, Any]) -> None:
        p = Player(data["player"], data["name"], data.get("token"), data.get("seat"),
                   data.get("hand", 0), data.get("bot"), data.get("level"))
        self.lobby.add(p)
        # A person has the reconnect window from joining (or from a restart) to connect.
        p.went()

    def _on_token(self, data: dict[str, Any]) -> None:
        # A person's seat token replaced (a player back after signing out) or forgotten (None:
        # they signed out): only the latest opens the seat.
        person = self.players.get(data["player"])
        if person is not None:
            person.token_hash = data.get("token")

    def _on_left(self, data: dict[str, Any]) -> None:
        self.lobby.remove(data["player"])

    def _on_assigned(self, data: dict[str, Any]) -> None:
        p = self.players[data["player"]]
        p.seat = data["seat"]
        p.hand = data.get("hand", 0)

    def _on_ready(self, data: dict[str, Any]) -> None:
        self.players[data["player"]].ready = bool(data["ready"])

    def _on_host(self, data: dict[str, Any]) -> None:
        self.lobby.host = data["player"]

    def _on_bot_seat(self, data: dict[str, Any]) -> None:
        self.lobby.remove(data["replaces"])
        self.lobby.add(Player(data["player"], data["name"], None, data["seat"], 0, data["bot"],
                              data["level"]))

    def _on_start(self, data: dict[str, Any]) -> None:
        self.match_number += 1
        self.match = Match(self.rules, self.seats, data["seed"])
        self.match_id = data["match"]
        names = [self.lobby.seat_name(s) for s in range(self.seats)]
        self.recorder = Recorder(self.rules, names, data["seed"])
        self.last_result = None
        for player in self.players.values():
            player.answers.clear()  # ids are remembered for a match, however old
        self.watch.new_match()
        self.flags = []
        self._deal(int(data.get("countdown_ms", 0)))

    def _on_next(self, data: dict[str, Any]) -> None:
        self._deal(int(data.get("countdown_ms", 0)))

    def _deal(self, countdown_ms: int) -> None:
        assert self.match is not None and self.recorder is not None
        self.round = self.match.deal()
        self.recorder.start_round(self.round)
        self.phase = Phase.COUNTDOWN
        self.countdown_ms = countdown_ms
        self.last_t = 0

    def _on_begin(self, data: dict[str, Any]) -> None:
        self.phase = Phase.PLAYING
        self.last_t = 0
        self.watch.new_round()
        self._step_sent.clear()
        if not self._replaying:
            self.clock.start_round()

    def _on_move(self, data: dict[str, Any]) -> tuple[Event, ...]:
        assert self.round is not None and self.recorder is not None
        move = Move.parse(data["m"], self.rules.call_word)
        t = int(data["t"])
        events = self.round.play(data["s"], move, t, data.get("h"))
        self.recorder.record(t, data["s"], move, data.get("h"))
        self.last_t = max(self.last_t, t)
        player = self.players.get(data.get("p", ""))
        if "a" in data and player is not None and player.bot is None and move.op in (
                OP_TO_FOUNDATION, OP_TO_WORK):
            # A person's card play, with when it arrived and their round trip: what the
            # automation flag reads (from the log, so a rebuilt table has the same figures).
            self.watch.play(player.id, float(data["a"]), data.get("r"))
        self.watch.change(t)
        if "id" in data and player is not None:
            # A resent action gets the first answer again, never a second application, even
            # after a restart: the ack names the version of the update that carried the move
            # (stored with it; entries from before it was stored name the current one).
            player.remember(data["id"], Ack(data["id"], data["m"], t,
                                            int(data.get("v", self.version))))
        return events

    def _on_rejected(self, data: dict[str, Any]) -> None:
        # A person's refused move: nothing changes but the answer a resent id gets.
        player = self.players.get(data["p"])
        if player is not None:
            player.remember(data["id"], msgspec.convert(data["a"], Rejected))

    def _on_reset(self, data: dict[str, Any]) -> tuple[Event, ...]:
        # The referee's ruling (Round.ruling), applied: each undeclared seat declares the pile
        # it was given, and the declarations are written to the replay file, so a downloaded
        # replay plays the same reset. Entries from before the referee name no piles: every
        # seat rotated its stock then. An empty list rules the round blocked.
        rnd = self.round
        assert rnd is not None and self.recorder is not None
        t = int(data["t"])
        piles = data.get("piles", ["S"] * rnd.seats)
        events = rnd.settle(t, piles or None)
        self.watch.change(t)
        for e in events:
            if isinstance(e, StuckDeclared):
                self.recorder.record(t, e.seat, STUCK_NERTZ if e.pile == "N" else STUCK)
        self.last_t = max(self.last_t, t)
        return events

    def _on_race(self, data: dict[str, Any]) -> None:
        assert self.recorder is not None
        self.recorder.race(Race(int(data["t"]), int(data["winner"]), int(data["loser"]),
                                Card.parse(data["card"]), int(data["foundation"]),
                                data.get("margin_ms")))

    def _on_flag(self, data: dict[str, Any]) -> None:
        flag = Flag.from_json(data)
        self.flags.append(flag)
        if self.recorder is not None:
            self.recorder.flag(flag.to_json())

    def _on_close(self, data: dict[str, Any]) -> None:
        assert self.match is not None and self.round is not None
        self.last_result = self.match.finish(self.round)
        self.phase = Phase.MATCH_OVER if self.match.over else Phase.ROUND_OVER
        if self.match.over and self.match_id is not None:
            self.archive.finished.append(self.match_id)


__all__ = ["ENTRY_FIELDS", "Entries", "UnknownEntry", "check_entry"]
