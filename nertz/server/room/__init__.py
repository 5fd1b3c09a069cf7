"""The room: what the process that owns a room runs.

``table`` is the owner (one command at a time through the log: ``handle(player, message) ->
Effects``), made of one module per concept: ``core`` what a table holds, ``log`` the log every
change goes through and a command's effects, ``entries`` what each log entry does (live and on
a rebuild), ``broadcasts`` what the table tells, ``people`` joins, sockets, vacancies and an
absent host, ``seating`` the seating commands, ``gestures`` pointers and reactions, ``rounds`` a
match's rounds from start to close, ``fair_order`` whether a play waits for plays sent before
it, ``play`` moves applied, refused or decided in their turn. Beside it: ``phase`` where a room
is; ``lobby`` who is in the room and where they sit; ``messages`` what the room says (typed
server messages, refusals, what to send to whom); ``clock`` its timers; ``races`` the rules of
latency-fair races and the automation flag; ``snapshot`` a table's state stored with a deal;
``archive`` its finished matches; ``bots`` the bot driver over a small seat interface. Nothing
here knows a socket: the fan-out (:mod:`nertz.server.edge`) sends what the table returns.
"""
