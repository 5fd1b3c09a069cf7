"""One room's sockets: who listens, the short history of broadcasts, and the commit-ordered outbox.

The table says what to send to whom (:class:`~nertz.server.room.messages.Effects`); the fan-out
sends it, in the order the table made it, once each command's log entries are committed. A
broadcast is encoded once and kept in a short history, so a socket that reconnects with the last
version it saw catches up from there; further behind, it gets the whole state. A socket that
joins gets a catch-up covering every change made so far (stored or not), so the broadcasts of
those same changes still waiting in the outbox skip it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from nertz.server import protocol
from nertz.server.room.messages import EVERYONE, PASSING, SENDER, Effects, ServerMessage

HISTORY: Final = 512
"""Broadcasts kept for catching up, at most; a client further behind gets the whole state."""

HISTORY_BYTES: Final = 64 * 1024
"""Encoded bytes of broadcasts kept for catching up, at most (the oldest go first; the newest
is always kept). Missed broadcasts worth more than a few whole states are cheaper sent as the
whole state, and a room keeps its history as long as it lives (an abandoned room for its idle
time): a four-seat table's updates average some 740 bytes, so 512 of them would be 380 KB a
room, the largest single use of a busy server's memory."""


class Sink(Protocol):
    """Where a connection's messages go (a WebSocket, or a test's list)."""

    def send(self, data: bytes) -> None:
        """Queue one encoded message; must not block."""

    def close(self) -> None:
        """Close the connection once what is queued has gone."""


@dataclass(slots=True)
class _Outgoing:
    committed: asyncio.Future[Any] | None
    # (socket or None for everyone, message or None to close it, broadcast version)
    sends: list[tuple[Sink | None, bytes | None, int]] = field(default_factory=list)


class Fanout:
    """The sockets of one room and what is on its way to them."""

    def __init__(self) -> None:
        self.sinks: dict[Sink, str | None] = {}
        """Each socket and the id of the player it speaks for (None: a watcher)."""
        self.history: deque[tuple[int, bytes]] = deque()
        """The latest broadcasts (version, encoded), within :data:`HISTORY` and
        :data:`HISTORY_BYTES`."""
        self._history_bytes = 0
        self.broken = False
        self.changed = asyncio.Event()
        """Set (and replaced) at every broadcast: what the room's bots wait on."""
        self._sink_from: dict[Sink, int] = {}
        self._outbox: deque[_Outgoing] = deque()

    # ------------------------------------------------------------------ effects

    def publish(self, fx: Effects, sender: Sink | None = None) -> None:
        """Send what a command did, after its commit and everything before it."""
        if self.broken:
            return
        if fx.committed is not None:
            self._outbox.append(_Outgoing(fx.committed))
            fx.committed.add_done_callback(self._flush_after)
        for send in fx.sends:
            data = protocol.encode(send.message)
            if send.to == EVERYONE:
                self._remember(send.version, data)
                self._queue(None, data, send.version)
                self.wake()
            elif send.to == PASSING:
                # In order with the changes before it (a pointer never shows a card before
                # the update that put it there), to the sockets here now; no version.
                for sink in list(self.sinks):
                    self._queue(sink, data)
            elif send.to == SENDER:
                if sender is not None:
                    self._queue(sender, data)
            else:
                for sink, pid in list(self.sinks.items()):
                    if pid != send.to:
                        continue
                    self._queue(sink, data)
                    if send.close:
                        # Forgotten now: nothing broadcast later may reach it.
                        self.sinks.pop(sink, None)
                        self._sink_from.pop(sink, None)
                        self._queue(sink, None)

    def wake(self) -> None:
        """Set :attr:`changed` (and replace it): whoever waits on the room looks again."""
        self.changed.set()
        self.changed = asyncio.Event()

    def _remember(self, version: int, data: bytes) -> None:
        history = self.history
        history.append((version, data))
        self._history_bytes += len(data)
        while len(history) > 1 and (len(history) > HISTORY
                                    or self._history_bytes > HISTORY_BYTES):
            self._history_bytes -= len(history.popleft()[1])

    def forget_history(self) -> None:
        """Drop the kept broadcasts (a socket that comes back then gets the whole state)."""
        self.history.clear()
        self._history_bytes = 0

    def _flush_after(self, fut: asyncio.Future[Any]) -> None:
        if not fut.cancelled() and fut.exception() is not None:
            # The store refused an entry: what is queued may show changes the log does not
            # hold, so nothing more goes out (the room is rebuilt from its log).
            self.broken = True
            self._outbox.clear()
            return
        self._flush()

    def _flush(self) -> None:
        while self._outbox:
            head = self._outbox[0]
            if head.committed is not None and not head.committed.done():
                return
            self._outbox.popleft()
            for sink, data, version in head.sends:
                if sink is not None:
                    if data is None:
                        sink.close()
                    else:
                        sink.send(data)
                    continue
                assert data is not None
                for s in list(self.sinks):
                    # A socket that joined later got this change in its catch-up already.
                    if self._sink_from.get(s, 0) < version:
                        s.send(data)

    def _queue(self, sink: Sink | None, data: bytes | None, version: int = 0) -> None:
        """Send after everything published so far is committed (in order)."""
        if self._outbox:
            self._outbox[-1].sends.append((sink, data, version))
        else:
            self._outbox.append(_Outgoing(None, [(sink, data, version)]))
            self._flush()

    # ------------------------------------------------------------------ sockets

    def attach(self, sink: Sink, player_id: str | None) -> None:
        """A socket joins the room (for ``player_id``; None: a watcher)."""
        self.sinks[sink] = player_id

    def detach(self, sink: Sink) -> str | None:
        """A socket left; returns the player it spoke for, if it was still attached."""
        self._sink_from.pop(sink, None)
        return self.sinks.pop(sink, None)

    def catch_up(self, sink: Sink, since: int | None, version: int,
                 whole: Callable[[], ServerMessage],
                 caught_up: Callable[[], ServerMessage]) -> None:
        """Bring ``sink`` up to ``version`` (the table's now): the broadcasts after ``since``
        from history and then ``caught_up()``, or, too far behind (or ``since`` None),
        ``whole()``, the whole state. Goes out through the outbox, after the changes it
        covers are committed."""
        self._sink_from[sink] = version
        oldest = self.history[0][0] if self.history else version + 1
        if since is not None and oldest - 1 <= since <= version:
            # Close enough: replay the broadcasts it missed (all public, the same for everyone).
            for v, data in self.history:
                if v > since:
                    self._queue(sink, data)
            self._queue(sink, protocol.encode(caught_up()))
        else:
            self._queue(sink, protocol.encode(whole()))

    def send_now(self, message: ServerMessage) -> None:
        """Send to every socket at once, outside the order of changes (a passing measure)."""
        if self.sinks and not self.broken:
            data = protocol.encode(message)
            for sink in list(self.sinks):
                sink.send(data)

    def close(self) -> None:
        """Close every socket (once what is queued for it has gone) and wake the waiters."""
        for sink in list(self.sinks):
            sink.close()
        self.changed.set()
