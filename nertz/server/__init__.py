"""The game server: rooms played over WebSockets, each room's log stored.

- ``room/``: the process that owns a room: the table (the reducer), lobby, messages, clock,
  match archive, bots.
- ``edge/``: the socket side: a room's fan-out (sockets, history, catch-up, commit order).
- ``live``: a room live on this process, its table wired to its fan-out.
- ``hub``: the rooms this process holds (idle ones close); ``app``: HTTP and the WebSocket;
  ``openapi``: its document; ``protocol``: client messages and the encoder; ``confusables``:
  look-alike names; ``store``: the log; ``limits``: rate limits and socket caps; ``serve``:
  start-up.
"""
