"""A socket held here for a room owned elsewhere: the WebSocket is piped to the owner.

The process a client happens to reach (any process: no sticky sessions) keeps its WebSocket
and does only what belongs to the socket: it reads frames, stamps each with its envelope
(:func:`envelope`) and sends them to the room's owner; it writes what the owner sends back. The
owner runs everything else (hello, tokens, limits, the table) on a
:class:`~nertz.server.cluster.remote.RemoteSocket`, exactly as for its own sockets, so the
protocol is the same on every process.

A pipe ends when the client goes, when the owner closes the socket, or when the room's owner
changes (it died, or stepped down): the socket is then closed with code 1012, and the client
reconnects, to any process, and catches up from the version it had.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any, Final, Protocol

from nertz.server.cluster.relay import Message, Relay

log = logging.getLogger("nertz.pipe")

MOVED_CODE: Final = 1012
"""Close code for a socket whose room changed owner ("service restart": reconnect)."""


class HeldSocket(Protocol):
    """The local WebSocket's writer (:class:`~nertz.server.edge.connection.Connection`)."""

    closed: bool

    def send(self, data: bytes) -> None:
        """Queue one message to the client."""

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Close once what is queued has gone."""


def envelope(frame: dict[str, Any]) -> dict[str, Any]:
    """What the edge passes on with a frame, made where the socket is held: the ASGI message
    and when it arrived (wall clock, seconds). Carried whole to the owner."""
    out = dict(frame)
    out.setdefault("arrived", time.time())
    return out


@dataclass(slots=True)
class _Pipe:
    room_id: str
    owner: str
    conn: HeldSocket


class Pipes:
    """This process's pipes, by socket id."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.open: dict[str, _Pipe] = {}

    def start(self, room_id: str, owner: str, conn: HeldSocket, address: str,
              network_ms: float | None = None) -> str:
        """Open a pipe for ``conn`` to the room's owner; returns the socket's id.
        ``network_ms``: the network's round trip to the client as measured here (None:
        unknown), which bounds the owner's latency estimate."""
        socket_id = f"{self.relay.process}/{secrets.token_hex(6)}"
        self.open[socket_id] = _Pipe(room_id, owner, conn)
        self.relay.send(owner, {"k": "open", "room": room_id, "sock": socket_id,
                                "from": self.relay.process, "addr": address,
                                "rtt": network_ms})
        return socket_id

    def forward(self, socket_id: str, frame: dict[str, Any],
                network_ms: float | None = None) -> None:
        """Send one frame the client sent to the owner, in its envelope, with the network's
        round trip to the client as measured here now (None: unknown), which bounds the
        owner's latency estimate (read at every frame: one taken only as the socket opened
        could be inflated then and stay so)."""
        pipe = self.open.get(socket_id)
        if pipe is not None:
            env = envelope(frame)
            if network_ms is not None:
                env["rtt"] = network_ms
            self.relay.send(pipe.owner, {"k": "frame", "room": pipe.room_id,
                                         "sock": socket_id, "env": env})

    def end(self, socket_id: str) -> None:
        """The client's socket closed: tell the owner."""
        pipe = self.open.pop(socket_id, None)
        if pipe is not None:
            self.relay.send(pipe.owner, {"k": "gone", "room": pipe.room_id,
                                         "sock": socket_id})

    def deliver(self, message: Message) -> None:
        """A message from an owner for one of this process's sockets."""
        pipe = self.open.get(message["sock"])
        if pipe is None:
            return
        if message["k"] == "out":
            pipe.conn.send(message["data"])
        else:
            pipe.conn.close(message.get("code", 1000), message.get("reason", ""))
            self.open.pop(message["sock"], None)

    def rooms(self) -> set[str]:
        """The rooms piped from here."""
        return {p.room_id for p in self.open.values()}

    def moved(self, room_id: str, owner: str | None) -> None:
        """The room's owner is ``owner`` now (None: nobody yet): close the pipes that lead
        elsewhere, so that their clients reconnect (to whichever process, which reaches the
        new owner). A room may have pipes to two owners for a moment: some opened before
        the change, some after."""
        for socket_id, pipe in list(self.open.items()):
            if pipe.room_id == room_id and pipe.owner != owner:
                log.info("room %s moved to %s: closing a pipe to %s", room_id, owner, pipe.owner)
                pipe.conn.close(MOVED_CODE, "the room moved: reconnect")
                self.end(socket_id)
