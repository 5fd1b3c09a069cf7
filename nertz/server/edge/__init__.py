"""The socket edge: what stands between the sockets and a room's table.

``fanout`` keeps one room's sockets, the short history of its broadcasts for catching up, and
the outbox that sends a command's messages only once its log entries are committed.
"""
