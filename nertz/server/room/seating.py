"""Who sits where, as the room's commands change it: the host seats bots, moves people between
seats and the spectators, kicks, and hands a vacant seat to a bot; a seated player says ready.

The :class:`~nertz.server.room.lobby.Lobby` holds the seats and checks a request (is this the
host, is that seat free); these commands log the change and tell the room. Seats change only
between matches (a bot joins in the lobby; a spectator can be kicked at any time), but a seat
whose person is gone (vacant) can go to a bot mid-match too, so a match never waits on someone
who left. The room starts a driver for each bot seated (``on_bot``).
"""

from __future__ import annotations

import secrets

from nertz.server.room.lobby import Player, bot_name
from nertz.server.room.messages import CommandError, Kicked
from nertz.server.room.people import People
from nertz.server.room.phase import Phase


class Seating(People):
    """A table's seating commands: bots, kicks, seat changes, readiness."""

    def _add_bot(self, by: Player, seat: int | None, bot: str, level: str) -> None:
        """Host: seat a bot (``seat`` None: the first free seat)."""
        self.lobby.check_host(by)
        self.lobby.check_bot(bot, level)
        if self.phase is not Phase.LOBBY:
            raise CommandError("bad_phase", "bots join in the lobby (or take a vacant seat)")
        if seat is None:
            seat, hand = self.lobby.free_seat()
            if seat is None:
                raise CommandError("no_seat", "every seat is taken")
        else:
            self.lobby.check_seat(seat)
            hand = 0
            if self.seat_player(seat, 0) is not None:
                raise CommandError("seat_taken", f"seat {seat + 1} is taken")
        pid = "bot-" + secrets.token_hex(4)
        self._log("joined", {"player": pid, "name": bot_name(level, seat),
                             "seat": seat, "hand": hand, "bot": bot, "level": level})
        self._broadcast_lobby()
        if self.on_bot is not None:
            self.on_bot(self.players[pid])

    def _kick(self, by: Player, player_id: str) -> None:
        """Host: remove someone (in the lobby, or a spectator at any time)."""
        self.lobby.check_host(by)
        target = self.lobby.find(player_id)
        if target.id == by.id:
            raise CommandError("bad_target", "the host cannot kick themself")
        if target.seat is not None and not self.phase.between_matches:
            raise CommandError(
                "bad_phase", "a seated player can be kicked only between matches; "
                "a vacant seat can be handed to a bot"
            )
        self._log("left", {"player": target.id})
        self._send(target.id, Kicked(), close=True)
        self._broadcast_lobby()

    def _assign(self, by: Player, player_id: str, seat: int | None, hand: int) -> None:
        """Host: move someone to a seat (and partner slot), or to the spectators."""
        self.lobby.check_host(by)
        if not self.phase.between_matches:
            raise CommandError("bad_phase", "seats change only between matches")
        target = self.lobby.find(player_id)
        if seat is not None:
            self.lobby.check_seat(seat)
            hands = self.lobby.hands()
            if hand not in hands:
                raise CommandError("bad_hand", "partner slots exist only in team rules"
                                   if len(hands) == 1 else f"there is no partner slot {hand} "
                                   f"(slots: {', '.join(map(str, hands))})")
            other = self.seat_player(seat, hand)
            if other is not None and other.id != target.id:
                raise CommandError("seat_taken", f"seat {seat + 1} is taken")
        if (target.seat, target.hand) == (seat, hand if seat is not None else target.hand):
            return  # already there: nothing to store or tell anyone
        self._log("assigned", {"player": target.id, "seat": seat, "hand": hand})
        self._broadcast_lobby()

    def _set_ready(self, by: Player, ready: bool) -> None:
        """A seated player says they are ready (shown in the lobby, between matches)."""
        if by.seat is None:
            raise CommandError("not_seated", "only seated players say they are ready")
        if not self.phase.between_matches:
            raise CommandError("bad_phase", "ready counts only between matches")
        self._throttle(by)
        self._log("ready", {"player": by.id, "ready": ready})
        self._broadcast_lobby()

    def _bot_seat(self, by: Player, seat: int, bot: str, level: str) -> None:
        """Host: hand a vacant seat (its person gone) to a bot, mid-match too."""
        self.lobby.check_host(by)
        self.lobby.check_seat(seat)
        self.lobby.check_bot(bot, level)
        current = self.seat_player(seat, 0)
        if current is not None and not current.vacant:
            raise CommandError("seat_taken", f"seat {seat + 1} is not vacant")
        pid = "bot-" + secrets.token_hex(4)
        self._log("bot_seat", {"player": pid, "name": bot_name(level, seat),
                               "seat": seat, "bot": bot, "level": level,
                               "replaces": current.id if current else None})
        self._broadcast_lobby()
        if self.on_bot is not None:
            self.on_bot(self.players[pid])


__all__ = ["Seating"]
