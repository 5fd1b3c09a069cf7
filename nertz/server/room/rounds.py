"""A match's rounds at the table: the host starts a match (or a rematch) and deals each next
round, a countdown, play begins, the referee rules after every change, and a round closes.

A match is dealt from a seed: 128 secret random bits, or a known one (a same-deal room's first
match, a server started with a deal seed). A deal's entry carries, now and then, a snapshot of
the table (:mod:`nertz.server.room.snapshot`). After each change the engine's referee may reset
a table where every seat is stuck, or end a round that is blocked; a round ended by a call
closes once the call's grace is over, and a match's results go out only once its replay is
saved, since they name it.
"""

from __future__ import annotations

import hashlib
import secrets

from nertz.events import Ended, StuckDeclared
from nertz.server import protocol
from nertz.server.room.broadcasts import Broadcasts
from nertz.server.room.lobby import Player
from nertz.server.room.messages import CommandError, RoundOver
from nertz.server.room.phase import Phase


class Rounds(Broadcasts):
    """A table's match flow: start, deal, countdown, begin, the referee's rulings, close."""

    def _start(self, by: Player, countdown_ms: int, rematch: bool = False) -> None:
        """Host: start a match once every seat is filled."""
        self.lobby.check_host(by)
        self._check_alive()
        if not (self.phase is Phase.MATCH_OVER if rematch else self.phase.between_matches):
            raise CommandError("bad_phase", "the match is under way")
        empty = [s + 1 for s in range(self.seats) if self.seat_player(s, 0) is None]
        if empty:
            raise CommandError("empty_seats", "fill every seat first (empty: "
                               + ", ".join(map(str, empty)) + ")")
        countdown = max(0, min(protocol.MAX_COUNTDOWN_MS, int(countdown_ms)))
        self._log_deal("start", {"seed": self._match_seed(), "match": secrets.token_hex(8),
                                 "countdown_ms": countdown})
        self._broadcast_state()
        self._schedule(countdown / 1000, self._begin)

    def _match_seed(self) -> int | str:
        """A fresh match's deal seed: 128 secret random bits (too many to search for the deal
        that fits the cards on show), unless the server was started with a deal seed (tests
        and demos), when a room's n-th match is always dealt alike. A "same deal" room's first
        match takes its finished match's seed (public already, in that match's replay)."""
        if self.same_deal is not None and self.match_number == 0:
            return self.same_deal[1]
        if self.deal_seed is None:
            return secrets.token_hex(16)
        digest = hashlib.sha256(f"nertz-deal:{self.deal_seed}:{self.match_number}".encode())
        return int.from_bytes(digest.digest()[:6], "big")

    def _next_round(self, by: Player, countdown_ms: int = 2000) -> None:
        """Host: deal the next round."""
        self.lobby.check_host(by)
        self._check_alive()
        if self.phase is not Phase.ROUND_OVER:
            raise CommandError("bad_phase", "the round is not over"
                               if self.phase is Phase.PLAYING else "there is no next round now")
        countdown = max(0, min(protocol.MAX_COUNTDOWN_MS, int(countdown_ms)))
        self._log_deal("next", {"countdown_ms": countdown})
        self._broadcast_state()
        self._schedule(countdown / 1000, self._begin)

    def _begin(self) -> None:
        if self.phase is not Phase.COUNTDOWN:
            return
        self._log("begin", {})
        self._broadcast_state()
        self._after_change()

    def _after_change(self) -> None:
        """After a move: what the engine's referee rules (a reset at once if every seat is
        stuck, the round's end if it is blocked), logged; then end the round if it ended."""
        rnd = self.round
        if rnd is None or self.phase is not Phase.PLAYING:
            return
        ruling = rnd.ruling()
        if ruling is not None:
            t = self.now_t()
            events = self._log("reset", {"t": t, "piles": list(ruling.piles)})
            if ruling.piles:
                # The declarations made for the seats are how the replay file records the
                # reset; the table tells what happened: the reset (each seat's rotation).
                told = tuple(e for e in events if not isinstance(e, StuckDeclared))
                self._broadcast(self._update(-1, "RESET", t, told))
        if rnd.ended is not None:
            self._after_end()

    def _after_end(self) -> None:
        rnd = self.round
        assert rnd is not None
        if rnd.ended is Ended.NERTZ and rnd.called_at is not None and self.rules.call_grace_ms:
            wait = (rnd.called_at + self.rules.call_grace_ms - self.now_t()) / 1000
            self._schedule(wait, self._close_round)
        else:
            self._close_round()

    def _close_round(self) -> None:
        if self.phase is not Phase.PLAYING:
            return
        self._log("close", {"t": self.now_t()})
        assert self.match is not None
        if self.match.over and self.recorder is not None and self.match_id is not None:
            # The results name the match's replay: it must be there to download when they
            # arrive, so they wait for the save, which waits for the log.
            save = self.archive.save_after(list(self._pending), self.match_id,
                                           self.recorder.to_json(), self.match.winner)
            self._futs.append(save)
        self._broadcast(RoundOver(self._result_json(), self.room_info()))


__all__ = ["Rounds"]
