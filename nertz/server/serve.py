"""``nertz serve``: run the app on uvicorn."""

from __future__ import annotations

import gc
import ipaddress
import logging
from typing import Any

import uvicorn

from nertz.server.edge.app import MAX_SOCKETS, ROOMS_PER_MINUTE, SOCKETS_PER_ADDRESS, create_app
from nertz.server.hub import ROOM_IDLE_SECONDS
from nertz.server.protocol import MAX_MESSAGE_BYTES

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
    redis_url: str | None = None,
) -> int:
    """Serve until stopped; returns the exit code. ``trusted_proxies`` are the addresses (or
    networks) of the proxies in front whose ``X-Forwarded-For`` names the client;
    ``redis_url`` a Redis whose limits every process given it shares."""
    try:
        check_proxies(trusted_proxies)
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
    app = create_app(db, allowed_origins, deal_seed=deal_seed, rooms_per_minute=rooms_per_minute,
                     sockets_per_address=sockets_per_address, max_sockets=max_sockets,
                     room_idle_seconds=room_idle_minutes * 60, redis_url=redis_url)
    print(f"nertz: serving on http://{host}:{port}", flush=True)
    uvicorn.Server(server_config(app, host, port, trusted_proxies)).run()
    return 0


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
                  trusted_proxies: tuple[str, ...] = ()) -> uvicorn.Config:
    """How ``nertz serve`` runs the app on uvicorn (tests run it the same way)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        # The client's address decides its limits: a forwarded header is believed only from
        # the proxies named (uvicorn's default trusts any program on this machine).
        proxy_headers=bool(trusted_proxies),
        forwarded_allow_ips=list(trusted_proxies),
        ws_max_size=4 * MAX_MESSAGE_BYTES,
        ws_ping_interval=20,
        ws_ping_timeout=20,
        # Table messages are small; compressing each costs more CPU than the bytes it saves.
        ws_per_message_deflate=False,
    )
