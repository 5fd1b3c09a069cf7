"""The server's HTTP/1.1 protocol: uvicorn's ``httptools`` one, guarded against requests that
never finish.

A client that opens connections and sends a request's headers a byte at a time, or never
ends them (slowloris), holds a file and a little memory per connection for as long as it
likes: uvicorn has no deadline for a request's headers (its keep-alive timeout stops as soon as
any byte arrives), and the server's socket limits count WebSockets, which exist only once the
headers are complete. :class:`GuardedHttp` adds both guards an open server needs:

- **A deadline for the headers.** Every request's headers (the first on a connection, and each
  later one on a kept-alive connection from its first byte) must be complete within
  :data:`HEADER_SECONDS`; else the client gets a ``408`` naming the deadline and the
  connection closes.
- **Few unfinished requests per address.** An address may have at most
  :data:`UNFINISHED_PER_ADDRESS` connections whose request headers are not complete; one more is
  closed at once (a browser opens six at most, and completes each in a round trip). Counted per
  process, by the peer's address: behind a trusted proxy that is the proxy, which sends only
  whole requests.

- **Few open connections per address.** An address may hold at most
  :data:`OPEN_PER_ADDRESS` HTTP connections open at once, whatever phase their request is in
  (a slow body held a file for its whole 30 s deadline, and nothing counted it); one more is
  closed at once. A connection stops counting when it closes or becomes a WebSocket (the
  sockets have their own caps). Counted per process, by the peer's address; a proxy the server
  trusts (``nertz serve --trust-proxy``) is not counted: its connections carry everyone's.

Both caps hold per address as the limits key it (an IPv6 client by its /64) and, at
:data:`~nertz.server.limits.SITE_SHARE` times the cap, per IPv6 /48.

- **Errors in JSON.** A request the parser refuses gets a ``400`` whose JSON body names what
  was wrong, like every other error of the API (uvicorn answers in plain text). That holds
  for a body the parser refuses too (a chunked body's framing broken): its request is the
  app's by then, and uvicorn closed the connection unanswered; the app's own answer, if it
  makes one, is dropped (it could only say the body was cut short).

- **A cap on the headers' size.** A request whose headers run past :data:`HEADER_BYTES`
  unfinished gets a ``431`` naming the cap and the connection closes: the parser joins the
  pieces of a long header in time that grows with the square of its length, on the event loop
  (one 57 MB header held every table of the process for seconds), and the deadline's timer
  cannot fire while it runs.

A slow request *body* is the app's to bound (:func:`nertz.server.edge.app.read_body`).
"""

from __future__ import annotations

import asyncio
import weakref
from collections import Counter
from typing import Final

import httptools
import msgspec
from uvicorn.config import Config
from uvicorn.middleware.proxy_headers import _TrustedHosts
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from nertz.server.limits import address_key, count_in, room_for, uncount_in

HEADER_SECONDS: Final = 10.0
"""Time a request's headers have to arrive in full, from the connection's opening (or the
request's first byte, on a kept-alive connection)."""

UNFINISHED_PER_ADDRESS: Final = 32
"""Connections one address may hold open with a request's headers still coming."""

OPEN_PER_ADDRESS: Final = 256
"""HTTP connections one address may hold open at once: a browser keeps six to a server for
each profile (a household or a class behind one address has many), and keeps them a few
seconds after its last request; one address still cannot hold the process's files."""

HEADER_BYTES: Final = 64 * 1024
"""Bytes a request's headers may take (a browser's are a few kilobytes, cookies included); the
check comes between reads, so at most one read (64 KiB) more reaches the parser."""

IMPORT_PATH: Final = "nertz.server.edge.http_protocol:GuardedHttp"
"""How uvicorn's ``http`` setting names this protocol."""

_unfinished: Counter[str] = Counter()
"""This process's connections with headers still coming, by peer address."""

_open: Counter[str] = Counter()
"""This process's open HTTP connections (not yet WebSockets), by peer address."""


def _closing(status: bytes, error: str) -> bytes:
    """A whole JSON error answer that closes the connection."""
    body = msgspec.json.encode({"error": error})
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n"
            + body)


_trusted: weakref.WeakKeyDictionary[Config, _TrustedHosts] = weakref.WeakKeyDictionary()
"""Each server's trusted proxies, parsed once (its networks), not at every connection."""


def _from_trusted_proxy(config: Config, peer: str | None) -> bool:
    """Whether ``peer`` is a proxy the server was told to trust (``--trust-proxy``)."""
    if not config.proxy_headers:
        return False
    hosts = _trusted.get(config)
    if hosts is None:
        hosts = _trusted[config] = _TrustedHosts(config.forwarded_allow_ips)
    return peer in hosts


class GuardedHttp(HttpToolsProtocol):
    """uvicorn's HTTP protocol with a deadline for each request's headers and a cap on the
    unfinished requests of one address (see the module)."""

    _address = "?"
    _deadline: asyncio.TimerHandle | None = None
    _waiting = False
    _header_bytes = 0
    _counted = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """A connection opened: counted against its address, and its first request's headers
        are now awaited."""
        super().connection_made(transport)
        peer = self.client[0] if self.client else None
        self._address = address_key(peer) if peer else "?"
        if not _from_trusted_proxy(self.config, peer):
            if not room_for(_open, self._address, OPEN_PER_ADDRESS):
                self.transport.close()  # nothing asked yet: nothing to answer
                return
            count_in(_open, self._address)
            self._counted = True
        self._await_headers()

    def data_received(self, data: bytes) -> None:
        """uvicorn's, but for an upgrade: the bytes that came after the upgrade request in the
        same read (a client's first frames, sent without waiting for the answer) go on to the
        WebSocket protocol. uvicorn hands it the request alone, and those frames were lost
        without a word (a hello sent that way went unanswered)."""
        if self._waiting:
            if self._header_bytes > HEADER_BYTES:
                self._too_large()
                return
            self._header_bytes += len(data)
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self.logger.warning("Invalid HTTP request received: %s", exc)
            self._take_answer()
            self.send_400_response(f"not a valid HTTP request: {exc}")
        except httptools.HttpParserUpgrade as exc:
            if not self._should_upgrade():
                self._unsupported_upgrade_warning()
                return
            self.handle_websocket_upgrade()
            # The parser stopped where the request ended: what follows is the socket's.
            at = exc.args[0] if exc.args and isinstance(exc.args[0], int) else len(data)
            rest = data[at:]
            protocol = self.transport.get_protocol()
            if protocol is not self:
                self._release()  # a WebSocket now, under the sockets' own caps
                # The parser holds this protocol's bound methods, and this protocol the
                # parser: uvicorn breaks that cycle in connection_lost, which never comes here
                # now (the transport calls the socket's protocol), so every socket left it to
                # the collector.
                self.parser = None  # type: ignore[assignment]
            if rest and protocol is not self and isinstance(protocol, asyncio.Protocol):
                protocol.data_received(rest)

    def send_400_response(self, msg: str) -> None:
        """A request the parser refused: answered in JSON like every other error (uvicorn's
        own answer is plain text), naming what was wrong, and the connection closes."""
        self._refuse(b"400 Bad Request", msg)

    def on_message_begin(self) -> None:
        """A request's first byte: on a kept-alive connection, its headers are now awaited."""
        super().on_message_begin()
        self._await_headers()

    def on_headers_complete(self) -> None:
        """The headers are whole: no deadline from here (the app has the request)."""
        self._headers_in()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection closed, its headers complete or not."""
        self._headers_in()
        self._release()
        super().connection_lost(exc)

    def _take_answer(self) -> None:
        """The parser refused the body of the request the app has (its headers whole, its
        body not, nothing answered yet, no earlier answer still going out): the refusal is
        this protocol's to send, and the app's answer is dropped (its request ends there: it
        reads a disconnect)."""
        cycle = self.cycle
        if (self._waiting or cycle is None or cycle.response_started or not cycle.more_body
                or self.pipeline):
            return
        cycle.disconnected = True
        cycle.response_complete = True  # nothing of the app's goes out after the refusal
        cycle.message_event.set()

    def _release(self) -> None:
        if not self._counted:
            return
        self._counted = False
        uncount_in(_open, self._address)

    def _await_headers(self) -> None:
        if self._waiting or self.transport.is_closing():
            return
        if not room_for(_unfinished, self._address, UNFINISHED_PER_ADDRESS):
            # No request to answer yet: the connection goes before it costs more.
            self.transport.close()
            return
        count_in(_unfinished, self._address)
        self._waiting = True
        self._header_bytes = 0
        self._deadline = self.loop.call_later(HEADER_SECONDS, self._too_slow)

    def _headers_in(self) -> None:
        if not self._waiting:
            return
        self._waiting = False
        uncount_in(_unfinished, self._address)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_large(self) -> None:
        self._refuse(b"431 Request Header Fields Too Large",
                     f"request headers over {HEADER_BYTES} bytes")

    def _too_slow(self) -> None:
        self._deadline = None
        self._refuse(b"408 Request Timeout",
                     f"request headers not complete within {HEADER_SECONDS:g} s")

    def _refuse(self, status: bytes, error: str) -> None:
        """Answer ``status`` with ``error`` and close, the request's headers unfinished."""
        self._headers_in()
        if self.transport.is_closing():
            return
        # A response still going out for an earlier request on this connection is not cut
        # into: the connection simply closes.
        if self.cycle is None or self.cycle.response_complete:
            self.transport.write(_closing(status, error))
        self.transport.close()


def open_from(address: str) -> int:
    """HTTP connections open from ``address`` (this process; WebSockets aside)."""
    return _open[address]


def unfinished(address: str) -> int:
    """Connections from ``address`` with a request's headers still coming (this process)."""
    return _unfinished[address]
