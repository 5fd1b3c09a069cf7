"""The web application: HTTP API, the WebSocket, the page. ``create_app()`` builds it.

HTTP (JSON in and out; every error is ``{"error": message}`` with a 4xx status):

- ``GET /healthz`` -> ``{"status": "ok"}``
- ``GET /api/presets`` -> every preset with its summary and options
- ``POST /api/rooms`` ``{"rules": PRESET or {"preset": ..., OPTION: VALUE}, "seats": N,
  "name": optional}`` -> ``{"room": ID, "code": CODE, "url": ...}`` (+ ``player`` and ``token``
  when a name was given: the creator joins as host)
- ``GET /api/rooms/{id or code}`` -> the room as everyone sees it
- ``POST /api/rooms/{id or code}/join`` ``{"name": ..., "spectator": false}`` ->
  ``{"room", "player", "token", "seat", "hand", "host"}``
- ``GET /api/matches/{id}/replay`` -> the finished match as a SPEC replay file
- ``GET /api/matches/{id}/analysis`` -> what the match teaches each seat (:mod:`nertz.analysis`)
- ``POST /api/matches/{id}/same_deal`` ``{"name": optional}`` -> a new room (as ``POST
  /api/rooms`` answers) whose first match deals that finished match's cards again

WebSocket ``/ws/{room id}``: see docs/protocol.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import math
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Final, TypeVar
from urllib.parse import urlsplit

import msgspec
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import ClientDisconnect
from starlette.routing import Match, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nertz import replay
from nertz.analysis import analyse
from nertz.errors import ReplayError, RulesError
from nertz.rules import OPTIONS, PRESET_SOURCES, PRESET_SUMMARIES, PRESETS, Rules
from nertz.server import protocol
from nertz.server.cluster.remote import RemoteSocket
from nertz.server.edge.connection import Connection
from nertz.server.edge.echo import shown
from nertz.server.edge.latency import KERNEL_RTT, PING_INTERVAL, Prober, kernel_rtt_ms
from nertz.server.edge.made_once import MadeOnce
from nertz.server.edge.socket_protocol import HANDOVER, HandedIn, SocketProtocol
from nertz.server.hub import ROOM_IDLE_SECONDS, Hub, OwnedElsewhere
from nertz.server.limits import (
    HeldWhile,
    InFlight,
    Limits,
    MemoryLimits,
    Rate,
    SocketCaps,
    TokenBucket,
    client_address,
    give_back_memory,
)
from nertz.server.live import LiveRoom
from nertz.server.openapi import ROUTES as API
from nertz.server.players import PlayersApi
from nertz.server.players.identity import Profile, token_from
from nertz.server.players.listing import ListingRefused
from nertz.server.room.entries import UnknownEntry
from nertz.server.room.lobby import Player
from nertz.server.room.messages import CommandError, Error, Kicked, Stamp
from nertz.server.room.phase import Phase
from nertz.server.room.races import wall_ms
from nertz.server.store import Store, StoreBusy, is_busy
from nertz.server.tutorial import lesson

log = logging.getLogger("nertz.app")

T = TypeVar("T")

WEB = Path(__file__).resolve().parents[2] / "web"
"""The page's files (served as they are: no build step)."""

MAX_REPLAY_BYTES = 2 * 1024 * 1024
"""The largest replay file the viewer accepts for upload (a long match of real play is a few
hundred kilobytes)."""

MAX_REPLAY_MOVES = 25_000
"""The most moves an uploaded replay may hold, all rounds together: the viewer's frames grow
with every move, and making them is real work."""

MAX_REPLAY_ROUNDS = 200
"""The most rounds an uploaded replay may hold: each round costs its deal and a whole table's
frames however few its moves (an upload of 20,000 empty rounds took 24 s and 700 MB); a match
to 500 points takes a few dozen."""

UPLOADS_PER_MINUTE = 20
"""Replay files one client address may upload a minute, both upload routes together (after a
first burst of as many): each is up to 2 MiB to read and up to a second of the replay
thread's time (the page uploads a file once, and its analysis once more if asked)."""

UPLOADS = Rate("replay_uploads", UPLOADS_PER_MINUTE)

UPLOADS_AT_ONCE = 1
"""Replay uploads one client address may have under way at once (per process), from the
first byte of the body to the answer: a burst from one address waits its turn at the client,
not in the server's memory nor ahead of everyone else's uploads."""

REPLAY_WORK_PER_ADDRESS = 4
"""Replays (uploaded, or finished matches' frames and analyses) one client address may have
waiting for the replay thread or on it at once (per process): one address cannot fill the
line. A table's players fetching their match's analysis at once take one place: it is made
once and shared (:data:`MATCH_ANSWERS_KEPT`)."""

MATCH_ANSWERS_KEPT = 64
"""Finished matches' frames and analyses kept made (per process), the most recently asked for:
a finished match never changes, and its players' pages ask for its analysis all at once."""

MATCH_ANSWERS_BYTES = 32 * 1024 * 1024
"""At most this many bytes of them kept (a nine-round match's frames are some 650 KB)."""

REPLAY_WORK_WAITING = 16
"""Replays that may wait for the replay thread or be on it at once (per process), from every
address: one more is refused with a 503 rather than queued, so the wait stays bounded (each
takes up to a second)."""

HELLO_TIMEOUT = 10.0
"""Seconds a new socket has to say hello (from its opening: other frames do not extend it). A
client says it at once; a socket that does not holds a file and memory for nothing."""

MESSAGES_PER_SECOND = 20.0
"""Messages of every kind one socket may send a second, on average (bursts up to
:data:`MESSAGE_BURST`). Moves have their own, human-speed limit at the table; this one keeps a
socket from making the server build state, log or broadcast without end."""

MESSAGE_BURST = 40.0

SYNCS_PER_SECOND = 1.0
"""Full catch-ups (``sync``) one socket gets a second, after a burst of :data:`SYNC_BURST`:
each may answer with the whole table (kilobytes), and a socket that asks for them and never
reads would pile them up in the server's memory. One asked for beyond them is held until its
turn (a later one replaces it), not refused: the client waits for it."""

SYNC_BURST = 3.0
"""Messages one socket may send at once before :data:`MESSAGES_PER_SECOND` applies."""

ROOMS_PER_MINUTE = 20
"""Rooms one client address may create a minute (after a first burst of as many): rooms live
in the database and in memory, so nobody may make them without end. ``nertz serve
--rooms-per-minute`` changes it (0: no limit, for load tests from one address)."""

MAX_SOCKETS_PER_PLAYER = 8
"""Sockets one player may hold open in a room (tabs, a phone and a laptop); every broadcast
goes to each, so more are refused."""

SOCKETS_PER_ADDRESS = 100
"""Sockets one client address may hold open at once (a household or a classroom behind one
address fits); more are refused at the handshake. ``nertz serve --sockets-per-address``."""

MAX_SOCKETS = 4000
"""Sockets the server holds open at once, from everyone (each is a file and a few kilobytes);
more are refused at the handshake. ``nertz serve --max-sockets``."""

BAD_TOKENS_PER_MINUTE = 10
"""Hellos with an unknown token one address may send a minute (after a burst of as many)."""

BAD_TOKENS = Rate("bad_tokens", BAD_TOKENS_PER_MINUTE)

KICK_BAR_SECONDS = 600.0
"""How long a kicked player's address, name and player identity may not join the room
again."""

PEOPLE_PER_ADDRESS = 16
"""People one client address may bring into one room (a household, a small class behind one
address fits): more joins from it are refused, so that one address cannot fill a public room
and keep everyone else out."""

BOT_ROOMS_PER_ADDRESS = 3
"""Rooms with only bots at play one client address may have playing at once (in the whole
service, when the limits are shared): a host who watches bots play (seated elsewhere or not at
all) costs the server the bots' CPU for no person at the table. A room counts while a round is
counted down or played and every seated player is a bot or a person with no socket open; its
host's ``start``, ``rematch``, ``next_round`` or ``bot_seat`` that would make one more is
refused (``too_many_bot_rooms``)."""

BOT_ROOMS_SWEEP_SECONDS = 5.0
"""How often the process that owns a room of bots alone looks whether it still counts (its
round over, a person seated and connected, the room gone or moved): a room that stopped
counts for other processes no longer than this (its own process looks again at once)."""


JOINING: Final = "joining "
"""How a join in progress holds its address's place in ``LiveRoom.joined_from``."""


class CreateRoom(msgspec.Struct, forbid_unknown_fields=True):
    """Body of ``POST /api/rooms``."""

    rules: str | dict[str, Any] = "pagat"
    seats: int = 4
    name: str | None = None
    fair_races: bool | None = None
    public: bool = False
    """Latency-fair races on or off; null: on while a person is seated (docs/protocol.md)."""


class SameDeal(msgspec.Struct, forbid_unknown_fields=True):
    """Body of ``POST /api/matches/{id}/same_deal``."""

    name: str | None = None


class JoinRoom(msgspec.Struct, forbid_unknown_fields=True):
    """Body of ``POST /api/rooms/{id}/join``."""

    name: str
    spectator: bool = False


class ApiError(Exception):
    """An HTTP error with a message for people."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def _error(code: str, message: str, action_id: str | None = None) -> bytes:
    return protocol.encode(Error(code, message, action_id))


_AT_PLAY: Final = (Phase.COUNTDOWN, Phase.PLAYING)
"""A table's phases in which its bots play (or are about to)."""


BODY_SECONDS: Final = 30.0
"""Time a request's body has to arrive in full (its headers have their own deadline,
:mod:`nertz.server.edge.http_protocol`)."""

PROXY_RTT_HEADER: Final = "x-tcp-rtt"
"""A trusted proxy's round trip to the client, in microseconds (nginx: ``$tcpinfo_rtt``)."""


def network_reader(ws: WebSocket, proto: SocketProtocol | None
                   ) -> Callable[[], float | None] | None:
    """How the server reads the network's round trip for a socket (ms; the Prober's
    ``network``, :mod:`nertz.server.edge.latency`), or None where it cannot look under the
    socket at all (not one of its own, or no ``TCP_INFO`` on this system: no bound)."""
    if proto is None or proto.transport is None:
        return None
    peer = proto.transport.get_extra_info("peername")
    client = ws.client.host if ws.client else None
    if isinstance(peer, tuple) and peer and peer[0] == client:
        sock = proto.transport.get_extra_info("socket")
        if sock is None or not KERNEL_RTT:
            return None
        return lambda: kernel_rtt_ms(sock)
    # A trusted proxy named the client (it differs from the peer): the kernel sees only the
    # proxy, so the proxy's figure for the client's connection, read once; without one, 0
    # (the bound is the slack alone: nothing to gain by holding pongs back).
    said = ws.headers.get(PROXY_RTT_HEADER, "")
    figure = int(said) / 1000 if said.isdigit() and len(said) <= 9 else 0.0
    return lambda: figure


class NetworkReading:
    """A socket's network round trip for the frames piped to its room's owner: read again at
    most every :data:`READ_EVERY` seconds, not for every frame (a system call on the moves'
    road, where the pings it bounds come only every few seconds)."""

    READ_EVERY: Final = 0.5

    def __init__(self, read: Callable[[], float | None] | None) -> None:
        self.read = read
        self.value: float | None = None
        self.at = -math.inf

    def now(self) -> float | None:
        """The latest reading (None: the server cannot tell)."""
        if self.read is None:
            return None
        clock = time.monotonic()
        if clock - self.at >= self.READ_EVERY:
            self.value, self.at = self.read(), clock
        return self.value


async def read_body(request: Request, limit: int, what: str = "request body") -> bytes:
    """The request's body, refused with 413 as soon as it passes ``limit`` bytes: by its
    declared length before a byte is read, else while it streams in (never read whole first)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise ApiError(413, f"{what} too large (at most {limit} bytes)")
    chunks: list[bytes] = []
    size = 0
    try:
        # A body trickled in a byte at a time would hold the connection without end.
        async with asyncio.timeout(BODY_SECONDS):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise ApiError(413, f"{what} too large (at most {limit} bytes)")
                chunks.append(chunk)
    except TimeoutError:
        raise ApiError(408, f"{what} not complete within {BODY_SECONDS:g} s") from None
    except ClientDisconnect:
        # The client hung up before its body was whole: nobody is left to answer, and it is
        # no fault of the server's (no traceback in the log).
        raise ApiError(400, f"{what} cut short: the client hung up") from None
    return b"".join(chunks)


async def read_json(request: Request, kind: type[Any], limit: int) -> Any:
    """The request's JSON body (none: ``{}``) as ``kind``; a 400 naming what is wrong, a 413
    past ``limit`` bytes (:func:`read_body`)."""
    raw = await read_body(request, limit)
    try:
        return msgspec.json.decode(raw or b"{}", type=kind)
    except msgspec.ValidationError as exc:
        raise ApiError(400, f"bad request: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ApiError(400, protocol.not_json(exc, raw or b"")) from None
    except RecursionError:
        # A body under the size cap can still nest deeper than the decoder's stack.
        raise ApiError(400, "not JSON: nested too deeply") from None


SECURITY_HEADERS: Final = {
    # The page loads only its own scripts, styles and generated SVG; nobody may frame it.
    "content-security-policy": "default-src 'self'; img-src 'self' data:; "
                               "connect-src 'self' ws: wss:; frame-ancestors 'none'; "
                               "base-uri 'none'; form-action 'self'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}
"""Sent with every HTTP answer."""

_HEADER_BYTES: Final = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every HTTP answer (sockets pass)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, adding the headers as the answer starts."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *_HEADER_BYTES]
            await send(message)

        await self.app(scope, receive, send_with_headers)


SocketEndpoint = Callable[[Scope, Receive, Send], Awaitable[None]]
"""A plain ASGI WebSocket handler: the scope (with ``path_params``), receive, send."""


async def refuse_socket(scope: Scope, receive: Receive, send: Send, message: str, status: int,
                        retry: bool = True) -> None:
    """Refuse a WebSocket at its handshake with ``status`` and ``{"error": message}``, as the
    HTTP routes refuse (``Retry-After: 10`` when ``retry``); a server without ASGI's denial
    response gets a close frame instead (1013 if ``retry``, else 1008) with the reason."""
    ws = WebSocket(scope, receive, send)
    if "websocket.http.response" in scope.get("extensions", {}):
        await ws.send_denial_response(JSONResponse(
            {"error": message}, status_code=status,
            headers={"Retry-After": "10"} if retry else None))
    else:
        await ws.close(code=1013 if retry else 1008, reason=message[:120])


class SocketRoute:
    """ASGI middleware: WebSocket connections to ``path`` go straight to ``endpoint``, with the
    server's own ``receive`` and ``send``; everything else goes on to the app.

    A socket's frames pass through whatever lies between the server and its handler, each
    frame: under the framework's routing that is its exception handlers' send hook and its
    WebSocket object's state checks, a few coroutine calls a frame for nothing once the socket
    is open (about four frames go out and one comes in per move). The path is matched by
    Starlette's own route (the same parameters and conversions as ``@app.websocket``)."""

    def __init__(self, app: ASGIApp, path: str, endpoint: SocketEndpoint) -> None:
        self.app = app
        self.endpoint = endpoint
        self.route = WebSocketRoute(path, endpoint)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The socket's handler for a WebSocket to the path; the app for anything else."""
        if scope["type"] == "websocket":
            match, child = self.route.matches(scope)
            if match is Match.FULL:
                await self.endpoint({**scope, **child}, receive, send)
                return
        await self.app(scope, receive, send)


PAGE_CACHE: Final = "no-cache"
"""The page's files are not fingerprinted: a browser keeps them but asks again each load
(answered ``304 Not Modified`` by their ETag), so a new version is never mixed with an old."""


class PageFiles(StaticFiles):
    """The page's own files (``/static``), sent with :data:`PAGE_CACHE`."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        """The file's answer (ETag and Last-Modified from Starlette), told how to cache."""
        response = super().file_response(*args, **kwargs)
        response.headers["cache-control"] = PAGE_CACHE
        return response


def origin_allowed(origin: str | None, host: str | None, allowed: tuple[str, ...]) -> bool:
    """A browser's socket must come from our own page (or a configured origin); programs that
    send no Origin (the Python client, bots) are let in and identified by their token."""
    if origin is None:
        return True
    if origin in allowed:
        return True
    parts = urlsplit(origin)
    return bool(host) and parts.netloc.lower() == (host or "").lower()


def create_app(
    db_url: str | None = None,
    allowed_origins: tuple[str, ...] = (),
    start_bots: bool = True,
    deal_seed: int | None = None,
    rooms_per_minute: int = ROOMS_PER_MINUTE,
    sockets_per_address: int = SOCKETS_PER_ADDRESS,
    max_sockets: int = MAX_SOCKETS,
    room_idle_seconds: float = ROOM_IDLE_SECONDS,
    redis_url: str | None = None,
    limits: Limits | None = None,
    ping_interval: float = PING_INTERVAL,
    redis_prefix: str | None = None,
    handoff: bool = True,
    trusted_proxies: tuple[str, ...] = (),
) -> FastAPI:
    """The application; storage opens (and migrates) at start-up and every live room returns.

    ``deal_seed`` makes every room's n-th match deal the same cards: for tests and demos only,
    as anyone who knows the seed knows every card. ``rooms_per_minute`` limits room creation
    per client address, ``sockets_per_address`` and ``max_sockets`` the sockets open at once
    (0: no limit); a room with nobody connected for ``room_idle_seconds`` closes; sockets that
    ask for pings get one every ``ping_interval`` seconds (their round trip). The client
    address is the peer's: the server in front (``nertz serve``)
    rewrites it from forwarded headers only for the proxies it was told to trust.

    The limits that hold for the whole service (rooms and unknown tokens per address, sockets
    per address and per player, rooms of bots alone per address, kick bars) are ``limits`` if
    given, else kept in Redis at ``redis_url`` (shared by every process given it), else in this
    process's memory.
    ``max_sockets`` guards this process's own files, so it is counted here either way.

    With ``redis_url`` the app is also one process of a service of many (``nertz serve
    --workers``, :mod:`nertz.server.cluster`): it owns the rooms whose leases it holds, and
    pipes the sockets and relays the requests of other rooms to their owners over Redis
    (``redis_prefix`` keeps services sharing one Redis apart). With ``handoff``, a socket for
    a room owned by another process of this machine goes to that process whole
    (:mod:`nertz.server.cluster.handoff`), served there under uvicorn's settings for
    ``trusted_proxies`` (:func:`nertz.server.serve.server_config`); it is relayed otherwise."""
    state: dict[str, Any] = {}
    sockets = SocketCaps(0, max_sockets)
    if limits is None:
        if redis_url is not None:
            from nertz.server.cluster.limits import RedisLimits

            limits = RedisLimits(redis_url, redis_prefix or "nertz:")
        else:
            limits = MemoryLimits()
    shared: Limits = limits
    new_rooms = Rate("rooms", rooms_per_minute)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await shared.start()
        store = await Store.open(db_url)
        node = None
        if redis_url is not None:
            from nertz.server.cluster import DEFAULT_PREFIX, Node

            try:
                node = await Node.connect(redis_url, redis_prefix or DEFAULT_PREFIX)
            except BaseException:
                await store.close()
                await shared.close()
                raise
            node.on_socket = _remote_socket
            node.relay.calls.update({"info": _call_info, "join": _call_join,
                                     "create": _call_create, "end_seats": _call_end_seats})
            state["node"] = node
            if handoff:
                from nertz.server.cluster.handoff import Handoff

                door = Handoff(node.prefix, node.process, handed_in.take)
                if door.start():
                    state["handoff"] = door
        hub = Hub(store, start_bots=start_bots, deal_seed=deal_seed,
                  idle_seconds=room_idle_seconds, node=node)
        restored = await hub.restore_all()
        log.info("nertz: %d rooms restored", restored)
        # Everything alive now (imports, the restored rooms) stays alive: keep the collector
        # from walking it again and again. The start's own garbage goes first, or it stays
        # frozen until a deep collection: the store's migrations leave objects in cycles
        # (2,700 on a fresh database, 300 on one already up to date).
        gc.collect()
        gc.freeze()
        state["hub"] = hub
        app.state.hub = hub
        bot_rooms.start(BOT_ROOMS_SWEEP_SECONDS)
        state["players"] = app.state.players = PlayersApi(hub, shared, rooms=new_rooms)
        state["players"].room_info_elsewhere = (
            lambda exc: _relayed(exc, "info", {"room": exc.room_id}))
        state["players"].end_seats_in = _end_seats
        try:
            yield
        finally:
            if "handoff" in state:
                state.pop("handoff").close()
            handed_in.shutdown()
            await bot_rooms.close()
            await hub.close()
            if node is not None:
                await node.close()
            await store.close()
            await shared.close()

    app = FastAPI(title="nertz", lifespan=lifespan, docs_url=None, redoc_url=None)

    def _socket_config() -> Any:
        from nertz.server.serve import server_config

        # No logging set-up: the server's own is in place.
        return server_config(app, "127.0.0.1", 0, trusted_proxies, log_config=None)

    handed_in = HandedIn(_socket_config)
    app.add_middleware(SecurityHeaders)
    app.state.sockets = sockets
    app.state.limits = shared

    def hub() -> Hub:
        return state["hub"]  # type: ignore[no-any-return]

    def players() -> PlayersApi:
        return state["players"]  # type: ignore[no-any-return]

    @app.exception_handler(ApiError)
    async def api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(StoreBusy)
    async def store_busy(_request: Request, exc: StoreBusy) -> JSONResponse:
        # Overload is not a fault: say so, and when to come back (never a 500).
        log.warning("answered 503: %s", exc)
        return JSONResponse({"error": f"the server is busy: try again in {exc.retry_after} s"},
                            status_code=503, headers={"Retry-After": str(exc.retry_after)})

    @app.exception_handler(sa_exc.TimeoutError)
    @app.exception_handler(sa_exc.OperationalError)
    async def database_busy(request: Request, exc: Exception) -> JSONResponse:
        # Queries made on the engine directly, not through the store (which says StoreBusy):
        # an exhausted pool or a locked SQLite is overload too; anything else is a fault.
        if is_busy(exc):
            return await store_busy(request, StoreBusy(str(exc)))
        log.error("database error on %s %s", request.method, request.url.path, exc_info=exc)
        return JSONResponse({"error": "internal error: the database refused the request"},
                            status_code=500)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # The framework's own answers (no such path, a method not allowed) in the API's shape.
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code,
                            headers=exc.headers)

    async def body(request: Request, kind: type[Any]) -> Any:
        return await read_json(request, kind, protocol.MAX_MESSAGE_BYTES)

    async def find_room(key: str) -> LiveRoom | None:
        """The room, rebuilt if need be; a room that cannot be rebuilt is a 503, not a crash.
        Raises :class:`OwnedElsewhere` for a room another process owns."""
        if len(key) > 32:
            return None
        try:
            return await hub().get(key)
        except (StoreBusy, OwnedElsewhere):
            raise
        except UnknownEntry:
            # Logged once by the hub; the room is left to a newer process, which a client
            # trying again may reach (or which takes it over within a second or two).
            raise ApiError(503, f"room {shown(key, 'room id or code')} was written by a newer "
                                "version of the server than this one: try again in a moment",
                           {"Retry-After": "2"}) from None
        except Exception:
            log.exception("room %s could not be loaded", key)
            raise ApiError(503, f"room {shown(key, 'room id or code')} is unavailable") from None

    async def room_or_404(key: str) -> LiveRoom:
        room = await find_room(key)
        if room is None:
            if len(key) <= 32 and await hub().closed_info(key) is not None:
                raise ApiError(410, f"room {shown(key, 'room id or code')} has closed (nobody "
                                    "was in it); its finished matches stay downloadable")
            raise ApiError(404, f"no room {shown(key, 'room id or code')}")
        return room

    def room_url(request: Request, code: str) -> str:
        return str(request.base_url).rstrip("/") + f"/r/{code}"

    @app.get("/healthz", **API["healthz"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/presets", **API["presets"])
    async def presets() -> dict[str, Any]:
        return {
            "presets": [
                {"name": name, "source": PRESET_SOURCES[name], "summary": PRESET_SUMMARIES[name],
                 "options": rules.to_options()}
                for name, rules in PRESETS.items()
            ],
            "options": [
                {"name": o.name, "default": o.default, "describe": o.describe(),
                 "source": o.source, "doc": o.doc}
                for o in OPTIONS.values()
            ],
        }

    async def check_room_limit(request: Request) -> None:
        address = client_address(request)
        wait = await shared.take(new_rooms, address)
        if wait:
            raise ApiError(429, f"too many new rooms from one address: at most "
                                f"{rooms_per_minute} a minute; try again in {wait} s",
                           {"Retry-After": str(wait)})

    @app.post("/api/rooms", **API["create_room"])
    async def create_room(request: Request) -> JSONResponse:
        await check_room_limit(request)
        data: CreateRoom = await body(request, CreateRoom)
        try:
            rules = Rules.from_spec(data.rules).check_new()
        except RulesError as exc:
            raise ApiError(400, str(exc)) from None
        if not 2 <= data.seats <= 8:
            raise ApiError(400, f"seats must be 2 to 8, not {data.seats}")
        spec = {"rules": rules.to_spec(), "seats": data.seats, "fair_races": data.fair_races}
        if not data.public:
            return await _open_room(request, spec, data.name)
        # The count and the listing as one step: public rooms asked for at once all passed
        # the count before any was listed (one process; its peers' at once could still pass).
        async with listing_lock:
            try:
                await players().listing.check(client_address(request))
            except ListingRefused as exc:
                raise ApiError(429, str(exc)) from None
            return await _open_room(request, spec, data.name, True)

    listing_lock = asyncio.Lock()

    async def _open_room(request: Request, spec: dict[str, Any], name: str | None,
                         public: bool = False) -> JSONResponse:
        """A new room (``spec``: see :func:`_create_here`) on the process placement chooses
        (:mod:`nertz.server.cluster.placement`: one process alone makes it itself), listed if
        ``public``, with ``name`` seated in it if given."""
        node = state.get("node")
        owner = await node.place() if node is not None else None
        made: dict[str, Any] | None = None
        if node is not None and owner != node.process:
            from nertz.server.cluster import RelayError

            try:
                made = await node.relay.call(owner, "create", spec)
            except RelayError as exc:
                # It went away (or is too slow) meanwhile: make the room here. A room it made
                # after all stays empty there and closes when idle.
                log.warning("could not create a room on %s (%s): creating it here", owner, exc)
        room: LiveRoom | None = None
        if made is None:
            room = await _create_here(spec)
            room_id, code = room.id, room.table.code
        else:
            room_id, code = made["room"], made["code"]
        if public:
            await players().list_room(room_id, client_address(request))
        out: dict[str, Any] = {"room": room_id, "code": code, "url": room_url(request, code)}
        if name is not None:
            if room is not None:
                out.update(await _join(request, room, name, False, []))
            else:
                assert owner is not None
                out.update(await _join_elsewhere(request, OwnedElsewhere(room_id, owner), name,
                                                 False, []))
        return _with_identity(request, out, 201)

    async def _create_here(spec: dict[str, Any]) -> LiveRoom:
        """Create a room owned by this process: ``spec`` holds its ``rules`` (a rules spec),
        ``seats``, and optionally ``fair_races`` and ``same_deal`` ([match id, seed])."""
        same = spec.get("same_deal")
        return await hub().create(Rules.from_spec(spec["rules"]), spec["seats"],
                                  None if same is None else (same[0], same[1]),
                                  spec.get("fair_races"))

    def _with_identity(request: Request, out: dict[str, Any], status: int) -> JSONResponse:
        response = JSONResponse(out, status_code=status)
        players().set_cookie(request, response, out.get("identity"))
        return response

    async def _join(request: Request, room: LiveRoom, name: str, spectator: bool,
                    reclaim: list[str]) -> dict[str, Any]:
        return await _tie(request, room.id, await _join_table(
            room, name, spectator, client_address(request), reclaim))

    async def _reclaimable(profile: Profile | None, room_id: str) -> list[str]:
        """The people of the room the request's player (``profile``) was seated as (by the
        server's record): a seat whose token their sign-out ended is theirs to take back by
        joining."""
        if profile is None:
            return []
        return await players().identities.seats_in(room_id, profile.id)

    async def _end_seats(room_id: str, people: list[str], why: str) -> None:
        """End these people's seat tokens in the room, here or on its owner (a closed room's
        tokens open nothing); ``why``: ``sign_out`` or ``password``."""
        try:
            room = await find_room(room_id)
        except OwnedElsewhere as exc:
            # An older owner reads only room and people: it says "you signed out" instead.
            await _relayed(exc, "end_seats", {"room": room_id, "people": people, "why": why})
            return
        if room is not None:
            await room.end_seats(people, why)

    async def _call_end_seats(args: dict[str, Any]) -> None:
        from nertz.server.cluster import RelayError

        room = await _owned(args["room"])
        try:
            await room.end_seats(list(args["people"]), str(args.get("why", "sign_out")))
        except CommandError as exc:
            raise RelayError(exc.message, 503) from None

    async def _join_table(room: LiveRoom, name: str, spectator: bool,
                          address: str | None, reclaim: list[str] | None = None
                          ) -> dict[str, Any]:
        """Seat a person at the room's table (this process owns it): the seat and its token.
        ``address``: where the request came from, which may bring at most
        :data:`PEOPLE_PER_ADDRESS` people into the room. ``reclaim``: the people the joining
        player was seated as there (:meth:`LiveRoom.join`)."""
        joined = room.joined_from
        for gone in [pid for pid in joined
                     if pid not in room.table.players and not pid.startswith(JOINING)]:
            del joined[gone]
        # The join's place is held from here, before the join awaits the store: joins sent
        # at once from one address all passed the count before any of them was counted.
        held = f"{JOINING}{secrets.token_hex(8)}"
        if address is not None:
            if sum(a == address for a in joined.values()) >= PEOPLE_PER_ADDRESS:
                raise ApiError(403, f"{PEOPLE_PER_ADDRESS} people have joined this room from "
                                    "your address already: no more may join from it")
            joined[held] = address
        try:
            player, token = await room.join(name, spectator, reclaim or ())
        except CommandError as exc:
            status = {"unavailable": 503, "name_taken": 409}.get(exc.code, 400)
            raise ApiError(status, exc.message) from None
        except protocol.ProtocolError as exc:
            raise ApiError(400, str(exc)) from None
        finally:
            joined.pop(held, None)
        if room.table.broken:
            raise ApiError(503, "the room could not store the join; try again")
        if address is not None:
            joined[player.id] = address
        return {"player": player.id, "token": token, "seat": player.seat, "hand": player.hand,
                "host": player.id == room.table.host, "name": player.name}

    async def _tie(request: Request, room_id: str, out: dict[str, Any]) -> dict[str, Any]:
        """Tie a seat just taken to the request's player (on the process the request reached,
        which may not own the room: the players' records are in the shared database)."""
        name = out.pop("name")
        try:
            # The server decides who joined: the request's identity, or a new guest.
            profile, identity = await players().joined(request, room_id, out["player"], name)
        except Exception:  # the seat stands without a profile (unrated), not a failed join
            log.exception("room %s: could not tie %s to a player", room_id, out["player"])
        else:
            if profile is not None:
                out["profile"] = profile.id
            if identity is not None:
                out["identity"] = identity
        return out

    @app.get("/api/rooms/{key}", **API["get_room"])
    async def get_room(key: str) -> dict[str, Any]:
        try:
            room = await find_room(key)
            if room is None and len(key) <= 32:
                closed = await hub().closed_info(key)
                if closed is not None:
                    return closed
            return (await room_or_404(key)).table.room_info()
        except OwnedElsewhere as exc:
            return await _relayed(exc, "info", {"room": exc.room_id})  # type: ignore[no-any-return]

    @app.post("/api/rooms/{key}/join", **API["join_room"])
    async def join_room(key: str, request: Request) -> JSONResponse:
        room: LiveRoom | None = None
        try:
            room = await room_or_404(key)
            room_id = room.id
        except OwnedElsewhere as exc:
            elsewhere = exc
            room_id = exc.room_id
        data: JoinRoom = await body(request, JoinRoom)
        address = client_address(request)
        profile = await players().identities.find(token_from(request))
        bars = [f"{room_id} address {address}"]
        if profile is not None:
            bars.append(f"{room_id} profile {profile.id}")
        with contextlib.suppress(protocol.ProtocolError):  # a bad name is refused by the join
            bars.append(f"{room_id} name {protocol.name_skeleton(protocol.clean_name(data.name))}")
        wait = max([await shared.barred(key) for key in bars])
        if wait:
            raise ApiError(403, "you were removed from this room by its host: you may join "
                                f"again in {math.ceil(wait / 60)} min",
                           {"Retry-After": str(math.ceil(wait))})
        reclaim = await _reclaimable(profile, room_id)
        if room is not None:
            out = await _join(request, room, data.name, data.spectator, reclaim)
        else:
            out = await _join_elsewhere(request, elsewhere, data.name, data.spectator, reclaim)
        out["room"] = room_id
        return _with_identity(request, out, 200)

    async def _join_elsewhere(request: Request, owned: OwnedElsewhere, name: str,
                              spectator: bool, reclaim: list[str]) -> dict[str, Any]:
        """Another process owns the room: it seats the person; the identity is tied here."""
        seated = await _relayed(owned, "join", {"room": owned.room_id, "name": name,
                                                "spectator": spectator,
                                                "address": client_address(request),
                                                "reclaim": reclaim})
        return await _tie(request, owned.room_id, dict(seated))

    async def _relayed(exc: OwnedElsewhere, op: str, args: dict[str, Any]) -> Any:
        """Ask the room's owner (another process) to answer the request."""
        from nertz.server.cluster import RelayError

        try:
            return await state["node"].relay.call(exc.owner, op, args)
        except RelayError as err:
            raise ApiError(err.status, str(err)) from None

    async def _owned(room_id: str) -> LiveRoom:
        """The room a relayed request is for, which must be owned here."""
        from nertz.server.cluster import RelayError

        try:
            room = await find_room(room_id)
        except OwnedElsewhere:
            raise RelayError("the room moved to another process: try again", 503) from None
        except ApiError as exc:
            raise RelayError(exc.message, exc.status) from None
        if room is None:
            raise RelayError(f"no room {shown(room_id, 'room id')}", 404)
        return room

    async def _call_info(args: dict[str, Any]) -> dict[str, Any]:
        return (await _owned(args["room"])).table.room_info()

    async def _call_create(spec: dict[str, Any]) -> dict[str, Any]:
        room = await _create_here(spec)
        return {"room": room.id, "code": room.table.code}

    async def _call_join(args: dict[str, Any]) -> dict[str, Any]:
        from nertz.server.cluster import RelayError

        room = await _owned(args["room"])
        try:
            return await _join_table(room, args["name"], args["spectator"],
                                     args.get("address"), list(args.get("reclaim") or ()))
        except ApiError as exc:
            raise RelayError(exc.message, exc.status) from None

    @app.get("/api/matches/{match_id}/replay", **API["match_replay"])
    async def match_replay(match_id: str) -> Response:
        replay = await hub().store.get_match(match_id) if len(match_id) <= 32 else None
        if replay is None:
            raise ApiError(404, f"no finished match {shown(match_id, 'match id')}")
        return Response(
            msgspec.json.encode(replay),
            media_type="application/json",
            headers={"Content-Disposition": f'attachment; filename="{match_id}.nertz.json"'},
        )

    @app.get("/api/tutorial", **API["tutorial"])
    async def tutorial() -> Response:
        # One fixed lesson, made once (nertz.server.tutorial).
        return Response(msgspec.json.encode(lesson()), media_type="application/json")

    finished_matches = MadeOnce(MATCH_ANSWERS_KEPT, MATCH_ANSWERS_BYTES)

    @app.get("/api/matches/{match_id}/frames", **API["match_frames"])
    async def match_frames(match_id: str, request: Request) -> Response:
        async def make() -> bytes:
            data = await hub().store.get_match(match_id) if len(match_id) <= 32 else None
            if data is None:
                raise ApiError(404, f"no finished match {shown(match_id, 'match id')}")
            # When it was played, for the viewer's title (ms since the epoch).
            finished = await hub().store.match_finished_at(match_id)
            async with replay_place(client_address(request)):
                return await _frames_made(
                    data, {} if finished is None else {"finished_at": round(finished * 1000)})

        made = await finished_matches.get(("frames", match_id), make)
        return Response(made, media_type="application/json")

    @app.post("/api/matches/{match_id}/same_deal", **API["same_deal"])
    async def same_deal(match_id: str, request: Request) -> JSONResponse:
        stored = await hub().store.get_match(match_id) if len(match_id) <= 32 else None
        if stored is None:
            raise ApiError(404, f"no finished match {shown(match_id, 'match id')}")
        await check_room_limit(request)
        data: SameDeal = await body(request, SameDeal)
        try:
            file = replay.from_json(stored)
        except ReplayError as exc:  # pragma: no cover - stored files are ours
            raise ApiError(500, str(exc)) from None
        if file.seed is None:
            raise ApiError(400, f"match {shown(match_id, 'match id')} has no seed to deal "
                                "from again")
        return await _open_room(request, {"rules": file.rules.to_spec(),
                                          "seats": len(file.players),
                                          "same_deal": [match_id, file.seed]}, data.name)

    @app.get("/api/matches/{match_id}/analysis", **API["match_analysis"])
    async def match_analysis(match_id: str, request: Request) -> Response:
        async def make() -> bytes:
            data = await hub().store.get_match(match_id) if len(match_id) <= 32 else None
            if data is None:
                raise ApiError(404, f"no finished match {shown(match_id, 'match id')}")
            try:
                file = replay.from_json(data)
            except ReplayError as exc:  # pragma: no cover - stored files are ours
                raise ApiError(500, str(exc)) from None
            async with replay_place(client_address(request)):
                return await _analysis_made(file)

        made = await finished_matches.get(("analysis", match_id), make)
        return Response(made, media_type="application/json")

    @app.post("/api/replays/frames", **API["upload_frames"])
    async def upload_frames(request: Request) -> Response:
        async with uploading(request) as raw:
            return await _frames_file(await _uploaded(raw))

    @app.post("/api/replays/analysis", **API["upload_analysis"])
    async def upload_analysis(request: Request) -> Response:
        async with uploading(request) as raw:
            return await _analysis_file(await _uploaded(raw))

    uploads_under_way = InFlight(UPLOADS_AT_ONCE, 0)
    replay_line = InFlight(REPLAY_WORK_PER_ADDRESS, REPLAY_WORK_WAITING)
    app.state.replay_line = replay_line

    @contextlib.asynccontextmanager
    async def uploading(request: Request) -> AsyncIterator[bytes]:
        """An upload's body, read once the address may upload now (:data:`UPLOADS_AT_ONCE`,
        :data:`UPLOADS_PER_MINUTE`), and its place in the replay thread's line
        (:func:`replay_place`) while the work inside runs."""
        address = client_address(request)
        # Counted before the body is read: one address's bodies are not held side by side.
        if uploads_under_way.take(address) is not None:
            raise ApiError(429, "a replay upload from your address is under way already (at "
                                f"most {UPLOADS_AT_ONCE} at once): try again once it is "
                                "answered", {"Retry-After": "1"})
        try:
            wait = await shared.take(UPLOADS, address)
            if wait:
                raise ApiError(429, "too many replay uploads from one address: at most "
                                    f"{UPLOADS_PER_MINUTE} a minute; try again in {wait} s",
                               {"Retry-After": str(wait)})
            raw = await read_body(request, MAX_REPLAY_BYTES, "a replay file")
            async with replay_place(address):
                yield raw
        finally:
            uploads_under_way.give_back(address)

    @contextlib.asynccontextmanager
    async def replay_place(address: str) -> AsyncIterator[None]:
        """A place in the replay thread's line for ``address`` (:data:`REPLAY_WORK_PER_ADDRESS`
        of its own, :data:`REPLAY_WORK_WAITING` in all), held until the answer is made: a
        request refused here costs nothing more, and the line ahead of anyone is short."""
        refused = replay_line.take(address)
        if refused == "key":
            raise ApiError(429, f"{REPLAY_WORK_PER_ADDRESS} replays from your address are "
                                "being played through already: try again once one is "
                                "answered", {"Retry-After": "1"})
        if refused is not None:
            raise ApiError(503, f"the server is busy playing replays through ({REPLAY_WORK_WAITING}"
                                " waiting): try again in a few seconds", {"Retry-After": "5"})
        try:
            yield
        finally:
            replay_line.give_back(address)

    async def _uploaded(raw: bytes) -> replay.ReplayFile:
        # Reading and checking two megabytes is half a second of work: as playing one through.
        file = await _one_at_a_time(lambda: replay.loads(raw))
        if len(file.rounds) > MAX_REPLAY_ROUNDS:
            raise ApiError(413, f"a replay file may hold at most {MAX_REPLAY_ROUNDS} rounds "
                                f"(this one has {len(file.rounds)})")
        moves = sum(len(r.moves) for r in file.rounds)
        if moves > MAX_REPLAY_MOVES:
            raise ApiError(413, f"a replay file may hold at most {MAX_REPLAY_MOVES} moves "
                                f"(this one has {moves})")
        return file

    async def _frames_made(data: dict[str, Any], extra: dict[str, Any]) -> bytes:
        try:
            file = replay.from_json(data)
        except ReplayError as exc:  # pragma: no cover - stored files are ours
            raise ApiError(500, str(exc)) from None
        return await _one_at_a_time(
            lambda: msgspec.json.encode(replay.frames(file) | extra))

    frames_lock = asyncio.Lock()

    async def _frames_file(file: replay.ReplayFile) -> Response:
        return await _played_through(lambda: msgspec.json.encode(replay.frames(file)))

    async def _analysis_made(file: replay.ReplayFile) -> bytes:
        return await _one_at_a_time(lambda: msgspec.json.encode(analyse(file).to_json()))

    async def _analysis_file(file: replay.ReplayFile) -> Response:
        return Response(await _analysis_made(file), media_type="application/json")

    async def _played_through(make: Callable[[], bytes]) -> Response:
        return Response(await _one_at_a_time(make), media_type="application/json")

    async def _one_at_a_time(work: Callable[[], T]) -> T:
        # Reading or playing a replay through is real work: off the event loop, so the tables
        # keep their pace, and one at a time, so a queue of uploads costs one core, not every
        # one. A bad file is the client's 400.
        async with frames_lock:
            try:
                return await asyncio.to_thread(work)
            except ReplayError as exc:
                raise ApiError(400, str(exc)) from None
            except ValueError as exc:  # a move the notation reads as too big a number
                raise ApiError(400, f"not a replay this server can play through: {exc}"
                               ) from None

    async def socket(scope: Scope, receive: Receive, send: Send) -> None:
        # The handshake goes through Starlette's WebSocket (headers, accept, refusals); once
        # open, the socket's frames are read and written with the server's own ASGI callables
        # (see SocketRoute).
        ws = WebSocket(scope, receive, send)
        room_id: str = scope["path_params"]["room_id"]
        if not origin_allowed(ws.headers.get("origin"), ws.headers.get("host"),
                              allowed_origins):
            # Retrying changes nothing: no Retry-After.
            await _refuse(ws, "origin not allowed: a browser's socket must come from this "
                              "server's own page", 403, retry=False)
            return
        address = client_address(ws)
        refusal = sockets.acquire(address)
        if refusal is not None:
            await _refuse(ws, refusal, 503)
            return
        try:
            # Within this process's own cap (its files), before the service's: the owner
            # counts a handed socket against that one itself.
            proto = scope.get("extensions", {}).get(HANDOVER)
            handed, elsewhere = await _hand_over(proto, room_id)
            if handed:
                return
            if not await shared.hold(f"address {address}", sockets_per_address):
                await _refuse(ws, "too many sockets from one address: at most "
                                  f"{sockets_per_address} open at once", 429)
                return
            try:
                await ws.accept()
                conn = Connection(send, address, proto.send_text_now if proto else None,
                                  network_reader(ws, proto))
                try:
                    if elsewhere is not None:  # known already: no second look-up
                        await _pipe(receive, conn, elsewhere)
                    else:
                        await _serve(receive, conn, room_id)
                except OwnedElsewhere as exc:
                    await _pipe(receive, conn, exc)
                finally:
                    await conn.finish()
            finally:
                await shared.let_go(f"address {address}")
        finally:
            if sockets.release(address):
                # Closed sockets are freed by reference counting: no deep walk, only the trim.
                give_back_memory(deep=False)

    app.add_middleware(SocketRoute, path="/ws/{room_id}", endpoint=socket)

    @app.websocket("/{path:path}")
    async def no_socket(ws: WebSocket, path: str) -> None:
        # Every socket but a room's (SocketRoute takes those): refused as the framework
        # refuses a path it does not know (403), with the reason in the API's JSON.
        await _refuse(ws, "no WebSocket at this path: a room's socket is /ws/{room id}", 403,
                      retry=False)

    async def _hand_over(proto: SocketProtocol | None,
                         room_id: str) -> tuple[bool, OwnedElsewhere | None]:
        """Give the socket (``proto``: the server's protocol of it, None on another server) to
        its room's owner if that is another process of this machine
        (:mod:`nertz.server.cluster.handoff`). Returns whether it went (nothing more to do
        here) and, when it did not, the owner found elsewhere (the socket is piped there).
        Anything else (the room here or nowhere, no handoff on this process) is served here
        as always."""
        door = state.get("handoff")
        if door is None or proto is None or proto.handed_in:
            return False, None
        try:
            await find_room(room_id)
        except OwnedElsewhere as exc:
            owner = exc.owner
            if proto.hand_over(lambda fd, request: door.give(owner, fd, request)):
                return True, None
            return False, exc
        except (ApiError, StoreBusy):
            pass  # said to the client once its socket is open
        return False, None

    async def _refuse(ws: WebSocket, message: str, status: int, retry: bool = True) -> None:
        """Refuse a socket at its handshake: an HTTP answer in the API's JSON naming why,
        where the server can send one (with ``Retry-After`` if trying again may pass), else a
        close frame with the reason (code 1013, try again later; 1008 if not ``retry``)."""
        await refuse_socket(ws.scope, ws.receive, ws.send, message, status, retry)

    async def _pipe(receive: Receive, conn: Connection, exc: OwnedElsewhere) -> None:
        """Another process owns the room: carry the socket's frames there and its answers
        back (:mod:`nertz.server.cluster.pipe`)."""
        pipes = state["node"].pipes
        network = NetworkReading(conn.network)
        socket_id = pipes.start(exc.room_id, exc.owner, conn, conn.address, network.now())
        try:
            while not conn.closed:
                frame = await receive()
                if frame["type"] == "websocket.disconnect":
                    break
                pipes.forward(socket_id, frame, network.now())
        finally:
            pipes.end(socket_id)

    remote_sessions: set[asyncio.Task[None]] = set()

    def _remote_socket(room_id: str, sock: RemoteSocket) -> None:
        """A socket another process holds for a room owned here: its session runs here, the
        same as for this process's own sockets."""
        task = asyncio.get_running_loop().create_task(_remote_session(room_id, sock))
        remote_sessions.add(task)
        task.add_done_callback(remote_sessions.discard)

    async def _remote_session(room_id: str, sock: RemoteSocket) -> None:
        from nertz.server.cluster.pipe import MOVED_CODE

        try:
            await _serve(sock.receive, sock, room_id)
        except OwnedElsewhere:
            sock.close(MOVED_CODE, "the room moved: reconnect")
        except Exception:
            log.exception("room %s: a relayed socket failed", room_id)
        finally:
            sock.close()
            state["node"].forget_socket(sock)

    async def _serve(receive: Callable[[], Awaitable[Message]], conn: Connection | RemoteSocket,
                     room_id: str) -> None:
        # ``receive``: the socket's frames, read here or (a socket held by another process
        # for a room owned here) relayed from there.
        try:
            room = await find_room(room_id)
            closed = room is None and len(room_id) <= 32 and \
                await hub().closed_info(room_id) is not None
        except ApiError as exc:
            conn.send(_error("unavailable", exc.message))
            return
        except StoreBusy as exc:
            conn.send(_error("unavailable", f"the server is busy: try again in "
                                            f"{exc.retry_after} s"))
            return
        if room is None:
            if closed:
                conn.send(_error("room_closed", f"room {shown(room_id, 'room id')} has closed "
                                                "(nobody was in it)"))
            else:
                conn.send(_error("no_room", f"no room {shown(room_id, 'room id')}"))
            return
        player: Player | None = None
        prober: Prober | None = None
        said_hello = False
        player_scope: str | None = None  # the player this socket counts against, once held
        loop = asyncio.get_running_loop()
        hello_by = loop.time() + HELLO_TIMEOUT
        allowance = TokenBucket(MESSAGES_PER_SECOND, MESSAGE_BURST)
        syncs = TokenBucket(SYNCS_PER_SECOND, SYNC_BURST)
        held_sync: list[asyncio.TimerHandle | None] = [None]
        held_since: list[int | None] = [None]

        def sync_held() -> None:
            held_sync[0] = None
            if (conn.closed or room is None or player is None
                    or player.id not in room.table.players):
                return
            syncs.take(loop.time())  # the allowance it waited for
            room.resync(conn, player, held_since[0])

        try:
            while not conn.closed:
                if said_hello:
                    # The frames of a move: read straight (a timeout's bookkeeping for none).
                    frame = await receive()
                else:
                    try:
                        frame = await asyncio.wait_for(receive(),
                                                       max(0.0, hello_by - loop.time()))
                    except TimeoutError:
                        conn.send(_error("no_hello", f"no hello within {HELLO_TIMEOUT:g} s "
                                                     "of opening: say hello with your token "
                                                     "first"))
                        conn.close(1008, "no hello")
                        break
                if frame["type"] == "websocket.disconnect":
                    break
                # When the command reached this process: with the socket's round trip, what
                # latency-fair races order plays by (the room may be on another process).
                arrived = wall_ms()
                if not allowance.take(loop.time()):
                    # Refused without doing what it asks (that might cost much), but with its
                    # `id`: a client whose move was refused must learn which one, or it waits
                    # for an answer that never comes.
                    text = frame.get("text")
                    conn.send(_error("too_fast", f"too many messages: at most "
                                                 f"{MESSAGES_PER_SECOND:g} a second",
                                     protocol.message_id(text) if text is not None else None))
                    continue
                raw = frame.get("text")
                if raw is None:
                    conn.send(_error("bad_message", "binary frames are refused: the protocol "
                                                    "is JSON in text frames"))
                    continue
                try:
                    msg = protocol.decode(raw)
                except protocol.ProtocolError as exc:
                    conn.send(_error("bad_message", str(exc), protocol.message_id(raw)))
                    continue
                if not said_hello:
                    if not isinstance(msg, protocol.Hello):
                        conn.send(_error("no_hello", "say hello with your token first"))
                        continue
                    player = room.table.player_for_token(msg.token)
                    if player is None:
                        if await shared.wait(BAD_TOKENS, conn.address):
                            # Guessing from this address: the socket goes. Known tokens still
                            # get in, so one guesser cannot lock out its neighbours (a guess
                            # that happens to be right is beyond any number of tries).
                            conn.send(_error("too_fast", "too many unknown tokens from your "
                                             "address: try again in a minute"))
                            conn.close(1008, "too many unknown tokens")
                            break
                        await shared.take(BAD_TOKENS, conn.address)
                        conn.send(_error("bad_token", "unknown token for this room"))
                        continue
                    scope = f"player {room.id} {player.id}"
                    if not await shared.hold(scope, MAX_SOCKETS_PER_PLAYER):
                        conn.send(_error("too_many_sockets", "this player has "
                                         f"{MAX_SOCKETS_PER_PLAYER} connections open already: "
                                         "close one first"))
                        conn.close(1008, "too many sockets")
                        break
                    player_scope = scope
                    said_hello = True
                    room.attach(conn, player, msg.since)
                    if msg.pings:
                        prober = Prober(conn.send, ping_interval, network=conn.network)
                        prober.start()
                    continue
                if not room.open:
                    try:
                        fresh = await find_room(room.id)
                    except ApiError as exc:
                        conn.send(_error("unavailable", exc.message))
                        continue
                    except StoreBusy as exc:
                        conn.send(_error("unavailable", f"the server is busy: try again in "
                                                        f"{exc.retry_after} s"))
                        continue
                    except OwnedElsewhere:
                        # Another process took the room: the client reconnects and reaches it.
                        conn.close(1012, "the room moved: reconnect")
                        break
                    if fresh is None:  # closed meanwhile (nobody else was in it)
                        conn.send(_error("room_closed", "this room has closed"))
                        break
                    room.detach(conn)
                    room = fresh
                    player = room.table.players.get(player.id) if player else None
                    room.attach(conn, player, None)
                if player is None or player.id not in room.table.players:
                    conn.send(protocol.encode(Kicked()))
                    break
                if isinstance(msg, protocol.Pong) and (prober is None
                                                       or not prober.pong(msg.id)):
                    continue  # not ours to measure: nothing for the room
                if isinstance(msg, protocol.Sync) and not syncs.take(loop.time()):
                    # Held, not refused: the client waits for its catch-up (it drops what
                    # comes meanwhile as a gap). One held at a time; a later one replaces it.
                    held_since[0] = msg.since
                    if held_sync[0] is None:
                        held_sync[0] = loop.call_later(1.0 / SYNCS_PER_SECOND, sync_held)
                    continue
                stamp = prober.stamp(arrived) if prober is not None else Stamp(arrived)
                if isinstance(msg, protocol.Kick):
                    await _kick(room, player, msg, conn)
                elif _starts_bot_play(room, player, msg):
                    await _start_bot_play(room, player, msg, conn, stamp)
                else:
                    _dispatch(room, player, msg, conn, stamp)
        except WebSocketDisconnect:
            pass
        finally:
            if held_sync[0] is not None:
                held_sync[0].cancel()
            if prober is not None:
                prober.stop()
            if said_hello:
                room.detach(conn)
            if player_scope is not None:
                await shared.let_go(player_scope)

    def _dispatch(room: LiveRoom, player: Player, msg: Any, conn: Connection | RemoteSocket,
                  stamp: Stamp) -> None:
        # Hello and sync are the socket's business; every other message is the table's.
        if isinstance(msg, protocol.Sync):
            room.resync(conn, player, msg.since)
        elif isinstance(msg, protocol.Hello):
            conn.send(_error("bad_message", "already said hello"))
        else:
            room.handle(player, msg, conn, stamp)

    async def _start_bot_play(room: LiveRoom, player: Player, msg: Any,
                              conn: Connection | RemoteSocket, stamp: Stamp) -> None:
        """``msg`` would set bots alone playing in ``room``: done if the address that sent it
        has fewer than :data:`BOT_ROOMS_PER_ADDRESS` others playing, refused otherwise.
        Counted from now: the command is handled at once, and one the table refuses leaves
        the room out of play, so the next look lets it go."""
        if await bot_rooms.take(f"bot rooms {conn.address}", room.id, BOT_ROOMS_PER_ADDRESS):
            _dispatch(room, player, msg, conn, stamp)
            return
        conn.send(_error("too_many_bot_rooms", f"your address has {BOT_ROOMS_PER_ADDRESS} "
                         "rooms of bots alone playing already (at most "
                         f"{BOT_ROOMS_PER_ADDRESS} at once): seat a person here, or wait "
                         "for one of them to finish its round"))

    def _bots_alone(room: LiveRoom, to_bot: int | None = None) -> bool:
        """Whether nobody but bots would play at the table: every seated player a bot, or a
        person with no socket open (who plays nothing), ``to_bot``'s seat counted as a bot's."""
        seated = [p for p in room.table.players.values() if p.seat is not None]
        return bool(seated) and all(p.bot is not None or p.sockets == 0 or p.seat == to_bot
                                    for p in seated)

    def _starts_bot_play(room: LiveRoom, player: Player, msg: Any) -> bool:
        """Whether ``msg`` would set bots alone playing in ``room`` (if the table takes it:
        only its host's may)."""
        if player.id != room.table.host:
            return False
        if isinstance(msg, protocol.Start | protocol.Rematch | protocol.NextRound):
            return _bots_alone(room)
        if isinstance(msg, protocol.BotSeat):
            return room.table.phase in _AT_PLAY and _bots_alone(room, msg.seat)
        return False

    def _still_playing(room_id: str) -> bool:
        """Whether this process's room ``room_id`` still plays with bots alone (not when it is
        gone or moved to another process). A room whose bots wait with nobody connected still
        counts: its host's next socket sets them playing again, and nothing counts it then."""
        room = hub().rooms.get(room_id)
        return room is not None and room.table.phase in _AT_PLAY and _bots_alone(room)

    bot_rooms = HeldWhile(shared, _still_playing)
    """The rooms of bots alone each address set playing here (:data:`BOT_ROOMS_PER_ADDRESS`),
    counted in the service's limits while they play so."""

    async def _kick(room: LiveRoom, by: Player, msg: protocol.Kick,
                    conn: Connection | RemoteSocket) -> None:
        target_id = msg.player
        target = room.table.players.get(target_id)
        sinks = room.fanout.sinks
        theirs = {sink.address for sink, pid in sinks.items()
                  if pid == target_id and isinstance(sink, Connection | RemoteSocket)}
        # And where they joined from: someone who never opened a socket has no other.
        joined_from = room.joined_from.get(target_id)
        if joined_from is not None:
            theirs.add(joined_from)
        others = {sink.address for sink, pid in sinks.items()
                  if pid != target_id and isinstance(sink, Connection | RemoteSocket)}
        room.handle(by, msg, conn)
        if target is None or target_id in room.table.players:
            return  # refused: the sender was told why
        # A kicked person may not walk straight back in: not under a name that looks like
        # theirs, nor from the addresses they were connected from, for a while. An address
        # someone else here is connected from is shared (a household, a classroom): not barred.
        addresses = theirs - others
        for address in addresses:
            await shared.bar(f"{room.id} address {address}", KICK_BAR_SECONDS)
        await shared.bar(f"{room.id} name {protocol.name_skeleton(target.name)}",
                         KICK_BAR_SECONDS)
        # Nor as the same player (their identity cookie or account) under a new name from a
        # new address. A profile someone still in the room is tied to is not barred: it is
        # the same person in another seat (the host who opened two from one browser).
        try:
            members = await players().identities.members(room.id)
        except Exception:  # the kick stands; the address and name bars still hold
            log.exception("room %s: could not bar %s's player", room.id, target_id)
            return
        profile = members.get(target_id)
        if profile is not None and profile not in {
                members.get(pid) for pid in room.table.players}:
            await shared.bar(f"{room.id} profile {profile}", KICK_BAR_SECONDS)

    def players_error(status: int, message: str, headers: dict[str, str] | None = None
                      ) -> ApiError:
        return ApiError(status, message, headers)

    app.include_router(PlayersApi.router_for(players, players_error))

    if WEB.is_dir():
        # Scripts and styles compress to a quarter; only the page's files go through gzip
        # (the API's answers are small, and sockets are never compressed).
        app.mount("/static", GZipMiddleware(PageFiles(directory=WEB), minimum_size=500),
                  name="static")

        def page() -> FileResponse:
            return FileResponse(WEB / "index.html", headers={"cache-control": PAGE_CACHE})

        @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
        async def index() -> FileResponse:
            return page()

        @app.api_route("/r/{code}", methods=["GET", "HEAD"], include_in_schema=False)
        async def room_page(code: str) -> FileResponse:
            return page()

        @app.api_route("/learn", methods=["GET", "HEAD"], include_in_schema=False)
        async def learn_page() -> FileResponse:
            return page()

        # The players' screens (nertz/web/js/players.js) are the same page.
        @app.api_route("/players/{player_id}", methods=["GET", "HEAD"], include_in_schema=False)
        async def player_page(player_id: str) -> FileResponse:
            return page()

        @app.api_route("/leaderboard", methods=["GET", "HEAD"], include_in_schema=False)
        @app.api_route("/leaderboard/{family}", methods=["GET", "HEAD"],
                       include_in_schema=False)
        @app.api_route("/account", methods=["GET", "HEAD"], include_in_schema=False)
        @app.api_route("/quick", methods=["GET", "HEAD"], include_in_schema=False)
        async def players_pages(family: str | None = None) -> FileResponse:
            return page()

        @app.api_route("/sw.js", methods=["GET", "HEAD"], include_in_schema=False)
        async def service_worker() -> FileResponse:
            # Served from the root: a worker controls only the paths under its own address.
            return FileResponse(WEB / "sw.js", media_type="text/javascript",
                                headers={"cache-control": PAGE_CACHE})

    return app
