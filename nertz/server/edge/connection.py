"""One WebSocket as the room's fan-out sees it: a queue and a writer task.

A :class:`Connection` is a :class:`~nertz.server.edge.fanout.Sink`: sending never blocks the
table (messages queue, and under load several share one frame, a line each); a reader that
falls too far behind (:data:`MAX_QUEUE` messages or :data:`MAX_QUEUE_BYTES` bytes waiting) is
cut (it reconnects and catches up); a close waits for what is queued and its close frame to go.

It writes each frame straight to the socket's transport where the server's protocol allows
(:meth:`~nertz.server.edge.socket_protocol.SocketProtocol.send_text_now`), else through the
server's own ASGI ``send`` (uvicorn's), never a framework's WebSocket object: every broadcast
passes here once per socket, and each layer in between (state checks, exception handlers' send
hooks, message dicts, the text decoded to be encoded again) is paid for nothing once the
socket is open.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable

from starlette.types import Send

from nertz.server.edge.mailbox import Mailbox

MAX_QUEUE = 2000
"""Messages queued for one socket before it counts as dead (a client that stopped reading)."""

MAX_QUEUE_BYTES = 4 * 1024 * 1024
"""Bytes queued for one socket before it counts as dead, however few the messages: a whole
table's state or a catch-up is kilobytes, and a client that asks for them and stops reading
would otherwise make the server hold :data:`MAX_QUEUE` of them (hundreds of megabytes). A
message that finds the queue empty is taken whatever its size, so no single message can cut a
socket that keeps up (its reconnect would only ask for it again)."""

FRAME_BATCH = 64
"""At most this many queued messages share one WebSocket frame."""

CLOSE_WAIT = 5.0
"""Seconds a closing socket's last messages and close frame may take before it is cut."""


class Connection:
    """One WebSocket as a :class:`~nertz.server.edge.fanout.Sink`: a queue and a writer task, so a
    slow reader never holds up the table."""

    def __init__(self, send: Send, address: str = "",
                 send_now: Callable[[bytes], bool] | None = None,
                 network: Callable[[], float | None] | None = None) -> None:
        self._send = send
        """The socket's ASGI ``send``, after its ``websocket.accept``."""
        self._send_now = send_now
        """Writes a text frame at once where it can (True), else the ASGI ``send`` is used
        (:meth:`nertz.server.edge.socket_protocol.SocketProtocol.send_text_now`)."""
        self.address = address
        """The client's address (the edge bars a kicked player's)."""
        self.network = network
        """Reads the network's round trip to the client (ms), which bounds the socket's
        latency estimate (:mod:`nertz.server.edge.latency`); None: the server cannot tell."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._box: Mailbox[bytes | None] = Mailbox(loop)
        self.queue = self._box.items
        """What waits to be written (None: the close)."""
        self.queued_bytes = 0
        """The bytes of the messages in :attr:`queue` (a batch put back counts as its frame)."""
        self._flushing = False
        """A :meth:`_flush` is scheduled for this turn of the loop."""
        self.closed = False
        self.close_code = 1000
        self.close_reason = ""
        self.task = loop.create_task(self._write())
        self.closer: asyncio.Task[None] | None = None

    def send(self, data: bytes) -> None:
        """Queue a message (dropped once closed; a reader that falls too far behind is cut)."""
        if self.closed:
            return
        queue = self.queue
        size = len(data)
        if len(queue) >= MAX_QUEUE or (queue and self.queued_bytes + size > MAX_QUEUE_BYTES):
            self.cut()
            return
        self.queued_bytes += size
        box = self._box
        if self._send_now is not None and (box.waiting or self._flushing):
            # The writer is idle: what this turn of the loop sends goes out in one frame from a
            # plain callback at its end, not by waking the writer task (a future, a task step
            # and two coroutines resumed, for every frame of every socket). The writer takes
            # over for what the socket cannot take at once.
            queue.append(data)
            if not self._flushing:
                self._flushing = True
                self._loop.call_soon(self._flush)
            return
        box.put(data)

    def _flush(self) -> None:
        self._flushing = False
        queue = self.queue
        send_now = self._send_now
        assert send_now is not None
        while queue and queue[0] is not None:
            data, taken = _take_batch(queue)
            self.queued_bytes -= taken
            try:
                sent = send_now(data)
            except Exception:  # the transport failed: the writer meets it and gives up
                sent = False
            if not sent:
                queue.appendleft(data)  # lines still: the writer may join it with others
                self.queued_bytes += len(data)
                break
        if queue:
            self._box.wake()  # a close, or a socket that must drain first: the writer's

    def cut(self) -> None:
        """Drop a socket that stopped reading: what is queued is thrown away and the socket
        closes now (the client reconnects and catches up), so its reader loop ends too."""
        self.closed = True
        self.task.cancel()
        self.queue.clear()
        self.queued_bytes = 0
        # Kept on the connection: a task nobody holds may be collected before it runs.
        self.closer = asyncio.get_running_loop().create_task(self._close_now())

    async def _close_now(self) -> None:
        with contextlib.suppress(Exception):
            await self._send({"type": "websocket.close", "code": 1008,
                              "reason": "too far behind: reconnect"})

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Close once the queue has drained, with this close code and reason."""
        if not self.closed:
            self.closed = True
            self.close_code, self.close_reason = code, reason
            self._box.put(None)

    async def finish(self) -> None:
        """Wait until what is queued and the close frame have gone (at most
        :data:`CLOSE_WAIT`, then cut): a socket handler that returned sooner would drop them,
        and the client would see the connection fail (1006) instead of its last message."""
        self.close()
        try:
            await asyncio.wait_for(asyncio.shield(self.task), CLOSE_WAIT)
        except TimeoutError:
            self.cut()
        except Exception:  # the writer's own failure: the peer is gone
            pass

    async def _write(self) -> None:
        queue = self.queue
        send = self._send
        send_now = self._send_now
        box = self._box
        try:
            while True:
                if not queue:
                    await box.wait()
                    continue
                if queue[0] is None:
                    break
                data, taken = _take_batch(queue)
                self.queued_bytes -= taken
                if send_now is None or not send_now(data):
                    await send({"type": "websocket.send", "text": data.decode()})
        except Exception:  # the peer went away; the reader side notices and detaches
            self.closed = True
        except asyncio.CancelledError:
            if not self.closed:
                raise
            # Cut (:meth:`cut`): the task ends as done, not cancelled. A cancelled task keeps
            # its CancelledError, whose traceback holds this frame and so this connection,
            # which holds the task: a cycle every cut socket left to the collector. (And
            # :meth:`finish`, waiting on a cancelled task, was cancelled itself.)
            return
        with contextlib.suppress(Exception):
            await send({"type": "websocket.close", "code": self.close_code,
                        "reason": self.close_reason})


def _take_batch(queue: deque[bytes | None]) -> tuple[bytes, int]:
    """The messages at the head of ``queue`` (which holds one at least) as one frame's text,
    up to :data:`FRAME_BATCH` of them and not past a close (None), which stays queued; and the
    bytes they took in the queue (the text less its joining newlines).

    Under load several messages wait: one frame carries them all, a line each (JSON text never
    holds a raw newline), which costs far less than a frame each."""
    data = queue.popleft()
    assert data is not None
    if not queue or queue[0] is None:
        return data, len(data)
    batch = [data]
    while queue and len(batch) < FRAME_BATCH:
        item = queue[0]
        if item is None:
            break
        batch.append(item)
        queue.popleft()
    text = b"\n".join(batch)
    return text, len(text) - (len(batch) - 1)
