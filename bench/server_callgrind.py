"""Server instructions per applied move over real sockets: ``nertz serve`` under callgrind.

``bench/server_load.py`` gives the figure of the target (server CPU milliseconds per move), but
on a shared 2-core machine it moves by a tenth or more from one run to the next; and
``bench/server_cpu.py`` counts instructions repeatably but leaves the network out. This runs the
load test's clients (:func:`bench.server_load.drive`: rooms of four network bots at expert
speed, on one event loop) against a ``nertz serve`` (SQLite) started under ``valgrind
--tool=callgrind --instr-atstart=no``, switches the count on for the measured window only
(``callgrind_control -i on``/``off``) and prints the server's instructions per move the
clients saw acknowledged: the whole path of a move in the server's process, the WebSocket
layer, the event loop and the store's thread included, the kernel's part not (callgrind counts
user space).

Few rooms: under callgrind the server runs some fifty times slower, and it must keep up with
the bots for the moves to be what a live server sees (three rooms make some thirty moves a
second). At that load moves rarely share a frame or a commit, so the count per move is above a
busy server's; compare two versions at the same settings, back to back::

    python bench/server_callgrind.py --rooms 3 --seconds 20
    python bench/server_callgrind.py --tree /path/to/other/checkout   # the same, another version
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import server_load  # noqa: E402


async def measure(tree: Path, rooms: int, seconds: float) -> dict[str, Any]:
    """Serve ``tree``'s nertz under callgrind, drive ``rooms`` rooms for ``seconds`` and count."""
    port = server_load.free_port()
    with tempfile.TemporaryDirectory(prefix="nertz-callgrind-") as folder:
        log = Path(folder) / "valgrind.log"
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--log-file={log}",
               "--callgrind-out-file=/dev/null", sys.executable, "-m", "nertz.cli", "serve",
               "--port", str(port), "--db", f"sqlite:///{folder}/load.db",
               "--rooms-per-minute", "0", "--sockets-per-address", "0"]
        proc = subprocess.Popen(cmd, cwd=tree, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                env=os.environ | {"PYTHONHASHSEED": "0"})
        try:
            base = f"http://127.0.0.1:{port}"
            # Starting (imports, migrations) under valgrind takes far longer than natively.
            await server_load.wait_healthy(base, proc, timeout=600)

            async def count(on: bool) -> None:
                ctl = await asyncio.create_subprocess_exec(
                    "callgrind_control", "-i", "on" if on else "off", str(proc.pid),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                await ctl.wait()

            stops: list[asyncio.Task[None]] = []

            async def go() -> None:
                # drive() measures for `seconds` from the moment this returns.
                await count(True)
                loop = asyncio.get_running_loop()
                loop.call_later(seconds, lambda: stops.append(loop.create_task(count(False))))

            part = await server_load.drive(base, list(range(rooms)), seconds, "expert",
                                           "greedy", "pagat", lambda: None, go, lambda _: None)
            await asyncio.gather(*stops)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(proc.wait, 120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        found = re.findall(r"Collected : (\d+)", log.read_text())
    if not found:
        raise SystemExit("server_callgrind: no instruction count in valgrind's log")
    instructions = int(found[-1])
    return {"tree": str(tree), "rooms": rooms, "seconds": seconds, "moves": part["acked"],
            "errors": part["errors"], "instructions": instructions,
            "instructions_per_move": round(instructions / max(1, part["acked"])),
            "load_average": round(os.getloadavg()[0], 2), "at": time.strftime("%H:%M:%S")}


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=3, help="rooms of four bots (default 3)")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window (20)")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="the checkout whose nertz is served (default this one; the clients "
                             "are this one's)")
    args = parser.parse_args(argv)
    server_load._use_uvloop()
    [report] = server_load.run_to_end(_one(args.tree.resolve(), args.rooms, args.seconds))
    print(json.dumps(report))
    return 0


async def _one(tree: Path, rooms: int, seconds: float) -> list[dict[str, Any]]:
    return [await measure(tree, rooms, seconds)]


if __name__ == "__main__":
    raise SystemExit(main())
