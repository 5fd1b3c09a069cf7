"""The bus's interface: room ownership, and a room's effects on their way to its sockets."""

from __future__ import annotations

from typing import Protocol

from nertz.server.edge.fanout import Sink
from nertz.server.room.messages import Effects


class Outlet(Protocol):
    """Where a room's effects reach sockets on one process (a room's fan-out)."""

    def publish(self, fx: Effects, sender: Sink | None = None) -> None:
        """Send what a command did, in order, once committed."""


class Bus(Protocol):
    """Which process owns each room, and the road from a room's owner to its sockets."""

    process: str
    """This process's name on the bus."""

    def claim(self, room_id: str) -> bool:
        """Become the owner of ``room_id``: True unless another process owns it."""

    def release(self, room_id: str) -> None:
        """Give up ``room_id`` (it left this process's memory)."""

    def owner(self, room_id: str) -> str | None:
        """The process that owns ``room_id``, or None."""

    def subscribe(self, room_id: str, outlet: Outlet) -> None:
        """Let ``outlet`` hear the room's effects (a process holding its sockets)."""

    def unsubscribe(self, room_id: str, outlet: Outlet) -> None:
        """Stop ``outlet`` hearing the room."""

    def publish(self, room_id: str, fx: Effects, sender: Sink | None = None) -> None:
        """The room's owner sends what a command did to every outlet of the room; replies
        to ``sender`` go to the outlet holding that socket."""
