"""People coming and going: joining the room, their sockets opening and closing, a seat falling
vacant, an absent host handing the room on; each person's round trip and pace.

A person who joins gets a seat token (shown once, logged hashed). When their last socket
closes, their seat waits :data:`~nertz.server.room.lobby.RECONNECT_SECONDS` for them before it
counts as vacant (the host may then hand it to a bot: :mod:`nertz.server.room.seating`), and a
host gone :data:`~nertz.server.room.lobby.HOST_AWAY_SECONDS` hands the room to the first person
still connected: the room's next round, rematch and bots wait on the host. These checks are
timers of the room's clock, their effects held for the fan-out like any command's.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Collection
from typing import Final

# Through the module, not by name: tests shorten the waits it sets.
from nertz.server.room import lobby
from nertz.server.room.broadcasts import Broadcasts
from nertz.server.room.lobby import MOVES_PER_SECOND, Player, token_hash
from nertz.server.room.messages import CommandError, Effects, Error, Latency
from nertz.server.room.phase import Phase

SEATS_ENDED_BY: Final = {
    "sign_out": "you signed out: this seat's token no longer opens it; sign in and join the "
                "room again to take it back",
    "password": "your account's password was changed: this seat's token no longer opens it; "
                "join the room again, signed in, to take it back",
}
"""What the ``signed_out`` error says, by why the seats ended (one code for both: a client
that knows ``signed_out`` already does the right thing)."""


class People(Broadcasts):
    """A table's people: joins, sockets, vacancies, the host's absence, round trips, pace."""

    def join(self, name: str, spectator: bool = False,
             reclaim: Collection[str] = ()) -> tuple[Player, str, Effects]:
        """Add a person: the player, their seat token (shown once, stored hashed) and the
        effects; raises :class:`CommandError` (or :class:`protocol.ProtocolError` for a name
        that is no name) and changes nothing if refused.

        ``reclaim``: this room's people the joining player was seated as (the server's record
        of who joined, not the client's word). One whose token a sign-out ended
        (:meth:`end_seats`) is handed back with a new token, in its place and under its name,
        instead of a new person: signing in again brings a player back to their seat."""
        self._check_alive()
        for pid in reclaim:
            mine = self.players.get(pid)
            if mine is not None and mine.bot is None and mine.token_hash is None:
                return self._new_token(mine)
        clean = self.lobby.check_name(name)
        seat, hand = self.lobby.free_seat() if self.phase is Phase.LOBBY else (None, 0)
        if spectator:
            # Spectators, and mid-match newcomers, watch until a seat is handed to them.
            seat, hand = None, 0
        token = secrets.token_urlsafe(24)
        pid = secrets.token_hex(6)

        def joined() -> None:
            self._log("joined", {"player": pid, "name": clean, "token": token_hash(token),
                                 "seat": seat, "hand": hand})
            self._broadcast_lobby()

        fx = self._run(joined)
        return self.players[pid], token, fx

    def _new_token(self, player: Player) -> tuple[Player, str, Effects]:
        token = secrets.token_urlsafe(24)
        fx = self._run(lambda: self._log("token", {"player": player.id,
                                                   "token": token_hash(token)}))
        return player, token, fx

    def end_seats(self, player_ids: Collection[str], why: str = "sign_out") -> Effects:
        """The player behind these people signed out, or changed their password (``why``: a
        key of :data:`SEATS_ENDED_BY`): each one's seat token is forgotten (a copy of it, on a
        shared computer or elsewhere, no longer opens the seat) and their sockets are closed
        with the ``error`` ``signed_out``. The seats stay theirs, waiting as after any drop,
        until the player, signed in, joins again (``reclaim`` of :meth:`join`) or a bot takes a
        seat gone vacant."""
        said = SEATS_ENDED_BY.get(why, SEATS_ENDED_BY["sign_out"])

        def end() -> None:
            for pid in player_ids:
                person = self.players.get(pid)
                if person is None or person.bot is not None or person.token_hash is None:
                    continue
                self._log("token", {"player": pid, "token": None})
                self._send(pid, Error("signed_out", said), close=True)
        return self._run(end)

    def connected(self, player: Player | None) -> Effects:
        """A socket of ``player`` opened (None: a watcher with no seat token)."""
        def come() -> None:
            if player is None:
                return
            player.sockets += 1
            player.came()
            if player.sockets == 1:
                # A host long gone with nobody to hand the room to: this person takes it.
                self._pass_host()
                self._broadcast_lobby()
        return self._run(come)

    def disconnected(self, player: Player | None) -> Effects:
        """A socket of ``player`` closed. The seat waits
        :data:`~nertz.server.room.lobby.RECONNECT_SECONDS` for them."""
        def gone() -> None:
            if player is None or player.id not in self.players:
                return
            player.sockets = max(0, player.sockets - 1)
            if player.sockets == 0:
                player.went()
                self._broadcast_lobby()
                if self._vacancy_timer is None and not self.closed:
                    # One pending check covers every departure until it runs.
                    self._vacancy_timer = self._schedule(lobby.RECONNECT_SECONDS + 0.5,
                                                         self._check_vacancies)
                if player.id == self.host and self._host_timer is None and not self.closed:
                    self._host_timer = self._schedule(lobby.HOST_AWAY_SECONDS,
                                                      self._check_host)
        return self._run(gone)

    def _check_vacancies(self) -> None:
        self._vacancy_timer = None
        waiting = [p.left_at for p in self.lobby.people()
                   if p.sockets == 0 and p.left_at is not None and not p.vacant]
        if waiting:
            # Someone left later than the first departure: check again when their time is up.
            wait = min(waiting) + lobby.RECONNECT_SECONDS + 0.5 - time.monotonic()
            self._vacancy_timer = self._schedule(wait, self._check_vacancies)
        self._pass_host()
        self._broadcast_lobby()

    def _check_host(self) -> None:
        self._host_timer = None
        if self._pass_host():
            self._broadcast_lobby()
            return
        host = self.players.get(self.host) if self.host else None
        if host is not None and host.sockets == 0 and host.left_at is not None:
            wait = host.left_at + lobby.HOST_AWAY_SECONDS - time.monotonic()
            if wait > 0:
                # Back and gone again since this timer was set: wait out the latest departure.
                self._host_timer = self._schedule(wait + 0.05, self._check_host)
            # Else nobody was connected to take the room: the next to connect does.

    def _pass_host(self) -> bool:
        """A host gone past :data:`~.lobby.HOST_AWAY_SECONDS`, or whose seat fell vacant (the
        room waits on them), hands the room to the first seated person still connected (a
        watcher when nobody seated is); True if it did."""
        host = self.players.get(self.host) if self.host else None
        if host is None or host.sockets > 0 or host.left_at is None:
            return False
        if not host.vacant and time.monotonic() - host.left_at < lobby.HOST_AWAY_SECONDS:
            return False
        heir = min((p for p in self.lobby.people() if p.sockets > 0),
                   key=lambda p: p.seat is None, default=None)
        if heir is None:
            return False
        self._log("host", {"player": heir.id})
        return True

    def latency(self) -> Latency:
        """Every connected person's last round trip (ms), for the periodic ``latency`` message."""
        return Latency({p.id: round(p.rtt) for p in self.players.values()
                        if p.rtt is not None and p.sockets})

    def _throttle(self, player: Player) -> None:
        if not player.moves.take(time.monotonic()):
            raise CommandError("too_fast", f"too fast: at most {MOVES_PER_SECOND:g} moves "
                               "a second")


__all__ = ["SEATS_ENDED_BY", "People"]
