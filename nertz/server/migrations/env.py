"""Alembic environment: nertz applies its migrations itself at start, on the connection it
already holds (see nertz.server.store.Store.open); nothing here opens its own."""

from __future__ import annotations

from alembic import context

from nertz.server.store import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only the store runs migrations
    raise RuntimeError("nertz migrations run through nertz.server.store.Store.open")
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
