"""This process as one of the service's: its leases, its inbox, its pipes, its remote sockets.

A :class:`Node` is what the hub and the edge see of the cluster layer. Every
:data:`~nertz.server.cluster.lease.RENEW_SECONDS` it renews the leases of the rooms it owns
(a room whose lease was taken meanwhile is let go: :attr:`Node.on_lost`), says how many it owns
(:mod:`~nertz.server.cluster.placement`: where new rooms go), takes over rooms whose owner
stopped renewing (:attr:`Node.on_orphan`: the hub rebuilds them from the log), and closes the
pipes of rooms whose owner changed (their clients reconnect and reach the new one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import secrets
import socket
from collections.abc import Awaitable, Callable
from typing import Final

from redis.asyncio import Redis

from nertz.server.cluster.lease import LEASE_SECONDS, RENEW_SECONDS, Claim, Leases
from nertz.server.cluster.pipe import MOVED_CODE, Pipes
from nertz.server.cluster.placement import Placement
from nertz.server.cluster.relay import Message, Relay
from nertz.server.cluster.remote import RemoteSocket

log = logging.getLogger("nertz.node")

ADOPT_PER_ROUND: Final = 20
"""Orphaned rooms one process takes over per renewal round (the others take the rest)."""

DEFAULT_PREFIX: Final = "nertz:"
"""The Redis key prefix of a service (``nertz serve --redis-prefix``): services sharing one
Redis keep apart by it."""


HOLDER_SILENT_SECONDS: Final = 10.0
"""A process that has not beaten for this long is taken for dead: the sockets it held for rooms
owned here are dropped (longer than a lease, so that a slow process is not cut off)."""


class ClusterError(RuntimeError):
    """The cluster layer cannot start: what is missing, for people."""


def process_name() -> str:
    """A name for this process unique across machines and restarts."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}".replace(" ", "_")


class Node:
    """This process in a service of many. Build with :meth:`connect`."""

    def __init__(self, redis: Redis, prefix: str = DEFAULT_PREFIX, process: str | None = None,
                 ttl: float = LEASE_SECONDS) -> None:
        self.redis = redis
        self.prefix = prefix
        self.process = process or process_name()
        self.leases = Leases(redis, prefix, self.process, ttl)
        self.relay = Relay(redis, prefix, self.process)
        self.relay.handler = self._handle
        self.pipes = Pipes(self.relay)
        self.placement = Placement(redis, prefix, self.process)
        self.held: dict[str, int] = {}
        """Each room this process owns and the epoch it holds it under."""
        self.remote: dict[str, RemoteSocket] = {}
        """Sockets held by other processes for rooms owned here, by socket id."""
        self.on_socket: Callable[[str, RemoteSocket], None] | None = None
        """Called with a room id and a socket another process opened for it (the edge runs
        the socket's session here, the owner)."""
        self.on_lost: Callable[[str], Awaitable[None]] | None = None
        """Called with each room whose lease another process took (the hub lets it go)."""
        self.on_orphan: Callable[[str], Awaitable[None]] | None = None
        """Called with each room whose owner stopped renewing (the hub tries to take it)."""
        self._task: asyncio.Task[None] | None = None
        self._renew_seconds = min(RENEW_SECONDS, ttl / 4)

    @classmethod
    async def connect(cls, url: str, prefix: str = DEFAULT_PREFIX,
                      process: str | None = None, ttl: float = LEASE_SECONDS) -> Node:
        """Reach Redis at ``url`` (raising :class:`ClusterError` naming it if it cannot be
        reached) and start listening and renewing."""
        redis = Redis.from_url(url, socket_connect_timeout=5, health_check_interval=10)
        try:
            await redis.ping()
        except Exception as exc:
            await redis.aclose()
            raise ClusterError(f"Redis is not reachable at {url}: {exc}") from None
        node = cls(redis, prefix, process, ttl)
        await node.relay.start()
        await node.placement.beat(0)  # known at once as a place for new rooms
        node._task = asyncio.get_running_loop().create_task(node._rounds(), name="nertz-node")
        return node

    async def close(self) -> None:
        """Stop renewing and relaying (leases given up first by :meth:`release`)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        await self.relay.close()
        await self.redis.aclose()

    # ------------------------------------------------------------------ ownership

    async def claim(self, room_id: str) -> Claim:
        """Own the room if it is free (or its lease ran out); see :meth:`Leases.acquire`."""
        claim = await self.leases.acquire(room_id)
        if claim.owned:
            self.held[room_id] = claim.epoch
        return claim

    async def place(self) -> str:
        """The process that should own a new room: the live one owning the fewest (this one
        when no other is alive, or on a tie)."""
        return await self.placement.pick()

    async def release(self, room_id: str) -> None:
        """Give the room's lease up (it left this process's memory)."""
        epoch = self.held.pop(room_id, None)
        if epoch is not None:
            with contextlib.suppress(Exception):
                await self.leases.release(room_id, epoch)

    async def abandon(self, room_id: str) -> None:
        """Let another process take the room over at once (this one is stopping)."""
        epoch = self.held.pop(room_id, None)
        if epoch is not None:
            with contextlib.suppress(Exception):
                await self.leases.abandon(room_id, epoch)

    def drop(self, room_id: str) -> None:
        """Forget a room whose lease is no longer ours, and its remote sockets."""
        self.held.pop(room_id, None)

    # ------------------------------------------------------------------ messages

    def _handle(self, message: Message) -> None:
        kind = message["k"]
        if kind in ("out", "close"):
            self.pipes.deliver(message)
        elif kind == "open":
            sock = RemoteSocket(self.relay, message["from"], message["sock"], message["addr"],
                                message.get("rtt"))
            if message["room"] not in self.held or self.on_socket is None:
                # Not ours (any more): the client reconnects and finds the owner.
                sock.close(MOVED_CODE, "the room moved: reconnect")
                return
            self.remote[sock.id] = sock
            self.on_socket(message["room"], sock)
        elif kind == "frame":
            found = self.remote.get(message["sock"])
            if found is not None:
                found.arrived(message["env"])
        elif kind == "gone":
            gone = self.remote.pop(message["sock"], None)
            if gone is not None:
                gone.gone()

    def forget_socket(self, sock: RemoteSocket) -> None:
        """A remote socket's session ended here."""
        self.remote.pop(sock.id, None)

    async def _drop_orphaned_sockets(self) -> None:
        """End the sessions of remote sockets whose holding process has stopped beating: it
        died (SIGKILL says no goodbye), so its clients' sockets are gone, and kept here they
        would count against their players' socket limits and keep their seats taken."""
        alive = await self.placement.alive(HOLDER_SILENT_SECONDS)
        for sock in [s for s in self.remote.values() if s.process not in alive]:
            self.remote.pop(sock.id, None)
            log.warning("socket %s: its process %s went silent; its session ends", sock.id,
                        sock.process)
            # Told too, in case it was only slow: it closes the client's socket, which
            # reconnects.
            sock.close(MOVED_CODE, "the server holding this socket went away: reconnect")

    # ------------------------------------------------------------------ the rounds

    async def _rounds(self) -> None:
        while True:
            await asyncio.sleep(self._renew_seconds)
            try:
                await self._round()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: try again next round (fencing keeps us safe)
                log.warning("node: renewal round failed: %s", exc)

    async def _round(self) -> None:
        for room_id in await self.leases.renew(dict(self.held)):
            if room_id in self.held:
                self.held.pop(room_id, None)
                log.warning("room %s: lease taken by another process; stepping down", room_id)
                if self.on_lost is not None:
                    await self.on_lost(room_id)
        # After the renewals, which matter more: the count then leaves out the rooms let go.
        await self.placement.beat(len(self.held))
        orphans = [r for r in await self.leases.expired() if r not in self.held]
        random.shuffle(orphans)
        for room_id in orphans[:ADOPT_PER_ROUND]:
            if self.on_orphan is not None:
                try:
                    await self.on_orphan(room_id)
                except Exception:
                    log.exception("room %s: could not take it over", room_id)
        if self.remote:
            await self._drop_orphaned_sockets()
        piped = self.pipes.rooms()
        if piped:
            owners = await self.leases.owners(list(piped))
            for room_id, owner in owners.items():
                if owner is not None:  # nobody yet: the pipes wait for the new owner
                    self.pipes.moved(room_id, owner)
