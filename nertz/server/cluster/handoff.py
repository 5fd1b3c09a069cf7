"""A socket handed to its room's owner on the same machine: the connection itself moves.

A WebSocket that reaches a process not owning its room is relayed through Redis
(:mod:`~nertz.server.cluster.pipe`): every frame in and every message out crosses twice.
Between processes of one machine (the workers of ``nertz serve --workers N`` share one port,
and the kernel picks which accepts) there is a cheaper road: the process passes the connection's
file descriptor to the owner over a Unix socket (``SCM_RIGHTS``), with the upgrade request it
read, before answering anything. The owner answers the handshake and serves the socket as its
own, and the first process forgets it. Nothing is relayed, and the socket outlives the process
it first reached.

Each process listens on a Unix socket in Linux's abstract namespace, named after the service's
Redis prefix and the process's name. The road is checked both ways with the kernel's word for
who is at the other end (``SO_PEERCRED``): a process hands a socket only to a listener whose
process id is the owner's (a process's name carries its pid: ``host-pid-tag``) and whose user
is its own, and takes sockets only from its own user. A process in another network namespace
(another machine, another container) has no such listener: the socket is relayed, as always.
Linux only; elsewhere every socket is relayed.

The owner acknowledges each socket as it takes it. The giving process keeps a duplicate of the
descriptor until then: a socket not taken within :data:`ACK_SECONDS` (the owner hung, or was
paused past its lease) is shut down, and its client reconnects, as from a relay whose owner
stopped; one whose owner died before taking it is shut down at once.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import hashlib
import logging
import os
import socket
import struct
import sys
from collections.abc import Callable
from typing import Final

log = logging.getLogger("nertz.handoff")

MAX_REQUEST: Final = 64 * 1024
"""The largest upgrade request passed on with a socket (uvicorn's own header limit is far
below)."""

ACK_SECONDS: Final = 5.0
"""How long an owner has to take a socket handed to it before the giver shuts it down."""

_TICKET: Final = struct.Struct("!Q")
"""Each handed socket's number, ahead of its request and in the owner's acknowledgement."""

_CRED: Final = struct.Struct("iII")
"""``struct ucred``: pid, uid, gid."""

AVAILABLE: Final = sys.platform.startswith("linux")
"""Abstract Unix sockets and ``SO_PEERCRED`` are Linux's."""


def address(prefix: str, process: str) -> bytes:
    """The abstract Unix address where ``process`` of the service ``prefix`` takes sockets
    (hashed: an abstract name is at most 107 bytes, a host name alone up to 64)."""
    digest = hashlib.sha256(f"{prefix}\0{process}".encode()).hexdigest()[:32]
    return b"\0nertz-handoff-" + digest.encode()


def pid_of(process: str) -> int | None:
    """The process id in a process's name (``host-pid-tag``), if it has one."""
    parts = process.rsplit("-", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    return int(parts[1])


def _peer(sock: socket.socket) -> tuple[int, int]:
    """The (pid, uid) of the process at the other end of a connected Unix socket."""
    pid, uid, _gid = _CRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                  _CRED.size))
    return pid, uid


class Handoff:
    """This process's end of the road: it takes sockets handed to it (``take``, called with
    each socket and its upgrade request) and hands sockets to the others (:meth:`give`)."""

    def __init__(self, prefix: str, process: str,
                 take: Callable[[socket.socket, bytes], None]) -> None:
        self.prefix = prefix
        self.process = process
        self.take = take
        self._listener: socket.socket | None = None
        self._incoming: set[socket.socket] = set()
        self._outgoing: dict[str, socket.socket] = {}
        self._unacked: dict[int, tuple[str, int, asyncio.TimerHandle]] = {}
        """Sockets given and not yet taken: owner, a duplicate descriptor, the deadline."""
        self._tickets = 0
        self.given = 0
        """Sockets handed to other processes."""
        self.taken = 0
        """Sockets handed to this one."""

    def start(self) -> bool:
        """Listen for sockets handed here; False where that cannot be (not Linux, or the
        name is taken: every socket is then relayed, as between machines)."""
        if not AVAILABLE:
            return False
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            listener.bind(address(self.prefix, self.process))
            listener.listen(64)
        except OSError as exc:
            listener.close()
            log.warning("no socket handoff for this process (%s): sockets are relayed", exc)
            return False
        listener.setblocking(False)
        self._listener = listener
        asyncio.get_running_loop().add_reader(listener.fileno(), self._accept)
        return True

    def close(self) -> None:
        """Stop taking and giving sockets."""
        loop = asyncio.get_running_loop()
        for sock in [*self._incoming, *([self._listener] if self._listener else [])]:
            loop.remove_reader(sock.fileno())
            sock.close()
        self._incoming.clear()
        self._listener = None
        for owner in list(self._outgoing):
            self._drop_road(owner, gone=False)
        # The owners may still take what is on its way to them: let go of the copies only.
        for _owner, kept, deadline in self._unacked.values():
            deadline.cancel()
            os.close(kept)
        self._unacked.clear()

    # ------------------------------------------------------------------ giving

    def give(self, owner: str, fd: int, request: bytes) -> bool:
        """Hand the connection ``fd`` (and the ``request`` read from it) to ``owner``, if it
        is a process of this machine that takes sockets. True: the owner holds it now (this
        process may close its descriptor). Never blocks."""
        if self._listener is None or len(request) > MAX_REQUEST or owner == self.process:
            return False
        sock = self._road(owner)
        if sock is None:
            return False
        self._tickets += 1
        ticket = self._tickets
        kept = os.dup(fd)
        try:
            sock.sendmsg([_TICKET.pack(ticket) + request],
                          [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
        except BlockingIOError:
            os.close(kept)  # the owner is far behind: relay this one
            return False
        except OSError:
            os.close(kept)  # the owner is gone: relay this one; a later one tries anew
            self._drop_road(owner, gone=True)
            return False
        deadline = asyncio.get_running_loop().call_later(ACK_SECONDS, self._not_taken, ticket)
        self._unacked[ticket] = (owner, kept, deadline)
        self.given += 1
        return True

    def _taken(self, ticket: int) -> None:
        entry = self._unacked.pop(ticket, None)
        if entry is not None:
            entry[2].cancel()
            os.close(entry[1])

    def _not_taken(self, ticket: int) -> None:
        entry = self._unacked.pop(ticket, None)
        if entry is None:
            return
        owner, kept, deadline = entry
        deadline.cancel()
        log.warning("a socket handed to %s was not taken: shut down (its client reconnects)",
                    owner)
        # Shut down, not just closed: the connection itself ends, wherever else it is held.
        sock = socket.socket(fileno=kept)
        try:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        finally:
            sock.close()

    def _acks(self, owner: str, sock: socket.socket) -> None:
        while True:
            try:
                data = sock.recv(_TICKET.size)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            if len(data) != _TICKET.size:
                # The owner is gone: what it had not taken never will be.
                self._drop_road(owner, gone=True)
                return
            self._taken(_TICKET.unpack(data)[0])

    def _drop_road(self, owner: str, gone: bool) -> None:
        """Forget the road to ``owner``; ``gone``: it died, so the sockets it had not taken
        yet are shut down now (they were closed with it)."""
        sock = self._outgoing.pop(owner, None)
        if sock is not None:
            with contextlib.suppress(ValueError, RuntimeError):
                asyncio.get_running_loop().remove_reader(sock.fileno())
            sock.close()
        if gone:
            for ticket, entry in list(self._unacked.items()):
                if entry[0] == owner:
                    self._not_taken(ticket)

    def _road(self, owner: str) -> socket.socket | None:
        sock = self._outgoing.get(owner)
        if sock is not None:
            return sock
        pid = pid_of(owner)
        if pid is None:
            return None
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sock.setblocking(False)
        try:
            sock.connect(address(self.prefix, owner))
            peer_pid, peer_uid = _peer(sock)
        except OSError:
            # No listener of that name here: another machine's process.
            sock.close()
            return None
        if peer_pid != pid or peer_uid != os.getuid():
            # Somebody else holds the owner's name: never hand it a client's socket.
            log.warning("the handoff address of %s is held by pid %d, uid %d: not used",
                        owner, peer_pid, peer_uid)
            sock.close()
            return None
        self._outgoing[owner] = sock
        asyncio.get_running_loop().add_reader(sock.fileno(), self._acks, owner, sock)
        return sock

    # ------------------------------------------------------------------ taking

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                conn, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # pragma: no cover - out of descriptors
                log.warning("handoff accept failed: %s", exc)
                return
            _pid, uid = _peer(conn)
            if uid != os.getuid():
                log.warning("refused a handoff connection from uid %d", uid)
                conn.close()
                continue
            conn.setblocking(False)
            self._incoming.add(conn)
            asyncio.get_running_loop().add_reader(conn.fileno(), self._receive, conn)

    def _receive(self, conn: socket.socket) -> None:
        space = socket.CMSG_SPACE(array.array("i").itemsize)
        while True:
            try:
                data, ancillary, flags, _ = conn.recvmsg(_TICKET.size + MAX_REQUEST, space)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data, ancillary, flags = b"", [], 0
            fds = array.array("i")
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
            if not data and not fds:
                # The giving process went away (or closed its road).
                asyncio.get_running_loop().remove_reader(conn.fileno())
                self._incoming.discard(conn)
                conn.close()
                return
            if (len(fds) != 1 or len(data) < _TICKET.size
                    or flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC)):
                log.warning("a malformed handoff (%d descriptors, flags %#x): dropped",
                            len(fds), flags)
                for fd in fds:
                    os.close(fd)
                continue
            ticket, request = data[:_TICKET.size], data[_TICKET.size:]
            sock = socket.socket(fileno=fds[0])
            try:
                self.take(sock, request)
            except Exception:
                log.exception("a handed socket could not be taken")
                with contextlib.suppress(OSError):
                    sock.close()
            else:
                self.taken += 1
            # Taken or not, the giver may let its copy go (a socket not taken was closed).
            with contextlib.suppress(OSError):
                conn.send(ticket)
