"""``nertz serve``: run the app on uvicorn: one process alone, or one of many.

Alone (no ``--workers``, no ``--redis``) it is one process on an embedded SQLite file, nothing
else to start. ``--workers N`` (N above 1) runs N processes sharing one port, and ``--redis``
makes even one process a member of a service of many (the same command on several machines,
behind any proxy, no sticky sessions): they share a PostgreSQL database (``--db``) and a Redis
(``--redis``, by default ``redis://127.0.0.1:6379/0`` once there are several workers). What is
missing or unreachable is named before anything starts.
"""

from __future__ import annotations

import asyncio
import gc
import ipaddress
import json
import logging
import os
from typing import Any, Final

import uvicorn

from nertz.server.edge import http_protocol
from nertz.server.edge.app import MAX_SOCKETS, ROOMS_PER_MINUTE, SOCKETS_PER_ADDRESS
from nertz.server.edge.socket_protocol import IMPORT_PATH
from nertz.server.hub import ROOM_IDLE_SECONDS
from nertz.server.protocol import MAX_MESSAGE_BYTES
from nertz.server.store import normalise_url

DEFAULT_REDIS = "redis://127.0.0.1:6379/0"
"""Where ``--workers`` above 1 looks for Redis unless told."""

WORKER_ENV = "NERTZ_WORKER_CONFIG"
"""How the supervisor hands each worker process its app's settings (JSON)."""

WS_PROTOCOL: Final = IMPORT_PATH
"""uvicorn's WebSocket implementation: its ``websockets-sansio`` one (the ``websockets``
library's sans-I/O protocol, driven straight from uvicorn's own asyncio protocol), able to hand
a connection to another process (:mod:`nertz.server.edge.socket_protocol`). uvicorn's default
(``websockets``, the library's legacy asyncio layer) runs reader, keepalive and drain
coroutines for every frame, and took about a fifth more server CPU per move under
``bench/server_load.py`` (docs/deploy.md, "CPU per move"); the same library parses and
frames either way, with the same size cap and pings."""

GC_THRESHOLD = 100_000
"""Allocations between two young-generation collections (Python's default is 700)."""


def serve(
    host: str,
    port: int,
    db: str | None,
    allowed_origins: tuple[str, ...] = (),
    deal_seed: int | None = None,
    rooms_per_minute: int = ROOMS_PER_MINUTE,
    *,
    trusted_proxies: tuple[str, ...] = (),
    sockets_per_address: int = SOCKETS_PER_ADDRESS,
    max_sockets: int = MAX_SOCKETS,
    room_idle_minutes: float = ROOM_IDLE_SECONDS / 60,
    workers: int = 1,
    redis: str | None = None,
    redis_prefix: str | None = None,
    handoff: bool = True,
) -> int:
    """Serve until stopped; returns the exit code. ``trusted_proxies`` are the addresses (or
    networks) of the proxies in front whose ``X-Forwarded-For`` names the client. ``workers``
    processes share the port; with more than one, or with ``redis``, the process is one of a
    service of many (see the module's description); ``handoff`` lets its processes of one
    machine pass each other sockets whole instead of relaying them
    (:mod:`nertz.server.cluster.handoff`)."""
    try:
        check_proxies(trusted_proxies)
        if workers < 1:
            raise ValueError(f"--workers must be at least 1, not {workers}")
        if workers > 1 and redis is None:
            redis = DEFAULT_REDIS
        if redis is not None:
            check_shared_db(db)
            asyncio.run(check_reachable(redis, db))
    except ValueError as exc:
        print(f"nertz serve: {exc}")
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    # Alembic tells each migration it checks or applies (a dozen lines on every start);
    # a failed migration still raises.
    logging.getLogger("alembic").setLevel(logging.WARNING)
    if deal_seed is not None:
        logging.getLogger("nertz").warning(
            "nertz: dealing from the fixed seed %d: every card is predictable", deal_seed)
    tune_gc()
    settings: dict[str, Any] = {
        "db_url": db, "allowed_origins": list(allowed_origins), "deal_seed": deal_seed,
        "rooms_per_minute": rooms_per_minute, "sockets_per_address": sockets_per_address,
        "max_sockets": max_sockets, "room_idle_seconds": room_idle_minutes * 60,
        "redis_url": redis, "redis_prefix": redis_prefix, "handoff": handoff,
        "trusted_proxies": list(trusted_proxies),
    }
    if workers == 1:
        app = _app(settings)
        print(f"nertz: serving on http://{host}:{port}", flush=True)
        uvicorn.Server(server_config(app, host, port, trusted_proxies)).run()
        return 0
    # uvicorn's supervisor binds the port once and starts (and restarts) the workers; each
    # builds its own app from the settings it finds in its environment.
    os.environ[WORKER_ENV] = json.dumps(settings)
    config = server_config("nertz.server.serve:worker_app", host, port, trusted_proxies)
    config.factory = True
    config.workers = workers
    print(f"nertz: serving on http://{host}:{port} with {workers} workers", flush=True)
    from uvicorn.supervisors import Multiprocess

    Multiprocess(config, sockets=[config.bind_socket()]).run()
    return 0


def _app(settings: dict[str, Any]) -> Any:
    from nertz.server.edge.app import create_app

    return create_app(settings["db_url"], tuple(settings["allowed_origins"]),
                      deal_seed=settings["deal_seed"],
                      rooms_per_minute=settings["rooms_per_minute"],
                      sockets_per_address=settings["sockets_per_address"],
                      max_sockets=settings["max_sockets"],
                      room_idle_seconds=settings["room_idle_seconds"],
                      redis_url=settings["redis_url"], redis_prefix=settings["redis_prefix"],
                      handoff=settings["handoff"],
                      trusted_proxies=tuple(settings["trusted_proxies"]))


def worker_app() -> Any:
    """The app of one worker process of ``nertz serve --workers`` (uvicorn's factory)."""
    tune_gc()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(process)d %(name)s %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)
    return _app(json.loads(os.environ[WORKER_ENV]))


def check_shared_db(db: str | None) -> None:
    """Raise ``ValueError`` unless ``db`` is a database several processes can share."""
    if db is None or normalise_url(db).startswith("sqlite"):
        raise ValueError("a server of several processes (--workers above 1, or --redis) needs "
                         "a database they all share: --db postgresql://USER@HOST/NAME (SQLite "
                         "is one process's)")


async def check_reachable(redis_url: str, db: str | None) -> None:
    """Raise ``ValueError`` naming Redis or the database if either cannot be reached (the
    database is migrated here, once, before the workers start)."""
    from redis.asyncio import Redis

    from nertz.server.store import Store

    client = Redis.from_url(redis_url, socket_connect_timeout=5)
    try:
        await client.ping()
    except Exception as exc:
        raise ValueError(f"Redis is not reachable at {redis_url}: {exc}") from None
    finally:
        await client.aclose()
    try:
        store = await asyncio.wait_for(Store.open(db), 30)
    except Exception as exc:
        raise ValueError(f"the database is not reachable at {db}: {exc}") from None
    await store.close()


def tune_gc() -> None:
    """The collector's thresholds for a server (tests of memory use set the same).

    A server holds many long-lived objects (rooms, histories, sockets): with the default
    thresholds the cyclic collector walks them every few hundred allocations, and its pauses
    are most of the slowest round trips under load. So young objects are collected far less
    often, and old ones almost never: what a room leaves behind when it closes must be freed
    by reference counting (no cycles), not by the collector."""
    gc.set_threshold(GC_THRESHOLD, 50, 1000)


def check_proxies(proxies: tuple[str, ...]) -> None:
    """Raise ``ValueError`` naming the first entry that is not an address or a network."""
    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            raise ValueError(f"--trust-proxy {proxy!r} is not an IP address or network") from None


def server_config(app: Any, host: str, port: int,
                  trusted_proxies: tuple[str, ...] = (), **extra: Any) -> uvicorn.Config:
    """How ``nertz serve`` runs the app on uvicorn (tests run it the same way; ``extra``:
    more of uvicorn's settings)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        # The client's address decides its limits: a forwarded header is believed only from
        # the proxies named (uvicorn's default trusts any program on this machine).
        proxy_headers=bool(trusted_proxies),
        forwarded_allow_ips=list(trusted_proxies),
        # A deadline for every request's headers, and few unfinished ones per address.
        http=http_protocol.IMPORT_PATH,
        ws=WS_PROTOCOL,
        ws_max_size=4 * MAX_MESSAGE_BYTES,
        ws_ping_interval=20,
        ws_ping_timeout=20,
        # Table messages are small; compressing each costs more CPU than the bytes it saves.
        ws_per_message_deflate=False,
        **extra,
    )
