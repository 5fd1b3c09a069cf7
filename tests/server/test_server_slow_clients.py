"""Clients that never finish a request (slowloris): the headers have a deadline, one address
may hold only a few unfinished requests, and a trickled body has a deadline too. On a real
uvicorn server configured as ``nertz serve`` configures it, the deadlines shortened."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from server_support import live_server
from websockets.sync.client import connect

import nertz.server.edge.app as app_module
from nertz.server.edge import http_protocol
from nertz.server.edge.app import create_app
from nertz.server.serve import server_config


def opened(base: str, first: bytes) -> socket.socket:
    """A raw connection to the server that has sent ``first`` and no more."""
    parts = urlsplit(base)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    sock.sendall(first)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset is a close: the
    server closed with the request's bytes unread)."""
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except ConnectionResetError:
        pass
    return out


def until(check: Any, what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_the_server_runs_the_guarded_http_protocol() -> None:
    config = server_config(create_app("sqlite://"), "127.0.0.1", 0)
    config.load()
    assert config.http_protocol_class is http_protocol.GuardedHttp


def test_headers_that_never_end_get_a_408_and_the_connection_closes(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_protocol, "HEADER_SECONDS", 0.5)
    app = create_app(f"sqlite:///{tmp_path}/slow.db", start_bots=False)
    with live_server(app) as base:
        with opened(base, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a") as sock:
            answer = read_all(sock)
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert b'"request headers not complete within 0.5 s"' in answer
        # On a kept-alive connection each request has its own deadline, from its first byte.
        with opened(base, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") as sock:
            first = sock.recv(65536)
            assert first.startswith(b"HTTP/1.1 200 "), first
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHo")
            answer = read_all(sock)
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        until(lambda: http_protocol.unfinished("127.0.0.1") == 0, "the count never fell")
        # A whole request still goes through, WebSocket upgrades included (other tests).
        assert httpx.get(base + "/healthz").status_code == 200


def test_one_address_holds_only_a_few_unfinished_requests(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_protocol, "UNFINISHED_PER_ADDRESS", 4)
    monkeypatch.setattr(http_protocol, "HEADER_SECONDS", 60.0)
    app = create_app(f"sqlite:///{tmp_path}/slow.db", start_bots=False)
    with live_server(app) as base:
        held = [opened(base, b"GET / HTTP/1.1\r\n") for _ in range(4)]
        try:
            until(lambda: http_protocol.unfinished("127.0.0.1") == 4, "not all four held")
            # One more from the same address is closed before it costs anything more.
            with opened(base, b"GET /healthz HTTP/1.1\r\n") as extra:
                assert read_all(extra) == b""
            assert http_protocol.unfinished("127.0.0.1") == 4
        finally:
            for sock in held:
                sock.close()
        until(lambda: http_protocol.unfinished("127.0.0.1") == 0, "the count never fell")
        assert httpx.get(base + "/healthz").status_code == 200


def test_a_trickled_body_gets_a_408(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "BODY_SECONDS", 0.5)
    app = create_app(f"sqlite:///{tmp_path}/slow.db", start_bots=False)
    with live_server(app) as base:
        head = (b"POST /api/rooms HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                b"content-length: 200\r\n\r\n")
        with opened(base, head + b'{"seats": 2, ') as sock:
            answer = b""
            while b"within" not in answer and (chunk := sock.recv(65536)):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert b"request body not complete within 0.5 s" in answer


def test_frames_sent_with_the_upgrade_request_are_read(tmp_path: Any) -> None:
    # RFC 6455 has a client wait for the handshake's answer, but one that sends its hello in
    # the same write as the upgrade request must not wait in vain: uvicorn handed the socket
    # protocol the request alone, and the frames after it were dropped without a word.
    import base64
    import json
    import os

    def frame(message: dict[str, Any]) -> bytes:
        data = json.dumps(message).encode()
        mask = os.urandom(4)
        return bytes([0x81, 0x80 | len(data)]) + mask + bytes(
            b ^ mask[i % 4] for i, b in enumerate(data))

    app = create_app(f"sqlite:///{tmp_path}/eager.db", start_bots=False)
    with live_server(app) as base:
        room = httpx.post(base + "/api/rooms",
                          json={"rules": "pagat", "seats": 2, "name": "Ann"}).json()
        key = base64.b64encode(os.urandom(16)).decode()
        upgrade = (f"GET /ws/{room['room']} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n").encode()
        hello = frame({"type": "hello", "token": room["token"]})
        ping = frame({"type": "ping", "id": "p1", "sent": 1})
        with opened(base, upgrade + hello + ping) as sock:
            got = b""
            while b'"pong"' not in got:
                chunk = sock.recv(65536)
                assert chunk, got
                got += chunk
        assert got.startswith(b"HTTP/1.1 101 "), got
        assert b'"type":"state"' in got, got


def test_headers_past_the_cap_get_a_431_and_the_connection_closes(tmp_path: Any) -> None:
    # The parser's cost grows with the square of a header's length, on the event loop: a
    # request's headers past HEADER_BYTES are refused before they cost more.
    app = create_app(f"sqlite:///{tmp_path}/big.db", start_bots=False)
    with live_server(app) as base:
        with opened(base, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ") as sock:
            try:
                for _ in range(64):  # 4 MiB at most, far past the cap
                    if select.select([sock], [], [], 0)[0]:
                        break  # answered: send no more
                    sock.sendall(b"a" * 65536)
            except OSError:
                pass  # closed by the server mid-send: the answer was written first
            answer = read_all(sock)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        assert f"request headers over {http_protocol.HEADER_BYTES} bytes".encode() in answer
        until(lambda: http_protocol.unfinished("127.0.0.1") == 0, "the count never fell")
        assert httpx.get(base + "/healthz").status_code == 200


def test_a_request_the_parser_refuses_gets_a_json_400_naming_why(tmp_path: Any) -> None:
    # uvicorn's own answer is plain text; every error of the API is JSON with the reason.
    app = create_app(f"sqlite:///{tmp_path}/bad.db", start_bots=False)
    with live_server(app) as base:
        with opened(base, b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n") as sock:
            answer = read_all(sock)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 "), answer[:200]
        assert b"content-type: application/json" in head.lower()
        assert json.loads(body)["error"].startswith("not a valid HTTP request: ")
        until(lambda: http_protocol.unfinished("127.0.0.1") == 0, "the count never fell")
        assert httpx.get(base + "/healthz").status_code == 200


def test_an_address_holds_a_bounded_number_of_http_connections(tmp_path: Any) -> None:
    # A request whose body never comes holds its connection for the body's whole deadline:
    # past OPEN_PER_ADDRESS of them, one address's next connection is closed at once. A
    # WebSocket does not count (the sockets have their own caps), nor does a closed one.
    app = create_app(f"sqlite:///{tmp_path}/open.db", start_bots=False)
    # A route that reads its body first (an upload now waits for its address's turn).
    body_never_comes = (b"POST /api/quick HTTP/1.1\r\nHost: x\r\ncontent-type: "
                        b"application/json\r\ncontent-length: 10\r\n\r\n")
    with live_server(app) as base:
        held = [opened(base, body_never_comes) for _ in range(http_protocol.OPEN_PER_ADDRESS)]
        try:
            until(lambda: http_protocol.open_from("127.0.0.1") == http_protocol.OPEN_PER_ADDRESS,
                  "the connections were not all counted")
            with opened(base, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") as one_more:
                assert read_all(one_more) == b""  # closed, unanswered
            held.pop().close()
            until(lambda: http_protocol.open_from("127.0.0.1") < http_protocol.OPEN_PER_ADDRESS,
                  "a closed connection kept counting")
            assert httpx.get(base + "/healthz").status_code == 200
        finally:
            for sock in held:
                sock.close()
        until(lambda: http_protocol.open_from("127.0.0.1") == 0, "the count never fell")
        room = httpx.post(base + "/api/rooms", json={"seats": 2}).json()["room"]
        with connect(base.replace("http", "ws", 1) + f"/ws/{room}"):
            until(lambda: http_protocol.open_from("127.0.0.1") == 0,
                  "a WebSocket counted as an HTTP connection")


class _Peer(asyncio.Transport):
    """A connection's transport as the protocol sees it, from an IPv6 peer of our choosing
    (the loopback has only ``::1``, which is one address whatever its network)."""

    def __init__(self, peer: str) -> None:
        super().__init__()
        self.peer = peer
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": (self.peer, 40000), "sockname": ("2001:db8::1", 8000)}.get(
            name, default)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def write(self, data: Any) -> None:
        pass


def test_the_64s_of_one_ipv6_48_share_a_wider_cap_on_connections(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # One holder of a /48 has 65,536 /64s: each its own 256 connections (and 32 unfinished)
    # would hold the process's files. The /48 gets SITE_SHARE /64s' worth of each.
    from uvicorn.server import ServerState

    from nertz.server.limits import SITE_SHARE

    monkeypatch.setattr(http_protocol, "OPEN_PER_ADDRESS", 2)
    monkeypatch.setattr(http_protocol, "UNFINISHED_PER_ADDRESS", 2)
    config = server_config(create_app("sqlite://"), "::1", 8000)
    state = ServerState()

    async def main() -> None:
        def connect_from(peer: str) -> tuple[http_protocol.GuardedHttp, _Peer]:
            protocol = http_protocol.GuardedHttp(config, state, {})
            transport = _Peer(peer)
            protocol.connection_made(transport)
            return protocol, transport

        held = [connect_from(f"2001:db8:5:{n:x}::1") for n in range(SITE_SHARE) for _ in "ab"]
        assert not any(t.closed for _, t in held)
        assert http_protocol.open_from("2001:db8:5::/48") == 2 * SITE_SHARE
        assert http_protocol.unfinished("2001:db8:5::/48") == 2 * SITE_SHARE
        _, refused = connect_from("2001:db8:5:ffff::1")  # a fresh /64 of a full /48
        assert refused.closed
        other = connect_from("2001:db8:6::1")  # another /48
        assert not other[1].closed
        # A connection that closes gives its /48 room again; nothing stays counted after all.
        held[0][0].connection_lost(None)
        again = connect_from("2001:db8:5:ffff::1")
        assert not again[1].closed
        for protocol, _ in [*held[1:], other, again]:
            protocol.connection_lost(None)
        for key in ("2001:db8:5::/48", "2001:db8:6::/48", "2001:db8:5:ffff::/64"):
            assert http_protocol.open_from(key) == http_protocol.unfinished(key) == 0

    asyncio.run(main())
