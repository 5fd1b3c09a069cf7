"""A seated player's passing gestures: where they drag a card, and quick reactions.

Gestures are not the game: they change nothing, are never logged, and go to every socket of
the room unversioned and out of its history (:data:`~nertz.server.room.messages.PASSING`): a
client that missed one has missed nothing. Pointers past their rate are dropped (the next one
says where the drag is), reactions past theirs refused. A pointer shows its card only when that
card is face up to everyone, so a drag never reveals what a seat keeps hidden.
"""

from __future__ import annotations

import time

from nertz.server import protocol
from nertz.server.room.lobby import Player
from nertz.server.room.log import TableLog
from nertz.server.room.messages import PASSING, CommandError, Emoted, PointerMoved
from nertz.server.room.phase import Phase
from nertz.views import tableau_view


def _fraction(value: float) -> float:
    """A pointer coordinate kept to 0..1 (anything else, NaN included, to the nearest end)."""
    return round(min(1.0, max(0.0, value)), 3) if value == value else 0.0


class Gestures(TableLog):
    """A table passing on its seated players' pointers and reactions."""

    def _pointer(self, player: Player, msg: protocol.Pointer) -> None:
        """Pass a seated player's drag on to the room: at most
        :data:`~nertz.server.room.lobby.POINTERS_PER_SECOND` a second (more are dropped, no
        error: the next one says where it is), while a round is played, and with its card only
        when that card is face up to everyone on the player's pile now. From a spectator, an
        error (``not_seated``), as for a reaction: a client that sends one is wrong, not late,
        where a seated player's drag may straddle a round's end and is dropped unanswered (so
        is a spectator's drag's end: the drag began while the player was seated)."""
        rnd = self.round
        seat = player.seat
        if seat is None:
            if msg.at is None:
                return  # a drag's end may cross the host's moving its player to watching
            raise CommandError("not_seated", "only a seated player can point")
        if rnd is None or self.phase is not Phase.PLAYING or rnd.ended:
            return
        if msg.at is None:
            # One end per drag passed on, so the others' copy of it goes; never more.
            if player.pointing:
                player.pointing = False
                self._send(PASSING, PointerMoved(seat, player.id))
            return
        if not player.pointers.take(time.monotonic()):
            return
        card = msg.card if self._face_up(seat, msg.src, msg.card) else None
        player.pointing = True
        self._send(PASSING, PointerMoved(seat, player.id, msg.at, _fraction(msg.x),
                                         _fraction(msg.y), card,
                                         msg.src if card is not None else None))

    def _face_up(self, seat: int, src: str | None, card: str | None) -> bool:
        """Whether ``card`` lies face up on seat ``seat``'s pile ``src`` now: in its public
        view (:func:`nertz.views.tableau_view`), the only cards a pointer may show."""
        if self.round is None or src is None or card is None:
            return False
        tv = tableau_view(self.round, seat)
        if src == "N":
            return tv.nertz_top is not None and str(tv.nertz_top) == card
        if src == "W":
            return tv.waste_top is not None and str(tv.waste_top) == card
        k = int(src) - 1
        return 0 <= k < len(tv.work_up) and card in (str(c) for c in tv.work_up[k])

    def _emote(self, player: Player, emote: str) -> None:
        """A seated player's quick reaction, to everyone; a burst of
        :data:`~nertz.server.room.lobby.EMOTE_BURST`, then one every two seconds."""
        if player.seat is None:
            raise CommandError("not_seated", "only a seated player can send a reaction")
        if not player.emotes.take(time.monotonic()):
            raise CommandError("too_fast", "too many reactions: one every 2 seconds")
        self._send(PASSING, Emoted(player.seat, player.id, emote))


__all__ = ["Gestures"]
