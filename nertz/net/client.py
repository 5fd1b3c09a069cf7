"""A Python client for ``nertz serve``: rooms over HTTP, play over one WebSocket.

The server is the source of truth; a :class:`Client` keeps a *mirror* of what its seat may see
(the ``room``, the ``table`` view, the last round ``result``), rebuilt from the whole ``state``
and kept current by the broadcasts that follow it (``room``, ``table``, ``update``,
``round_over``): an ``update`` replaces the tableaus (by seat) and foundations (by number) it
carries. docs/protocol.md describes every message.

::

    client = await Client.create_room("http://127.0.0.1:8000", "Ann", rules="pagat")
    await client.connect()
    await client.add_bot(level="expert")
    ...
    result = await client.play("N-F")        # a MoveResult: ok, or the server's reason
    print(result.ok, result.error, result.rtt_ms)

Moves carry unique ids; each has a future answered by its ``ack`` or ``rejected`` (or an
``error`` naming the id, such as ``too_fast``). A dropped connection is reopened with
exponential backoff and ``hello`` with ``since`` (the last version seen), so the server replays
what was missed or sends the whole state; moves still unanswered are sent again under the same
ids, which the server answers once and never applies twice. Pings run in the background and
keep the recent round trips (:attr:`Client.rtts`).

Errors the caller should show a person (a bad URL, an unreachable server, a refused join) are
:class:`ClientError`, whose message is one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable, Container, Coroutine
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.frames import Frame, Opcode
from websockets.protocol import Event

from nertz.errors import NertzError
from nertz.net.identity import IdentityFile

log = logging.getLogger("nertz.client")

Message = dict[str, Any]
"""A decoded server message (a JSON object with a ``type``)."""

Identity = str | IdentityFile | bool
"""Who a client says it is when it joins: ``True`` the identity kept for the server in the
default :class:`~nertz.net.identity.IdentityFile` (made a guest and kept there the first time),
an :class:`IdentityFile` of one's own, a token (``str``), or ``False`` for nobody (a new guest
each join)."""

BROADCASTS: Final = frozenset({"state", "caught_up", "room", "table", "update", "round_over"})
"""Messages that carry the room's version ``v``."""

ROOM_MESSAGES: Final = frozenset({"state", "caught_up", "room", "table", "round_over", "kicked"})
"""Messages that may change the room (its phase, players, host, match) or who we are in it:
what a waiter that watches the room needs (:meth:`Client.wait_changed`'s ``kinds``)."""

RTT_SAMPLES: Final = 64
"""Round trips kept (the most recent)."""

_decode: Final = msgspec.json.Decoder(dict[str, Any]).decode
_encode: Final = msgspec.json.Encoder().encode


class ClientError(NertzError):
    """Something the client cannot do: a bad room URL, an unreachable server, a refused request,
    a lost connection that did not come back. The message is one line, for people; ``status``
    is the HTTP status of a refused request (409: the name is taken in that room)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


# --------------------------------------------------------------------------- addresses


@dataclass(frozen=True, slots=True)
class RoomAddress:
    """Where a room lives: the server's base URL (``http://host:port``) and the room's id or
    code (``None`` when only the server was named)."""

    base: str
    key: str | None

    @property
    def ws_base(self) -> str:
        """The WebSocket form of the base URL."""
        parts = urlsplit(self.base)
        scheme = "wss" if parts.scheme == "https" else "ws"
        return urlunsplit((scheme, parts.netloc, parts.path, "", ""))


def parse_room_url(url: str) -> RoomAddress:
    """Read a room's address from any form a person may paste.

    Accepted: the page link ``http://host:port/r/CODE``, the API's ``.../api/rooms/ID`` (or
    ``.../join``), the socket's ``ws://host:port/ws/ID``, or a bare server ``http://host:port``
    (no room). ``host:port/r/CODE`` without a scheme means ``http``. Raises
    :class:`ClientError` naming the problem.

    >>> parse_room_url("http://127.0.0.1:8000/r/ABCD")
    RoomAddress(base='http://127.0.0.1:8000', key='ABCD')
    >>> parse_room_url("ws://example.org/ws/0123abcd").base
    'http://example.org'
    """
    text = url.strip()
    if not text:
        raise ClientError("no room URL given")
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    scheme = {"http": "http", "https": "https", "ws": "http", "wss": "https"}.get(
        parts.scheme.lower()
    )
    if scheme is None:
        raise ClientError(f"not a room URL: {url!r} (expected http://HOST:PORT/r/CODE)")
    if not parts.hostname:
        raise ClientError(f"not a room URL: {url!r} (no host)")
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when asked
    except ValueError:
        raise ClientError(f"not a room URL: {url!r} (bad port)") from None
    segments = [s for s in parts.path.split("/") if s]
    key: str | None = None
    prefix: list[str] = []
    for i, s in enumerate(segments):
        if s in ("r", "ws") and i + 1 < len(segments):
            key, prefix = segments[i + 1], segments[:i]
            break
        if s == "api" and segments[i + 1:i + 2] == ["rooms"] and i + 2 < len(segments):
            key, prefix = segments[i + 2], segments[:i]
            break
    else:
        prefix = segments
        if segments and segments[-1] in ("r", "ws", "api", "rooms"):
            raise ClientError(f"not a room URL: {url!r} (no room code after /{segments[-1]}/)")
    base = urlunsplit((scheme, parts.netloc, "/".join(["", *prefix]), "", ""))
    return RoomAddress(base.rstrip("/"), key)


# --------------------------------------------------------------------------- results


@dataclass(slots=True)
class MoveResult:
    """The server's answer to one move: applied (``ok``), or why not.

    ``error`` is the rejection's reason (or an ``error`` message's text, with its ``code``:
    ``too_fast``, ``no_round``...); ``race`` says who won a lost race. ``rtt_ms`` is the time from
    sending to the answer, on this client's clock.
    """

    id: str
    move: str
    ok: bool
    t: int | None = None
    v: int | None = None
    error: str | None = None
    code: str | None = None
    race: dict[str, Any] | None = None
    rtt_ms: float = 0.0


@dataclass(slots=True)
class _Pending:
    move: str
    future: asyncio.Future[MoveResult]
    sent: float
    hand: int | None = None


@dataclass(slots=True)
class Mirror:
    """What this client knows of the room: the last ``room``, ``table`` (its seat's view, JSON
    as the server sends it) and round ``result``, at version ``v``."""

    v: int | None = None
    room: Message | None = None
    table: Message | None = None
    result: Message | None = None
    countdown_ms: int = 0
    you: Message | None = None
    resets: int = 0
    """Stuck resets seen in the current round (the view itself does not count them)."""
    last_update: Message | None = None
    syncing: bool = False
    """A gap was seen and a ``sync`` sent: broadcasts out of order wait for the catch-up."""
    extra: dict[str, Any] = field(default_factory=dict)


def apply_update(table: Message, update: Message) -> None:
    """Apply one ``update`` message to a table view in place: the tableaus it carries replace
    theirs (by seat), its foundations replace theirs (by number; a new one is added), and the
    round's ``ended``, ``called_by`` and ``t`` follow."""
    tableaus = table["tableaus"]
    for tv in update["tableaus"]:
        tableaus[tv["seat"]] = tv
    foundations = table["foundations"]
    for fv in update["foundations"]:
        i = fv["number"] - 1
        if i < len(foundations):
            foundations[i] = fv
        else:
            while len(foundations) < i:  # never expected: numbers come in order
                foundations.append({"number": len(foundations) + 1, "cards": [], "owners": [],
                                    "finished": False})
            foundations.append(fv)
    table["ended"] = update["ended"]
    table["called_by"] = update["called_by"]
    table["t"] = update["t"]
    table["stuck_flags"] = [bool(tv["stuck"]) for tv in tableaus]


# --------------------------------------------------------------------------- the socket


class _Connection(ClientConnection):
    """The socket, handing each whole text frame to ``on_text`` as it is parsed.

    The library's own way (a message queue that its reader task is woken to take from, one
    message per wake-up) cost the load generator a task step and a queue's get and put for
    every frame of hundreds of sockets on one loop. Frames in pieces, binary frames, and every
    frame after one of those, still go through the queue (read by :meth:`Client._read_forever`
    as before), so messages keep their order.
    """

    on_text: Callable[[bytes], None] | None = None
    _queued = False

    def process_event(self, event: Event) -> None:
        """A whole text frame straight to ``on_text``; anything else as the library does."""
        on_text = self.on_text
        if (on_text is not None and not self._queued and self.response is not None
                and isinstance(event, Frame) and event.opcode is Opcode.TEXT and event.fin):
            data = event.data
            on_text(data if isinstance(data, bytes) else bytes(data))
            return
        if isinstance(event, Frame) and event.opcode in (Opcode.TEXT, Opcode.BINARY,
                                                         Opcode.CONT):
            self._queued = True
        super().process_event(event)


# --------------------------------------------------------------------------- the client


Listener = Callable[[Message], None]
"""Called with every message the client receives, after the mirror has taken it in."""


class Client:
    """One person (or bot) in one room: the token, the socket, the mirror, the moves in flight.

    Build it with :meth:`create_room` or :meth:`join` (or directly, with a token kept from an
    earlier join), then :meth:`connect`. Everything runs on the caller's event loop; one reader
    task per client takes every message in arrival order.
    """

    def __init__(
        self,
        base_url: str,
        room: str,
        token: str,
        *,
        player: str | None = None,
        seat: int | None = None,
        name: str | None = None,
        ping_interval: float | None = 5.0,
        reconnect: bool = True,
        max_backoff: float = 5.0,
        give_up_after: float = 300.0,
        open_timeout: float = 10.0,
        compression: bool = False,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        """``room`` is the room's id (the socket is ``/ws/{room}``). ``ping_interval`` seconds
        between pings (None: none). A dropped connection is retried with backoff from 50 ms up to
        ``max_backoff`` seconds for ``give_up_after`` seconds (the server keeps a seat 5
        minutes). ``open_timeout`` bounds each opening handshake (a browser waits up to 240 s,
        Chromium's limit). ``compression`` asks for per-message deflate."""
        self.address = RoomAddress(base_url.rstrip("/"), room)
        self.room_id = room
        self.token = token
        self.player = player
        self.seat = seat
        self.name = name
        self.ping_interval = ping_interval
        self.reconnect = reconnect
        self.max_backoff = max_backoff
        self.give_up_after = give_up_after
        self.open_timeout = open_timeout
        self.compression = compression
        self.mirror = Mirror()
        self.rtts: deque[float] = deque(maxlen=RTT_SAMPLES)
        """Recent ping round trips in milliseconds, the newest last."""
        self.errors: deque[Message] = deque(maxlen=64)
        """Recent ``error`` messages that named no move (a host command refused, ...)."""
        self.latencies: dict[str, float] = {}
        """Every connected player's last round trip as the server last announced it (ms)."""
        self.reconnects = 0
        """How many times the connection was reopened after a drop."""
        self.kicked = False
        self.closed = False
        self.listeners: list[Listener] = []
        self._http = http
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pinger: asyncio.Task[None] | None = None
        self._pending: dict[str, _Pending] = {}
        self._pings: dict[str, asyncio.Future[float]] = {}
        self._ids = itertools.count(1)
        self._prefix = secrets.token_hex(3)
        self._waiters: list[tuple[asyncio.Future[bool], Container[str] | None]] = []
        """Who waits for the next message (of these kinds; None: any) and its future."""
        self._synced = asyncio.Event()
        self._failure: BaseException | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._gap_started: float | None = None
        """When the connection was lost, until a frame comes again (for ``give_up_after``)."""

    # ------------------------------------------------------------------ joining

    @classmethod
    async def create_room(
        cls,
        server: str,
        name: str,
        rules: str | dict[str, Any] = "pagat",
        seats: int = 4,
        *,
        http: httpx.AsyncClient | None = None,
        identity: Identity = True,
        **options: Any,
    ) -> Client:
        """Create a room on ``server`` and join it as its host under ``name``.

        ``rules`` is a preset name or ``{"preset": ..., OPTION: VALUE}``; ``identity`` says who
        joins (see :data:`Identity`); ``options`` go to the constructor. Raises
        :class:`ClientError` (the server's message when it refuses)."""
        address = parse_room_url(server)
        keep, headers = _identity(identity, address.base)
        data = await _post(http, address.base + "/api/rooms",
                           {"rules": rules, "seats": seats, "name": name}, headers)
        _keep(keep, address.base, data)
        return cls(address.base, data["room"], data["token"], player=data.get("player"),
                   seat=data.get("seat"), name=name, http=http, **options)

    @classmethod
    async def join(
        cls,
        url: str,
        name: str,
        *,
        room: str | None = None,
        spectator: bool = False,
        http: httpx.AsyncClient | None = None,
        identity: Identity = True,
        **options: Any,
    ) -> Client:
        """Join the room at ``url`` (a ``/r/CODE`` link, an API or socket URL, or the server's
        base URL with ``room`` naming the code or id) as ``name``; the server picks the seat.

        Raises :class:`ClientError` for a bad URL, an unreachable server or a refused join."""
        address = parse_room_url(url)
        key = room or address.key
        if key is None:
            raise ClientError(f"no room in {url!r}: give a /r/CODE link or a room code")
        keep, headers = _identity(identity, address.base)
        data = await _post(http, f"{address.base}/api/rooms/{key}/join",
                           {"name": name, "spectator": spectator}, headers)
        _keep(keep, address.base, data)
        return cls(address.base, data["room"], data["token"], player=data.get("player"),
                   seat=data.get("seat"), name=name, http=http, **options)

    # ------------------------------------------------------------------ the connection

    async def connect(self, timeout: float = 10.0) -> None:
        """Open the socket, say hello with the token, and wait until the mirror is current
        (a ``state`` or ``caught_up``). Starts the reader and the pinger."""
        self._synced.clear()
        await self._open(self.mirror.v)
        self._reader = asyncio.get_running_loop().create_task(
            self._read_forever(), name=f"nertz-client-{self.name}")
        if self.ping_interval:
            self._pinger = asyncio.get_running_loop().create_task(self._ping_forever())
        await self._wait_synced(timeout)

    async def _wait_synced(self, timeout: float) -> None:
        waiter = asyncio.ensure_future(self._synced.wait())
        reader = self._reader
        done, _ = await asyncio.wait(
            [waiter] + ([reader] if reader is not None else []), timeout=timeout,
            return_when=asyncio.FIRST_COMPLETED,
        )
        if waiter not in done:
            waiter.cancel()
            if self._failure is not None:
                raise ClientError(str(self._failure))
            raise ClientError(f"no answer to hello within {timeout:g} s")

    async def _open(self, since: int | None) -> None:
        url = f"{self.address.ws_base}/ws/{self.room_id}"
        try:
            ws = await connect(
                url, compression="deflate" if self.compression else None,
                max_size=2**22, open_timeout=self.open_timeout, ping_interval=20,
                ping_timeout=20,
                user_agent_header="nertz-client",
                create_connection=_Connection,
            )
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
            raise ClientError(f"cannot reach {url}: {_why(exc)}") from None
        if isinstance(ws, _Connection):
            ws.on_text = self._frame
        self._ws = ws
        # pings: the server measures our round trip itself (we answer its pings at once), which
        # is what latency-fair races compensate.
        hello: Message = {"type": "hello", "token": self.token, "pings": True}
        if since is not None:
            hello["since"] = since
        await ws.send(_encode(hello).decode())
        # Anything unanswered may or may not have arrived: send it again under the same id.
        for action_id, p in list(self._pending.items()):
            await self._send_play(action_id, p)

    async def close(self) -> None:
        """Close the socket and stop the background tasks; unanswered moves fail."""
        self.closed = True
        for task in (self._pinger, self._reader):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        self._fail_pending(ClientError("the client was closed"))
        self._wake(None)

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def drop_connection(self) -> None:
        """Cut the socket without closing the client, as a network failure would (for tests
        and drills): the client reconnects with ``since``."""
        if self._ws is not None:
            transport = self._ws.transport
            transport.abort()

    def _frame(self, raw: str | bytes) -> None:
        """One text frame: one message or, under load, several, one per line."""
        for line in raw.splitlines():
            self._receive(line)
        self._gap_started = None
        if self.kicked:
            ws = self._ws
            if ws is not None:
                self._spawn(ws.close())  # ends the reader's wait below

    async def _read_forever(self) -> None:
        while not self.closed:
            ws = self._ws
            assert ws is not None
            try:
                # Whole text frames were taken in as they came (_Connection.on_text): this
                # sees only the others, and the end of the connection.
                async for raw in ws:
                    self._frame(raw)
                    if self.kicked:
                        break
            except ConnectionClosed:
                pass
            if self.closed or self.kicked or not self.reconnect:
                break
            # The connection dropped: reopen with backoff and catch up from our version.
            loop = asyncio.get_running_loop()
            if self._gap_started is None:
                self._gap_started = loop.time()
            started_gap = self._gap_started
            delay = 0.05
            while not self.closed:
                await asyncio.sleep(delay)
                try:
                    await self._open(self.mirror.v)
                    self.reconnects += 1
                    break
                except ClientError as exc:
                    if loop.time() - started_gap > self.give_up_after:
                        self._failure = exc
                        self.closed = True
                        break
                    delay = min(self.max_backoff, delay * 2)
        if not self.closed:
            self.closed = True
        self._fail_pending(ClientError("connection closed" + (": kicked" if self.kicked else "")))
        self._wake(None)

    def _fail_pending(self, exc: Exception) -> None:
        for p in self._pending.values():
            if not p.future.done():
                p.future.set_exception(exc)
        self._pending.clear()
        for f in self._pings.values():
            if not f.done():
                f.cancel()
        self._pings.clear()

    # ------------------------------------------------------------------ receiving

    def _receive(self, raw: str | bytes) -> None:
        try:
            msg = _decode(raw)
        except msgspec.DecodeError:
            log.warning("not JSON from the server: %.80r", raw)
            return
        kind = msg.get("type")
        m = self.mirror
        if kind in BROADCASTS:
            v = msg.get("v")
            if kind in ("state", "caught_up"):
                m.syncing = False
            elif m.v is not None and isinstance(v, int):
                if v <= m.v:
                    return  # already seen (a replay overlapping what we had)
                if v != m.v + 1:
                    # A gap: apply nothing and advance nothing until caught up. The server
                    # replays what we missed (this one too) or sends the whole state.
                    if not m.syncing:
                        m.syncing = True
                        self._send_nowait({"type": "sync", "since": m.v})
                    return
            if isinstance(v, int):
                m.v = v
        if kind == "state":
            m.room = msg.get("room")
            m.table = msg.get("table")
            m.result = msg.get("result")
            m.countdown_ms = msg.get("countdown_ms", 0)
            m.you = msg.get("you")
            m.resets = 0
            self._take_you()
            self._synced.set()
        elif kind == "caught_up":
            m.you = msg.get("you")
            self._take_you()
            self._synced.set()
        elif kind == "room":
            m.room = msg["room"]
        elif kind == "table":
            m.room = msg["room"]
            m.table = msg["table"]
            m.result = msg.get("result")
            m.countdown_ms = msg.get("countdown_ms", 0)
            m.resets = 0
            self._take_you()
            if m.table is not None:
                # The broadcast is one for everyone (seat -1, a spectator's view: every seat sees
                # the same face-up cards); the mirror is this seat's view.
                m.table["seat"] = self.seat if self.seat is not None else -1
        elif kind == "update":
            if m.table is not None:
                apply_update(m.table, msg)
            # A reset comes as the referee's RESET or inside the move that made every seat
            # declared (the last seat's STUCK): count the event, whichever move carried it. A
            # bot that missed the second kind judged itself idle across the reset and declared
            # again at once, and two such seats reset each other forever.
            m.resets += sum(1 for e in msg.get("events", ()) if e.get("kind") == "reset")
            m.last_update = msg
        elif kind == "round_over":
            m.result = msg["result"]
            m.room = msg["room"]
        elif kind in ("ack", "rejected"):
            self._answer(msg)
        elif kind == "error":
            if msg.get("id") is not None and msg["id"] in self._pending:
                self._answer(msg)
            else:
                self.errors.append(msg)
                if msg.get("code") in ("bad_token", "signed_out"):
                    # signed_out: the player signed out (or changed the password), which
                    # ended this seat's token; joining again, signed in, takes it back.
                    self._failure = ClientError("the server does not know this token"
                                                if msg["code"] == "bad_token" else
                                                "signed out: this seat's token was ended")
                    self.reconnect = False
                    ws = self._ws
                    if ws is not None:
                        self._spawn(ws.close())
        elif kind == "ping":
            self._send_nowait({"type": "pong", "id": str(msg.get("id"))})
        elif kind == "pong":
            f = self._pings.pop(str(msg.get("id")), None)
            if f is not None and not f.done():
                rtt = time.perf_counter() * 1000 - float(msg.get("sent", 0.0))
                self.rtts.append(rtt)
                f.set_result(rtt)
        elif kind == "latency":
            self.latencies = dict(msg.get("rtt") or {})
        elif kind == "kicked":
            self.kicked = True
        for listener in self.listeners:
            listener(msg)
        if self._waiters:
            self._wake(kind)

    def _wake(self, kind: object) -> None:
        """Answer the waiters for a message of ``kind`` (None: the connection's end, for
        everyone); the others wait on."""
        waiting: list[tuple[asyncio.Future[bool], Container[str] | None]] = []
        for waiter in self._waiters:
            future, kinds = waiter
            if future.done():
                continue  # timed out or cancelled
            if kind is None or kinds is None or kind in kinds:
                future.set_result(True)
            else:
                waiting.append(waiter)
        self._waiters = waiting

    def _take_you(self) -> None:
        you = self.mirror.you
        if you is not None:
            self.player = you.get("player", self.player)
            self.seat = you.get("seat")
        room = self.mirror.room
        if room is not None and self.player is not None:
            for p in room.get("players", ()):
                if p.get("id") == self.player:
                    self.seat = p.get("seat")

    def _answer(self, msg: Message) -> None:
        pending = self._pending.pop(str(msg.get("id")), None)
        if pending is None or pending.future.done():
            return
        rtt = (time.perf_counter() - pending.sent) * 1000
        kind = msg["type"]
        result = MoveResult(
            id=str(msg["id"]),
            move=msg.get("move", pending.move),
            ok=kind == "ack",
            t=msg.get("t"),
            v=msg.get("v"),
            error=msg.get("error") if kind == "rejected" else msg.get("message"),
            code=msg.get("code") if kind == "error" else ("race" if msg.get("race") else None),
            race=msg.get("race"),
            rtt_ms=rtt,
        )
        pending.future.set_result(result)

    # ------------------------------------------------------------------ state for callers

    @property
    def room(self) -> Message | None:
        """The room as last broadcast (players, phase, match standings)."""
        return self.mirror.room

    @property
    def table(self) -> Message | None:
        """This seat's view of the table (JSON as the server sends it), kept current."""
        return self.mirror.table

    @property
    def result(self) -> Message | None:
        """The last round's result, once a round has been scored."""
        return self.mirror.result

    @property
    def version(self) -> int | None:
        """The room version of the last broadcast taken in."""
        return self.mirror.v

    @property
    def phase(self) -> str | None:
        """``lobby``, ``countdown``, ``playing``, ``round_over`` or ``match_over``."""
        room = self.mirror.room
        return None if room is None else room.get("phase")

    @property
    def is_host(self) -> bool:
        """Whether this client's player is the room's host."""
        room = self.mirror.room
        return room is not None and self.player is not None and room.get("host") == self.player

    @property
    def pending(self) -> int:
        """Moves sent and not answered yet."""
        return len(self._pending)

    async def wait_changed(self, timeout: float | None = None,
                           kinds: Container[str] | None = None) -> bool:
        """Wait for the next message (any, or one of ``kinds``: ``room``, ``update``...);
        False on timeout. The end of the connection ends every wait."""
        # A future answered by the reader, not an asyncio.Event under wait_for: hundreds of
        # clients on one loop wait after every message, and wait_for made a task each time.
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()
        waiter = (future, kinds)
        self._waiters.append(waiter)
        if timeout is None:
            return await future
        timer = loop.call_later(timeout, _expire, future)
        try:
            return await future
        finally:
            timer.cancel()
            if not future.done() or future.cancelled() or not future.result():
                # Timed out or cancelled: no longer waiting (a message answered would have
                # taken it off the list already).
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)

    async def wait_for(self, predicate: Callable[[Client], bool], timeout: float = 10.0) -> None:
        """Wait until ``predicate(self)`` holds (checked after every message); raises
        :class:`ClientError` on timeout or when the connection is gone for good."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate(self):
            if self.closed:
                raise ClientError(str(self._failure) if self._failure else "connection closed")
            left = deadline - loop.time()
            if left <= 0 or not await self.wait_changed(left):
                if predicate(self):
                    return
                raise ClientError(f"timed out after {timeout:g} s waiting for the table")

    # ------------------------------------------------------------------ sending

    def _send_nowait(self, message: Message) -> None:
        ws = self._ws
        if ws is None or self.closed:
            return
        self._spawn(self._send_quiet(ws, _encode(message).decode()))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send_quiet(self, ws: ClientConnection, text: str) -> None:
        with contextlib.suppress(ConnectionClosed):
            await ws.send(text)

    async def send(self, message: Message) -> None:
        """Send one raw message (a dict with ``type``). A send on a dropped socket is dropped:
        the reconnect catches the mirror up; moves are resent by :meth:`submit`."""
        if self.closed:
            raise ClientError(str(self._failure) if self._failure else "the client is closed")
        ws = self._ws
        if ws is None:
            raise ClientError("not connected")
        with contextlib.suppress(ConnectionClosed):
            await ws.send(_encode(message).decode())

    def new_id(self) -> str:
        """A fresh action id, unique to this client."""
        return f"{self._prefix}-{next(self._ids)}"

    async def submit(self, move: str, hand: int | None = None,
                     action_id: str | None = None) -> asyncio.Future[MoveResult]:
        """Send ``move`` (SPEC notation) now; returns the future of its :class:`MoveResult`
        (an ``ack``, a ``rejected``, or an ``error`` naming it). A dropped connection resends it
        under the same id after reconnecting."""
        if self.closed:
            raise ClientError(str(self._failure) if self._failure else "the client is closed")
        loop = asyncio.get_running_loop()
        action_id = action_id or self.new_id()
        pending = _Pending(move, loop.create_future(), time.perf_counter(), hand)
        self._pending[action_id] = pending
        await self._send_play(action_id, pending)
        return pending.future

    async def _send_play(self, action_id: str, p: _Pending) -> None:
        msg: Message = {"type": "play", "id": action_id, "move": p.move}
        if p.hand is not None:
            msg["hand"] = p.hand
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(ConnectionClosed):
                await ws.send(_encode(msg).decode())

    async def play(self, move: str, hand: int | None = None,
                   timeout: float | None = 30.0) -> MoveResult:
        """Send ``move`` and wait for its answer (TimeoutError after ``timeout`` seconds)."""
        future = await self.submit(move, hand)
        if timeout is None or future.done():
            return await future
        # A timer on the answer's own future rather than asyncio.wait_for, which wraps it in a
        # waiter and callbacks of its own: this runs once per move of every bot.
        timer = asyncio.get_running_loop().call_later(timeout, _time_out, future)
        try:
            return await future
        finally:
            timer.cancel()

    async def ping(self, timeout: float = 10.0) -> float:
        """One round trip to the server, in milliseconds (also kept in :attr:`rtts`)."""
        loop = asyncio.get_running_loop()
        pid = f"p{next(self._ids)}"
        fut: asyncio.Future[float] = loop.create_future()
        self._pings[pid] = fut
        ping: Message = {"type": "ping", "id": pid, "sent": time.perf_counter() * 1000}
        if self.rtts:
            ping["rtt"] = round(self.rtts[-1], 2)  # shown to the table as our latency
        await self.send(ping)
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            self._pings.pop(pid, None)

    async def _ping_forever(self) -> None:
        assert self.ping_interval is not None
        while not self.closed:
            await asyncio.sleep(self.ping_interval)
            with contextlib.suppress(ClientError, TimeoutError, asyncio.CancelledError):
                await self.ping(timeout=self.ping_interval * 2)

    def rtt_stats(self) -> dict[str, float]:
        """The recent ping round trips: ``last``, ``mean``, ``min``, ``max`` in ms (empty when
        no ping has come back yet)."""
        if not self.rtts:
            return {}
        samples = list(self.rtts)
        return {"last": samples[-1], "mean": sum(samples) / len(samples),
                "min": min(samples), "max": max(samples)}

    async def sync(self) -> None:
        """Ask for everything after our version (or the whole state)."""
        self._synced.clear()
        await self.send({"type": "sync", "since": self.mirror.v})

    # ------------------------------------------------------------------ lobby and host

    async def ready(self, ready: bool = True) -> None:
        """Say this player is ready (shown in the lobby)."""
        await self.send({"type": "ready", "ready": ready})

    async def add_bot(self, seat: int | None = None, bot: str = "greedy",
                      level: str = "skilled") -> None:
        """Host: seat a server-side bot (``seat`` None: the first free one)."""
        await self.send({"type": "add_bot", "seat": seat, "bot": bot, "level": level})

    async def kick(self, player: str) -> None:
        """Host: remove ``player`` (an id from the room's ``players``)."""
        await self.send({"type": "kick", "player": player})

    async def assign(self, player: str, seat: int | None, hand: int = 0) -> None:
        """Host: move ``player`` to ``seat`` (None: spectator), between matches."""
        await self.send({"type": "assign", "player": player, "seat": seat, "hand": hand})

    async def start(self, countdown_ms: int = 3000) -> None:
        """Host: start the match once every seat is filled."""
        await self.send({"type": "start", "countdown_ms": countdown_ms})

    async def next_round(self) -> None:
        """Host: deal the next round after a round's results."""
        await self.send({"type": "next_round"})

    async def rematch(self) -> None:
        """Host: a new match with the same seats, after one ends."""
        await self.send({"type": "rematch"})

    async def bot_seat(self, seat: int, bot: str = "greedy", level: str = "skilled") -> None:
        """Host: hand a vacant seat to a bot, even mid-match."""
        await self.send({"type": "bot_seat", "seat": seat, "bot": bot, "level": level})


def _expire(future: asyncio.Future[bool]) -> None:
    """A wait's timeout: no message came."""
    if not future.done():
        future.set_result(False)


def _time_out(future: asyncio.Future[MoveResult]) -> None:
    """A move's timeout: no answer came (a later one is ignored, as before)."""
    if not future.done():
        future.set_exception(TimeoutError())


# --------------------------------------------------------------------------- HTTP


def _identity(identity: Identity, base: str) -> tuple[IdentityFile | None, dict[str, str]]:
    """Where to keep a new identity, and the headers that say who joins."""
    keep: IdentityFile | None = None
    token: str | None = None
    if isinstance(identity, str):
        token = identity
    elif isinstance(identity, IdentityFile):
        keep = identity
    elif identity:
        keep = IdentityFile()
    if keep is not None:
        token = keep.get(base)
    return keep, {"authorization": f"Bearer {token}"} if token else {}


def _keep(keep: IdentityFile | None, base: str, data: Message) -> None:
    """Keep the identity the server made us (a new guest), if we keep identities."""
    token = data.get("identity")
    if keep is not None and isinstance(token, str):
        try:
            keep.put(base, token)
        except OSError as exc:  # the join stands; the next one is a new guest
            log.warning("could not keep the identity in %s: %s", keep.path, exc)


async def _post(http: httpx.AsyncClient | None, url: str, body: dict[str, Any],
                headers: dict[str, str] | None = None) -> Message:
    return await _request(http, "POST", url, body, headers)


async def get_room(url: str, *, http: httpx.AsyncClient | None = None) -> Message:
    """The room at ``url`` as everyone sees it (``GET /api/rooms/{key}``)."""
    address = parse_room_url(url)
    if address.key is None:
        raise ClientError(f"no room in {url!r}")
    return await _request(http, "GET", f"{address.base}/api/rooms/{address.key}", None)


async def _request(http: httpx.AsyncClient | None, method: str, url: str,
                   body: dict[str, Any] | None, headers: dict[str, str] | None = None
                   ) -> Message:
    async def go(h: httpx.AsyncClient) -> httpx.Response:
        return await h.request(method, url, content=None if body is None else _encode(body),
                               headers={"content-type": "application/json", **(headers or {})})

    try:
        if http is not None:
            resp = await go(http)
        else:
            async with httpx.AsyncClient(timeout=10.0) as h:
                resp = await go(h)
    except httpx.HTTPError as exc:
        raise ClientError(f"cannot reach {url}: {_why(exc)}") from None
    try:
        data = _decode(resp.content)
    except msgspec.DecodeError:
        raise ClientError(f"{method} {url}: HTTP {resp.status_code}, not a nertz server "
                          "(the answer is not JSON)") from None
    if resp.status_code >= 400:
        raise ClientError(f"{method} {url}: {data.get('error', resp.status_code)}",
                          resp.status_code)
    return data


def _why(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())[:200]


__all__ = [
    "ROOM_MESSAGES",
    "Client",
    "ClientError",
    "Identity",
    "Message",
    "Mirror",
    "MoveResult",
    "RoomAddress",
    "apply_update",
    "get_room",
    "parse_room_url",
]
