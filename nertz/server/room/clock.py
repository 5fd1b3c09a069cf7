"""A room's clock: its timers, and the round's time in milliseconds.

Real time lives here, not in the engine: the table asks the clock what time it is in the round
and to call it back later (a countdown, a call's grace, a vacancy check). Timers stop when the
room closes or breaks, and a timer whose moment has passed (its phase changed) does nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from nertz.server.room.messages import CommandError

log = logging.getLogger("nertz.table")


class Clock:
    """Timers on the running event loop, and the round's start (``round_t0``).

    The clock keeps the loop it first runs on: a room lives on one loop, and on Python 3.11
    every lookup of the running loop is a ``getpid`` system call (the table reads the time
    several times a move)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.round_t0 = 0.0
        self.stopped = False
        # A set: a table re-arms one timer per command while plays wait their turn, and a
        # cancelled handle must leave at once (a list kept them until the room closed, and
        # each firing searched them all).
        self._timers: set[asyncio.TimerHandle] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    def _running(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None or loop.is_closed():
            loop = self._loop = asyncio.get_running_loop()
        return loop

    def loop_time(self) -> float:
        """The event loop's clock, in seconds."""
        return self._running().time()

    def start_round(self, elapsed_ms: int = 0) -> None:
        """The round began ``elapsed_ms`` ago (0: now)."""
        self.round_t0 = self.loop_time() - elapsed_ms / 1000

    def now_t(self) -> int:
        """Milliseconds since the round began, on the server's clock."""
        return int((self.loop_time() - self.round_t0) * 1000)

    def schedule(self, delay: float, fn: Callable[[], None]) -> asyncio.TimerHandle:
        """Call ``fn`` after ``delay`` seconds, unless the clock has stopped by then."""
        holder: list[asyncio.TimerHandle] = []
        handle = self._running().call_later(max(0.0, delay), self._fire, fn, holder)
        holder.append(handle)
        self._timers.add(handle)
        return handle

    def cancel(self, handle: asyncio.TimerHandle) -> None:
        """Cancel a timer :meth:`schedule` made (and forget it)."""
        handle.cancel()
        self._timers.discard(handle)

    def _fire(self, fn: Callable[[], None], holder: list[asyncio.TimerHandle]) -> None:
        # A fired timer is forgotten: a client reconnecting in a loop must not grow the list.
        if holder:
            self._timers.discard(holder[0])
        # The handle holds ``holder`` among its arguments and ``holder`` the handle: emptied,
        # the pair (and the table ``fn`` reaches) is freed at once, not at a rare full
        # collection (``nertz serve`` collects old objects seldom).
        holder.clear()
        if self.stopped:
            return
        try:
            fn()
        except CommandError:
            pass  # a timer whose moment passed (the phase changed meanwhile)
        except Exception:  # pragma: no cover - a bug must not take the server down
            log.exception("table %s: timer failed", self.name)

    def stop(self) -> None:
        """Cancel every timer; none runs again."""
        self.stopped = True
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
