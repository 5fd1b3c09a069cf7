"""Findings of the third adversarial review, each kept as a test of its fix: a socket's queue
bounded in bytes, replay uploads that one address cannot line up without end, a cap on rooms
of bots alone, handshake refusals in JSON, ids not echoed at any length, and a broken chunked
body answered."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from server_support import (
    WAIT,
    Person,
    StuckSocket,
    ask,
    create_room,
    hello,
    hub_of,
    in_loop,
    join,
    live_server,
    moves_of,
    wait_for,
    wait_phase,
)
from starlette.testclient import TestClient, WebSocketTestSession
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

import nertz.server.edge.app as app_module
import nertz.server.edge.connection as connection_module
import nertz.server.live as live_module
from nertz import replay
from nertz.bots import SPEEDS, SpeedProfile
from nertz.server.edge import http_protocol
from nertz.server.edge.app import create_app
from nertz.server.edge.echo import ECHO_CHARS
from nertz.server.limits import Rate

DEMO = (Path(__file__).resolve().parents[2] / "examples" / "demo.nertz.json").read_bytes()
"""A real match's replay file (nine rounds), to upload."""


def until(check: Callable[[], bool], what: str) -> None:
    """Wait for ``check`` to hold (a busy machine may take its time; a hang fails)."""
    deadline = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def raw_request(base: str, request: bytes) -> bytes:
    """Send ``request`` on a fresh connection; everything the server sends until it closes."""
    parts = urlsplit(base)
    out = b""
    with socket.create_connection((parts.hostname, parts.port), timeout=WAIT) as sock:
        sock.sendall(request)
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except ConnectionResetError:  # closed with bytes unread: a close all the same
            pass
    return out


# --------------------------------------------------------------------------- 1. queued bytes


def test_a_socket_that_stops_reading_is_cut_by_the_bytes_it_holds() -> None:
    """Large messages (whole-table states, catch-ups) pile up in bytes long before their count
    reaches :data:`MAX_QUEUE`: past :data:`MAX_QUEUE_BYTES` queued the socket is cut (1008)."""
    big = b'{"type":"state","pad":"' + b"x" * (256 * 1024) + b'"}'
    fits = connection_module.MAX_QUEUE_BYTES // len(big)
    assert fits + 1 < connection_module.MAX_QUEUE

    async def main() -> tuple[int, bool, int | None, int]:
        ws = StuckSocket()
        conn = connection_module.Connection(ws)
        sent = 0
        while not conn.closed and sent < 4 * fits:
            conn.send(big)
            sent += 1
        held = conn.queued_bytes
        if conn.closer is not None:
            await conn.closer
        return sent, conn.closed, ws.closed_with, held

    sent, closed, code, held = asyncio.run(main())
    assert closed and code == 1008
    assert sent == fits + 1  # the one that would pass the bound cut the socket
    assert held == 0  # what was queued is dropped with it


def test_a_socket_that_keeps_up_is_never_cut_for_large_messages() -> None:
    """The bound is on what waits, not on what passes: a reader that keeps up takes any
    number of large messages, one larger than the bound included, and the count of queued
    bytes returns to nothing as they go."""
    big = b'{"pad":"' + b"y" * (512 * 1024) + b'"}'
    huge = b'{"pad":"' + b"z" * (connection_module.MAX_QUEUE_BYTES + 1) + b'"}'

    async def main() -> tuple[bool, int, int]:
        got: list[int] = []

        async def reader(message: dict[str, Any]) -> None:
            await asyncio.sleep(0)
            if message["type"] == "websocket.send":
                got.append(len(message["text"]))

        conn = connection_module.Connection(reader)
        for _ in range(40):  # 20 MiB in all, a few at a time
            conn.send(big)
            conn.send(big)
            while conn.queue:
                await asyncio.sleep(0)
        conn.send(huge)
        conn.close()
        await conn.finish()
        return conn.closed and conn.close_code == 1000, conn.queued_bytes, sum(got)

    closed_normally, left, total = asyncio.run(main())
    assert closed_normally and left == 0
    assert total >= 80 * len(big) + len(huge)


# --------------------------------------------------------------------------- 2. replay uploads


@pytest.fixture
def held_frames(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[threading.Event,
                                                                    threading.Event]]:
    """Making a replay's frames waits for ``release`` (``started`` says one is being made):
    the replay thread is busy for as long as a test needs."""
    started, release = threading.Event(), threading.Event()
    real = replay.frames

    def held(file: Any) -> Any:
        started.set()
        assert release.wait(WAIT), "the test never let the replay go"
        return real(file)

    monkeypatch.setattr(replay, "frames", held)
    yield started, release
    release.set()


def from_address(n: int) -> dict[str, str]:
    """Headers that make a request come from 10.0.0.n (the server trusts the test's proxy)."""
    return {"x-forwarded-for": f"10.0.0.{n}"}


def test_one_address_has_one_upload_under_way_and_others_are_not_held_by_it(
        tmp_path: Path, held_frames: tuple[threading.Event, threading.Event]) -> None:
    started, release = held_frames
    app = create_app(f"sqlite:///{tmp_path}/up.db", start_bots=False)

    async def main(base: str) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=WAIT * 2) as http:
            first = asyncio.create_task(http.post("/api/replays/frames", content=DEMO,
                                                  headers=from_address(1)))
            assert await asyncio.to_thread(started.wait, WAIT), "the upload never started"
            # Its second upload meanwhile is refused at once, body unread, naming why.
            again = await http.post("/api/replays/frames", content=DEMO,
                                    headers=from_address(1))
            assert again.status_code == 429, again.text
            assert "under way already" in again.json()["error"]
            assert again.headers["Retry-After"] == "1"
            # Another address's upload waits its turn, not refused.
            other = asyncio.create_task(http.post("/api/replays/analysis", content=DEMO,
                                                  headers=from_address(2)))
            line = app.state.replay_line
            await asyncio.to_thread(until, lambda: line.count == 2, "the second never queued")
            release.set()
            assert (await first).status_code == 200
            assert (await other).status_code == 200
            # Once answered, the address may upload again.
            done = await http.post("/api/replays/analysis", content=DEMO,
                                   headers=from_address(1))
            assert done.status_code == 200, done.text
        assert line.count == 0 and line.by_key == {}

    with live_server(app, trusted_proxies=("127.0.0.1",)) as base:
        asyncio.run(main(base))


def test_the_replay_line_is_bounded_and_refuses_with_a_503(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        held_frames: tuple[threading.Event, threading.Event]) -> None:
    started, release = held_frames
    monkeypatch.setattr(app_module, "REPLAY_WORK_WAITING", 3)
    app = create_app(f"sqlite:///{tmp_path}/line.db", start_bots=False)

    async def main(base: str) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=WAIT * 2) as http:
            def upload(n: int) -> asyncio.Task[httpx.Response]:
                return asyncio.create_task(http.post("/api/replays/frames", content=DEMO,
                                                     headers=from_address(n)))

            on_thread = upload(1)
            assert await asyncio.to_thread(started.wait, WAIT), "the upload never started"
            waiting = [upload(2), upload(3)]
            line = app.state.replay_line
            await asyncio.to_thread(until, lambda: line.count == 3, "the line never filled")
            refused = await http.post("/api/replays/frames", content=DEMO,
                                      headers=from_address(4))
            assert refused.status_code == 503, refused.text
            assert "busy playing replays through" in refused.json()["error"]
            assert refused.headers["Retry-After"]
            release.set()
            assert [(await t).status_code for t in [on_thread, *waiting]] == [200] * 3
            later = await http.post("/api/replays/frames", content=DEMO,
                                    headers=from_address(4))
            assert later.status_code == 200

    with live_server(app, trusted_proxies=("127.0.0.1",)) as base:
        asyncio.run(main(base))


def test_uploads_from_one_address_are_limited_a_minute(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "UPLOADS", Rate("replay_uploads", 2))
    monkeypatch.setattr(app_module, "UPLOADS_PER_MINUTE", 2)
    answers = [client.post(path, content=DEMO) for path in
               ("/api/replays/frames", "/api/replays/analysis", "/api/replays/frames")]
    assert [r.status_code for r in answers] == [200, 200, 429]
    refused = answers[-1]
    assert "at most 2 a minute" in refused.json()["error"]
    assert int(refused.headers["Retry-After"]) >= 1


# --------------------------------------------------------------------------- 3. rooms of bots


def bots_alone(client: TestClient, stack: ExitStack) -> tuple[Person, WebSocketTestSession]:
    """A two-seat room whose host watches (spectator) and whose seats are bots: the host, and
    their socket, said hello."""
    ann = create_room(client, seats=2)
    ws = stack.enter_context(client.websocket_connect(f"/ws/{ann.room}"))
    assert hello(ws, ann.token)["type"] == "state"
    ws.send_json({"type": "assign", "player": ann.player, "seat": None})
    ws.send_json({"type": "add_bot"})
    ws.send_json({"type": "add_bot"})
    return ann, ws


@pytest.mark.usefixtures("fast_bots")
def test_one_address_has_few_rooms_of_bots_alone_playing_at_once(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "BOT_ROOMS_PER_ADDRESS", 1)
    start = {"type": "start", "countdown_ms": 0}
    with ExitStack() as stack:
        _first, a = bots_alone(client, stack)
        # A long countdown counts as play, and keeps the round from ending (fast bots) before
        # the second room is refused, however slow the machine.
        a.send_json({"type": "start", "countdown_ms": 10_000})
        wait_phase(a, "countdown")
        _second, b = bots_alone(client, stack)
        refused = ask(b, start)
        assert refused["type"] == "error" and refused["code"] == "too_many_bot_rooms", refused
        assert "at most 1 at once" in refused["message"]
        # A room where a person plays is no bot room, whatever its other seats.
        ann = create_room(client, seats=2)
        c = stack.enter_context(client.websocket_connect(f"/ws/{ann.room}"))
        assert hello(c, ann.token)["type"] == "state"
        c.send_json({"type": "add_bot"})
        c.send_json(start)
        wait_phase(c, "playing")
        # Once the first room's round is over, its bots rest: the second may start.
        wait_phase(a, "round_over")
        b.send_json(start)
        wait_phase(b, "playing")


def test_a_seated_person_who_never_connects_does_not_hide_a_bot_room(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    # A seat held by someone with no socket open plays nothing: the bots play alone.
    monkeypatch.setattr(app_module, "BOT_ROOMS_PER_ADDRESS", 1)
    start = {"type": "start", "countdown_ms": 10_000}
    with ExitStack() as stack:
        _first, a = bots_alone(client, stack)
        a.send_json(start)
        wait_phase(a, "countdown")
        ann = create_room(client, seats=2)
        join(client, ann.room, "Bob")  # seated, never connects
        c = stack.enter_context(client.websocket_connect(f"/ws/{ann.room}"))
        assert hello(c, ann.token)["type"] == "state"
        c.send_json({"type": "assign", "player": ann.player, "seat": None})
        c.send_json({"type": "add_bot"})
        refused = ask(c, start)
        assert refused["type"] == "error" and refused["code"] == "too_many_bot_rooms", refused


def test_bots_wait_while_nobody_is_connected(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    # A host who set bots playing and left would otherwise have them play the round out,
    # counted nowhere: they play on a moment (a reload, a lost signal), then wait.
    monkeypatch.setitem(SPEEDS, "skilled", SpeedProfile("skilled", 60.0, 30.0))
    monkeypatch.setattr(live_module, "BOTS_WAIT_SECONDS", 0.3)
    monkeypatch.setattr(app_module, "BOT_ROOMS_PER_ADDRESS", 1)
    with ExitStack() as stack:
        ann, ws = bots_alone(client, stack)
        ws.send_json({"type": "start", "countdown_ms": 0})
        wait_phase(ws, "playing")
        room = hub_of(client).rooms[ann.room]

        def played() -> int:
            return int(in_loop(client, lambda: len(moves_of(room.table))))

        wait_for(lambda: played() >= 3)
    # Everyone gone: the bots wait once the time is up, the round not played out.
    wait_for(lambda: room.unwatched)
    last = [-1]

    def stopped() -> bool:
        before, last[0] = last[0], played()
        return before == last[0]

    wait_for(stopped, every=1.0)
    assert room.table.phase == "playing"
    # Waiting, it still counts against its host's address: coming back sets it playing again
    # without a command the cap would see.
    with ExitStack() as stack:
        _other, b = bots_alone(client, stack)
        refused = ask(b, {"type": "start", "countdown_ms": 10_000})
        assert refused["type"] == "error" and refused["code"] == "too_many_bot_rooms", refused
    # The first to come back finds them playing again.
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        assert hello(ws, ann.token)["type"] == "state"
        wait_for(lambda: played() > last[0])


# --------------------------------------------------------------------------- 4. handshakes


def test_handshake_refusals_are_json_with_their_status(tmp_path: Path) -> None:
    app = create_app(f"sqlite:///{tmp_path}/hs.db", start_bots=False)
    with live_server(app) as base:
        room = httpx.post(base + "/api/rooms", json={"seats": 2}).json()["room"]
        ws_base = base.replace("http://", "ws://")

        def refusal(path: str, **kwargs: Any) -> Any:
            with pytest.raises(InvalidStatus) as info:
                connect(ws_base + path, open_timeout=WAIT, **kwargs)
            response = info.value.response
            assert response.headers["Content-Type"] == "application/json"
            return response.status_code, json.loads(response.body)["error"], response.headers

        status, error, headers = refusal(f"/ws/{room}", origin="http://evil.example")
        assert status == 403 and "origin not allowed" in error
        assert "Retry-After" not in headers  # trying again changes nothing
        status, error, _ = refusal("/elsewhere")
        assert status == 403 and "no WebSocket at this path" in error
        # A handshake the WebSocket library refuses (no key): its 400, in JSON, naming why.
        answer = raw_request(base, f"GET /ws/{room} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket"
                                   "\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n"
                                   .encode())
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 "), answer[:300]
        assert b"content-type: application/json" in head.lower()
        assert "Sec-WebSocket-Key" in json.loads(body)["error"]


# --------------------------------------------------------------------------- 5. ids echoed


def test_ids_that_are_not_ids_are_not_echoed_and_ids_are_clipped(client: TestClient) -> None:
    long = "q" * 5000
    paths = [f"/api/rooms/{long}", f"/api/matches/{long}/replay", f"/api/matches/{long}/frames",
             f"/api/matches/{long}/analysis", f"/api/players/{long}",
             f"/api/matches/{long}/ratings", f"/api/rooms/{long}/ratings",
             f"/api/leaderboard/{long}"]
    for path in paths:
        r = client.get(path)
        assert r.status_code == 404, (path[:40], r.text[:200])
        error = r.json()["error"]
        assert "q" * (ECHO_CHARS + 1) not in error and "not a valid" in error, error[:200]
    joined = client.post(f"/api/rooms/{long}/join", json={"name": "Ann"})
    assert joined.status_code == 404 and long[:ECHO_CHARS + 1] not in joined.text
    # Control characters are never sent back, whatever the length.
    r = client.get("/api/rooms/%07%1b[2J")
    assert r.status_code == 404 and "\x1b" not in r.json()["error"]
    # An id that could be one is quoted, clipped past ECHO_CHARS.
    assert client.get("/api/rooms/NOSUCH").json()["error"] == "no room 'NOSUCH'"
    clipped = client.get(f"/api/players/{'p' * 40}").json()["error"]
    assert f"'{'p' * ECHO_CHARS}'\u2026" in clipped and "p" * (ECHO_CHARS + 1) not in clipped
    # A socket's path too.
    with client.websocket_connect(f"/ws/{long}") as ws:
        message = json.loads(ws.receive_text())
    assert message["code"] == "no_room" and "q" * (ECHO_CHARS + 1) not in message["message"]


# --------------------------------------------------------------------------- 6. chunked bodies


@pytest.mark.parametrize("body", [
    b"zz\r\nnot a size\r\n",                      # a chunk size that is no number
    b'2\r\n{}\r\n5\r\n"x"}XXXXXXXX\r\n0\r\n\r\n',  # a chunk longer than its size
])
def test_a_chunked_body_with_broken_framing_gets_a_json_400(tmp_path: Path, body: bytes) -> None:
    app = create_app(f"sqlite:///{tmp_path}/chunk.db", start_bots=False)
    head = (b"POST /api/rooms HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
            b"transfer-encoding: chunked\r\n\r\n")
    with live_server(app) as base:
        answer = raw_request(base, head + body)
        status, _, rest = answer.partition(b"\r\n")
        headers, _, payload = rest.partition(b"\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 400 "), answer[:300]
        assert b"content-type: application/json" in headers.lower()
        assert json.loads(payload)["error"].startswith("not a valid HTTP request: ")
        assert answer.count(b"HTTP/1.1 ") == 1  # the app's own answer never follows
        until(lambda: http_protocol.open_from("127.0.0.1") == 0, "the connection stayed counted")
        assert httpx.get(base + "/healthz").status_code == 200
