"""The server's own measure of each socket's round trip: its pings, their pongs, an estimate.

Latency-fair races (:mod:`nertz.server.room.races`) order plays by when they were sent, which the
room works out from when they arrived and the sender's round trip. That round trip must be the
server's own measurement, never a client's claim: the edge pings each socket that asked for it
in ``hello`` (a burst at first, then every :data:`PING_INTERVAL`), each ``ping`` carrying an id
nobody can guess, so no pong can be sent before its ping arrived. A client can only make itself
look slower (by holding its pongs back), and two bounds limit what that can buy:

- **The network's own figure.** The kernel times every TCP segment the client's kernel
  acknowledges, which no program on the client can hold back without holding back its moves too.
  The estimate is at most :data:`NETWORK_FACTOR` times the smallest round trip the kernel measured
  on the socket (Linux's ``tcpi_min_rtt``), plus :data:`NETWORK_SLACK_MS` for the client's own
  handling of a ping and the network's jitter: :func:`network_bound`. Behind a trusted proxy the
  kernel sees only the proxy; the proxy's figure for the client's connection comes in the
  ``X-TCP-RTT`` header (nginx: ``$tcpinfo_rtt``, microseconds), and without it the bound is
  the slack alone (no compensation to speak of, and nothing to gain by lying).
- **The room's cap** (:data:`nertz.server.room.races.CAP_MS`) on any compensation.

The estimate is the median of the last :data:`WINDOW` samples, once there are
:data:`MIN_SAMPLES`: a few spikes (a stalled radio, a busy browser) do not move it, and a client
that delays some of its pongs moves it only by delaying most of them, which makes it truly slower.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import statistics
import struct
import time
from collections import deque
from collections.abc import Callable
from typing import Final

from nertz.server import protocol
from nertz.server.room.messages import Ping, Stamp
from nertz.server.room.races import wall_ms

WINDOW: Final = 15
"""Round-trip samples the estimate is the median of (the newest ones)."""

MIN_SAMPLES: Final = 3
"""Samples needed before there is an estimate (before that: none, so no compensation)."""

PING_INTERVAL: Final = 2.0
"""Seconds between pings once a socket's first burst is done."""

FIRST_PINGS: Final = 5
"""Pings sent :data:`FIRST_GAP` apart as a socket opens, so it has an estimate at once."""

FIRST_GAP: Final = 0.2
"""Seconds between the first pings."""

MAX_OUTSTANDING: Final = 8
"""Pings waiting for their pong; older ones are forgotten (their pongs no longer count)."""


NETWORK_FACTOR: Final = 1.1
"""The estimate is at most this times the network's smallest round trip (plus the slack)."""

NETWORK_SLACK_MS: Final = 10.0
"""Added to the network's bound: the client's own time to answer a ping, and jitter (ms)."""

KERNEL_RTT: Final = hasattr(socket, "TCP_INFO")
"""This system's kernel tells a TCP socket's round trip (Linux does)."""

_TCP_INFO_BYTES: Final = 152
_TCP_INFO_MIN_RTT: Final = 148
"""Where Linux's ``struct tcp_info`` (4.6 and later) keeps ``tcpi_min_rtt``, in microseconds."""


def kernel_rtt_ms(sock: socket.socket) -> float | None:
    """The smallest round trip the kernel has measured on TCP socket ``sock`` (ms), or None
    where it cannot say (not Linux, not TCP, no sample yet)."""
    if not KERNEL_RTT:
        return None
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_BYTES)
    except OSError:
        return None
    if len(raw) < _TCP_INFO_BYTES:
        return None
    micros: int = struct.unpack_from("=I", raw, _TCP_INFO_MIN_RTT)[0]
    if micros in (0, 0xFFFFFFFF):  # the kernel's "no sample yet"
        return None
    return micros / 1000


def network_bound(network_ms: float | None) -> float:
    """The most a socket's estimate may be, given the network's round trip (None: unknown,
    so the slack alone)."""
    return NETWORK_FACTOR * (network_ms or 0.0) + NETWORK_SLACK_MS


class RttEstimator:
    """Recent round-trip samples of one socket and their median."""

    def __init__(self, window: int = WINDOW, min_samples: int = MIN_SAMPLES) -> None:
        if window < 1 or not 1 <= min_samples <= window:
            raise ValueError(f"need 1 <= min_samples <= window, not {min_samples}, {window}")
        self.samples: deque[float] = deque(maxlen=window)
        self.min_samples = min_samples
        # Worked out at each sample, not at each read: every command a socket sends reads it
        # (its stamp), and samples come only every few seconds.
        self._estimate: float | None = None
        self.bound: float | None = None
        """The most the estimate may be (:func:`network_bound`), or None: no bound."""

    def add(self, rtt_ms: float, bound: float | None = None) -> None:
        """One measured round trip, in ms (a negative one is a bug: refused), with the bound
        the network sets now (None: the one set before, if any)."""
        if rtt_ms < 0:
            raise ValueError(f"a round trip cannot be negative: {rtt_ms}")
        if bound is not None:
            self.bound = bound
        self.samples.append(rtt_ms)
        if len(self.samples) >= self.min_samples:
            median = float(statistics.median(self.samples))
            self._estimate = median if self.bound is None else min(median, self.bound)

    @property
    def estimate(self) -> float | None:
        """The median of the recent samples, or None while there are too few."""
        return self._estimate


class Prober:
    """Pings one socket and turns its pongs into an :class:`RttEstimator`'s samples.

    ``send`` queues an encoded message on the socket. :meth:`start` runs the pings until
    :meth:`stop`; :meth:`pong` takes each answer; :meth:`stamp` is what the edge hands the room
    with every command from this socket. ``network`` reads the network's round trip for the
    socket (ms; None: unknown), at each pong: the estimate stays within :func:`network_bound`
    of it. Without ``network`` (a socket the server cannot look under) there is no bound.
    """

    def __init__(self, send: Callable[[bytes], None], interval: float = PING_INTERVAL,
                 first: int = FIRST_PINGS, first_gap: float = FIRST_GAP,
                 network: Callable[[], float | None] | None = None) -> None:
        self.send = send
        self.network = network
        self.interval = interval
        self.first = first
        self.first_gap = first_gap
        self.rtt = RttEstimator()
        self._sent: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin pinging (a burst, then steadily)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        """Stop pinging (the socket closed)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            for _ in range(self.first):
                self.ping()
                await asyncio.sleep(self.first_gap)
            while True:
                self.ping()
                await asyncio.sleep(self.interval)

    def ping(self) -> None:
        """Send one ping now."""
        pid = secrets.token_hex(6)
        while len(self._sent) >= MAX_OUTSTANDING:
            self._sent.pop(next(iter(self._sent)))
        self._sent[pid] = time.perf_counter()
        self.send(protocol.encode(Ping(pid)))

    def pong(self, pid: str) -> bool:
        """A pong came back: one sample. False for an id that was never sent (or forgotten)."""
        sent = self._sent.pop(pid, None)
        if sent is None:
            return False
        bound = None if self.network is None else network_bound(self.network())
        self.rtt.add((time.perf_counter() - sent) * 1000, bound)
        return True

    def stamp(self, arrived_ms: float | None = None) -> Stamp:
        """The envelope for a command that arrived at ``arrived_ms`` (None: now)."""
        return Stamp(wall_ms() if arrived_ms is None else arrived_ms, self.rtt.estimate)
