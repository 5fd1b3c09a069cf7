"""Storage: rooms, each room's append-only action log, finished matches.

One schema on SQLite (the embedded default, a file in the user's data directory) and
PostgreSQL, through SQLAlchemy's async engine; Alembic migrations are applied when the store
opens. The log is the source of truth: a table is rebuilt, on any process, by replaying its log
(:meth:`Table.restore <nertz.server.room.table.Table.restore>`, each entry applied by
:mod:`nertz.server.room.entries`), from the room's newest snapshot on (:meth:`Store.load_room`,
:mod:`nertz.server.room.snapshot`), so that a rebuild reads a bounded part of it.

Appends are group-committed: every append waits for the commit that contains it, and a single
writer commits whatever has queued up meanwhile in one transaction, so hundreds of tables
writing a few actions a second cost a few commits a second, and nothing is acknowledged to a
client before it is durable. Those commits go straight through the database driver, on a
connection of their own (:mod:`nertz.server.log_writer`): through SQLAlchemy each one cost more
than the move it stored.

Contention is waited out, never turned into an error. SQLite has one writer at a time, and its
busy handler polls rather than queues: a crowd of writers can starve one of them past any
timeout ("database is locked"). So on SQLite every write transaction of this process first
takes a first-come-first-served lock, and only one connection ever asks SQLite for the write
lock (the busy timeout remains for other processes on the same file). A store truly
overloaded (no pooled connection free within :data:`POOL_TIMEOUT` seconds) raises
:class:`StoreBusy`, which the app answers with ``503`` and a ``Retry-After``; the log writer
itself never gives up on a busy database, it waits and tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from nertz.server.log_writer import (
    Busy,
    LogWriter,
    PgLogWriter,
    Row,
    SnapshotRow,
    SqliteLogWriter,
)

log = logging.getLogger("nertz.store")

_Queued = tuple[Row, "asyncio.Future[None]", int | None, SnapshotRow | None]
"""An entry waiting for its commit: its row, its future, its epoch, the snapshot it carries."""

MatchListener = Callable[[str, str, dict[str, Any]], Awaitable[None]]
"""Told of each finished match once it is stored: (match id, room id, replay file)."""

metadata = sa.MetaData()
"""The schema (kept in step with the Alembic migrations in ``migrations/``)."""

rooms = sa.Table(
    "rooms",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("code", sa.String(16), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("rules", sa.Text, nullable=False),
    sa.Column("seats", sa.Integer, nullable=False),
    sa.Index("rooms_status", "status"),
)
room_log = sa.Table(
    "room_log",
    metadata,
    sa.Column("room_id", sa.String(32), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("kind", sa.String(24), nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)
_SET_STATUSES = rooms.update().where(rooms.c.id.in_(sa.bindparam("ids", expanding=True))).values(
    status=sa.bindparam("new_status"), updated_at=sa.bindparam("now"))
"""Rooms' status by id, made once: an ``in_`` over the ids themselves built a statement each
time whose compiled parameters are a reference cycle (SQLAlchemy's ``_cloned_set``), two left
to the collector for every batch of rooms that closed."""

matches = sa.Table(
    "matches",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("room_id", sa.String(32), nullable=False),
    sa.Column("finished_at", sa.Float, nullable=False),
    sa.Column("winner", sa.Integer, nullable=True),
    sa.Column("replay", sa.Text, nullable=False),
    sa.Index("matches_room", "room_id"),
)
room_epochs = sa.Table(
    "room_epochs",
    metadata,
    sa.Column("room_id", sa.String(32), primary_key=True),
    sa.Column("epoch", sa.BigInteger, nullable=False),
)
"""The newest owner's epoch of each room run under a lease (:mod:`nertz.server.cluster`): an
append carrying an older epoch is refused in its own transaction (fencing)."""
room_snapshots = sa.Table(
    "room_snapshots",
    metadata,
    sa.Column("room_id", sa.String(32), primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("format", sa.Integer, nullable=False),
    sa.Column("epoch", sa.BigInteger, nullable=True),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)
"""Each room's newest snapshot (:mod:`nertz.server.room.snapshot`): its table's state before
log entry ``seq``, written in the transaction that stores that entry (and fenced with it). A
rebuild reads it and the entries from ``seq`` on; the log's rows stay."""

_ENTRY_ENCODER = msgspec.json.Encoder()
"""Encodes each log entry's data (compact JSON, UTF-8)."""

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
"""Where the Alembic scripts live."""

MIGRATION_LOCK = 0x6E65727A
"""The PostgreSQL advisory lock that lets one process at a time migrate ("nerz")."""

BATCH_WINDOW = 0.004
"""Seconds a busy store waits to gather appends into one commit (an idle one commits at once)."""

SQLITE_BUSY_SECONDS = 30.0
"""How long SQLite waits for another process's write lock before "database is locked" (this
process's own writers never wait on each other there: they queue on the write lock)."""

POOL_SIZE = 5
"""Connections kept open to the database (SQLAlchemy's default)."""

POOL_OVERFLOW = 10
"""Connections opened beyond :data:`POOL_SIZE` at busy times, closed again when returned."""

POOL_TIMEOUT = 30.0
"""Seconds a request waits for a free connection before the store counts as overloaded
(:class:`StoreBusy`)."""

RETRY_AFTER = 5
"""Seconds an overloaded store tells clients to wait before trying again."""

WRITER_RETRY = 0.25
"""Seconds the log writer waits before trying a busy database again."""


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One stored action of a room: its place in the log, what it was, its data, when."""

    seq: int
    kind: str
    data: dict[str, Any]
    at: float


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A room's stored snapshot: its table's state before entry ``seq`` (``data``, in the form
    ``format``), written under lease epoch ``epoch`` (None: a lone process), when (``at``)."""

    seq: int
    format: int
    epoch: int | None
    data: dict[str, Any]
    at: float


@dataclass(frozen=True, slots=True)
class RoomRow:
    """A room's stored header."""

    id: str
    code: str
    status: str
    rules: Any
    seats: int
    created_at: float


class StoreError(RuntimeError):
    """The database refused a write; the table that made it must be rebuilt from the log."""


class Fenced(StoreError):
    """A write from a room's former owner: a newer owner (a higher epoch) has taken the room,
    so this process must let it go (its log would fork otherwise)."""


class StoreBusy(RuntimeError):
    """The database is overloaded: no connection came free in time (or another process held
    SQLite's write lock too long). Nothing was done; the caller may try again after
    :attr:`retry_after` seconds."""

    def __init__(self, message: str, retry_after: int = RETRY_AFTER) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def is_busy(exc: BaseException) -> bool:
    """Whether a database error means "overloaded, try again" rather than "refused": the
    pool's wait for a connection ran out, or SQLite's for its write lock."""
    if isinstance(exc, sa.exc.TimeoutError):
        return True
    if isinstance(exc, sa.exc.OperationalError):
        text = str(exc.orig if exc.orig is not None else exc).lower()
        return "database is locked" in text or "database is busy" in text
    return False


def normalise_url(url: str) -> str:
    """Accept plain ``postgresql://`` and ``sqlite:///`` URLs and pick the async drivers."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://"):]
    if url.startswith("postgresql://"):
        return "postgresql+asyncpg://" + url[len("postgresql://"):]
    if url.startswith("sqlite:///"):
        return "sqlite+aiosqlite:///" + url[len("sqlite:///"):]
    return url


def default_url() -> str:
    """The embedded default: a SQLite file in the user's data directory."""
    from platformdirs import user_data_dir

    folder = Path(user_data_dir("nertz", appauthor=False))
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite+aiosqlite:///{folder / 'nertz.db'}"


class Store:
    """The database behind the server. Open with :meth:`open`; close with :meth:`close`."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._write_lock: asyncio.Lock | None = (
            asyncio.Lock() if engine.dialect.name == "sqlite" else None)
        """SQLite's writers take turns here (first come, first served), not in its busy loop."""
        self._pending: list[_Queued] = []
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        """The loop the writer runs on, looked up once (see :meth:`append_nowait`)."""
        self._writer: asyncio.Task[None] | None = None
        self._closed = False
        self._failed: set[str] = set()
        self._log: LogWriter = (
            SqliteLogWriter(engine.url.database or "", SQLITE_BUSY_SECONDS)
            if engine.dialect.name == "sqlite"
            else PgLogWriter(engine.url.set(drivername="postgresql")
                             .render_as_string(hide_password=False)))
        """The group commits' own connection, straight on the driver (:mod:`.log_writer`)."""
        self.commits = 0
        """How many group commits were made (for the benchmark and tests)."""
        self.match_listeners: list[MatchListener] = []
        """Told of every match :meth:`save_match` stores (ratings and history)."""

    @classmethod
    async def open(cls, url: str | None = None) -> Store:
        """Connect, apply the migrations, start the writer."""
        real = normalise_url(url or default_url())
        kwargs: dict[str, Any] = {"pool_size": POOL_SIZE, "max_overflow": POOL_OVERFLOW,
                                  "pool_timeout": POOL_TIMEOUT}
        if real.startswith("sqlite"):
            kwargs["connect_args"] = {"timeout": SQLITE_BUSY_SECONDS}
        engine = create_async_engine(real, **kwargs)
        if real.startswith("sqlite"):

            @event.listens_for(engine.sync_engine, "connect")
            def _pragmas(dbapi_conn: Any, _record: Any) -> None:
                # WAL lets readers run beside the writer; NORMAL still survives a killed process.
                cursor = dbapi_conn.cursor()
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
                cursor.close()

        store = cls(engine)
        async with engine.begin() as conn:
            if engine.dialect.name == "postgresql":
                # Several processes may start at once on a fresh database: one migrates, the
                # others wait here (until its transaction ends) and then find nothing to do.
                await conn.execute(sa.text(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})"))
            await conn.run_sync(_upgrade)
        store._writer = asyncio.create_task(store._write_loop(), name="nertz-store-writer")
        return store

    async def close(self) -> None:
        """Flush what is queued, stop the writer, release the connections."""
        self._closed = True
        self._wake.set()
        if self._writer is not None:
            await self._writer
        await self._log.close()
        await self.engine.dispose()

    # ------------------------------------------------------------------------ the log

    def append_nowait(
        self, room_id: str, seq: int, kind: str, data: dict[str, Any], epoch: int | None = None,
        snapshot: tuple[int, dict[str, Any]] | None = None,
    ) -> asyncio.Future[None]:
        """Queue one log entry; the returned future completes once it is committed (or fails
        with :class:`StoreError`). Entries commit in the order they were queued. With an
        ``epoch`` (the room's owner's, under a lease) the entry is refused with :class:`Fenced`
        if the room has a newer epoch: checked in the transaction that would store it.

        ``snapshot`` (its form, its state) is the room's state before this entry: it replaces
        the room's snapshot in the transaction that stores the entry, or is refused with it
        (so it never covers an entry that is not stored, nor comes from a former owner)."""
        if self._closed:
            raise StoreError("the store is closed")
        loop = self._loop
        if loop is None:
            # Looked up once: on Python 3.11 every lookup of the running loop is a getpid
            # system call, and this runs for every move.
            loop = self._loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        now = time.time()
        # msgspec, not json.dumps: one entry per move, and it is ten times cheaper.
        row = (room_id, seq, kind, _ENTRY_ENCODER.encode(data).decode(), now)
        snap = None
        if snapshot is not None:
            snap = (room_id, seq, snapshot[0], epoch,
                    json.dumps(snapshot[1], separators=(",", ":")), now)
        self._pending.append((row, fut, epoch, snap))
        self._wake.set()
        return fut

    async def append(self, room_id: str, seq: int, kind: str, data: dict[str, Any],
                     epoch: int | None = None,
                     snapshot: tuple[int, dict[str, Any]] | None = None) -> None:
        """Store one log entry and wait until it is durable (see :meth:`append_nowait`)."""
        await self.append_nowait(room_id, seq, kind, data, epoch, snapshot)

    async def _write_loop(self) -> None:
        loop = asyncio.get_running_loop()
        last = 0.0
        while True:
            await self._wake.wait()
            self._wake.clear()
            if loop.time() - last < BATCH_WINDOW * 4 and not self._closed:
                # Busy: let a few milliseconds' worth of actions join this commit. A commit
                # costs far more than a row, so this is what lets hundreds of tables write.
                await asyncio.sleep(BATCH_WINDOW)
            last = loop.time()
            while self._pending:
                batch, self._pending = self._pending, []
                if self._failed:
                    # A room whose entry failed takes no later entry: its log must have no gap.
                    kept = []
                    for queued in batch:
                        row, fut = queued[0], queued[1]
                        if row[0] in self._failed:
                            if not fut.done():
                                fut.set_exception(StoreError("an earlier action was not stored"))
                        else:
                            kept.append(queued)
                    batch = kept
                    if not batch:
                        continue
                fenced: set[str] = set()
                try:
                    fenced = await self._commit_rows(batch)
                except Exception as exc:  # any other database failure fails the whole batch
                    self._failed.update(row[0] for row, _, _, _ in batch)
                    for _, fut, _, _ in batch:
                        if not fut.done():
                            fut.set_exception(StoreError(f"could not store the action: {exc}"))
                    continue
                self.commits += 1
                self._failed.update(fenced)
                for row, fut, epoch, _ in batch:
                    if fut.done():
                        continue
                    if row[0] in fenced:
                        fut.set_exception(Fenced(
                            f"room {row[0]}: epoch {epoch} is no longer the newest; "
                            "another process owns the room"))
                    else:
                        fut.set_result(None)
            if self._closed and not self._pending:
                return

    async def _commit_rows(self, batch: list[_Queued]) -> set[str]:
        """Store the batch's rows in one transaction, but for the rooms whose epoch is no
        longer the newest (refused in that same transaction); returns those rooms."""
        epochs: dict[str, int] = {}
        for row, _, epoch, _ in batch:
            if epoch is not None:
                epochs[row[0]] = epoch
        rows = [queued[0] for queued in batch]
        snaps = [queued[3] for queued in batch if queued[3] is not None]
        # A busy database is waited out, however long: the rows are good, and failing them
        # would break their tables (each would have to be rebuilt from its log).
        while True:
            try:
                lock = self._write_lock
                async with lock if lock is not None else contextlib.nullcontext():
                    return await self._log.commit(rows, epochs, snaps)
            except Busy:
                await asyncio.sleep(WRITER_RETRY)

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection]:
        """A pooled connection for reading; :class:`StoreBusy` if none comes free in time.
        (Other modules reading the same database should read through here too.)"""
        try:
            async with self.engine.connect() as conn:
                yield conn
        except Exception as exc:
            if is_busy(exc):
                raise StoreBusy(f"the database is busy: {_first_line(exc)}") from exc
            raise

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction, committed at the end; on SQLite, after this process's other
        writers (see the module's notes). :class:`StoreBusy` when the database is
        overloaded. Every module that writes to the store's database should write through
        here: a transaction opened on the engine directly competes for SQLite's write lock
        in its busy loop instead of waiting its turn."""
        lock = self._write_lock
        async with lock if lock is not None else contextlib.nullcontext():
            try:
                async with self.engine.begin() as conn:
                    yield conn
            except Exception as exc:
                if is_busy(exc):
                    raise StoreBusy(f"the database is busy: {_first_line(exc)}") from exc
                raise

    async def fence(self, room_id: str, epoch: int) -> bool:
        """Make ``epoch`` the room's newest (a new owner does this before reading the log):
        False if the room already has a newer one. On PostgreSQL this waits for a former
        owner's transaction in flight, so every append after it sees the new epoch."""
        async with self.transaction() as conn:
            result = await conn.execute(
                room_epochs.update().where(room_epochs.c.room_id == room_id)
                .where(room_epochs.c.epoch <= epoch).values(epoch=epoch))
            if result.rowcount:
                return True
            newest = (await conn.execute(sa.select(room_epochs.c.epoch)
                                         .where(room_epochs.c.room_id == room_id))).scalar()
            if newest is not None:
                return False
            try:
                async with conn.begin_nested():
                    await conn.execute(room_epochs.insert().values(room_id=room_id, epoch=epoch))
            except sa.exc.IntegrityError:
                # Another owner's first claim won the race to the row: it is the newer one
                # only if its epoch is.
                newest = (await conn.execute(sa.select(room_epochs.c.epoch)
                                             .where(room_epochs.c.room_id == room_id))).scalar()
                return newest is not None and int(newest) <= epoch
            return True

    async def epoch(self, room_id: str) -> int | None:
        """The room's newest epoch, or None if it was never run under a lease."""
        async with self.connection() as conn:
            value = (await conn.execute(sa.select(room_epochs.c.epoch)
                                        .where(room_epochs.c.room_id == room_id))).scalar()
        return None if value is None else int(value)

    async def load_room(self, room_id: str,
                        snapshot_format: int) -> tuple[Snapshot | None, list[LogEntry]]:
        """What rebuilds a room: its newest snapshot (if it has one in ``snapshot_format``; else
        None) and the log's entries from the one it comes before (without a snapshot: the whole
        log). Clears a failed append's hold on the room, as :meth:`load_log` does."""
        self._failed.discard(room_id)
        async with self.connection() as conn:
            row = (await conn.execute(sa.select(room_snapshots)
                                      .where(room_snapshots.c.room_id == room_id))).first()
            snapshot = None
            if row is not None and row.format == snapshot_format:
                snapshot = Snapshot(int(row.seq), int(row.format),
                                    None if row.epoch is None else int(row.epoch),
                                    json.loads(row.data), float(row.at))
            # The rows before a snapshot stay (the log is the record), and the snapshot was
            # stored with its own entry: the entries from ``seq`` on are always all there.
            result = await conn.execute(
                sa.select(room_log.c.seq, room_log.c.kind, room_log.c.data, room_log.c.at)
                .where(room_log.c.room_id == room_id)
                .where(room_log.c.seq >= (0 if snapshot is None else snapshot.seq))
                .order_by(room_log.c.seq)
            )
            entries = [LogEntry(r.seq, r.kind, json.loads(r.data), r.at) for r in result]
        return snapshot, entries

    async def load_log(self, room_id: str) -> list[LogEntry]:
        """A room's whole log, in order. Loading it (to rebuild the room) clears a failed
        append's hold on the room: the rebuilt table goes on from what is stored."""
        self._failed.discard(room_id)
        async with self.connection() as conn:
            result = await conn.execute(
                sa.select(room_log.c.seq, room_log.c.kind, room_log.c.data, room_log.c.at)
                .where(room_log.c.room_id == room_id)
                .order_by(room_log.c.seq)
            )
            return [LogEntry(r.seq, r.kind, json.loads(r.data), r.at) for r in result]

    # ---------------------------------------------------------------------- rooms, matches

    async def create_room(self, room_id: str, code: str, rules: Any, seats: int) -> None:
        """Store a new room's header."""
        now = time.time()
        async with self.transaction() as conn:
            await conn.execute(
                rooms.insert().values(
                    id=room_id, code=code, created_at=now, updated_at=now, status="open",
                    rules=json.dumps(rules), seats=seats,
                )
            )

    async def set_status(self, room_id: str, status: str) -> None:
        """Mark a room ``open`` or ``closed`` (closed rooms are not restored at start)."""
        await self.set_statuses([room_id], status)

    async def set_statuses(self, room_ids: Sequence[str], status: str) -> None:
        """Mark rooms ``open`` or ``closed`` in one transaction (the hub closes the rooms that
        fell idle together: one write each would queue behind the log's)."""
        if not room_ids:
            return
        async with self.transaction() as conn:
            await conn.execute(_SET_STATUSES, {"ids": list(room_ids), "new_status": status,
                                               "now": time.time()})

    async def find_room(self, key: str) -> RoomRow | None:
        """A room by id or by its join code (codes are case-insensitive)."""
        async with self.connection() as conn:
            result = await conn.execute(
                sa.select(rooms).where(sa.or_(rooms.c.id == key, rooms.c.code == key.upper()))
            )
            row = result.first()
        return None if row is None else _room(row)

    async def live_rooms(self, active_since: float | None = None) -> list[RoomRow]:
        """Every room not closed (whose last log entry is no older than ``active_since``, a
        ``time.time()``, if given): what a restarted server brings back."""
        query = sa.select(rooms).where(rooms.c.status != "closed")
        if active_since is not None:
            query = query.where(_last_activity() >= active_since)
        async with self.connection() as conn:
            result = await conn.execute(query)
            return [_room(r) for r in result]

    async def close_idle_rooms(self, idle_since: float) -> int:
        """Mark closed every open room whose last log entry is older than ``idle_since`` (a
        ``time.time()``); returns how many. Their logs and matches stay."""
        async with self.transaction() as conn:
            result = await conn.execute(
                rooms.update()
                .where(rooms.c.status != "closed")
                .where(sa.func.coalesce(_last_activity(), rooms.c.created_at) < idle_since)
                .values(status="closed", updated_at=time.time())
            )
            return int(result.rowcount or 0)

    async def save_match(
        self, match_id: str, room_id: str, replay: dict[str, Any], winner: int | None
    ) -> None:
        """Store a finished match's replay file."""
        async with self.transaction() as conn:
            await conn.execute(
                matches.insert().values(
                    id=match_id, room_id=room_id, finished_at=time.time(), winner=winner,
                    replay=json.dumps(replay),
                )
            )
        for listener in list(self.match_listeners):
            try:
                await listener(match_id, room_id, replay)
            except Exception:  # a listener's failure must not undo nor hold up the match
                log.exception("match %s: a listener failed", match_id)

    async def get_match(self, match_id: str) -> dict[str, Any] | None:
        """A finished match's replay file, or None."""
        async with self.connection() as conn:
            result = await conn.execute(
                sa.select(matches.c.replay).where(matches.c.id == match_id)
            )
            row = result.first()
        return None if row is None else dict(json.loads(row.replay))

    async def match_finished_at(self, match_id: str) -> float | None:
        """When a finished match was stored (``time.time()``), or None for no such match."""
        async with self.connection() as conn:
            result = await conn.execute(
                sa.select(matches.c.finished_at).where(matches.c.id == match_id)
            )
            row = result.first()
        return None if row is None else float(row.finished_at)

    async def room_matches(self, room_id: str) -> Sequence[str]:
        """The ids of a room's finished matches, oldest first."""
        async with self.connection() as conn:
            result = await conn.execute(
                sa.select(matches.c.id).where(matches.c.room_id == room_id)
                .order_by(matches.c.finished_at)
            )
            return [r.id for r in result]


def _last_activity() -> Any:
    """When a room last logged anything: its last entry's time (found by the log's key, not a
    scan of its entries)."""
    return (sa.select(room_log.c.at).where(room_log.c.room_id == rooms.c.id)
            .order_by(room_log.c.seq.desc()).limit(1).scalar_subquery())


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def _room(row: Any) -> RoomRow:
    return RoomRow(row.id, row.code, row.status, json.loads(row.rules), row.seats, row.created_at)


def _upgrade(sync_conn: Any) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = sync_conn
    command.upgrade(cfg, "head")


async def reset_database(url: str) -> None:
    """Drop every nertz table (and Alembic's version table): for tests on a shared database."""
    import nertz.server.players.tables  # noqa: F401  (their tables join the schema)

    engine = create_async_engine(normalise_url(url))
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
        await conn.execute(sa.text("DROP TABLE IF EXISTS alembic_version"))
    await engine.dispose()


__all__ = [
    "Fenced",
    "LogEntry",
    "MatchListener",
    "RoomRow",
    "Snapshot",
    "Store",
    "StoreBusy",
    "StoreError",
    "default_url",
    "is_busy",
    "normalise_url",
    "reset_database",
]
