"""Where a room is in its life: the lobby, a round's countdown, play, between rounds, after a
match.

A table's ``phase`` says which commands it takes now (seats change only between matches, moves
only while a round is played); the hub reads it to rest and forget idle rooms, a room's bots to
know when to play, and a snapshot keeps it.
"""

from __future__ import annotations

import enum


class Phase(enum.StrEnum):
    """Where a room is: its lobby, a round's countdown, play, between rounds, after a match."""

    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    PLAYING = "playing"
    ROUND_OVER = "round_over"
    MATCH_OVER = "match_over"

    @property
    def between_matches(self) -> bool:
        """Seats, readiness and kicks change only here."""
        return self in (Phase.LOBBY, Phase.MATCH_OVER)


__all__ = ["Phase"]
