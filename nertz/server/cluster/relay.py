"""How a message reaches a room's owner, and its answers the sockets: Redis pub/sub.

Every process listens on one channel of its own, its inbox (``<prefix>proc:<process>``); the
lease (:mod:`nertz.server.cluster.lease`) says which process owns a room, so a message for a
room goes to its owner's inbox, and the owner's messages for a socket go to the inbox of the
process holding that socket. One fixed subscription per process (not one per room) means no
subscribe and unsubscribe traffic as rooms come and go, and a room's messages stay in one
ordered stream from one sender to one receiver.

What a process sends within one turn of its event loop to one other process goes as one
publish (a list of messages, MessagePack), in the order it was sent: a table's broadcast to the
sockets of another process costs one publish however many of its sockets are there.

Both roads are a Redis connection of the relay's own, made with redis-py's connection class
and settings (address, password, TLS, database from the service's URL) and driven directly: a
subscribed connection read reply by reply, and a publishing one that sends each batch as one
write and reads its replies. redis-py's ``PubSub`` object, pool and pipeline cost some 40
microseconds of CPU more per message delivered (their locks, retries, timeouts and message
dicts), and every move of a socket held on another process crosses the relay once or twice.
Both connections speak RESP2, whatever the URL says, so that a message is a plain reply.

Messages are dicts with a kind ``k``; see :mod:`nertz.server.cluster.pipe` (a socket held here
for a room owned elsewhere), :mod:`nertz.server.cluster.remote` (the owner's side of such a
socket) and :meth:`Relay.call` (a request that wants an answer: joining, a room's description).
Pub/sub keeps nothing for a process that is not listening: a message to a dead owner is lost,
which is what the lease's expiry and the clients' reconnecting and catching up are for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgspec
from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection

log = logging.getLogger("nertz.relay")

CALL_SECONDS: Final = 5.0
"""How long a :meth:`Relay.call` waits for the owner's answer."""

PIPELINE: Final = 64
"""At most this many queued publishes go to Redis in one pipeline."""

Message = dict[str, Any]
"""One message between processes (kind ``k``)."""

Handler = Callable[[Message], None]
"""Where the messages that reach this process go (in the order they came)."""


class RelayError(RuntimeError):
    """A call to a room's owner failed: it did not answer, or answered with an error."""

    def __init__(self, message: str, status: int = 503) -> None:
        super().__init__(message)
        self.status = status


class Relay:
    """This process's inbox and its road to every other process's."""

    def __init__(self, redis: Redis, prefix: str, process: str) -> None:
        self.redis = redis
        self.prefix = prefix
        self.process = process
        self.handler: Handler | None = None
        """Where incoming messages go (set by the node)."""
        self.calls: dict[str, Callable[[Message], Awaitable[Any]]] = {}
        """Each operation another process may call here, by name."""
        self._outgoing: dict[str, list[Message]] = {}
        self._ready: list[tuple[str, bytes]] = []
        self._wake: asyncio.Future[None] | None = None
        self._sending = False
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._flush_scheduled = False
        self._subscribed = asyncio.Event()
        self._encoder = msgspec.msgpack.Encoder()
        self._decoder = msgspec.msgpack.Decoder(list[dict[str, Any]])

    def _connection(self, role: str) -> AbstractConnection:
        """A new connection to the service's Redis, as its client would make one, on RESP2,
        named for what it does (``CLIENT LIST`` shows ``nertz-relay:<process>:<role>``)."""
        pool = self.redis.connection_pool
        return pool.connection_class(**{**pool.connection_kwargs, "protocol": 2,
                                        "client_name": f"nertz-relay:{self.process}:{role}"})

    def inbox(self, process: str) -> str:
        """The channel a process listens on."""
        return f"{self.prefix}proc:{process}"

    async def start(self) -> None:
        """Listen on this process's inbox and start sending (returns once listening)."""
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._listen(), name="nertz-relay-listen"),
                       loop.create_task(self._send_loop(), name="nertz-relay-send")]
        await asyncio.wait_for(self._subscribed.wait(), 10)

    async def close(self) -> None:
        """Send what is queued, then stop listening and sending."""
        self._flush()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._drained(), 2)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_exception(RelayError("this process is stopping"))

    async def _drained(self) -> None:
        while self._ready or self._sending:
            await asyncio.sleep(0.01)

    # ------------------------------------------------------------------ sending

    def send(self, process: str, message: Message) -> None:
        """Queue ``message`` for ``process``; it goes at the end of this turn of the loop,
        after everything queued for that process before it."""
        self._outgoing.setdefault(process, []).append(message)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        outgoing, self._outgoing = self._outgoing, {}
        ready = self._ready
        for process, messages in outgoing.items():
            ready.append((self.inbox(process), self._encoder.encode(messages)))
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    async def _send_loop(self) -> None:
        # One sender on one connection: publishes leave in the order they were queued.
        # Publishes queued while a batch was on its way leave together as the next batch: one
        # write and one read of its replies (under load, a round trip each was most of the
        # relay's cost).
        loop = asyncio.get_running_loop()
        conn: AbstractConnection | None = None
        while True:
            if not self._ready:
                self._wake = loop.create_future()
                await self._wake
                continue
            batch, self._ready = self._ready[:PIPELINE], self._ready[PIPELINE:]
            self._sending = True
            try:
                if conn is None:
                    conn = self._connection("out")
                    await conn.connect()  # type: ignore[no-untyped-call]
                await conn.send_packed_command(
                    conn.pack_commands([("PUBLISH", channel, payload)
                                        for channel, payload in batch]), check_health=False)
                for _ in batch:
                    await conn.read_response()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: the messages are lost, as to a dead process
                log.warning("relay: could not publish to %s: %s",
                            ", ".join(sorted({c for c, _ in batch})), exc)
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await conn.disconnect()
                conn = None
            finally:
                self._sending = False

    async def call(self, process: str, op: str, args: Message,
                   timeout: float = CALL_SECONDS) -> Any:
        """Ask ``process`` to run ``op`` (one of its :attr:`calls`) and wait for the answer."""
        call_id = secrets.token_hex(8)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[call_id] = fut
        self.send(process, {"k": "call", "id": call_id, "from": self.process, "op": op,
                            "args": args})
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            raise RelayError(f"the room's owner ({process}) did not answer") from None
        finally:
            self._waiting.pop(call_id, None)

    # ------------------------------------------------------------------ receiving

    async def _listen(self) -> None:
        delay = 0.1
        decode = self._decoder.decode
        receive = self._receive
        while True:
            conn = self._connection("inbox")
            try:
                await conn.connect()  # type: ignore[no-untyped-call]
                await conn.send_command("SUBSCRIBE", self.inbox(self.process))
                await conn.read_response(disable_decoding=True)  # the subscription's confirmation
                self._subscribed.set()
                delay = 0.1
                while True:
                    # No timeout: an inbox may rightly hear nothing for long (the client's
                    # socket timeout would end it and lose what came while it listened again).
                    item = await conn.read_response(disable_decoding=True, timeout=math.inf)
                    if isinstance(item, list) and len(item) == 3 and item[0] == b"message":
                        for message in decode(item[2]):
                            receive(message)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("relay: inbox lost (%s); listening again", exc)
                await asyncio.sleep(delay)
                delay = min(2.0, delay * 2)
            finally:
                with contextlib.suppress(Exception):
                    await conn.disconnect()

    def _receive(self, message: Message) -> None:
        kind = message.get("k")
        if kind == "call":
            asyncio.get_running_loop().create_task(self._answer(message))
        elif kind == "reply":
            fut = self._waiting.get(message["id"])
            if fut is not None and not fut.done():
                if "error" in message:
                    fut.set_exception(RelayError(message["error"], message.get("status", 503)))
                else:
                    fut.set_result(message.get("ok"))
        elif self.handler is not None:
            try:
                self.handler(message)
            except Exception:
                log.exception("relay: message %r failed", kind)

    async def _answer(self, message: Message) -> None:
        reply: Message = {"k": "reply", "id": message["id"]}
        op = self.calls.get(message["op"])
        try:
            if op is None:
                raise RelayError(f"no operation {message['op']!r}", 500)
            reply["ok"] = await op(message["args"])
        except RelayError as exc:
            reply["error"], reply["status"] = str(exc), exc.status
        except Exception as exc:
            log.exception("relay: call %s failed", message["op"])
            reply["error"], reply["status"] = f"the room's owner failed: {exc}", 500
        self.send(message["from"], reply)
