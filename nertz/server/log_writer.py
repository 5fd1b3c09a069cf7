"""The log's group commits, written through the database driver itself.

Every applied move is one row of ``room_log``, and the store's writer commits whatever rows have
queued up in one transaction (:class:`nertz.server.store.Store`). Through SQLAlchemy's async
engine one such commit cost more than all the rest of a move: a pooled connection's check-out
and reset, a greenlet switch and, on SQLite, a hop to aiosqlite's thread for every statement.
So the commits alone go straight to the driver, on a connection of their own:

- SQLite: the standard library's :mod:`sqlite3`, the whole transaction on the event loop's own
  thread when the write lock is free at once (it nearly always is: this process's writers
  take turns before they reach it, :class:`nertz.server.store.Store`). A commit in WAL mode
  with ``synchronous=NORMAL`` writes the log file without syncing it and takes tens of
  microseconds, less than the hop to a thread and back it used to make (3 to 6% of the
  server's CPU per move, ``bench/server_load.py --rooms 60``, two pairs side by side; the
  round trip's median some 0.2 ms longer, as other sockets wait out each commit). What could keep
  the loop waiting goes to a thread kept for it: a write lock another process holds (that
  commit is made there, waiting up to the busy timeout) and the checkpoints that copy the log
  back into the database, syncing it (never made on the loop's connection:
  :data:`CHECKPOINT_EVERY`). The thread is reached through a plain queue and
  ``call_soon_threadsafe`` back (an executor's futures, work items and idle semaphore made one
  hop cost about twice the CPU, some 45 against 24 microseconds on the 2-core test machine);
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
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, Final, Protocol

log = logging.getLogger("nertz.store")

CHECKPOINT_EVERY: Final = 200
"""Commits on the event loop's connection between two checkpoints on the writer's thread (a
commit adds a few pages to the log; SQLite's own automatic checkpoint, switched off on that
connection, comes every 1,000 pages)."""

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


_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[[], Any]]
"""A call for the SQLite thread: the loop and future to answer on, the call."""


def _settle(fut: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    """On the loop: the thread's answer (nobody waits for a cancelled one)."""
    if fut.done():
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(result)


class SqliteLogWriter:
    """:class:`LogWriter` on SQLite: commits on the event loop's thread while the write lock is
    free at once, on a thread of its own otherwise; checkpoints there (see the module's
    notes)."""

    def __init__(self, path: str, busy_seconds: float) -> None:
        self.path = path
        self.busy_seconds = busy_seconds
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        """The thread's connection (waits for a busy lock; checkpoints)."""
        self._here: sqlite3.Connection | None = None
        """The event loop's connection: never waits for a lock, never checkpoints."""
        self._commits = 0
        self._checkpoint: asyncio.Task[None] | None = None

    async def commit(self, rows: list[Row], epochs: dict[str, int],
                     snapshots: list[SnapshotRow]) -> set[str]:
        """See :meth:`LogWriter.commit`."""
        if self._here is None:
            self._here = self._connect(wait=False)
        try:
            fenced = self._commit(self._here, rows, epochs, snapshots)
        except Busy:
            # Another process holds the write lock: wait for it on the thread, not here.
            fenced = await self._call(
                lambda: self._commit(self._thread_conn(), rows, epochs, snapshots))
        self._commits += 1
        if self._commits >= CHECKPOINT_EVERY and self._checkpoint is None:
            self._commits = 0
            self._checkpoint = asyncio.get_running_loop().create_task(self._checkpoint_now())
        return fenced

    async def _checkpoint_now(self) -> None:
        try:
            # PASSIVE: copies what no reader still needs, never waits for a writer or reader.
            await self._call(lambda: self._thread_conn().execute(
                "PRAGMA wal_checkpoint(PASSIVE)").fetchall())
        except Exception as exc:  # the next one tries again; commits go on meanwhile
            log.warning("the log's checkpoint failed: %s", exc)
        finally:
            self._checkpoint = None

    async def _call(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` on the connection's thread (started at the first call), its result or its
        exception here. Calls run one at a time, in order."""
        loop = asyncio.get_running_loop()
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="nertz-log", daemon=True)
            self._thread.start()
        fut: asyncio.Future[Any] = loop.create_future()
        self._jobs.put((loop, fut, fn))
        return await fut

    def _serve(self) -> None:
        """The thread: each call in turn, until told to stop (None)."""
        while (job := self._jobs.get()) is not None:
            loop, fut, fn = job
            result, error = None, None
            try:
                result = fn()
            except BaseException as exc:
                error = exc
            # A loop closed meanwhile has nobody left to answer.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, fut, result, error)

    def _connect(self, wait: bool) -> sqlite3.Connection:
        """A connection in autocommit mode (transactions are begun and ended explicitly);
        ``wait``: a busy lock is waited for, up to the busy timeout. One that may not wait
        never checkpoints either (:data:`CHECKPOINT_EVERY`)."""
        conn = sqlite3.connect(self.path, timeout=self.busy_seconds if wait else 0,
                               isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        if not wait:
            conn.execute("PRAGMA wal_autocheckpoint=0")
        return conn

    def _thread_conn(self) -> sqlite3.Connection:
        """The thread's connection (on the thread only)."""
        if self._conn is None:
            self._conn = self._connect(wait=True)
        return self._conn

    @staticmethod
    def _commit(conn: sqlite3.Connection, rows: list[Row], epochs: dict[str, int],
                snapshots: list[SnapshotRow]) -> set[str]:
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
        if self._checkpoint is not None:
            await self._checkpoint
        if self._here is not None:
            self._here.close()
            self._here = None
        thread = self._thread
        if thread is None:
            return
        await self._call(self._close)
        self._jobs.put(None)
        self._thread = None
        thread.join()  # at once: the thread has nothing left but the None

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
_PG_APPEND: Final = (
    f"WITH fence AS ({_PG_FENCE}),"
    " stored AS ("
    " INSERT INTO room_log (room_id, seq, kind, data, at)"
    " SELECT r.room_id, r.seq, r.kind, r.data, r.at"
    " FROM unnest($3::varchar[], $4::integer[], $5::varchar[], $6::text[], $7::float8[])"
    " AS r(room_id, seq, kind, data, at)"
    " WHERE NOT r.room_id = ANY($1::varchar[]) OR r.room_id IN (SELECT room_id FROM fence)"
    " RETURNING 1)"
    " SELECT room_id FROM fence")
"""The fence and the rows in one statement, so one round trip (a statement outside a
transaction block is a transaction of its own): the rows of a room whose epoch is no longer the
newest are left out, and the rooms whose epoch held come back. Four round trips (begin, fence,
rows, commit) cost about twice the client's CPU per commit (160 against 85 microseconds), and
with several workers, each committing its share of the moves, commits are smaller and more."""
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
            if rows and not snapshots:
                # The common case: moves only (a snapshot every couple of hundred entries).
                kept = await conn.fetch(_PG_APPEND, list(epochs), list(epochs.values()),
                                        *map(list, zip(*rows, strict=True)))
                return set(epochs) - {r[0] for r in kept}
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
