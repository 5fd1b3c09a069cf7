"""The server's WebSocket protocol: uvicorn's sans-I/O one, able to give its connection away.

uvicorn drives a WebSocket with an asyncio protocol object of its own (``websockets-sansio``:
the ``websockets`` library parses and frames). :class:`SocketProtocol` is that protocol with
one more ability: before the handshake is answered, the connection itself can move to another
process of this machine (:mod:`nertz.server.cluster.handoff`), which then answers the handshake
and serves the socket as if the client had reached it first. Between the workers of one
machine that replaces relaying every frame through Redis, twice, with nothing at all.

It also writes a text frame straight to its transport when asked
(:meth:`SocketProtocol.send_text_now`), the road of every broadcast: ASGI's send costs more than
the frame. The app finds the protocol in its socket's scope, under :data:`HANDOVER` (absent on
any other server: the app then never tries either). A connection that arrived by handover is marked
(:attr:`SocketProtocol.handed_in`) and is never handed on again: no connection circles.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from collections.abc import Callable
from typing import Any, Final

from uvicorn.config import Config
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.http11 import Request
from websockets.protocol import State

log = logging.getLogger("nertz.handoff")

HANDOVER: Final = "nertz.handover"
"""The scope extension that holds the socket's :class:`SocketProtocol`."""

IMPORT_PATH: Final = "nertz.server.edge.socket_protocol:SocketProtocol"
"""How uvicorn's ``ws`` setting names this protocol (a name survives the trip to a worker)."""


class SocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O WebSocket protocol, plus :meth:`hand_over` (the connection to
    another process) and :meth:`send_text_now` (a frame straight to the transport)."""

    def __init__(self, config: Config, server_state: ServerState, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None,
                 handed_in: bool = False) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.handed_in = handed_in
        """The connection came from another process of this machine."""
        self.handed_over = False
        """The connection went to another process: nothing more is read or written here."""

    def handle_connect(self, event: Request) -> None:
        """uvicorn's handshake handling; an accepted request's scope also carries this
        protocol (:data:`HANDOVER`). The app's task starts on the loop's next turn, after
        this returns, so it sees the extension."""
        super().handle_connect(event)
        scope: Any = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"][HANDOVER] = self

    def hand_over(self, give: Callable[[int, bytes], bool]) -> bool:
        """Give the connection to another process: ``give(fd, request)`` passes the socket's
        file descriptor and the upgrade request read from it (the receiver answers it) and
        says whether it went. True: the connection is gone from here (closed without a byte
        written: the other process holds it now). False: nothing changed, serve it here.

        Only before the handshake is answered, never for a connection that was handed in,
        and never over TLS (its session state cannot travel)."""
        transport = self.transport
        if (self.handed_in or self.handed_over or self.handshake_complete
                or transport.is_closing() or transport.get_extra_info("sslcontext") is not None):
            return False
        sock = transport.get_extra_info("socket")
        if sock is None:
            return False
        # Nothing more may be read here: the client's next bytes are the receiver's.
        transport.pause_reading()
        try:
            gone = give(sock.fileno(), self.request_bytes())
        except Exception:
            gone = False
        if not gone:
            transport.resume_reading()
            return False
        self.handed_over = True
        # uvicorn's protocol then neither answers the handshake (a 500 or 403) nor complains
        # when the app returns; closing the transport only closes this process's descriptor.
        self.handshake_complete = True
        self.close_sent = True
        self.stop_keepalive()
        return True

    def request_bytes(self) -> bytes:
        """The upgrade request as the client sent it: its target and its header lines (the
        scope's raw headers, byte for byte)."""
        lines = [b"GET " + self.request.path.encode("ascii") + b" HTTP/1.1"]
        lines.extend(name + b": " + value for name, value in self.scope["headers"])
        return b"\r\n".join(lines) + b"\r\n\r\n"

    def data_received(self, data: bytes) -> None:
        """Bytes from the client; none once the connection was handed over (they were read
        before the pause, and belong to nobody here)."""
        if not self.handed_over:
            super().data_received(data)

    def send_text_now(self, data: bytes) -> bool:
        """Write one text frame (``data``: UTF-8) at once; False where it cannot, and the
        caller sends through ASGI instead: the socket not open, a close sent, an extension
        agreed (a frame would need it), or the transport's buffer past its high-water mark
        (ASGI's send waits for it to drain).

        Every broadcast goes out once per socket. Through ASGI a frame costs a message dict,
        the text decoded and encoded again, a coroutine, and the library's frame object and
        serialiser; the frame itself is two to ten bytes of header (RFC 6455, 5.2: a server's
        frames are not masked)."""
        if (self.close_sent or self.conn.state is not State.OPEN or self.conn.extensions
                or not self.writable.is_set()):
            return False
        size = len(data)
        if size < 126:
            header = _SHORT.pack(0x81, size)
        elif size < 65536:
            header = _MEDIUM.pack(0x81, 126, size)
        else:
            header = _LONG.pack(0x81, 127, size)
        self.transport.write(header + data)
        return True


_SHORT: Final = struct.Struct("!BB")
_MEDIUM: Final = struct.Struct("!BBH")
_LONG: Final = struct.Struct("!BBQ")
"""A final text frame's header: FIN and the opcode, then the length in 7, 16 or 64 bits."""


class HandedIn:
    """The sockets other processes of this machine handed to this one: each served by this
    process's app through a :class:`SocketProtocol` of its own, exactly as a socket accepted
    here (``config``: uvicorn's settings of this server, made on first use)."""

    def __init__(self, config: Callable[[], Config]) -> None:
        self._make_config = config
        self._config: Config | None = None
        self.state = ServerState()
        """Their connections and app tasks (uvicorn's bookkeeping, kept apart from the
        listener's: :meth:`shutdown` closes them)."""
        self._opening: set[asyncio.Task[None]] = set()

    def take(self, sock: Any, request: bytes) -> None:
        """Serve a handed socket (``request``: the upgrade request read from it elsewhere)."""
        task = asyncio.get_running_loop().create_task(self._open(sock, request))
        self._opening.add(task)
        task.add_done_callback(self._opening.discard)

    async def _open(self, sock: Any, request: bytes) -> None:
        try:
            config = self._server_config()
            sock.setblocking(False)
            _, proto = await asyncio.get_running_loop().connect_accepted_socket(
                lambda: SocketProtocol(config, self.state, {}, handed_in=True), sock)
        except Exception:
            # The client went away meanwhile, or this server cannot serve it: the client
            # sees its connection drop and reconnects, as from a process that died.
            log.exception("a handed socket could not be served")
            sock.close()
            return
        # The handshake is answered here, as if the client had sent it to this process.
        proto.data_received(request)

    def _server_config(self) -> Config:
        if self._config is None:
            config = self._make_config()
            config.load()
            self._config = config
            self.state.default_headers = list(config.encoded_headers)
        return self._config

    def shutdown(self) -> None:
        """Close every handed socket as uvicorn closes its own at shutdown (1012: the
        client reconnects)."""
        for proto in list(self.state.connections):
            if isinstance(proto, SocketProtocol):
                proto.shutdown()
