"""The game server: rooms played over WebSockets, each room's log stored.

- ``room/``: the process that owns a room: the table (the reducer), lobby, messages, clock,
  match archive, bots.
- ``edge/``: the socket side: ``app`` (HTTP and the WebSocket: origin, hello, limits),
  ``connection`` (one socket), ``fanout`` (a room's sockets, history, catch-up, commit order).
- ``bus/``: what crosses processes: who owns a room, a room's effects on their way to its
  sockets (the interface, and the local bus of a single process).
- ``live``: a room live on this process, its table wired over the bus to its fan-out.
- ``hub``: the rooms this process holds (idle ones close); ``openapi``: the HTTP API's
  document; ``protocol``: client messages and the encoder; ``confusables``: look-alike names;
  ``store``: the log; ``limits``: rate limits and caps; ``serve``: start-up.
"""
