"""The road that hands a connection to another process of this machine
(:mod:`nertz.server.cluster.handoff`): a socket and its request arrive whole, only at the
process named, and nothing else is taken. (The whole path, two ``nertz serve`` processes and a
socket that outlives the one it reached, is in ``test_server_failover.py``.)"""

from __future__ import annotations

import array
import asyncio
import os
import socket
from collections.abc import Callable

import pytest

import nertz.server.cluster.handoff as handoff_module
from nertz.server.cluster.handoff import _TICKET, AVAILABLE, Handoff, address, pid_of

pytestmark = [pytest.mark.anyio,
              pytest.mark.skipif(not AVAILABLE, reason="abstract Unix sockets are Linux's")]

PREFIX = f"nertz-test-handoff-{os.getpid()}:"


def name(tag: str, pid: int | None = None) -> str:
    """A process name as :func:`nertz.server.cluster.node.process_name` makes them."""
    return f"some-host-{os.getpid() if pid is None else pid}-{tag}"


async def until(check: Callable[[], object], what: str) -> None:
    for _ in range(400):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def test_names_and_addresses() -> None:
    """A process's pid comes from its name (host names may hold dashes); an address fits an
    abstract name whatever the host name's length, and differs by service and process."""
    assert pid_of("web-01.example-4242-a1b2") == 4242
    assert pid_of("no-pid-here") is None and pid_of("plain") is None
    long_host = "h" * 64 + "-123-abcd"
    assert len(address("nertz:", long_host)) < 108
    assert address("nertz:", "a-1-b") != address("other:", "a-1-b")
    assert address("nertz:", "a-1-b") != address("nertz:", "a-2-b")


async def test_a_socket_and_its_request_arrive_whole() -> None:
    """The connection handed over is the same connection: what one end writes, the taker's
    socket reads, and back; the request comes with it, byte for byte."""
    taken: list[tuple[socket.socket, bytes]] = []
    owner = Handoff(PREFIX, name("own"), lambda s, r: taken.append((s, r)))
    giver = Handoff(PREFIX, name("give"), lambda s, r: None)
    assert owner.start() and giver.start()
    client, served = socket.socketpair()
    try:
        request = b"GET /ws/abc?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"
        assert giver.give(owner.process, served.fileno(), request)
        served.close()  # the giver forgets it: the owner holds the connection now
        await until(lambda: taken, "the socket to arrive")
        sock, got = taken[0]
        assert got == request and (owner.taken, giver.given) == (1, 1)
        client.sendall(b"ping")
        sock.setblocking(True)
        assert sock.recv(4) == b"ping"
        sock.sendall(b"pong")
        assert client.recv(4) == b"pong"
        sock.close()
    finally:
        client.close()
        owner.close()
        giver.close()


async def test_nothing_is_handed_where_it_cannot_go() -> None:
    """No handoff to a process with no listener here (another machine's), to one whose name
    carries no pid, to itself, with a request too long, or to a listener whose pid is not
    the one in the owner's name (somebody holding the owner's address)."""
    giver = Handoff(PREFIX, name("give2"), lambda s, r: None)
    assert giver.start()
    squatted = name("sq", pid=os.getpid() + 1)
    squatter = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    squatter.bind(address(PREFIX, squatted))
    squatter.listen(1)
    a, b = socket.socketpair()
    try:
        assert not giver.give(name("elsewhere"), b.fileno(), b"GET / HTTP/1.1\r\n\r\n")
        assert not giver.give("no-pid", b.fileno(), b"x")
        assert not giver.give(giver.process, b.fileno(), b"x")
        assert not giver.give(squatted, b.fileno(), b"x" * (64 * 1024 + 1))
        assert not giver.give(squatted, b.fileno(), b"x")
        assert giver.given == 0
    finally:
        a.close()
        b.close()
        squatter.close()
        giver.close()


async def test_a_message_without_a_socket_is_dropped_and_the_road_stays_open() -> None:
    """A message that carries no descriptor (or two) is dropped, with whatever it carried
    closed; the next well-formed one is taken."""
    taken: list[bytes] = []
    owner = Handoff(PREFIX, name("own3"), lambda s, r: (taken.append(r), s.close()))
    assert owner.start()
    road = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    road.connect(address(PREFIX, owner.process))
    a, b = socket.socketpair()
    c, d = socket.socketpair()
    try:
        road.send(b"no descriptor")
        two = array.array("i", [b.fileno(), d.fileno()])
        road.sendmsg([b"two"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, two)])
        one = array.array("i", [b.fileno()])
        road.sendmsg([b"one"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, one)])  # no ticket
        road.sendmsg([_TICKET.pack(7) + b"one"],
                     [(socket.SOL_SOCKET, socket.SCM_RIGHTS, one)])
        await until(lambda: taken, "the well-formed message")
        assert taken == [b"one"] and owner.taken == 1
        road.setblocking(True)
        assert road.recv(8) == _TICKET.pack(7)  # acknowledged
    finally:
        for s in (road, a, b, c, d):
            s.close()
        owner.close()


async def test_a_socket_the_owner_does_not_take_is_shut_down(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An owner that does not take a socket in time (hung, or paused past its lease) never
    gets to serve it: the giver shuts the connection down and the client sees it end (and
    reconnects). One that takes it in time is left alone."""
    monkeypatch.setattr(handoff_module, "ACK_SECONDS", 0.2)
    hung = name("hung")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(address(PREFIX, hung))
    listener.listen(4)  # never accepts: a process that stopped
    taken: list[socket.socket] = []
    owner = Handoff(PREFIX, name("alive"), lambda s, r: taken.append(s))
    giver = Handoff(PREFIX, name("give4"), lambda s, r: None)
    assert owner.start() and giver.start()
    client1, served1 = socket.socketpair()
    client2, served2 = socket.socketpair()
    try:
        assert giver.give(hung, served1.fileno(), b"GET / HTTP/1.1\r\n\r\n")
        assert giver.give(owner.process, served2.fileno(), b"GET / HTTP/1.1\r\n\r\n")
        served1.close()
        served2.close()
        await asyncio.sleep(0.5)
        client1.settimeout(5)
        assert client1.recv(1) == b""  # shut down: the end of the connection
        assert taken
        client2.setblocking(False)
        with pytest.raises(BlockingIOError):
            client2.recv(1)  # still open, held by the owner
    finally:
        for s in (listener, client1, client2, *taken):
            s.close()
        owner.close()
        giver.close()
