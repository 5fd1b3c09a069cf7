"""Helpers for the server tests (not a test module): sockets that never hang, rooms, fixed deals,
and reading the cards out of a server message.

In-process tests drive the app through Starlette's ``TestClient``; its WebSocket session has no
receive timeout of its own, so :func:`recv` adds one (a missing message fails the test instead of
hanging the suite).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio
from starlette.testclient import TestClient, WebSocketTestSession

from nertz.cards import Card
from nertz.errors import NotationError
from nertz.match import Match
from nertz.moves import Move
from nertz.server.hub import Hub
from nertz.server.room.table import Table
from nertz.state import Layout

Message = dict[str, Any]


# --------------------------------------------------------------------------- sockets


WAIT = 30.0
"""How long a test waits for a message it expects (s): generous, because CI is a busy 2-core
machine; a message that never comes fails the test after this instead of hanging it."""


def recv_raw(ws: WebSocketTestSession, timeout: float = WAIT) -> str:
    """The next message's text on an in-process socket; ``TimeoutError`` after ``timeout``.

    The server may send several messages in one frame, a line each: they come out one by one.
    """
    pending: list[str] = ws.__dict__.setdefault("nertz_pending", [])  # read, not yet taken
    if pending:
        return pending.pop(0)

    async def receive() -> Any:
        # Poll rather than cancel a waiting receive: a timeout that fires just as a message is
        # taken would lose that message.
        deadline = anyio.current_time() + timeout
        while True:
            try:
                return ws._send_rx.receive_nowait()
            except anyio.WouldBlock:
                if anyio.current_time() >= deadline:
                    raise TimeoutError from None
                await anyio.sleep(0.002)

    message = ws.portal.call(receive)
    ws._raise_on_close(message)
    text = message.get("text")
    lines = (text if text is not None else str(message["bytes"].decode())).split("\n")
    pending.extend(lines[1:])
    return lines[0]


def recv(ws: WebSocketTestSession, timeout: float = WAIT) -> Message:
    """The next message on an in-process socket, failing the test after ``timeout`` seconds."""
    data: Message = json.loads(recv_raw(ws, timeout))
    return data


def recv_until(
    ws: WebSocketTestSession, kind: str, timeout: float = WAIT, **fields: Any
) -> tuple[Message, list[Message]]:
    """Read until a message of type ``kind`` (with these field values) arrives; returns it and
    everything read before it."""
    seen: list[Message] = []
    while True:
        m = recv(ws, timeout)
        if m["type"] == kind and all(m.get(k) == v for k, v in fields.items()):
            return m, seen
        seen.append(m)


def quiet(ws: WebSocketTestSession, wait: float = 0.2) -> list[Message]:
    """Everything that arrives within ``wait`` seconds (reading stops at the first pause)."""
    out: list[Message] = []
    while True:
        try:
            out.append(recv(ws, wait))
        except TimeoutError:
            return out


def drain(ws: WebSocketTestSession, seconds: float) -> list[Message]:
    """Everything that arrives within the next ``seconds``."""
    out: list[Message] = []
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        try:
            out.append(recv(ws, left))
        except TimeoutError:
            break
    return out


def through(ws: WebSocketTestSession, marker: str = "through", wait: float = 0.3
            ) -> list[Message]:
    """Everything the server sends in answer to what this socket sent so far.

    Sends a ``ping`` named ``marker`` and reads until its answer (a ``pong``, or a refusal that
    names it: the socket's limits answer every message, in order), however long a busy machine
    takes, then what follows within ``wait`` seconds (answers that waited for a commit).
    """
    ws.send_json({"type": "ping", "id": marker})
    out: list[Message] = []
    while True:
        m = recv(ws)
        out.append(m)
        if m.get("id") == marker and m["type"] in ("pong", "error"):
            return out + quiet(ws, wait)


def ask(ws: WebSocketTestSession, message: Message, timeout: float = WAIT) -> Message:
    """Send ``message`` then ping; return the first reply to the sender (``ack``, ``rejected``,
    ``error``, ``pong``...) that is not a broadcast. Broadcasts in between are skipped."""
    ws.send_json(message)
    return reply(ws, timeout)


PASSING_KINDS = frozenset({"latency", "pointer", "emote", "race"})
"""Messages to every socket that are no answer to anyone."""


def reply(ws: WebSocketTestSession, timeout: float = WAIT) -> Message:
    """The next message to this client alone (broadcasts, which carry ``v``, and what passes
    to everyone unversioned: the periodic ``latency`` report, pointers and emotes, are
    skipped); ``TimeoutError`` if none comes within ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        m = recv(ws, max(0.0, deadline - time.monotonic()))
        if ("v" not in m or m["type"] == "ack") and m["type"] not in PASSING_KINDS:
            return m


def in_loop(client: TestClient, fn: Any, *args: Any) -> Any:
    """Run ``fn(*args)`` on the app's event loop thread (tables are not thread-safe)."""
    assert client.portal is not None
    return client.portal.call(fn, *args)


def wait_for(condition: Callable[[], object], timeout: float = 60.0,
             every: float = 0.05, what: str = "timed out") -> None:
    """Wait until ``condition()`` is true, asking every ``every`` seconds; fail after
    ``timeout``, saying ``what`` (a condition, not a guess at how long the machine takes)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(every)


async def until_playing(table: Table, timeout: float = WAIT) -> None:
    """Wait (on the table's loop) until its round is dealt: the countdown's timer runs on the
    loop, however busy the machine."""
    deadline = time.monotonic() + timeout
    while table.phase != "playing":
        assert time.monotonic() < deadline, f"the round was not dealt: {table.phase}"
        await anyio.sleep(0.01)


def moves_of(table: Table) -> list[Any]:
    """The moves of the table's current round, as its replay recorder holds them."""
    assert table.recorder is not None
    return list(table.recorder.file.rounds[-1].moves)


def hub_of(client: TestClient) -> Hub:
    """The app's hub (the app must be started: ``with TestClient(app) as client``)."""
    hub: Hub = client.app.state.hub  # type: ignore[attr-defined]
    return hub


def table_of(client: TestClient, room: str) -> Table:
    """The live table of a room."""
    return hub_of(client).tables[room]


# --------------------------------------------------------------------------- rooms


@dataclass
class Person:
    """One person in a room, as the HTTP join answered."""

    room: str
    player: str
    token: str
    seat: int | None
    host: bool


def create_room(
    client: TestClient, rules: Any = "pagat", seats: int = 2, name: str = "Ann"
) -> Person:
    """Create a room with its host."""
    r = client.post("/api/rooms", json={"rules": rules, "seats": seats, "name": name})
    assert r.status_code == 201, r.text
    d = r.json()
    return Person(d["room"], d["player"], d["token"], d["seat"], d["host"])


def join(client: TestClient, room: str, name: str, spectator: bool = False) -> Person:
    """Join a room."""
    r = client.post(f"/api/rooms/{room}/join", json={"name": name, "spectator": spectator})
    assert r.status_code == 200, r.text
    d = r.json()
    return Person(d["room"], d["player"], d["token"], d["seat"], d["host"])


def hello(ws: WebSocketTestSession, token: str, since: int | None = None) -> Message:
    """Say hello; returns the ``state`` (or ``caught_up``) answer."""
    msg: Message = {"type": "hello", "token": token}
    if since is not None:
        msg["since"] = since
    ws.send_json(msg)
    while True:
        m = recv(ws)
        if m["type"] in ("state", "caught_up", "error"):
            return m


def wait_phase(ws: WebSocketTestSession, phase: str, timeout: float = WAIT) -> Message:
    """Read until a message shows the room in ``phase``; returns that message. Fails after
    ``timeout`` in all (the room's periodic messages do not extend it)."""
    deadline = time.monotonic() + timeout
    while True:
        m = recv(ws, max(0.0, deadline - time.monotonic()))
        room = m.get("room")
        if isinstance(room, dict) and room.get("phase") == phase:
            return m


@contextmanager
def two_players(
    client: TestClient, rules: Any = "pagat"
) -> Iterator[tuple[Person, Person, WebSocketTestSession, WebSocketTestSession]]:
    """A two-seat room of two people, both connected, with a round being played."""
    ann = create_room(client, rules, 2, "Ann")
    bob = join(client, ann.room, "Bob")
    with client.websocket_connect(f"/ws/{ann.room}") as a, \
            client.websocket_connect(f"/ws/{ann.room}") as b:
        assert hello(a, ann.token)["type"] == "state"
        assert hello(b, bob.token)["type"] == "state"
        a.send_json({"type": "start", "countdown_ms": 0})
        wait_phase(a, "playing")
        wait_phase(b, "playing")
        yield ann, bob, a, b


# --------------------------------------------------------------------------- fixed deals


class FixedMatch:
    """A match whose rounds are dealt from :attr:`LAYOUTS` (round by round, while there are
    some), so a test can set up a race; the replay file records the layouts as usual.

    It wraps a :class:`Match` rather than subclassing it: the compiled engine's classes take no
    subclasses written in (interpreted) Python."""

    LAYOUTS: ClassVar[list[Sequence[Layout]]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._match = Match(*args, **kwargs)

    def deal(self, layouts: Sequence[Layout] | None = None) -> Any:
        if layouts is None and self._match.round_index < len(self.LAYOUTS):
            layouts = self.LAYOUTS[self._match.round_index]
        return self._match.deal(layouts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._match, name)


# --------------------------------------------------------------------------- cards in messages


def _card(text: Any) -> Card | None:
    if not isinstance(text, str) or not 2 <= len(text) <= 3:
        return None
    try:
        return Card.parse(text)
    except (NotationError, ValueError):
        return None


def _move_card(text: Any) -> Card | None:
    if not isinstance(text, str):
        return None
    try:
        return Move.parse(text).card
    except (NotationError, ValueError):
        return None


def cards_in(message: Message, mover: int | None = None) -> list[tuple[int, Card]]:
    """Every (owner seat, card) a server message shows, read by its structure.

    ``mover`` is the seat whose ``ack`` this is (its move names the mover's card). Raises
    ``AssertionError`` if a card appears anywhere the structure does not account for.
    """
    found: list[tuple[int, Card]] = []

    def walk(node: Any, key: str | None) -> None:
        if isinstance(node, dict):
            if "work" in node and "nertz_top" in node:  # a tableau view
                seat = node["seat"]
                for k in ("nertz_top", "waste_top"):
                    c = _card(node[k])
                    if c is not None:
                        found.append((seat, c))
                for pile in node["work"]:
                    found.extend((seat, Card.parse(x)) for x in pile["up"])
            elif "owners" in node and "cards" in node:  # a foundation
                found.extend(
                    (o, Card.parse(x)) for o, x in zip(node["owners"], node["cards"], strict=True)
                )
            elif node.get("kind") == "moved":
                found.extend((node["seat"], Card.parse(x)) for x in node["cards"])
            elif node.get("kind") == "revealed":
                found.append((node["seat"], Card.parse(node["card"])))
            elif {"loser", "card", "foundation"} <= node.keys():
                # A race (in ``rejected``, ``race_won`` and ``race``): the loser's card, still
                # on its pile.
                found.append((node["loser"], Card.parse(node["card"])))
            else:
                for k, v in node.items():
                    if k in ("room", "you", "result"):
                        continue  # people and scores: no cards
                    walk(v, k)
                return
            return
        if isinstance(node, list):
            for v in node:
                walk(v, key)
            return
        if _card(node) is not None:
            raise AssertionError(f"card-like {node!r} at {key!r} outside any pile")

    kind = message.get("type")
    if kind == "update" and message["seat"] >= 0:
        c = _move_card(message["move"])
        if c is not None:
            found.append((message["seat"], c))
    elif kind == "ack" and mover is not None:
        c = _move_card(message["move"])
        if c is not None:
            found.append((mover, c))
    elif kind == "pointer":  # a seat's drag: the card it holds
        c = _card(message.get("card"))
        if c is not None:
            found.append((message["seat"], c))
        message = {k: v for k, v in message.items() if k != "card"}
    body = {k: v for k, v in message.items() if k not in ("move", "type", "id", "error")}
    walk(body, None)
    return found


def apply_update(table: Message, update: Message) -> None:
    """Apply an ``update`` broadcast to a ``table`` view, as a client does."""
    for tv in update["tableaus"]:
        table["tableaus"][tv["seat"]] = tv
    for fv in update["foundations"]:
        i = fv["number"] - 1
        if i < len(table["foundations"]):
            table["foundations"][i] = fv
        else:
            assert i == len(table["foundations"]), "foundations arrive in order"
            table["foundations"].append(fv)
    table["ended"] = update["ended"]
    table["called_by"] = update["called_by"]


def public(table: Message) -> Message:
    """A table view without its clock and seat (what must match between two clients)."""
    return {k: v for k, v in table.items() if k not in ("t", "seat", "stuck_flags")}


RACE_RULES: Message = {"preset": "pagat", "nertz_pile_size": 2, "blocked_round_end": False}
"""Two-card Nertz piles, so a test can deal a race."""


def layout(nertz: str, work: str, waste: str = "") -> Layout:
    """A pagat layout from the cards a test cares about; the rest of the deck is the stock."""
    from nertz.cards import deck

    ns = [Card.parse(x) for x in nertz.split()]
    ws = [Card.parse(x) for x in work.split()]
    wa = [Card.parse(x) for x in waste.split()]
    used = set(ns) | set(ws) | set(wa)
    stock = tuple(x for x in deck(False) if x not in used)
    return Layout(tuple(ns), tuple(((x, True),) for x in ws), stock, tuple(wa))


def race_layouts() -> list[Layout]:
    """Seat 0 has AH on its Nertz pile and 2H on its waste; seat 1 has 2H on its Nertz pile:
    seat 0 plays AH then 2H, and seat 1's 2H loses the race for F1."""
    return [layout("KD AH", "3C 4C 5C 6C", "2H"), layout("KD 2H", "3C 4C 5C 6C")]


# --------------------------------------------------------------------------- a real server


@contextmanager
def live_server(app: Any, trusted_proxies: tuple[str, ...] = ()) -> Iterator[str]:
    """``app`` served by uvicorn as ``nertz serve`` serves it (its config), on a free loopback
    port, in a thread; yields the base URL (``http://127.0.0.1:PORT``)."""
    import socket
    import threading

    import uvicorn

    from nertz.server.serve import server_config

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(server_config(app, "127.0.0.1", port, trusted_proxies))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


class StuckSocket:
    """An ASGI ``send`` whose peer reads nothing: the first frame's send never returns (its
    close is noted)."""

    def __init__(self) -> None:
        self.closed_with: int | None = None
        self.never = asyncio.Event()

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "websocket.close":
            self.closed_with = message["code"]
            return
        await self.never.wait()
