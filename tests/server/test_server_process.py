"""Against a real ``nertz serve`` process over real sockets: play, then SIGKILL it mid-round,
start it again on the same database, and carry on where everyone was."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _support import stop_process
from server_support import apply_update, public
from websockets.sync.client import ClientConnection, connect

from nertz import replay
from nertz.bots import GreedyBot, Observation
from nertz.rules import Rules

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 120
"""How long ``nertz serve`` may take to answer ``/healthz`` (a busy CI machine is slow)."""
WAIT = 30.0
"""How long a client waits for a message it expects."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``python -m nertz.cli serve`` on a port and a database, started and killed by the test."""

    def __init__(self, port: int, db: str) -> None:
        self.port = port
        self.db = db
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nertz.cli", "serve", "--port", str(self.port),
             "--db", self.db],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        # A fresh process imports the compiled engine and migrates its database: on a busy
        # machine that takes a while.
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"nertz serve exited {self.proc.returncode}: {err}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).json() == {"status": "ok"}:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"nertz serve did not answer /healthz within {STARTUP_SECONDS} s")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(60)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(free_port(), f"sqlite:///{tmp_path / 'x.db'}")
    s.start()
    try:
        yield s
    finally:
        s.stop()


class Client:
    """One person over a real WebSocket, keeping their view up to date."""

    def __init__(self, server: Server, room: str, token: str, since: int | None = None) -> None:
        self.token = token
        self.pending: list[str] = []
        self.ws: ClientConnection = connect(f"ws://127.0.0.1:{server.port}/ws/{room}",
                                            open_timeout=WAIT).__enter__()
        self.view: dict[str, Any] | None = None
        self.you: dict[str, Any] | None = None
        self.v = 0
        self.acks: list[dict[str, Any]] = []
        self.answers: dict[str, dict[str, Any]] = {}
        self.result: dict[str, Any] | None = None
        self.last_t = 0
        self.n = 0
        # An id of its own for every move (docs/protocol.md): a client made again after the
        # restart that numbered from 1 under the same prefix reused the ids of moves before it.
        self.prefix = secrets.token_hex(3)
        self.send({"type": "hello", "token": token, "since": since})

    def send(self, message: dict[str, Any]) -> None:
        self.ws.send(json.dumps(message))

    def read(self, timeout: float = WAIT) -> dict[str, Any]:
        if not self.pending:  # several messages may share a frame, a line each
            self.pending = str(self.ws.recv(timeout=timeout)).split("\n")
        m: dict[str, Any] = json.loads(self.pending.pop(0))
        self.v = m.get("v", self.v) if m["type"] != "ack" else self.v
        kind = m["type"]
        if kind in ("state", "table"):
            self.view = m["table"]
            self.you = m.get("you", self.you)
        elif kind == "update" and self.view is not None:
            apply_update(self.view, m)
            self.last_t = max(self.last_t, m["t"])
        elif kind in ("ack", "rejected") or (kind == "error" and "id" in m):
            self.answers[m["id"]] = m
        elif kind == "round_over":
            self.result = m["result"]
        # no_round: a move that crossed the other seat's move ending the round (a race).
        assert kind != "error" or m["code"] in ("too_fast", "bad_message", "no_round"), m
        return m

    def until(self, kind: str, timeout: float = WAIT) -> dict[str, Any]:
        while True:
            m = self.read(timeout)
            if m["type"] == kind:
                return m

    def pump(self, seconds: float = 0.0) -> None:
        """Read whatever is there (for ``seconds`` at least)."""
        end = time.monotonic() + seconds
        while True:
            try:
                self.read(max(0.001, end - time.monotonic()))
            except TimeoutError:
                if time.monotonic() >= end:
                    return

    def catch_up(self, v: int) -> None:
        """Read until this client has seen the broadcast of version ``v``."""
        while self.v < v:
            self.read()

    def play(self, move: str) -> dict[str, Any]:
        """Play and wait for the answer to it."""
        self.n += 1
        key = f"{self.prefix}-{self.n}"
        self.send({"type": "play", "id": key, "move": move})
        while key not in self.answers:
            self.read()
        return self.answers[key]

    def state(self) -> dict[str, Any]:
        self.send({"type": "sync", "since": None})
        return self.until("state")

    def close(self) -> None:
        self.ws.close()


def next_move(c: Client, rules: Rules, seat: int) -> str:
    assert c.view is not None
    bot = GreedyBot()
    bot.start(seat, rules, c.n)
    move = bot.decide(Observation.from_view(c.view, rules))
    return "T" if move is None else str(move)


SPEC = {"preset": "pagat", "rounds": 1, "nertz_pile_size": 5, "call": "auto"}


def test_real_server_play(server: Server) -> None:
    r = httpx.post(server.url + "/api/rooms", json={"rules": SPEC, "seats": 2, "name": "Ann"})
    ann = r.json()
    bob = httpx.post(f"{server.url}/api/rooms/{ann['code']}/join", json={"name": "Bob"}).json()
    a = Client(server, ann["room"], ann["token"])
    b = Client(server, ann["room"], bob["token"])
    assert a.until("state")["you"]["host"] and b.until("state")["you"]["seat"] == 1
    a.send({"type": "start", "countdown_ms": 0})
    while a.view is None or a.view["t"] is None:  # the deal, however busy the machine
        a.read()
    assert a.view["t"] >= 0
    answer = a.play("T")
    assert answer["type"] == "ack"
    a.catch_up(answer["v"])
    b.catch_up(answer["v"])
    assert public(a.view) == public(b.view)  # type: ignore[arg-type]
    a.send({"type": "ping", "id": "p1", "sent": 5.0})
    assert a.until("pong")["sent"] == 5.0
    a.ws.send(b"\x00binary")
    m = a.until("error")
    assert m["code"] == "bad_message"
    a.ws.send("x" * 5000)  # over the message cap, under the frame cap: an error, still up
    m = a.until("error")
    assert "too long" in m["message"]
    assert a.play("T")["type"] == "ack"
    a.close()
    b.close()


def test_kill_and_restart(server: Server) -> None:
    rules = Rules.from_spec(SPEC)
    ann = httpx.post(server.url + "/api/rooms",
                     json={"rules": SPEC, "seats": 2, "name": "Ann"}).json()
    bob = httpx.post(f"{server.url}/api/rooms/{ann['room']}/join", json={"name": "Bob"}).json()
    a = Client(server, ann["room"], ann["token"])
    b = Client(server, ann["room"], bob["token"])
    a.until("state")
    b.until("state")
    a.send({"type": "start", "countdown_ms": 0})
    while a.view is None or a.view["t"] is None or b.view is None or b.view["t"] is None:
        a.pump(0.1)
        b.pump(0.1)
    # Some moves from each seat, every one acknowledged (so stored) before the kill. Each seat
    # picks from a view that has every move before it (a busy machine must not make it stale).
    applied = 0
    v = 0
    for i in range(12):
        c, seat = (a, 0) if i % 2 == 0 else (b, 1)
        c.catch_up(v)
        if c.view is not None and c.view["ended"] is None:
            answer = c.play(next_move(c, rules, seat))
            applied += answer["type"] == "ack"
            v = max(v, answer.get("v", 0))
    assert applied >= 4
    a.pump(0.2)
    b.pump(0.2)
    assert a.view is not None and a.view["ended"] is None, "the round ended before the kill"
    before = [a.state(), b.state()]
    last_t = a.last_t
    server.kill()
    a.close()
    b.close()
    server.start()
    a = Client(server, ann["room"], ann["token"], since=a.v)
    b = Client(server, ann["room"], bob["token"], since=b.v)
    after = [a.until("state"), b.until("state")]
    for old, new in zip(before, after, strict=True):
        assert new["you"] == old["you"]
        assert public(new["table"]) == public(old["table"])
        assert new["table"]["t"] >= last_t > 0  # the clock continues from the last action
        assert new["room"]["phase"] == "playing"
        assert [(p["id"], p["seat"]) for p in new["room"]["players"]] == \
            [(p["id"], p["seat"]) for p in old["room"]["players"]]
    # The round continues to its end.
    deadline = time.monotonic() + 180
    while a.result is None:
        assert time.monotonic() < deadline, a.view
        for c, seat in ((a, 0), (b, 1)):
            c.pump(0.01)
            if c.view is not None and c.view["ended"] is None and c.result is None:
                c.play(next_move(c, rules, seat))
        time.sleep(0.05)
    result = a.result
    assert result["over"] and result["match"]
    r = httpx.get(f"{server.url}/api/matches/{result['match']}/replay", timeout=10)
    assert r.status_code == 200
    done = replay.run(replay.loads(r.content))
    assert all(o.ok for o in done.rounds[0].outcomes)
    assert done.rounds[0].result.scores == result["scores"]
    assert done.match.totals == result["totals"]
    a.close()
    b.close()
