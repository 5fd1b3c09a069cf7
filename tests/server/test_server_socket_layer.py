"""The socket layer under the table: which WebSocket implementation uvicorn runs, the game's
socket path straight on the server's ASGI callables, a socket's writer (messages queued
together share a frame, in order, before the close), and a connection handed to another
process before its handshake is answered."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import httpx
import pytest
from server_support import live_server
from starlette.types import Message, Receive, Scope, Send
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

import nertz.server.edge.connection as connection_module
from nertz.server.edge.app import SocketRoute, create_app
from nertz.server.edge.connection import Connection
from nertz.server.edge.socket_protocol import HANDOVER, SocketProtocol
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
        return "close" in self.calls

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

        config = server_config(app, "127.0.0.1", 0, log_config=None)
        config.load()
        proto = SocketProtocol(config, ServerState(), {})
        transport = _Transport()
        proto.connection_made(transport)
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
