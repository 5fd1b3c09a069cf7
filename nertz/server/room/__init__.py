"""The room: what the process that owns a room runs.

``table`` is the reducer (one command at a time through the log: ``handle(player, message) ->
Effects``); ``lobby`` who is in the room and where they sit; ``messages`` what the room says
(typed server messages, refusals, what to send to whom); ``clock`` its timers; ``archive`` its
finished matches; ``bots`` the bot driver over a small seat interface. Nothing here knows a
socket: the fan-out (:mod:`nertz.server.edge`) sends what the table returns.
"""
