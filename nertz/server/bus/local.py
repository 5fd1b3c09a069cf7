"""The bus of a single process: ownership is a set, a room's effects go straight to its fan-out."""

from __future__ import annotations

from nertz.server.bus.base import Outlet
from nertz.server.edge.fanout import Sink
from nertz.server.room.messages import Effects


class LocalBus:
    """Every room is owned here and every socket is here: nothing crosses a process."""

    def __init__(self, process: str = "local") -> None:
        self.process = process
        self._owned: set[str] = set()
        self._outlets: dict[str, list[Outlet]] = {}

    def claim(self, room_id: str) -> bool:
        """Own ``room_id`` (no other process exists to own it)."""
        self._owned.add(room_id)
        return True

    def release(self, room_id: str) -> None:
        """Forget owning ``room_id``."""
        self._owned.discard(room_id)

    def owner(self, room_id: str) -> str | None:
        """This process, if it owns ``room_id``."""
        return self.process if room_id in self._owned else None

    def subscribe(self, room_id: str, outlet: Outlet) -> None:
        """Let ``outlet`` hear the room."""
        self._outlets.setdefault(room_id, []).append(outlet)

    def unsubscribe(self, room_id: str, outlet: Outlet) -> None:
        """Stop ``outlet`` hearing the room."""
        outlets = self._outlets.get(room_id, [])
        if outlet in outlets:
            outlets.remove(outlet)
        if not outlets:
            self._outlets.pop(room_id, None)

    def publish(self, room_id: str, fx: Effects, sender: Sink | None = None) -> None:
        """Hand the effects to the room's outlets (one: its fan-out on this process)."""
        for outlet in self._outlets.get(room_id, ()):
            outlet.publish(fx, sender)
