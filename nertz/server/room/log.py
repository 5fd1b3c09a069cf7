"""The room's log, and what one command sends: nothing is seen before it is durable.

Every change to a table is an entry of its room's log, made by :meth:`TableLog._log`: it
applies the entry with :meth:`TableLog._apply` (the same code that rebuilds a table from its
stored log on any process, live moves included: :mod:`nertz.server.room.entries`) and queues it
to the store, stamped with the lease epoch. A command, or a timer of the room's clock, runs
inside :meth:`TableLog._run`, which gathers what it sends and broadcasts into one
:class:`~nertz.server.room.messages.Effects` that goes out only once its entries are
``committed``: nobody sees, nor is acknowledged, an action that is not durable. A deal's entry
carries a snapshot of the table now and then (:mod:`nertz.server.room.snapshot`). If the store
refuses an entry already applied, the table is broken: it takes no more commands until the hub
rebuilds it from the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from nertz.events import Event
from nertz.server.room.core import TableCore
from nertz.server.room.entries import UnknownEntry, check_entry
from nertz.server.room.messages import EVERYONE, CommandError, Effects, Send, ServerMessage
from nertz.server.room.snapshot import FORMAT as SNAPSHOT_FORMAT
from nertz.server.room.snapshot import SNAPSHOT_EVERY, capture

log = logging.getLogger("nertz.table")


class TableLog(TableCore):
    """A table's log and effects: entries applied then stored, what a command sends gathered
    until their commit, timers run as commands."""

    snapshot_every: int = SNAPSHOT_EVERY
    """A deal stores a snapshot once this many entries were logged since the last one."""

    # ------------------------------------------------------------------ effects

    def _run(self, fn: Callable[[], object]) -> Effects:
        """Run one command or timer: what it logs and sends becomes one :class:`Effects`."""
        if self._fx is not None:  # nested (a command that starts another): one outcome
            fn()
            return Effects()
        fx = self._fx = Effects()
        futs = self._futs = []
        try:
            fn()
        finally:
            self._fx = None
            self._futs = []
            if futs:
                fx.committed = futs[0] if len(futs) == 1 else asyncio.gather(*futs)
        return fx

    def _hold(self, fx: Effects) -> None:
        """Hand clock-driven effects to the fan-out (kept until one is connected)."""
        if not fx:
            return
        if self._emit is None:
            self._unsent.append(fx)
        else:
            self._emit(fx)

    def _timed(self, fn: Callable[[], None]) -> Callable[[], None]:
        def fire() -> None:
            if not self.broken and not self.closed:
                self._hold(self._run(fn))
        return fire

    def _schedule(self, delay: float, fn: Callable[[], None]) -> asyncio.TimerHandle:
        return self.clock.schedule(delay, self._timed(fn))

    def _send(self, to: str, message: ServerMessage, close: bool = False) -> None:
        assert self._fx is not None, "messages are sent from inside a command"
        self._fx.sends.append(Send(to, message, close=close))

    def _broadcast(self, message: ServerMessage) -> None:
        self.version += 1
        message.v = self.version  # type: ignore[attr-defined]
        assert self._fx is not None, "broadcasts are made from inside a command"
        self._fx.sends.append(Send(EVERYONE, message, self.version))

    # ------------------------------------------------------------------ the log

    def _log(self, kind: str, data: dict[str, Any],
             snapshot: tuple[int, dict[str, Any]] | None = None) -> tuple[Event, ...]:
        """Apply an entry (raising, and changing nothing, if it does not apply), then queue it
        to the store (with the ``snapshot`` of the table before it, if given); what the
        command sends waits for its commit."""
        self._check_alive()
        # What this version writes it must be able to read back: an entry kind or field left
        # out of ENTRY_FIELDS would make the room unloadable after a restart, so it fails here,
        # in the first test that writes it, not in a rebuild after the release.
        check_entry(kind, data)
        events = self._apply(kind, data)
        fut = self.store.append_nowait(self.id, self.seq, kind, data, self.epoch, snapshot)
        self.seq += 1
        self._pending.add(fut)
        fut.add_done_callback(self._stored)
        if self._fx is not None:
            self._futs.append(fut)
        return events

    def _log_deal(self, kind: str, data: dict[str, Any]) -> None:
        """Log a deal (a match's ``start``, the ``next`` round): where a snapshot is taken,
        once :attr:`snapshot_every` entries were logged since the last one
        (:mod:`nertz.server.room.snapshot`)."""
        state = None
        if self.seq - self.snapshot_seq >= self.snapshot_every:
            state = (SNAPSHOT_FORMAT, capture(self))
        self._log(kind, data, state)
        if state is not None:
            self.snapshot_seq = self.seq - 1

    def _stored(self, fut: asyncio.Future[None]) -> None:
        self._pending.discard(fut)
        if not fut.cancelled() and fut.exception() is not None:
            self._break(fut.exception())

    def _break(self, exc: BaseException | None) -> None:
        # The store refused an entry that is already applied in memory: this table no longer
        # matches its log. Stop taking commands; the hub rebuilds it from the log.
        if not self.broken:
            log.error("table %s: store failed, table must be rebuilt: %s", self.id, exc)
        self.broken = True
        self.clock.stop()

    def _check_alive(self) -> None:
        if self.broken:
            raise CommandError("unavailable", "this table is being restored; try again")

    def _apply(self, kind: str, data: dict[str, Any]) -> tuple[Event, ...]:
        """Change the table by one log entry (its kind's ``_on_<kind>`` method:
        :mod:`nertz.server.room.entries`); shared by live play and rebuilding."""
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            raise UnknownEntry(kind)
        events: tuple[Event, ...] | None = handler(data)
        return events or ()


__all__ = ["TableLog"]
