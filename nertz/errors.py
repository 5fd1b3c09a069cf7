"""Typed errors. Illegal input is normal traffic: every error says what was wrong.

``NotationError`` is text that is no card or move at all; ``IllegalMoveError`` is a well-formed
move that this ruleset or this position does not allow; ``LostRace`` is the illegal move of a seat
that another seat beat to a foundation; ``RulesError`` names a bad option or value;
``ReplayError`` names what is wrong with a replay file.
"""

from __future__ import annotations


class NertzError(Exception):
    """Base of every error the library raises on bad input."""


class NotationError(NertzError, ValueError):
    """Text that does not read as a card, a move or a layout."""


class RulesError(NertzError, ValueError):
    """An unknown preset, an unknown option or a value the option does not take."""


class ReplayError(NertzError, ValueError):
    """A replay file that cannot be read: bad JSON, a bad layout, a bad move entry."""


class IllegalMoveError(NertzError):
    """A move this position or ruleset does not allow; ``reason`` says why.

    ``str()`` quotes the move and the seat: ``illegal move 'N-F4' by seat 1: F4 needs 3H``.
    """

    def __init__(self, move: str, seat: int, reason: str) -> None:
        self.move = move
        self.seat = seat
        self.reason = reason
        super().__init__(f"illegal move {move!r} by seat {seat}: {reason}")


class LostRace(IllegalMoveError):
    """A foundation play beaten by another seat that played the same step first.

    ``winner`` is the seat whose card stands, ``winner_t`` and ``t`` the times of the two plays
    (milliseconds from the round's start; ``t`` is None where the loser gave no time).
    """

    def __init__(
        self,
        move: str,
        seat: int,
        foundation: int,
        winner: int,
        winner_t: int | None,
        t: int | None,
    ) -> None:
        self.foundation = foundation
        self.winner = winner
        self.winner_t = winner_t
        self.t = t
        margin = None if winner_t is None or t is None else max(0, t - winner_t)
        super().__init__(move, seat, race_lost(foundation, winner, margin))

    @property
    def margin_ms(self) -> int | None:
        """How many milliseconds the winner was ahead, where both times are known."""
        if self.winner_t is None or self.t is None:
            return None
        return max(0, self.t - self.winner_t)


def race_lost(foundation: int, winner: int, margin_ms: int | None) -> str:
    """What a lost race is called: the foundation (1-based), the seat that won it and, where
    known, by how many milliseconds (a server ordering plays by send time gives its own)."""
    by = "" if margin_ms is None else f" by {margin_ms} ms"
    return f"race for F{foundation} lost to seat {winner}{by}"
