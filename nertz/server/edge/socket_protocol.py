"""The server's WebSocket protocol: uvicorn's sans-I/O one, able to give its connection away.

uvicorn drives a WebSocket with an asyncio protocol object of its own (``websockets-sansio``:
the ``websockets`` library parses and frames). :class:`SocketProtocol` is that protocol with
one more ability: before the handshake is answered, the connection itself can move to another
process of this machine (:mod:`nertz.server.cluster.handoff`), which then answers the handshake
and serves the socket as if the client had reached it first. Between the workers of one
machine that replaces relaying every frame through Redis, twice, with nothing at all.

It also writes a text frame straight to its transport when asked
(:meth:`SocketProtocol.send_text_now`), the road of every broadcast: ASGI's send costs more than
the frame. And it reads the frames of moves on a short road of its own: once the socket is open,
a whole, unfragmented, masked text frame is split off the stream, unmasked and queued for the
app here, and every other frame (pings, pongs, a close, fragments, binary frames, anything the
library must refuse) goes to the ``websockets`` library whole, so that its parser, which only
ever sees whole frames, is always at a frame's start when the next one comes (see
:meth:`SocketProtocol.data_received`). Messages wait in a light queue (a
:class:`~nertz.server.edge.mailbox.Mailbox`), and
reading pauses only when :data:`READ_AHEAD` of them wait, not after each one as uvicorn's does
(two event-loop calls a frame).

A handshake it refuses itself (a request that is no WebSocket upgrade, a missing key, an
unparseable request, the app's failure or a close before accepting) is answered in JSON,
``{"error": ...}`` naming what was wrong, as every error of the HTTP API is (the library
answers in plain text): :class:`JsonRefusals`.

The app finds the protocol in its socket's scope, under :data:`HANDOVER` (absent on any other
server: the app then never tries either). A connection that arrived by handover is marked
(:attr:`SocketProtocol.handed_in`) and is never handed on again: no connection circles.
"""

from __future__ import annotations

import asyncio
import email.utils
import http
import logging
import struct
from collections.abc import Callable
from typing import Any, Final

import msgspec
from uvicorn.config import Config
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.datastructures import Headers
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.streams import StreamReader

from nertz.server import protocol
from nertz.server.edge.mailbox import Mailbox
from nertz.server.room.messages import Error

try:  # the library's C unmasking where it was built, as its own parser uses
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover
    from websockets.utils import apply_mask

log = logging.getLogger("nertz.handoff")

NOT_UTF8: Final = protocol.encode(Error(
    "bad_message", "a text frame that is not UTF-8: the protocol is JSON in UTF-8 text frames"))
"""The ``error`` sent before closing a socket that sent a text frame that is not UTF-8."""


def _peer(client: tuple[str, int] | None) -> str:
    """A socket's peer for the log (its address and port, or a dash)."""
    return "-" if client is None else f"{client[0]}:{client[1]}"


HANDOVER: Final = "nertz.handover"
"""The scope extension that holds the socket's :class:`SocketProtocol`."""

IMPORT_PATH: Final = "nertz.server.edge.socket_protocol:SocketProtocol"
"""How uvicorn's ``ws`` setting names this protocol (a name survives the trip to a worker)."""

READ_AHEAD: Final = 32
"""Messages read from a socket and waiting for the app before reading pauses (the kernel's
buffer and the client then wait): enough that a client's burst costs no pause, few enough that
a flooding client's read-ahead stays small (each message is at most the frame size cap)."""


class _Inbox(Mailbox[Any]):
    """The messages read from one socket for the app, in place of uvicorn's ``asyncio.Queue``:
    what uvicorn's protocol puts there (``put_nowait``) and this protocol's ``receive`` reads."""

    __slots__ = ()

    def __len__(self) -> int:
        return len(self.items)

    def put_nowait(self, message: Any) -> None:
        """Queue a message for the app, waking its read."""
        self.put(message)

    async def get(self) -> Any:
        """The next message, once there is one (one reader: the socket's app)."""
        await self.wait()
        return self.items.popleft()


class JsonRefusals(ServerProtocol):
    """The ``websockets`` library's server side, its handshake refusals in the API's JSON.

    Every refusal the library or uvicorn makes goes through :meth:`reject`: an invalid or
    unparseable upgrade request (400, 414, 431), a plain request to a socket's path (426),
    the app's failure (500), a close before the handshake was accepted (403)."""

    def reject(self, status: http.HTTPStatus | int, text: str) -> Response:
        """The refusal ``status`` as ``{"error": text}`` (its phrase when ``text`` is empty),
        the status kept."""
        status = http.HTTPStatus(status)
        said = " ".join(text.split())  # one line: the library's may run to several
        prefix = "Failed to open a WebSocket connection: "
        if said.startswith(prefix):  # the library's words: the reason is what matters
            said = "not a WebSocket handshake: " + said[len(prefix):]
        body = msgspec.json.encode({"error": said.rstrip(".") or status.phrase.lower()})
        headers = Headers([
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", "application/json"),
        ])
        return Response(status.value, status.phrase, headers, body)


class SocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O WebSocket protocol, plus :meth:`hand_over` (the connection to
    another process), :meth:`send_text_now` (a frame straight to the transport) and its own
    reading of a move's frames (:meth:`data_received`)."""

    def __init__(self, config: Config, server_state: ServerState, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None,
                 handed_in: bool = False) -> None:
        super().__init__(config, server_state, app_state, _loop)
        # The same settings as uvicorn's (extensions, size cap, logger), refusals in JSON.
        made = self.conn
        self.conn = JsonRefusals(extensions=made.available_extensions,
                                 max_size=(made.max_message_size, made.max_fragment_size),
                                 logger=made.logger)
        self.handed_in = handed_in
        """The connection came from another process of this machine."""
        self.handed_over = False
        """The connection went to another process: nothing more is read or written here."""
        self.queue: _Inbox = _Inbox(self.loop)  # type: ignore[assignment]
        self._split: bytes | None = None
        """Once the socket is open, the bytes of a frame not yet whole, split off here (None:
        every byte still goes to the library, see :meth:`data_received`)."""
        self._library_only = False
        """This connection's bytes go to the library as they come, for good (an extension, a
        close, a frame it must refuse)."""
        self._whole_frames = False
        """Every frame goes to the library, whole (a fragmented message or a binary frame
        came: the library assembles messages from here on)."""

    def handle_connect(self, event: Request) -> None:
        """uvicorn's handshake handling; an accepted request's scope also carries this
        protocol (:data:`HANDOVER`). The app's task starts on the loop's next turn, after
        this returns, so it sees the extension."""
        super().handle_connect(event)
        scope: Any = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"][HANDOVER] = self

    def connection_lost(self, exc: Exception | None) -> None:
        """uvicorn's; and the scope lets go of this protocol (:meth:`handle_connect`), which
        holds the scope: a cycle every closed socket otherwise left to the collector."""
        super().connection_lost(exc)
        scope: Any = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"].pop(HANDOVER, None)

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
        before the pause, and belong to nobody here).

        Once the socket is open (the handshake answered, no extension agreed) and the library's
        parser waits at a frame's start with nothing buffered, the stream is split into frames
        here: a whole text frame, final, masked, within the size cap, is unmasked and queued
        for the app as uvicorn would queue it; any other whole frame is given to the library
        alone, which parses and handles it as ever (a pong, a ping answered, a close, a
        protocol error failing the connection). A frame's first bytes wait here until it is
        whole, so the library never holds part of one. After a fragment or a binary frame every
        frame goes to the library (still one whole frame at a time); a frame over the cap or
        unmasked, or a close, hands it the rest of the stream."""
        if self.handed_over:
            return
        split = self._split
        if split is None:
            if self._library_only or not self._may_split():
                super().data_received(data)
                return
            split = b""
        self._split = None
        buf = split + data if split else data
        end = len(buf)
        at = 0
        cap = self.config.ws_max_size
        while end - at >= 2:
            head, second = buf[at], buf[at + 1]
            size = second & 0x7F
            start = at + 6
            if size == 126:
                if end - at < 4:
                    break
                size = _LENGTH_16.unpack_from(buf, at + 2)[0]
                start = at + 8
            elif size == 127:
                if end - at < 10:
                    break
                size = _LENGTH_64.unpack_from(buf, at + 2)[0]
                start = at + 14
            if size > cap or not second & 0x80:
                # Too big, or not masked: the library refuses it (1009, 1002) from its header.
                self._to_library(buf[at:])
                return
            stop = start + size
            if stop > end:
                break
            if head == 0x81 and not self._whole_frames:
                if self.close_sent:
                    # The app is past its close: dropped, as uvicorn drops it.
                    at = stop
                    continue
                try:
                    text = apply_mask(buf[start:stop], buf[start - 4:start]).decode()
                except UnicodeDecodeError:
                    text = None  # the library's to refuse (1007), below
                if text is not None:
                    self._deliver({"type": "websocket.receive", "text": text})
                    at = stop
                    continue
            elif head & 0x0F < 0x8:
                # A fragment, a binary frame, a reserved bit or opcode: the library assembles
                # (or refuses) what follows.
                self._whole_frames = True
            super().data_received(buf[at:stop])
            at = stop
            if self.transport.is_closing():
                self._library_only = True  # nothing more is read
                return
            if self.conn.state is not State.OPEN or self.conn.parser_exc is not None:
                self._to_library(buf[at:])
                return
        self._split = buf[at:] if at < end else b""

    def _may_split(self) -> bool:
        """Whether frames may be split off here from now on (else the library reads them, and
        if it never may, for good)."""
        if not self.handshake_complete or self.initial_response is not None:
            return False
        if self.conn.state is not State.OPEN or self.conn.extensions or self.close_sent:
            self._library_only = True
            return False
        return _at_frame_start(self.conn.reader, self.conn.parser)

    def _to_library(self, rest: bytes) -> None:
        self._library_only = True
        self._split = None
        if rest:
            super().data_received(rest)

    def _deliver(self, message: Any) -> None:
        inbox = self.queue
        inbox.put_nowait(message)
        if not self.read_paused and len(inbox) >= READ_AHEAD:
            self.read_paused = True
            self.transport.pause_reading()

    def send_receive_event_to_app(self) -> None:
        """A message the library assembled, queued for the app as uvicorn queues it, except
        that reading pauses only once :data:`READ_AHEAD` messages wait (uvicorn pauses after
        each one, and resumes at each read)."""
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        if self.close_sent:
            return
        if self.curr_msg_data_type == "text":
            try:
                text = data.decode()
            except UnicodeDecodeError:
                self._refuse_not_utf8()
                return
            self._deliver({"type": "websocket.receive", "text": text})
        else:
            self._deliver({"type": "websocket.receive", "bytes": data})

    def _refuse_not_utf8(self) -> None:
        """A text frame that is not UTF-8: the documented ``error`` saying why, then the close
        (1007, with its reason), as for any socket the server ends. The client's fault, not the
        server's, and anyone may send one: a line in the log, no traceback (uvicorn logged an
        ERROR with its traceback for each)."""
        log.info("socket from %s: a text frame that is not UTF-8; closed (1007)",
                 _peer(self.client))
        if self.conn.state is State.OPEN:
            self.conn.send_text(NOT_UTF8)
            self.conn.send_close(1007, "text frame not UTF-8")
        if self.conn.close_sent is not None:  # else the connection is ending already
            self.handle_parser_exception()

    async def receive(self) -> Any:
        """The app's next message (ASGI's ``receive``); reading resumes once none wait."""
        inbox = self.queue
        message = await inbox.get()
        if self.read_paused and not len(inbox):
            self.read_paused = False
            self.transport.resume_reading()
        return message

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

_LENGTH_16: Final = struct.Struct("!H")
_LENGTH_64: Final = struct.Struct("!Q")
"""A frame's extended payload length (RFC 6455, 5.2)."""


def _at_frame_start(reader: StreamReader, parser: Any) -> bool:
    """Whether the ``websockets`` parser holds nothing and waits for a new frame: its buffer is
    empty and, innermost, it waits in ``StreamReader.at_eof``, where it waits only between
    frames (inside a frame it waits for bytes in ``read_exact``). Any other answer, such as a
    release of the library that parses otherwise, keeps the library reading every frame."""
    if reader.buffer:
        return False
    inner = parser
    while (deeper := getattr(inner, "gi_yieldfrom", None)) is not None:
        inner = deeper
    return _AT_EOF_CODE is not None and getattr(inner, "gi_code", None) is _AT_EOF_CODE


_AT_EOF_CODE: Final = getattr(StreamReader.at_eof, "__code__", None)


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
