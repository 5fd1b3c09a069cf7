"""Network clients, outside the rules' package root: they speak docs/protocol.md to a server.

- :mod:`nertz.net.client`: the Python client (rooms over HTTP, one WebSocket, a mirror of the
  table kept in version order);
- :mod:`nertz.net.netbot`: a bot playing a seat through the client (``nertz bot``), on the one
  bot loop of :mod:`nertz.bots.driver`.
"""
