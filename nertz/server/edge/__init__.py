"""The socket edge (lila-ws's tier): what stands between the clients and a room's table.

``app`` is the HTTP API and the WebSocket (origin, the hello and its deadline, per-socket rate
limits, socket caps, handing each command to its room); ``connection`` one socket's queue and
writer; ``fanout`` one room's sockets, the short history of its broadcasts for catching up, and
the outbox that sends a command's messages only once its log entries are committed;
``socket_protocol`` the server's WebSocket protocol under them all (uvicorn's, reading a move's
frames and writing broadcasts on a short road of its own, and able to hand a connection to
another process); ``mailbox`` the deque a socket's messages wait in, in and out; ``latency``
each socket's round trip; ``echo`` what an error may quote of an id the client sent.
"""
