"""What crosses processes (Colyseus's Presence): which process owns a room, and the room's
traffic between its owner and the processes that hold its sockets.

:class:`~nertz.server.bus.base.Bus` is the interface; :class:`~nertz.server.bus.local.LocalBus`
is the one implementation today, for the single embedded process (``nertz serve``). The room's
code never knows which it has: a bus over Redis (leases with epochs for ownership, one channel
per room for its traffic) takes its place when the server runs as many processes.
"""

from nertz.server.bus.base import Bus, Outlet
from nertz.server.bus.local import LocalBus

__all__ = ["Bus", "LocalBus", "Outlet"]
