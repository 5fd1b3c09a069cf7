"""What the table tells: the room as everyone sees it, a person's whole state, a move's update,
a round's result.

Every message about the table is built from :mod:`nertz.views` (through
:mod:`nertz.server.room.messages`), and every seat sees the same face-up cards, so a change of
the table is one broadcast for everyone, numbered by the room's version; what differs by person
(``you``: who the socket's player is) goes only in a whole state or a catch-up's end. The
socket edge asks for a whole state (:meth:`Broadcasts.snapshot`) when a client connects or
falls too far behind.
"""

from __future__ import annotations

import copy
from typing import Any

from nertz.events import Event
from nertz.server.room.lobby import Player
from nertz.server.room.log import TableLog
from nertz.server.room.messages import (
    CaughtUp,
    RoomChanged,
    State,
    TableState,
    Update,
    foundation_json,
    own_piles,
    table_json,
    tableau_json,
)
from nertz.server.room.phase import Phase


class Broadcasts(TableLog):
    """What a table says about itself: the room, a person's state, the broadcasts of changes."""

    def room_info(self) -> dict[str, Any]:
        """The lobby as everyone sees it."""
        known = self._rules_json
        if known is None or known[0] is not self.rules:
            known = self._rules_json = (self.rules, self.rules.to_spec(), self.rules.to_options())
        _, spec, options = known
        match = None
        if self.match is not None:
            match = {
                "id": self.match_id,
                "number": self.match_number,
                "round": len(self.match.results) + (0 if self.phase in
                                                    (Phase.ROUND_OVER, Phase.MATCH_OVER) else 1),
                "totals": list(self.match.totals),
                "over": self.match.over,
                "winner": self.match.winner,
                "nertz_sizes": list(self.match.nertz_sizes),
            }
        return {
            "id": self.id,
            "code": self.code,
            "rules": copy.copy(spec),
            "options": dict(options),
            "seats": self.seats,
            "seat_names": [self.lobby.seat_name(s) for s in range(self.seats)],
            "phase": self.phase,
            "host": self.host,
            # ``plays``: the half of its seat's tableau each player may play (0: the Nertz
            # pile, 1: the stock and waste, None: all of it), and ``piles``, which of N, S and
            # W that half holds: the server's rule, not the page's.
            "players": [self._player_json(p) for p in self.players.values()],
            "match": match,
            "matches": list(self.archive.finished),
            "same_deal": None if self.same_deal is None else self.same_deal[0],
            "fair_races": self.fair_races,
            "fair_races_option": ("auto" if self.fair_option is None
                                  else "on" if self.fair_option else "off"),
            "flags": [f.to_json() | {"text": f.describe()} for f in self.flags],
        }

    def _player_json(self, p: Player) -> dict[str, Any]:
        plays = self.lobby.hand_of(p)
        return p.to_json() | {"plays": plays, "piles": own_piles(plays)}

    def snapshot(self, player: Player | None) -> State:
        """The whole state for one person: the room, the table as their seat sees it."""
        table = None
        if self.round is not None:
            seat = player.seat if player is not None and player.seat is not None else -1
            table = table_json(self.round, seat)
            table["t"] = self.now_t() if self.phase is Phase.PLAYING else self.last_t
            table["stuck_flags"] = [bool(s) for s in self.round.stuck]
        return State(self.version, self.room_info(), self.you(player), table,
                     None if self.last_result is None else self._result_json(),
                     self.countdown_ms if self.phase is Phase.COUNTDOWN else 0)

    def caught_up(self, player: Player | None) -> CaughtUp:
        """The end of a catch-up from history: the version reached and who the socket is."""
        return CaughtUp(self.version, self.you(player))

    def you(self, player: Player | None) -> dict[str, Any] | None:
        """Who the socket's player is, as the room sees them."""
        if player is None:
            return None
        return {"player": player.id, "name": player.name, "seat": player.seat,
                "hand": player.hand, "host": player.id == self.host}

    def _broadcast_lobby(self) -> None:
        self._broadcast(RoomChanged(self.room_info()))

    def _broadcast_state(self) -> None:
        s = self.snapshot(None)
        self._broadcast(TableState(s.v, s.room, s.you, s.table, s.result, s.countdown_ms))

    def _result_json(self) -> dict[str, Any]:
        assert self.last_result is not None and self.match is not None
        r = self.last_result
        return {
            "round": r.index + 1,
            "ended": r.score.ended,
            "caller": r.score.caller,
            "scores": r.scores,
            "breakdown": [s.to_json() for s in r.score.seats],
            "totals": list(self.match.totals),
            "over": self.match.over,
            "winner": self.match.winner,
            "match": self.match_id if self.match.over else None,
        }

    def _update(self, seat: int, move: str, t: int, events: tuple[Event, ...]) -> Update:
        """The broadcast for one applied move: public facts only, from the views."""
        rnd = self.round
        assert rnd is not None
        seats = {seat} if seat >= 0 else set()
        founds: set[int] = set()
        told: list[dict[str, Any]] = []
        for e in events:
            public = e.to_json()
            if public is None:
                continue
            told.append(public)
            if public["kind"] == "moved" and public["dst"] == "F":
                founds.add(public["foundation"] - 1)
            elif public["kind"] == "reset":
                seats.update(range(rnd.seats))
        return Update(seat, move, t, told,
                      [tableau_json(rnd, s) for s in sorted(seats)],
                      [foundation_json(rnd, i) for i in sorted(founds)],
                      rnd.ended, rnd.called_by)


__all__ = ["Broadcasts"]
