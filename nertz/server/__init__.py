"""The game server: rooms played over WebSockets, each room's log stored.

- ``room/``: the process that owns a room: the table (the reducer), lobby, messages, clock,
  match archive, bots.
- ``edge/``: the socket side: a room's fan-out (sockets, history, catch-up, commit order).
- ``live``: a room live on this process, its table wired to its fan-out.
- ``hub``: the rooms this process holds; ``app``: HTTP and the WebSocket; ``protocol``: client
  messages and the encoder; ``store``: the log; ``limits``: rate limits; ``serve``: start-up.
"""
