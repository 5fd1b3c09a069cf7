"""The rooms this process owns: creating, finding, restoring them, closing the idle ones, and
the store beneath.

A room with nobody connected for :data:`ROOM_IDLE_SECONDS` closes: it leaves memory
(:meth:`Hub.unload`, which stops its table, bots and clock and lets its writes settle) and is
marked closed in the store, where its log and finished matches stay (the matches downloadable).
A start brings back only rooms not closed and active within that time; the others are marked
closed without being loaded. ``unload`` is also the seam for rooms that leave memory without
closing and load again on demand (:meth:`Hub.get` rebuilds any open room from its log): alone,
a room whose match is over and that nobody is in rests so after :data:`REST_SECONDS`, and is
marked closed once its idle time is up.

Alone (``nertz serve``), this process owns every room. As one of many (a
:class:`~nertz.server.cluster.Node`), it owns a room only while it holds the room's lease: the
hub takes the lease (and fences the log with its epoch) before it creates or rebuilds a room,
raises :class:`OwnedElsewhere` for a room another process owns (the edge then pipes or relays to
it), lets a room go when its lease is taken (:meth:`Hub.step_down`) and takes over rooms whose
owner died (:meth:`Hub.adopt`). Every table can be rebuilt from its stored log on any process.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import secrets
import time
from typing import Any

from nertz.rules import Rules
from nertz.server.bus import Bus, LocalBus
from nertz.server.cluster.node import Node
from nertz.server.cluster.pipe import MOVED_CODE
from nertz.server.limits import give_back_memory
from nertz.server.live import LiveRoom
from nertz.server.room.entries import UnknownEntry
from nertz.server.room.phase import Phase
from nertz.server.room.snapshot import FORMAT as SNAPSHOT_FORMAT
from nertz.server.room.table import Table
from nertz.server.store import WRITER_RETRY, Store, StoreBusy

log = logging.getLogger("nertz.hub")

LATENCY_SECONDS = 3.0
"""How often every room hears its seats' latencies (and idle rooms are looked for)."""

COLLECT_SECONDS = 60.0
"""How often the server collects its old garbage and gives freed memory back. ``nertz serve``
keeps the collector from walking old objects on its own (its pauses hurt round trips), but
the server's libraries leave some cycles behind (exceptions and their frames, a rating's, a
query's): uncollected, they would grow the process for good. Each walks only what came since
the last one (:func:`~nertz.server.limits.give_back_memory`), a pause of some tens of ms at
200 rooms of four; every :data:`DEEP_COLLECT_SECONDS` one walks everything."""

DEEP_COLLECT_SECONDS = 3600.0
"""How often the minute's collection walks every object, the long-lived ones too (see
:func:`~nertz.server.limits.give_back_memory`): a pause of a few hundred ms at 200 rooms, for
the cycles that became garbage after a collection had frozen them. A closed socket and a room
that left memory leave none (they are freed by reference counting), so little waits for it:
under the soak's churn, deep collections every 30 s found nothing that the others had not.
It comes only once the frozen objects have grown (:data:`DEEP_COLLECT_GROWTH`)."""

DEEP_COLLECT_GROWTH = 1.1
"""A deep collection waits until the objects frozen by the minute's collections are this many
times as many as at their fewest since the last deep one (or the start). Objects freed by
reference counting leave the frozen set, so a server whose rooms come and go at a steady size
keeps a steady count and skips the pause of a deep walk (0.17 to 0.46 s at 200 rooms) hour
after hour; cycles that became garbage while frozen add to the count, and so does a server
that grows, and either brings the deep collection back."""

ROOM_IDLE_SECONDS = 1800.0
"""How long a room may have nobody connected before it closes (``nertz serve
--room-idle-minutes``)."""

REST_SECONDS = 10.0
"""How long a room nobody is in, its match over, stays in memory before it leaves (alone, not
one of many: it stays open and is rebuilt from its log if someone comes back; it closes once
idle for :data:`ROOM_IDLE_SECONDS`). Most rooms spend their idle time so, and kept whole they
were most of a busy server's memory."""

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""Join codes avoid letters and digits that read alike (0/O, 1/I)."""


class OwnedElsewhere(Exception):
    """The room is owned by another process of the service (``owner``): relay to it."""

    def __init__(self, room_id: str, owner: str) -> None:
        super().__init__(f"room {room_id} is owned by {owner}")
        self.room_id = room_id
        self.owner = owner


class Hub:
    """Every live room of this process, by room id."""

    def __init__(
        self, store: Store, start_bots: bool = True, deal_seed: int | None = None,
        idle_seconds: float = ROOM_IDLE_SECONDS, bus: Bus | None = None,
        node: Node | None = None,
    ) -> None:
        self.store = store
        self.node = node
        """This process among the service's (None: alone, owning every room)."""
        if node is not None:
            node.on_lost = self.step_down
            node.on_orphan = self.adopt
        self.bus: Bus = bus if bus is not None else LocalBus()
        """Who owns which room, and the road from a room to its sockets."""
        self.rooms: dict[str, LiveRoom] = {}
        self.idle_seconds = idle_seconds
        self._resting: dict[str, float] = {}
        """Rooms out of memory, still open, nobody in them since when: they close when idle."""
        self.start_bots = start_bots
        self.deal_seed = deal_seed
        """Deal every room's matches from this seed (``nertz serve --deal-seed``), if set."""
        self._lock = asyncio.Lock()
        self.too_new: dict[str, UnknownEntry] = {}
        """Rooms whose log a newer version wrote (:meth:`_leave_too_new`): never read again."""
        self._ticker: asyncio.Task[None] | None = None

    async def restore_all(self) -> int:
        """Bring back every room that was live when the server stopped (open, and active within
        the idle time); returns how many. The idle ones are marked closed, not loaded. A room
        that cannot be rebuilt is logged and left out: it must not stop the others. As one of
        many processes, nothing: rooms come back as their leases run out (:meth:`adopt`) or
        on demand."""
        if self.node is not None:
            return 0
        cutoff = time.time() - self.idle_seconds
        closed = await self.store.close_idle_rooms(cutoff)
        if closed:
            log.info("%d idle rooms closed", closed)
        for row in await self.store.live_rooms(active_since=cutoff):
            try:
                await self.get(row.id)
            except UnknownEntry:
                continue  # said once already, where it was met (_leave_too_new)
            except Exception:
                log.exception("room %s could not be restored", row.id)
        return len(self.rooms)

    @property
    def tables(self) -> dict[str, Table]:
        """Every live room's table, by room id."""
        return {key: room.table for key, room in self.rooms.items()}

    async def create(self, rules: Rules, seats: int,
                     same_deal: tuple[str, int | str] | None = None,
                     fair_races: bool | None = None) -> LiveRoom:
        """A new room with a fresh id and join code (``same_deal``, ``fair_races``: see
        :meth:`Table.create`)."""
        for _ in range(20):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))
            if await self.store.find_room(code) is None:
                break
        room_id = secrets.token_hex(8)
        epoch = await self._own(room_id)
        table = await Table.create(self.store, rules, seats, room_id, code, same_deal,
                                   fair_races, epoch)
        return self._adopt(table)

    async def _own(self, room_id: str) -> int | None:
        """Take the room's lease and make its epoch the newest in the store (before reading
        or writing its log); raises :class:`OwnedElsewhere`. None when alone."""
        if self.node is None:
            return None
        claim = await self.node.claim(room_id)
        if not claim.owned:
            raise OwnedElsewhere(room_id, claim.owner)
        if not await self.store.fence(room_id, claim.epoch):  # pragma: no cover - lease lost
            self.node.drop(room_id)
            raise OwnedElsewhere(room_id, "a newer owner")
        return claim.epoch

    async def get(self, key: str) -> LiveRoom | None:
        """A room by id or join code, rebuilt from its log if this process does not hold it."""
        room = self.rooms.get(key)
        if room is not None and not room.table.broken:
            return room
        if self.node is not None:
            # Another process's room: say so without waiting on this process's rebuilds.
            found = await self.store.find_room(key)
            if found is None or found.status == "closed":
                return None
            if found.id not in self.rooms:
                claim = await self.node.claim(found.id)
                if not claim.owned:
                    raise OwnedElsewhere(found.id, claim.owner)
        async with self._lock:
            row = await self.store.find_room(key)
            if row is None or row.status == "closed":
                return None
            room = self.rooms.get(row.id)
            if room is not None and not room.table.broken:
                return room
            self._resting.pop(row.id, None)  # someone came back: it is live again
            if room is not None:
                # A broken table: stop it and let its queued writes settle before reading.
                room.close()
                await room.settled()
                del self.rooms[row.id]
            too_new = self.too_new.get(row.id)
            if too_new is not None:
                # A log only grows: it cannot be read now either. Claimed above only because
                # nobody held it: still left for a newer process.
                if self.node is not None:
                    await self.node.abandon(row.id)
                raise too_new
            epoch = await self._own(row.id)
            snapshot, entries = await self.store.load_room(row.id, SNAPSHOT_FORMAT)
            try:
                table = await Table.restore(
                    self.store, row.id, row.code, Rules.from_spec(row.rules), row.seats,
                    entries, epoch, snapshot)
            except UnknownEntry as exc:
                await self._leave_too_new(exc)
                raise
            room = self._adopt(table)
            room.start_seated_bots()
            log.info("room %s restored from %s%d log entries", row.id,
                     "" if snapshot is None else f"its snapshot at {snapshot.seq} and ",
                     len(entries))
            return room

    async def _leave_too_new(self, exc: UnknownEntry) -> None:
        """A room whose log this version cannot read (a newer one wrote it): say so, never
        read it again, and let its lease run out now so that a newer process takes it over at
        once (:meth:`adopt` passes it by here). Nothing was written to its log."""
        room_id = exc.room_id or ""
        log.error("%s; this process (an older version) leaves the room to one that knows it "
                  "(docs/deploy.md, \"Upgrading\")", exc)
        self.too_new[room_id] = exc
        if self.node is not None:
            # Abandoned, not released: the lease stays listed as run out, so the newer
            # processes' renewal rounds find it (Node.on_orphan) without anyone asking.
            await self.node.abandon(room_id)

    def _adopt(self, table: Table) -> LiveRoom:
        table.deal_seed = self.deal_seed
        if not self.bus.claim(table.id):  # pragma: no cover - one process owns every room
            table.close()
            raise RuntimeError(f"room {table.id} is owned by {self.bus.owner(table.id)}")
        room = LiveRoom(table, self.bus, start_bots=self.start_bots)
        self.rooms[table.id] = room
        if self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick())
        return room

    async def _tick(self) -> None:
        # Each seat's latency, to everyone, every few seconds: one timer for all rooms; and
        # the rooms nobody is in, closed once they have been empty long enough.
        loop = asyncio.get_running_loop()
        collected = loop.time()
        most = len(self.rooms)  # rooms in memory at most since the last collection
        deep_at = collected
        frozen: int | None = None  # the fewest objects frozen since the last deep collection
        while True:
            await asyncio.sleep(LATENCY_SECONDS)
            # In a call of its own, so that no local of this endless loop keeps the last
            # closed room alive.
            await self._tick_once(time.monotonic())
            most = max(most, len(self.rooms))
            if loop.time() - collected >= COLLECT_SECONDS:
                # The allocator's pages go back only once rooms have left memory: rooms that
                # came meanwhile reuse what others freed, and the trim is a pause of its own.
                deep = (frozen is not None and loop.time() - deep_at >= DEEP_COLLECT_SECONDS
                        and gc.get_freeze_count() >= frozen * DEEP_COLLECT_GROWTH)
                give_back_memory(trim=len(self.rooms) < most, deep=deep)
                collected = loop.time()
                if deep or frozen is None:
                    frozen = gc.get_freeze_count()
                else:
                    # From the low point: a server that shrank after its last deep collection
                    # (a day's peak) would otherwise gather garbage up to that peak's size.
                    frozen = min(frozen, gc.get_freeze_count())
                if deep:
                    deep_at = collected
                most = len(self.rooms)

    async def _tick_once(self, now: float) -> None:
        idle, resting = [], []
        for room in list(self.rooms.values()):
            room.send_latency()
            if room.empty_since is None:
                continue
            if room.table.phase.between_matches:
                # Nobody to catch up and nothing in play: most rooms spend their idle time so
                # (a finished match, everyone gone), and their broadcasts were most of what
                # they kept. Whoever comes back gets the whole state.
                room.fanout.forget_history()
            empty = now - room.empty_since
            if empty >= self.idle_seconds:
                idle.append(room)
            elif (empty >= REST_SECONDS and self.node is None
                  and room.table.phase is Phase.MATCH_OVER):
                resting.append(room)
        if idle:
            try:
                await self.close_rooms(idle)
            except Exception:  # pragma: no cover - a room still in memory is tried again next
                # time; one already out of it is closed at the next start, by its last entry
                log.exception("%d idle rooms could not be closed", len(idle))
        if resting:
            since = {room.id: room.empty_since or now for room in resting}
            for room in await self._unload(resting, only_empty=True):
                self._resting[room.id] = since[room.id]
        if any(now - t >= self.idle_seconds for t in self._resting.values()):
            await self._close_resting(now)

    async def _close_resting(self, now: float) -> None:
        # Under the hub's lock: a rebuild (someone came back) cannot slip in between.
        async with self._lock:
            for key in [key for key in self._resting if key in self.rooms]:
                del self._resting[key]  # back in memory (rebuilt): the live room's own clock
            due = [key for key, t in self._resting.items() if now - t >= self.idle_seconds]
            try:
                await self.store.set_statuses(due, "closed")
            except StoreBusy:  # overloaded: tried again at the next turn
                return
            for key in due:
                del self._resting[key]
                log.info("room %s closed: nobody in it for %g s", key, self.idle_seconds)

    async def step_down(self, room_id: str) -> None:
        """Another process took the room's lease: let the room go at once, closing its sockets
        with "reconnect" (their clients reach the new owner). Its log is not touched again:
        writes still queued are refused by their old epoch."""
        room = self.rooms.pop(room_id, None)
        if self.node is not None:
            self.node.drop(room_id)
        if room is None:
            return
        for sink in list(room.fanout.sinks):
            close = getattr(sink, "close", None)
            if close is not None:
                close(MOVED_CODE, "the room moved: reconnect")
        room.close()
        self.bus.release(room_id)
        log.warning("room %s: stepped down (another process owns it now)", room_id)

    async def adopt(self, room_id: str) -> None:
        """Take over a room whose owner stopped renewing its lease (rebuilt from its log)."""
        if room_id in self.too_new:
            return  # a newer process's to take: this one cannot read its log
        try:
            room = await self.get(room_id)
        except OwnedElsewhere:
            return  # another process was quicker
        if room is None and self.node is not None:
            await self.node.leases.forget(room_id)  # closed meanwhile: nobody takes it
        elif room is not None:
            log.info("room %s: taken over", room_id)

    async def unload(self, room: LiveRoom) -> None:
        """Take a room out of memory: its table, bots and clock stop and its writes settle
        (the room stays stored; :meth:`get` would rebuild it)."""
        await self._unload([room])

    async def _unload(self, rooms: list[LiveRoom], only_empty: bool = False) -> list[LiveRoom]:
        async with self._lock:
            if only_empty:
                # Someone may have come back while this waited its turn: their room stays.
                rooms = [room for room in rooms if not room.fanout.sinks]
            for room in rooms:
                room.close()
            # Together: one at a time, each waiting its writes behind every other room's,
            # rooms fell idle faster than they left memory (the soak's server grew for good).
            await asyncio.gather(*(room.settled() for room in rooms))
            for room in rooms:
                if self.rooms.get(room.id) is room:
                    del self.rooms[room.id]
                    self.bus.release(room.id)
                    if self.node is not None:
                        await self.node.release(room.id)
        return rooms

    async def close_room(self, room: LiveRoom) -> None:
        """Close a room nobody is in: out of memory, and marked closed so that it is neither
        restored nor rebuilt (its log and finished matches stay)."""
        await self.close_rooms([room])

    async def close_rooms(self, rooms: list[LiveRoom]) -> None:
        """Close rooms nobody is in (see :meth:`close_room`): out of memory together, then
        marked closed in one write."""
        rooms = await self._unload(rooms, only_empty=True)
        while True:
            try:
                await self.store.set_statuses([room.id for room in rooms], "closed")
                break
            except StoreBusy:  # overloaded, not refused: the rooms must not come back
                await asyncio.sleep(WRITER_RETRY)
        for room in rooms:
            log.info("room %s closed: nobody in it for %g s", room.id, self.idle_seconds)

    async def closed_info(self, key: str) -> dict[str, Any] | None:
        """A closed room as the API shows it (phase ``closed``, its finished matches), or
        None if ``key`` names no closed room."""
        row = await self.store.find_room(key)
        if row is None or row.status != "closed":
            return None
        rules = Rules.from_spec(row.rules)
        return {"id": row.id, "code": row.code, "rules": rules.to_spec(),
                "options": rules.to_options(), "seats": row.seats, "phase": "closed",
                "host": None, "players": [], "match": None,
                "matches": list(await self.store.room_matches(row.id))}

    async def close(self) -> None:
        """Stop every table (rooms stay stored)."""
        if self._ticker is not None:
            self._ticker.cancel()
        for room in self.rooms.values():
            room.close()
        for room in self.rooms.values():
            await room.settled()
            self.bus.release(room.id)
            if self.node is not None:
                # Stopping, not leaving: another process takes the room over at once.
                await self.node.abandon(room.id)
        self.rooms.clear()

    def stats(self) -> dict[str, Any]:
        """Counts for health checks and benchmarks."""
        return {
            "rooms": len(self.rooms),
            "sockets": sum(len(r.fanout.sinks) for r in self.rooms.values()),
            "commits": self.store.commits,
        }
