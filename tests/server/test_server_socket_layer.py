"""The socket layer under the table: which WebSocket implementation uvicorn runs, the game's
socket path straight on the server's ASGI callables, a socket's writer (messages queued
together share a frame, in order, before the close), and a connection handed to another
process before its handshake is answered."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_support import live_server
from starlette.types import Message, Receive, Scope, Send
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.exceptions import ConnectionClosed
from websockets.frames import Close, Frame, Opcode
from websockets.sync.client import connect

import nertz.server.edge.connection as connection_module
from nertz.server.edge.app import SocketRoute, create_app
from nertz.server.edge.connection import Connection
from nertz.server.edge.socket_protocol import HANDOVER, NOT_UTF8, SocketProtocol
from nertz.server.serve import WS_PROTOCOL, server_config


def test_uvicorn_runs_the_configured_websocket_protocol() -> None:
    """``nertz serve`` (and every test server) upgrades sockets with the sans-I/O protocol of
    the ``websockets`` library (uvicorn's ``websockets-sansio``, able to hand a connection
    over), not uvicorn's default legacy one."""
    config = server_config(create_app("sqlite://"), "127.0.0.1", 0)
    assert config.ws == WS_PROTOCOL == "nertz.server.edge.socket_protocol:SocketProtocol"
    config.load()
    assert config.ws_protocol_class is SocketProtocol
    assert issubclass(SocketProtocol, WebSocketsSansIOProtocol)
    # The limits it was given reach the protocol: the frame cap, pings, no compression.
    assert config.ws_max_size == 4 * 4096
    assert (config.ws_ping_interval, config.ws_ping_timeout) == (20, 20)
    assert config.ws_per_message_deflate is False


def test_a_served_socket_plays_and_refuses_what_is_too_large(tmp_path: Any) -> None:
    """On a real uvicorn server with that protocol: hello and a room's state come back, and a
    frame past the cap closes the socket with 1009 (message too big)."""
    app = create_app(f"sqlite:///{tmp_path}/socket.db", start_bots=False)
    with live_server(app) as base:
        room = httpx.post(f"{base}/api/rooms", json={"rules": "pagat", "seats": 2,
                                                      "name": "Ann"}).json()
        url = base.replace("http", "ws") + f"/ws/{room['room']}"
        with connect(url) as ws:
            ws.send(json.dumps({"type": "hello", "token": room["token"]}))
            first = json.loads(str(ws.recv(timeout=10)).split("\n")[0])
            assert first["type"] == "state"
        with connect(url, max_size=None) as ws:
            ws.send("x" * (4 * 4096 + 1))
            with pytest.raises(ConnectionClosed):
                while True:
                    ws.recv(timeout=10)
            assert ws.protocol.close_rcvd is not None
            assert ws.protocol.close_rcvd.code == 1009


def test_the_socket_path_goes_straight_to_its_handler() -> None:
    """A WebSocket to ``/ws/{room_id}`` reaches the handler with the server's own callables
    and its path parameters; any other path, and HTTP to the same path, go on to the app."""
    seen: list[tuple[str, Any]] = []

    async def inner(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(("app", scope["path"]))

    async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(("socket", (scope["path_params"], receive, send)))

    route = SocketRoute(inner, "/ws/{room_id}", endpoint)

    async def receive() -> Message:
        return {"type": "websocket.connect"}

    async def send(message: Message) -> None:
        pass

    async def main() -> None:
        await route({"type": "websocket", "path": "/ws/r1", "root_path": ""}, receive, send)
        await route({"type": "websocket", "path": "/ws/r1/more", "root_path": ""}, receive,
                    send)
        await route({"type": "websocket", "path": "/elsewhere", "root_path": ""}, receive, send)
        await route({"type": "http", "path": "/ws/r1", "root_path": "", "method": "GET"},
                    receive, send)

    asyncio.run(main())
    assert seen[0] == ("socket", ({"room_id": "r1"}, receive, send))
    assert seen[1:] == [("app", "/ws/r1/more"), ("app", "/elsewhere"), ("app", "/ws/r1")]


class Recorder:
    """An ASGI ``send`` that keeps what it was given (after yielding once, as a real socket's
    write may)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def __call__(self, message: Message) -> None:
        await asyncio.sleep(0)
        self.messages.append(message)


def test_messages_queued_together_share_frames_in_order_then_the_close() -> None:
    """What is queued while the writer waits goes out as frames of at most
    :data:`FRAME_BATCH` messages, a line each, every message once and in order, and the close
    frame (with its code and reason) only after the last of them."""
    batch = connection_module.FRAME_BATCH
    count = 2 * batch + 7

    async def main() -> list[Message]:
        out = Recorder()
        conn = Connection(out)
        conn.send(b'{"n":0}')
        await asyncio.sleep(0.01)  # the first alone: the writer was idle
        for n in range(1, count):
            conn.send(f'{{"n":{n}}}'.encode())
        conn.close(4000, "done")
        await conn.finish()
        return out.messages

    messages = asyncio.run(main())
    assert messages[-1] == {"type": "websocket.close", "code": 4000, "reason": "done"}
    frames = [m["text"] for m in messages[:-1]]
    assert all(m["type"] == "websocket.send" for m in messages[:-1])
    assert [len(f.split("\n")) for f in frames] == [1, batch, batch, count - 1 - 2 * batch]
    lines = [json.loads(line)["n"] for f in frames for line in f.split("\n")]
    assert lines == list(range(count))


def test_frames_written_at_once_keep_their_order_when_the_socket_backs_up() -> None:
    """Where the socket takes frames at once, what one turn of the loop sends goes out as one
    frame at its end; when the socket stops taking them (its buffer full), the rest go through
    the ASGI ``send`` after those already written, each message once and in order, then the
    close."""

    async def main() -> tuple[list[str], list[Message]]:
        out = Recorder()
        direct: list[str] = []
        open_for = [3]

        def send_now(data: bytes) -> bool:
            if open_for[0] <= 0:
                return False
            open_for[0] -= 1
            direct.append(data.decode())
            return True

        conn = Connection(out, send_now=send_now)
        await asyncio.sleep(0)  # the writer starts and waits
        for turn in range(6):
            conn.send(f'{{"n":{2 * turn}}}'.encode())
            conn.send(f'{{"n":{2 * turn + 1}}}'.encode())
            await asyncio.sleep(0.001)
        conn.close(4000, "done")
        await conn.finish()
        return direct, out.messages

    direct, messages = asyncio.run(main())
    assert [len(frame.split("\n")) for frame in direct] == [2, 2, 2]  # a frame a turn
    assert messages[-1] == {"type": "websocket.close", "code": 4000, "reason": "done"}
    later = [m["text"] for m in messages[:-1]]
    lines = [json.loads(line)["n"] for f in direct + later for line in f.split("\n")]
    assert lines == list(range(12))


class _Transport(asyncio.Transport):
    """A transport that records what the protocol does with it."""

    def __init__(self, ssl: bool = False) -> None:
        super().__init__()
        self.sock = socket.socket()
        self.ssl = ssl
        self.calls: list[str] = []
        self.written = b""

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"socket": self.sock, "peername": ("10.0.0.9", 4242),
                "sockname": ("127.0.0.1", 8000),
                "sslcontext": object() if self.ssl else None}.get(name, default)

    def is_closing(self) -> bool:
        return any(call.startswith("close") for call in self.calls)

    def pause_reading(self) -> None:
        self.calls.append("pause")

    def resume_reading(self) -> None:
        self.calls.append("resume")

    def write(self, data: Any) -> None:
        self.written += bytes(data)

    def close(self) -> None:
        self.calls.append("close")


UPGRADE = (b"GET /ws/abc?since=4 HTTP/1.1\r\nHost: example.org\r\nUpgrade: websocket\r\n"
           b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
           b"Sec-WebSocket-Version: 13\r\nX-Odd: caf\xe9\r\n\r\n")


def _connected(app: Any, cls: Any = SocketProtocol,
               max_size: int | None = None) -> tuple[Any, _Transport]:
    """A protocol of ``cls`` serving ``app`` on a recording transport, before any byte."""
    config = server_config(app, "127.0.0.1", 0, log_config=None)
    if max_size is not None:
        config.ws_max_size = max_size
    config.load()
    proto = cls(config, ServerState(), {})
    transport = _Transport()
    proto.connection_made(transport)
    return proto, transport


def test_a_socket_is_handed_over_whole_or_not_at_all() -> None:
    """The protocol gives its connection away only before answering the handshake, passing
    the descriptor and the request byte for byte; a refused handoff resumes reading as if
    nothing happened; a handed-in or TLS connection is never handed on."""
    async def scenario() -> None:
        seen: list[Any] = []
        done = asyncio.Event()

        async def app(scope: Any, receive: Any, send: Any) -> None:
            seen.append(scope)
            await done.wait()

        config = server_config(app, "127.0.0.1", 0, log_config=None)
        config.load()
        made = []
        for handed_in, ssl in ((False, False), (True, False), (False, True)):
            proto = SocketProtocol(config, ServerState(), {}, handed_in=handed_in)
            transport = _Transport(ssl)
            proto.connection_made(transport)
            proto.data_received(UPGRADE)
            made.append((proto, transport))
        await asyncio.sleep(0)  # the apps' tasks start
        assert all(HANDOVER in scope["extensions"] for scope in seen)
        proto, transport = made[0]
        given: list[tuple[int, bytes]] = []
        # Refused: nothing changed.
        assert not proto.hand_over(lambda fd, request: False)
        assert transport.calls == ["pause", "resume"] and not proto.handed_over
        # Taken: the descriptor and the request as read, nothing written back.
        assert proto.hand_over(lambda fd, request: given.append((fd, request)) is None)
        assert given == [(transport.sock.fileno(), UPGRADE)]
        done.set()
        await asyncio.sleep(0.01)  # the app returns: uvicorn answers nothing, closes its end
        assert proto.handed_over and transport.written == b""
        assert transport.calls == ["pause", "resume", "pause", "close"]
        assert not proto.hand_over(lambda fd, request: True)  # once only
        for other, t in made[1:]:
            assert not other.hand_over(lambda fd, request: True)
            assert "pause" not in t.calls
        for _, t in made:
            t.sock.close()

    asyncio.run(scenario())


def test_frames_written_at_once_are_what_the_library_reads() -> None:
    """A text frame written straight to the transport (the broadcasts' road) is read back by
    the ``websockets`` library's own parser whole, for each of the three header sizes; before
    the handshake, after a close, or with the transport's buffer full, nothing is written
    and the caller is told to use ASGI's send."""
    from websockets.frames import Frame, Opcode
    from websockets.streams import StreamReader

    async def scenario() -> None:
        done = asyncio.Event()

        async def app(scope: Any, receive: Any, send: Any) -> None:
            await receive()
            await send({"type": "websocket.accept"})
            await done.wait()

        proto, transport = _connected(app)
        assert not proto.send_text_now(b"too soon")  # no handshake yet
        proto.data_received(UPGRADE)
        for _ in range(10):
            await asyncio.sleep(0)
        assert transport.written.startswith(b"HTTP/1.1 101")
        transport.written = b""
        texts = [b"x" * 10, "\u00e9t\u00e9 ".encode() * 60, b"{" + b"y" * 70_000 + b"}"]
        for text in texts:
            assert proto.send_text_now(text)
        reader = StreamReader()
        reader.feed_data(transport.written)
        for text in texts:
            parser = Frame.parse(reader.read_exact, mask=False)
            try:
                next(parser)
                raise AssertionError("a frame was cut short")
            except StopIteration as end:
                frame = end.value
            assert frame.opcode is Opcode.TEXT and frame.fin and frame.data == text
        proto.writable.clear()  # the transport's buffer is past its high-water mark
        assert not proto.send_text_now(b"later")
        proto.writable.set()
        proto.close_sent = True
        assert not proto.send_text_now(b"after the close")
        done.set()
        transport.sock.close()

    asyncio.run(scenario())


# ---------------------------------------------------------------- frames read on the short road

_MAX = 1 << 16
"""The frame size cap of the protocols under test (small, so that a frame over it is cheap)."""


def _frame(opcode: Any, data: bytes, fin: bool = True, mask: bool = True) -> bytes:
    from websockets.frames import Frame

    return Frame(opcode, data, fin=fin).serialize(mask=mask, extensions=[])


@st.composite
def _client_frames(draw: st.DrawFn) -> tuple[bytes, list[int], list[int]]:
    """A client's stream after the handshake, where the network cuts it, and where its frames
    end: text frames of all three header sizes, pings and pongs among them, sometimes a
    fragmented message, a binary frame, a close, or a frame the library must refuse (unmasked,
    not UTF-8, over the cap)."""
    from websockets.frames import Close, Opcode

    kinds = st.sampled_from(["text"] * 8 + ["ping", "pong", "fragments", "binary", "close",
                                            "unmasked", "not utf-8", "too big"])
    sizes = st.sampled_from([0, 1, 30, 125, 126, 400, 65_535, 65_536])
    stream = b""
    ends: list[int] = []
    for kind in draw(st.lists(kinds, min_size=1, max_size=8)):
        if kind == "text":
            size = draw(sizes)
            text = draw(st.text(min_size=0, max_size=8)) + "x" * max(0, size - 8)
            stream += _frame(Opcode.TEXT, text.encode())
        elif kind in ("ping", "pong"):
            stream += _frame(Opcode.PING if kind == "ping" else Opcode.PONG,
                             draw(st.binary(max_size=20)))
        elif kind == "fragments":
            parts = draw(st.lists(st.text(max_size=6), min_size=2, max_size=3))
            for n, part in enumerate(parts):
                stream += _frame(Opcode.TEXT if n == 0 else Opcode.CONT, part.encode(),
                                 fin=n == len(parts) - 1)
        elif kind == "binary":
            stream += _frame(Opcode.BINARY, draw(st.binary(max_size=20)))
        elif kind == "close":
            stream += _frame(Opcode.CLOSE, Close(1000, "bye").serialize())
        elif kind == "unmasked":
            stream += _frame(Opcode.TEXT, b'{"type":"ping"}', mask=False)
        elif kind == "not utf-8":
            stream += _frame(Opcode.TEXT, b"\xff\xfe")
        else:
            stream += _frame(Opcode.TEXT, b"y" * (_MAX + 1))
        ends.append(len(stream))
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    return stream, cuts, ends


async def _read_through(cls: Any, stream: bytes, cuts: list[int],
                        pipelined: int = 0) -> tuple[list[Message], bytes, list[str]]:
    """What the app receives and what the protocol writes when ``cls`` reads ``stream`` cut at
    ``cuts`` (the first ``pipelined`` bytes arrive with the upgrade request itself)."""
    received: list[Message] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            received.append(message)
            if message["type"] == "websocket.disconnect":
                return

    proto, transport = _connected(app, cls, _MAX)

    def read(data: bytes) -> None:
        try:
            proto.data_received(data)
        except Exception as exc:
            # (uvicorn 0.55 trips on its own assertion for a bad frame sent with the request:
            # its event loop would then close the transport, as here.)
            transport.calls.append(f"close: {type(exc).__name__}")

    read(UPGRADE + stream[:pipelined])
    for _ in range(5):
        await asyncio.sleep(0)
    head, _, _ = transport.written.partition(b"\r\n\r\n")
    if head.startswith(b"HTTP/1.1 101"):  # (its Date header moves with the clock)
        transport.written = transport.written[len(head) + 4:]
    points = [pipelined, *(c for c in cuts if c > pipelined), len(stream)]
    for start, stop in itertools.pairwise(points):
        if transport.is_closing():
            break  # a closed transport reads nothing more
        if stop > start:
            read(stream[start:stop])
        for _ in range(3):
            await asyncio.sleep(0)
    proto.connection_lost(None)
    for _ in range(5):
        await asyncio.sleep(0)
    transport.sock.close()
    return received, transport.written, [c for c in transport.calls if c.startswith("close")]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_client_frames(), st.integers(0, 3))
def test_frames_read_on_the_short_road_are_what_uvicorn_reads(
        case: tuple[bytes, list[int], list[int]], pipelined: int) -> None:
    """The server's protocol splits a client's frames off the stream itself: for any stream
    of frames (text of every header size, pings, pongs, fragments, binary, a close, frames to
    refuse) cut anywhere by the network, sometimes with its first bytes arriving with the
    upgrade request, the app receives exactly the messages uvicorn's own protocol gives it,
    and exactly the same bytes go back (pongs, close frames with their codes).

    Once this protocol splits frames (from the first read that starts at a frame's start),
    uvicorn's is fed each frame apart, as this one feeds the library: given a valid frame and
    a bad one in one read, uvicorn's drops the valid one's message with the connection, where
    this one delivers it first (it came first)."""
    stream, cuts, ends = case
    mine = asyncio.run(_read_through(SocketProtocol, stream, cuts, pipelined))
    starts = [pipelined, *(c for c in cuts if c > pipelined)]
    split_from = next((c for c in starts if c == 0 or c in ends), len(stream))
    apart = sorted({*cuts, *(e for e in ends if e > split_from)})
    uvicorn = asyncio.run(_read_through(WebSocketsSansIOProtocol, stream, apart, pipelined))
    assert _as_uvicorn_refuses_not_utf8(mine) == uvicorn


def _as_uvicorn_refuses_not_utf8(
        read: tuple[list[Message], bytes, list[str]]) -> tuple[list[Message], bytes, list[str]]:
    """What the server's protocol did, with its one deliberate difference from uvicorn's
    undone: a text frame that is not UTF-8 gets the documented ``error`` before its close
    (1007), and the close a reason, where uvicorn sends a bare close."""
    received, written, closes = read
    ours = (Frame(Opcode.TEXT, NOT_UTF8).serialize(mask=False)
            + Frame(Opcode.CLOSE, Close(1007, "text frame not UTF-8").serialize())
            .serialize(mask=False))
    if ours in written:
        bare = Frame(Opcode.CLOSE, Close(1007, "").serialize()).serialize(mask=False)
        written = written.replace(ours, bare)
        received = [{**m, "reason": ""} if m["type"] == "websocket.disconnect" else m
                    for m in received]
    return received, written, closes


def test_text_frames_are_split_off_here_and_reading_pauses_only_far_ahead() -> None:
    """Once the socket is open, a text frame never reaches the library's parser (it is
    split, unmasked and queued here), even cut within its header; reading pauses only when
    :data:`READ_AHEAD` messages wait, and resumes once the app has read them all."""
    from websockets.frames import Opcode

    from nertz.server.edge.socket_protocol import READ_AHEAD

    async def scenario() -> None:
        received: list[str] = []
        go, done = asyncio.Event(), asyncio.Event()

        async def app(scope: Any, receive: Any, send: Any) -> None:
            await receive()
            await send({"type": "websocket.accept"})
            await go.wait()
            while len(received) < READ_AHEAD + 3:
                received.append((await receive())["text"])
            await done.wait()

        proto, transport = _connected(app)
        proto.data_received(UPGRADE)
        for _ in range(5):
            await asyncio.sleep(0)
        parsed: list[bytes] = []
        real = proto.conn.receive_data
        proto.conn.receive_data = lambda data: (parsed.append(data), real(data))[1]
        frames = [_frame(Opcode.TEXT, f'{{"n":{n}}}'.encode()) for n in range(READ_AHEAD + 3)]
        proto.data_received(frames[0][:1])  # a header cut short waits here
        proto.data_received(frames[0][1:] + frames[1])
        assert len(proto.queue) == 2 and "pause" not in transport.calls
        proto.data_received(b"".join(frames[2:READ_AHEAD]))
        assert len(proto.queue) == READ_AHEAD and transport.calls == ["pause"]
        proto.data_received(b"".join(frames[READ_AHEAD:]))
        go.set()
        for _ in range(READ_AHEAD + 10):
            await asyncio.sleep(0)
        assert received == [f'{{"n":{n}}}' for n in range(READ_AHEAD + 3)]
        assert transport.calls == ["pause", "resume"] and parsed == []
        done.set()
        transport.sock.close()

    asyncio.run(scenario())
