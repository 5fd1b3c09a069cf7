"""The owner's side of a socket held by another process: a :class:`RemoteSocket`.

To the room (its fan-out, the edge's socket loop) a remote socket is a socket like any other:
it sends, closes, and yields the frames its client sent. Underneath, what it sends goes to the
inbox of the process holding the WebSocket (:mod:`nertz.server.cluster.pipe`), which writes it
to the client unchanged; the frames come from there, each with the envelope that process made
when it read the frame (arrival time and anything else the edge measures), unchanged too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from nertz.server.cluster.relay import Relay

Frame = dict[str, Any]
"""One thing a socket's client did, as the edge's socket loop reads it: an ASGI WebSocket
message (``websocket.receive`` with ``text``, or ``websocket.disconnect``) plus the envelope
the holding process added."""


class RemoteSocket:
    """A client's WebSocket, held by process ``process``, for a room owned here."""

    def __init__(self, relay: Relay, process: str, socket_id: str, address: str,
                 network_ms: float | None = None) -> None:
        self.relay = relay
        self.process = process
        self.id = socket_id
        self.address = address
        """The client's address, as the holding process saw it."""
        self._network_ms = network_ms
        self.network: Callable[[], float | None] | None = lambda: self._network_ms
        """The network's round trip to the client as the holding process last measured it
        (ms; sent with every frame): it bounds the latency estimate here (the pings' round
        trips also cross the relay; the bound's slack allows for it). None, from a process
        that cannot measure it: the slack alone bounds it (a relayed socket is never
        unbounded)."""
        self.closed = False
        self.frames: asyncio.Queue[Frame] = asyncio.Queue()

    def send(self, data: bytes) -> None:
        """Send one encoded message to the client (after everything sent before)."""
        if not self.closed:
            self.relay.send(self.process, {"k": "out", "sock": self.id, "data": data})

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Close the client's socket once what was sent before has gone."""
        if not self.closed:
            self.closed = True
            self.relay.send(self.process, {"k": "close", "sock": self.id, "code": code,
                                           "reason": reason})
            self.frames.put_nowait({"type": "websocket.disconnect"})

    def cut(self) -> None:
        """Drop a client that stopped reading (it reconnects and catches up)."""
        self.close(1008, "too far behind: reconnect")

    async def finish(self) -> None:
        """Close (the holding process sees the close out)."""
        self.close()

    async def receive(self) -> Frame:
        """The client's next frame (a disconnect once the socket has gone)."""
        return await self.frames.get()

    def arrived(self, frame: Frame) -> None:
        """A frame from the holding process (with its latest figure for the network)."""
        if not self.closed:
            network = frame.get("rtt")
            if isinstance(network, (int, float)):
                self._network_ms = float(network)
            self.frames.put_nowait(frame)

    def gone(self) -> None:
        """The holding process says the client's socket closed."""
        if not self.closed:
            self.closed = True
            self.frames.put_nowait({"type": "websocket.disconnect"})
