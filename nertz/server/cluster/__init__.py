"""Many processes, many machines: one owner per room, and the road to it (``nertz serve
--workers N --redis URL --db URL``).

One module per question:

- who owns a room: :mod:`~nertz.server.cluster.lease` (a lease per room in Redis, with a time
  to live and an epoch that fences a former owner's writes out of the log);
- how a message reaches it: :mod:`~nertz.server.cluster.relay` (each process's inbox on Redis
  pub/sub, and calls that want an answer);
- a socket passed whole to its room's owner on this machine:
  :mod:`~nertz.server.cluster.handoff`;
- a socket held here for a room owned elsewhere: :mod:`~nertz.server.cluster.pipe`;
- the owner's side of that socket: :mod:`~nertz.server.cluster.remote`;
- where a new room goes (the live process owning the fewest):
  :mod:`~nertz.server.cluster.placement`;
- this process among the others (renewing, taking over orphaned rooms, stepping down):
  :mod:`~nertz.server.cluster.node`;
- what must hold for the whole service rather than one process (rate limits, socket caps):
  :mod:`~nertz.server.cluster.limits`.

``nertz serve`` alone (one process, SQLite) uses none of it: the hub owns every room itself.
The log in the database is the truth: any process rebuilds any room from it
(:meth:`nertz.server.hub.Hub.get`), which is what makes failover lose nothing.
"""

from nertz.server.cluster.lease import Claim, Leases
from nertz.server.cluster.node import DEFAULT_PREFIX, ClusterError, Node
from nertz.server.cluster.relay import Relay, RelayError
from nertz.server.cluster.remote import RemoteSocket

__all__ = ["DEFAULT_PREFIX", "Claim", "ClusterError", "Leases", "Node", "Relay", "RelayError",
           "RemoteSocket"]
