"""A move's frame on its way in: uvicorn's WebSocket protocol against the server's own.

Every move reaches the server as one small text frame. This feeds the same frames (a ``play``
message each, masked as a client masks it, one frame per read as the network mostly delivers
them) to a :class:`~nertz.server.edge.socket_protocol.SocketProtocol` and to uvicorn's
``WebSocketsSansIOProtocol`` it extends, each serving an app that reads every message with the
ASGI ``receive``, on a stand-in transport (no kernel), and prints the CPU microseconds per
frame of each, the two alternating, and their ratio::

    python bench/socket_frames.py --frames 20000 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import uvloop
from uvicorn.protocols.websockets.websockets_sansio_impl import (
    WebSocketsSansIOProtocol,
)
from uvicorn.server import ServerState
from websockets.frames import Frame, Opcode

from nertz.server.edge.socket_protocol import SocketProtocol
from nertz.server.serve import server_config

UPGRADE = (b"GET /ws/abc HTTP/1.1\r\nHost: example.org\r\nUpgrade: websocket\r\n"
           b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
           b"Sec-WebSocket-Version: 13\r\n\r\n")


class _Transport(asyncio.Transport):
    """Takes what is written and forgets it; pausing and resuming cost a call, as uvloop's."""

    def __init__(self) -> None:
        super().__init__()
        self.sock = socket.socket()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"socket": self.sock, "peername": ("10.0.0.9", 4242),
                "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def write(self, data: Any) -> None:
        pass

    def close(self) -> None:
        pass


async def per_frame(cls: Any, frames: list[bytes]) -> float:
    """CPU microseconds per frame for ``cls`` to read ``frames`` and its app to receive them."""
    done = asyncio.Event()
    count = len(frames)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        for _ in range(count):
            await receive()
        done.set()

    config = server_config(app, "127.0.0.1", 0, log_config=None)
    config.load()
    proto = cls(config, ServerState(), {})
    transport = _Transport()
    proto.connection_made(transport)
    proto.data_received(UPGRADE)
    for _ in range(5):
        await asyncio.sleep(0)
    started = time.process_time()
    for frame in frames:
        proto.data_received(frame)
        await asyncio.sleep(0)  # the app reads it, as between two reads of a live socket
    await done.wait()
    spent = time.process_time() - started
    transport.sock.close()
    return spent / count * 1e6


def main() -> None:
    """Print each protocol's CPU per frame, alternating, and the ratio of the means."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    frames = [Frame(Opcode.TEXT, f'{{"type":"play","id":"m{n}","move":"N-F"}}'.encode())
              .serialize(mask=True, extensions=[]) for n in range(args.frames)]
    times: dict[str, list[float]] = {"uvicorn": [], "nertz": []}
    for _ in range(args.rounds):
        for name, cls in (("uvicorn", WebSocketsSansIOProtocol), ("nertz", SocketProtocol)):
            times[name].append(uvloop.run(per_frame(cls, frames)))
    for name, values in times.items():
        print(f"{name:8} " + " ".join(f"{v:6.2f}" for v in values) + "  us/frame")
    mean = {name: sum(v) / len(v) for name, v in times.items()}
    print(f"ratio nertz/uvicorn {mean['nertz'] / mean['uvicorn']:.2f}")


if __name__ == "__main__":
    main()
