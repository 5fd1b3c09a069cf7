"""``nertz serve``: run the app on uvicorn."""

from __future__ import annotations

import gc
import logging

import uvicorn

from nertz.server.app import ROOMS_PER_MINUTE, create_app
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
) -> int:
    """Serve until stopped; returns the exit code."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    # Alembic tells each migration it checks or applies (a dozen lines on every start);
    # a failed migration still raises.
    logging.getLogger("alembic").setLevel(logging.WARNING)
    if deal_seed is not None:
        logging.getLogger("nertz").warning(
            "nertz: dealing from the fixed seed %d: every card is predictable", deal_seed)
    # A server holds many long-lived objects (rooms, histories, sockets): with the default
    # thresholds the cyclic collector walks them every few hundred allocations, and its pauses
    # are most of the slowest round trips under load. Collect young objects far less often.
    gc.set_threshold(GC_THRESHOLD, 50, 1000)
    app = create_app(db, allowed_origins, deal_seed=deal_seed, rooms_per_minute=rooms_per_minute)
    print(f"nertz: serving on http://{host}:{port}", flush=True)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        ws_max_size=4 * MAX_MESSAGE_BYTES,
        ws_ping_interval=20,
        ws_ping_timeout=20,
        # Table messages are small; compressing each costs more CPU than the bytes it saves.
        ws_per_message_deflate=False,
    )
    return 0
