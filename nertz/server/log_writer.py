"""The log's group commits, written through the database driver itself.

Every applied move is one row of ``room_log``, and the store's writer commits whatever rows have
queued up in one transaction (:class:`nertz.server.store.Store`). Through SQLAlchemy's async
engine one such commit cost more than all the rest of a move: a pooled connection's check-out
and reset, a greenlet switch and, on SQLite, a hop to aiosqlite's thread for every statement.
So the commits alone go straight to the driver, on a connection of their own:

- SQLite: the standard library's :mod:`sqlite3` on one thread kept for it, the whole
  transaction in one hop to that thread;
- PostgreSQL: one :mod:`asyncpg` connection, the rows sent as arrays in one statement.

The statements are the same as the schema's (:mod:`nertz.server.store`, kept by Alembic): the
fencing check (an entry whose epoch is older than the room's newest is refused in the
transaction that would store it), the rows, the snapshots. Everything else the store does
(schema, reads, rooms, matches) stays on SQLAlchemy.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, Protocol

Row = tuple[str, int, str, str, float]
"""One ``room_log`` row: room, seq, kind, data (JSON text), at."""

SnapshotRow = tuple[str, int, int, int | None, str, float]
"""One ``room_snapshots`` row: room, seq, format, epoch, data (JSON text), at."""


class Busy(Exception):
    """The database's write lock was not free in time (another process holds it): nothing was
    written; try again."""


class LogWriter(Protocol):
    """Commits batches of log rows (see the module's notes)."""

    async def commit(self, rows: list[Row], epochs: dict[str, int],
                     snapshots: list[SnapshotRow]) -> set[str]:
        """Store ``rows`` and ``snapshots`` in one transaction, but for the rooms whose epoch
        in ``epochs`` is no longer the newest (refused there); returns those rooms. Raises
        :class:`Busy` when the database stayed locked, anything else when it refused."""

    async def close(self) -> None:
        """Release the connection."""


_SQLITE_INSERT: Final = "INSERT INTO room_log (room_id, seq, kind, data, at) VALUES (?, ?, ?, ?, ?)"
_SQLITE_FENCE: Final = "UPDATE room_epochs SET epoch = epoch WHERE room_id = ? AND epoch = ?"
_SQLITE_SNAPSHOT: Final = (
    "INSERT INTO room_snapshots (room_id, seq, format, epoch, data, at)"
    " VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (room_id) DO UPDATE SET seq = excluded.seq, format = excluded.format,"
    " epoch = excluded.epoch, data = excluded.data, at = excluded.at"
    " WHERE room_snapshots.seq < excluded.seq")


class SqliteLogWriter:
    """:class:`LogWriter` on SQLite: one :mod:`sqlite3` connection on a thread of its own."""

    def __init__(self, path: str, busy_seconds: float) -> None:
        self.path = path
        self.busy_seconds = busy_seconds
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="nertz-log")
        self._conn: sqlite3.Connection | None = None

    async def commit(self, rows: list[Row], epochs: dict[str, int],
                     snapshots: list[SnapshotRow]) -> set[str]:
        """See :meth:`LogWriter.commit`."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self._commit, rows, epochs, snapshots)

    def _connect(self) -> sqlite3.Connection:
        # Autocommit mode: the transaction is begun and ended here, explicitly.
        conn = sqlite3.connect(self.path, timeout=self.busy_seconds, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _commit(self, rows: list[Row], epochs: dict[str, int],
                snapshots: list[SnapshotRow]) -> set[str]:
        conn = self._conn
        if conn is None:
            conn = self._conn = self._connect()
        try:
            # IMMEDIATE: the write lock first, so the transaction never has to upgrade a read.
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if _locked(exc):
                raise Busy(str(exc)) from exc
            raise
        try:
            fenced = set()
            for room, epoch in epochs.items():
                # The row rewritten unchanged where the epoch is still the room's newest.
                if conn.execute(_SQLITE_FENCE, (room, epoch)).rowcount == 0:
                    fenced.add(room)
            if fenced:
                rows = [row for row in rows if row[0] not in fenced]
                snapshots = [snap for snap in snapshots if snap[0] not in fenced]
            if rows:
                conn.executemany(_SQLITE_INSERT, rows)
            if snapshots:
                conn.executemany(_SQLITE_SNAPSHOT, snapshots)
            conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError) and _locked(exc):
                raise Busy(str(exc)) from exc
            raise
        return fenced

    async def close(self) -> None:
        """See :meth:`LogWriter.close`."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._thread, self._close)
        self._thread.shutdown(wait=True)

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text


_PG_INSERT: Final = (
    "INSERT INTO room_log (room_id, seq, kind, data, at)"
    " SELECT * FROM unnest($1::varchar[], $2::integer[], $3::varchar[], $4::text[],"
    " $5::float8[])")
_PG_FENCE: Final = (
    "UPDATE room_epochs SET epoch = room_epochs.epoch"
    " FROM unnest($1::varchar[], $2::bigint[]) AS v(room_id, epoch)"
    " WHERE room_epochs.room_id = v.room_id AND room_epochs.epoch = v.epoch"
    " RETURNING room_epochs.room_id")
"""Each (room, epoch) pair's row rewritten unchanged where the epoch is still the room's newest:
that takes the row's lock, so a new owner's :meth:`Store.fence
<nertz.server.store.Store.fence>` either waits for this transaction or, having committed first,
makes the condition false here (the row is re-read after the wait)."""
_PG_SNAPSHOT: Final = (
    "INSERT INTO room_snapshots (room_id, seq, format, epoch, data, at)"
    " VALUES ($1, $2, $3, $4, $5, $6)"
    " ON CONFLICT (room_id) DO UPDATE SET seq = excluded.seq, format = excluded.format,"
    " epoch = excluded.epoch, data = excluded.data, at = excluded.at"
    " WHERE room_snapshots.seq < excluded.seq")


class PgLogWriter:
    """:class:`LogWriter` on PostgreSQL: one :mod:`asyncpg` connection, opened on first use and
    again after a failure."""

    def __init__(self, dsn: str, connect_args: dict[str, Any] | None = None) -> None:
        self.dsn = dsn
        self.connect_args = connect_args or {}
        self._conn: Any = None

    async def commit(self, rows: list[Row], epochs: dict[str, int],
                     snapshots: list[SnapshotRow]) -> set[str]:
        """See :meth:`LogWriter.commit`."""
        # Imported here (only PostgreSQL needs it) and as Any: the driver ships no types.
        asyncpg: Any = importlib.import_module("asyncpg")
        conn = self._conn
        if conn is None or conn.is_closed():
            conn = self._conn = await asyncpg.connect(self.dsn, **self.connect_args)
        try:
            async with conn.transaction():
                fenced: set[str] = set()
                if epochs:
                    kept = await conn.fetch(_PG_FENCE, list(epochs), list(epochs.values()))
                    fenced = set(epochs) - {r[0] for r in kept}
                if fenced:
                    rows = [row for row in rows if row[0] not in fenced]
                    snapshots = [snap for snap in snapshots if snap[0] not in fenced]
                if rows:
                    await conn.execute(_PG_INSERT, *map(list, zip(*rows, strict=True)))
                if snapshots:
                    await conn.executemany(_PG_SNAPSHOT, snapshots)
            return fenced
        except BaseException:
            # A connection in an unknown state is not used again: the next commit opens one.
            self._conn = None
            with contextlib.suppress(Exception):
                conn.terminate()
            raise

    async def close(self) -> None:
        """See :meth:`LogWriter.close`."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
