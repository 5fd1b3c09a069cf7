"""The socket and HTTP edge against a real uvicorn (configured as ``nertz serve`` is): sockets
capped per address and in total with a refusal at the handshake, the documented message and a
close frame before the server hangs up, forwarded addresses believed only from named proxies,
``Retry-After`` on a 429, a hang-up mid-body, errors that keep the client's id, look-alike
names, kicked players kept out, unknown tokens throttled, binary frames refused."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from server_support import (
    create_room,
    hello,
    join,
    live_server,
    recv,
    recv_until,
    reply,
)
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

import nertz.server.edge.app as app_module
from nertz.server.edge.app import PEOPLE_PER_ADDRESS, create_app
from nertz.server.limits import SITE_SHARE, address_key


def ws_url(base: str, room: str) -> str:
    return base.replace("http://", "ws://") + f"/ws/{room}"


def first(ws: ClientConnection, kind: str, timeout: float = 10.0) -> dict[str, Any]:
    """The first message of type ``kind`` (lines of a frame read one by one)."""
    while True:
        for line in str(ws.recv(timeout)).split("\n"):
            m: dict[str, Any] = json.loads(line)
            if m["type"] == kind:
                return m


def close_code(ws: ClientConnection, timeout: float = 10.0) -> int | None:
    """Read until the server closes; the close code it sent (None: no close frame, 1006)."""
    with pytest.raises(ConnectionClosed):
        while True:
            ws.recv(timeout)
    return ws.close_code if ws.protocol.close_rcvd is not None else None


@pytest.fixture
def served(db_url: str) -> Iterator[tuple[str, Any]]:
    app = create_app(db_url, sockets_per_address=4, max_sockets=0)
    with live_server(app) as base:
        yield base, app


# --------------------------------------------------------------------------- socket caps


def test_sockets_per_address_are_refused_at_the_handshake(db_url: str) -> None:
    app = create_app(db_url, sockets_per_address=3, max_sockets=0)
    with live_server(app) as base, ExitStack() as stack:
        room = httpx.post(base + "/api/rooms", json={"seats": 2}).json()["room"]
        held = [stack.enter_context(connect(ws_url(base, room))) for _ in range(3)]
        with pytest.raises(InvalidStatus) as refused:
            connect(ws_url(base, room))
        response = refused.value.response
        assert response.status_code == 429
        assert "too many sockets from one address" in json.loads(response.body)["error"]
        assert response.headers["Retry-After"]
        held.pop().close()
        # One closed: one more may open (once the server has seen it close).
        deadline = time.monotonic() + 60
        while True:
            try:
                stack.enter_context(connect(ws_url(base, room)))
                break
            except InvalidStatus:
                assert time.monotonic() < deadline, "a freed slot was not given back"
                time.sleep(0.05)
        for ws in held:
            ws.close()
    # Every socket gone: nothing is left counted, no address remembered.
    assert app.state.sockets.open == 0 and app.state.sockets.by_address == {}


def test_sockets_in_total_are_refused_at_the_handshake(db_url: str) -> None:
    app = create_app(db_url, sockets_per_address=0, max_sockets=2)
    with live_server(app) as base, ExitStack() as stack:
        room = httpx.post(base + "/api/rooms", json={"seats": 2}).json()["room"]
        for _ in range(2):
            stack.enter_context(connect(ws_url(base, room)))
        with pytest.raises(InvalidStatus) as refused:
            connect(ws_url(base, room))
        assert refused.value.response.status_code == 503
        assert "server is full" in json.loads(refused.value.response.body)["error"]


def test_the_ninth_socket_gets_its_message_and_a_close_frame(
    served: tuple[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, _app = served
    monkeypatch.setattr(app_module, "MAX_SOCKETS_PER_PLAYER", 2)
    person = httpx.post(base + "/api/rooms", json={"seats": 2, "name": "Ann"}).json()
    with ExitStack() as stack:
        for _ in range(2):
            ws = stack.enter_context(connect(ws_url(base, person["room"])))
            ws.send(json.dumps({"type": "hello", "token": person["token"]}))
            first(ws, "state")
        extra = stack.enter_context(connect(ws_url(base, person["room"])))
        extra.send(json.dumps({"type": "hello", "token": person["token"]}))
        assert first(extra, "error")["code"] == "too_many_sockets"
        assert close_code(extra) == 1008


def test_no_hello_gets_its_message_and_a_close_frame(
    served: tuple[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, _app = served
    monkeypatch.setattr(app_module, "HELLO_TIMEOUT", 0.3)
    room = httpx.post(base + "/api/rooms", json={"seats": 2}).json()["room"]
    with connect(ws_url(base, room)) as ws:
        assert first(ws, "error")["code"] == "no_hello"
        assert close_code(ws) == 1008


def test_hello_wait_is_short() -> None:
    assert app_module.HELLO_TIMEOUT <= 10


# --------------------------------------------------------------------------- addresses


def test_forwarded_addresses_are_believed_only_from_named_proxies(db_url: str) -> None:
    def statuses(base: str) -> list[httpx.Response]:
        return [httpx.post(base + "/api/rooms", json={"seats": 2},
                           headers={"X-Forwarded-For": f"203.0.113.{i}"}) for i in range(4)]

    with live_server(create_app(db_url, rooms_per_minute=2)) as base:
        answers = statuses(base)
    # Nobody named as a proxy: the peer (127.0.0.1) is the client, whatever it claims.
    assert [r.status_code for r in answers] == [201, 201, 429, 429]
    wait = int(answers[2].headers["Retry-After"])
    assert 1 <= wait <= 30 and f"{wait} s" in answers[2].json()["error"]
    with live_server(create_app(db_url, rooms_per_minute=2), ("127.0.0.1",)) as base:
        assert [r.status_code for r in statuses(base)] == [201] * 4


def test_one_ipv6_network_is_one_address_for_the_limits(db_url: str) -> None:
    # A home or a phone gets a whole /64: counting each of its addresses apart would be no
    # limit at all. An IPv4-mapped address counts as its IPv4 one.
    def create(client: str) -> int:
        return httpx.post(base + "/api/rooms", json={"seats": 2},
                          headers={"X-Forwarded-For": client}).status_code

    with live_server(create_app(db_url, rooms_per_minute=2), ("127.0.0.1",)) as base:
        assert [create(f"2001:db8:0:1::{i}") for i in range(1, 4)] == [201, 201, 429]
        assert create("2001:db8:0:2::1") == 201
        assert [create(a) for a in ("192.0.2.7", "::ffff:192.0.2.7", "192.0.2.7")] == [
            201, 201, 429]
    assert address_key("2001:db8:0:1:aaaa:bbbb:cccc:dddd") == "2001:db8:0:1::/64"
    assert address_key("::1") == "::1" and address_key("testclient") == "testclient"


def test_the_64s_of_one_ipv6_48_share_a_wider_allowance(db_url: str) -> None:
    # One holder of a /48 has 65,536 /64s: the /48 gets SITE_SHARE /64s' worth in all.
    def create(client: str) -> int:
        return httpx.post(base + "/api/rooms", json={"seats": 2},
                          headers={"X-Forwarded-For": client}).status_code

    with live_server(create_app(db_url, rooms_per_minute=1), ("127.0.0.1",)) as base:
        made = [create(f"2001:db8:7:{n:x}::1") for n in range(SITE_SHARE)]
        assert made == [201] * SITE_SHARE
        refused = httpx.post(base + "/api/rooms", json={"seats": 2},
                             headers={"X-Forwarded-For": "2001:db8:7:ffff::1"})
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
        assert create("2001:db8:8::1") == 201  # another /48
        assert create("192.0.2.8") == 201


def test_trust_proxy_flag_is_checked() -> None:
    from nertz.server.serve import check_proxies

    check_proxies(("10.0.0.1", "10.1.0.0/16", "::1"))
    with pytest.raises(ValueError, match="not-an-ip"):
        check_proxies(("not-an-ip",))


# --------------------------------------------------------------------------- bodies


def test_a_short_body_and_a_hang_up_log_no_traceback(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(db_url)
    sent: list[dict[str, Any]] = []
    parts = [{"type": "http.request", "body": b'{"seats":', "more_body": True},
             {"type": "http.disconnect"}]

    async def receive() -> dict[str, Any]:
        return parts.pop(0) if parts else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/api/rooms", "raw_path": b"/api/rooms",
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5000),
             "server": ("127.0.0.1", 80),
             "headers": [(b"content-type", b"application/json"), (b"content-length", b"400")]}
    with caplog.at_level(logging.ERROR):
        asyncio.run(app(scope, receive, send))  # raised ClientDisconnect before the fix
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert sent[0]["status"] == 400


# --------------------------------------------------------------------------- messages


def test_an_error_for_a_malformed_message_keeps_its_id(client: TestClient) -> None:
    ann = create_room(client)
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        hello(ws, ann.token)
        ws.send_text(json.dumps({"type": "play", "id": "m7", "move": "T", "extra": 1}))
        m = reply(ws)
        assert m["type"] == "error" and m["code"] == "bad_message" and m["id"] == "m7", m
        ws.send_text(json.dumps({"type": "ping", "id": "p1", "sent": "soon"}))
        assert reply(ws)["id"] == "p1"
        ws.send_text('{"type": "play", "id": "m8", "move": ')  # not JSON: no id to keep
        assert "id" not in reply(ws)


def test_binary_frames_are_refused(client: TestClient) -> None:
    ann = create_room(client)
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        ws.send_bytes(b'{"type": "hello", "token": "%s"}' % ann.token.encode())
        m = reply(ws)
        assert m["code"] == "bad_message" and "binary" in m["message"], m
        ws.send_text(json.dumps({"type": "hello", "token": ann.token}))
        assert recv(ws)["type"] == "state"


def test_a_text_frame_not_utf8_is_answered_then_closed_with_a_line_in_the_log(
    served: tuple[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """The documented ``error`` first, then the close (1007) with a reason, whether the frame
    came whole (the server's own road) or in fragments (the library's); the log has a line, no
    traceback (it had an ERROR with one for each such frame: anyone could flood it)."""
    base, _ = served
    room = httpx.post(base + "/api/rooms", json={"seats": 2}).json()["room"]
    bad = b'{"type": "ping", "id": "\xff\xfe", "sent": 1}'
    uvicorn_log = logging.getLogger("uvicorn.error")  # it does not reach the root logger
    uvicorn_log.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.INFO):
            for message in (bad, [bad[:12], bad[12:]]):
                with connect(ws_url(base, room)) as ws:
                    ws.send(message, text=True)
                    m = json.loads(ws.recv(10))
                    assert m["type"] == "error" and m["code"] == "bad_message", m
                    assert "UTF-8" in m["message"], m
                    assert close_code(ws) == 1007 and "UTF-8" in (ws.close_reason or "")
    finally:
        uvicorn_log.removeHandler(caplog.handler)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert len([r for r in caplog.records if "UTF-8" in r.getMessage()]) == 2


def test_unknown_tokens_are_throttled(client: TestClient) -> None:
    ann = create_room(client)
    codes = []
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        try:
            for i in range(app_module.BAD_TOKENS_PER_MINUTE + 2):
                ws.send_text(json.dumps({"type": "hello", "token": f"guess{i}"}))
                codes.append(reply(ws)["code"])
            recv(ws)
        except WebSocketDisconnect:
            codes.append("closed")
    assert codes == ["bad_token"] * app_module.BAD_TOKENS_PER_MINUTE + ["too_fast", "closed"]
    # The throttle holds for the address, not the socket: a new socket's guess is refused at
    # once; a known token still gets in (one guesser must not lock out a whole household).
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        ws.send_text(json.dumps({"type": "hello", "token": "guess again"}))
        assert reply(ws)["code"] == "too_fast"
    with client.websocket_connect(f"/ws/{ann.room}") as ws:
        assert hello(ws, ann.token)["type"] == "state"


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["\u0410nn", "\u0391\u039d\u039d", "ANN", "\uff21nn"])
def test_look_alike_names_are_refused(client: TestClient, name: str) -> None:
    ann = create_room(client, seats=3)
    r = client.post(f"/api/rooms/{ann.room}/join", json={"name": name})
    assert r.status_code == 409, (name, r.text)
    assert "looks like" in r.json()["error"]


def test_different_names_are_kept_apart(client: TestClient) -> None:
    ann = create_room(client, seats=4)
    for name in ("Anna", "Sam", "Ann B", "\u0416enya"):
        assert client.post(f"/api/rooms/{ann.room}/join", json={"name": name}).status_code \
            == 200, name
    # "rn" looks like "m": a "Sarn" beside "Sam" is refused.
    assert client.post(f"/api/rooms/{ann.room}/join", json={"name": "Sarn"}).status_code == 409


def test_skeleton_follows_the_standard() -> None:
    from nertz.server.confusables import skeleton

    assert skeleton("\u0410nn") == skeleton("Ann") == "Ann"
    assert skeleton("m") == "rn" and skeleton("1") == "l" and skeleton("0") == "O"
    assert skeleton("\u212bngstr\u00f6m") == skeleton("A\u030angstro\u0308rn")


def at(address: str) -> dict[str, str]:
    """Headers that make a request come from ``address`` (behind the tests' trusted proxy)."""
    return {"X-Forwarded-For": address}


def ann_kicks_bob(client: TestClient, ann: dict[str, Any], bob: dict[str, Any]) -> None:
    """Ann (the host, at 10.0.0.1) and Bob (at 10.0.0.2) open their sockets; Ann kicks Bob,
    and Bob hears it."""
    with client.websocket_connect(f"/ws/{ann['room']}", headers=at("10.0.0.1")) as a, \
            client.websocket_connect(f"/ws/{ann['room']}", headers=at("10.0.0.2")) as b:
        hello(a, ann["token"])
        hello(b, bob["token"])
        a.send_text(json.dumps({"type": "kick", "player": bob["player"]}))
        while recv(b)["type"] != "kicked":
            pass


def test_a_kicked_player_cannot_rejoin_at_once(db_url: str) -> None:
    """Behind a proxy the test names, so that each person has an address of their own."""
    app = ProxyHeadersMiddleware(create_app(db_url), trusted_hosts=["testclient"])

    with TestClient(app) as client:
        r = client.post("/api/rooms", json={"seats": 3, "name": "Ann"}, headers=at("10.0.0.1"))
        ann = r.json()
        bob = client.post(f"/api/rooms/{ann['room']}/join", json={"name": "Bob"},
                          headers=at("10.0.0.2")).json()
        ann_kicks_bob(client, ann, bob)

        def rejoin(name: str, address: str) -> httpx.Response:
            return client.post(f"/api/rooms/{ann['room']}/join", json={"name": name},
                               headers=at(address))

        again = rejoin("Robert", "10.0.0.2")  # same address, another name
        assert again.status_code == 403 and "removed" in again.json()["error"], again.text
        assert int(again.headers["Retry-After"]) > 60
        assert rejoin("\u0412ob", "10.0.0.3").status_code == 403  # a name that looks like his
        # Someone else, from elsewhere, still may.
        assert rejoin("Cy", "10.0.0.3").status_code == 200


def test_a_kicked_player_cannot_rejoin_as_the_same_player(db_url: str) -> None:
    """The kick bars the player behind the seat too: their identity cookie, under a new name,
    from a new address, is refused as a barred address is; someone else from there is not."""
    app = ProxyHeadersMiddleware(create_app(db_url), trusted_hosts=["testclient"])

    with TestClient(app) as client:
        ann = client.post("/api/rooms", json={"seats": 3, "name": "Ann"},
                          headers=at("10.0.0.1")).json()
        client.cookies.clear()  # Bob is another browser: his own identity
        bob = client.post(f"/api/rooms/{ann['room']}/join", json={"name": "Bob"},
                          headers=at("10.0.0.2")).json()
        assert bob["profile"] and bob["profile"] != ann["profile"]
        ann_kicks_bob(client, ann, bob)

        def rejoin(name: str, address: str) -> httpx.Response:
            return client.post(f"/api/rooms/{ann['room']}/join", json={"name": name},
                               headers=at(address))

        again = rejoin("Robert", "10.0.0.5")  # Bob's cookie, a new name, a new address
        assert again.status_code == 403 and "removed" in again.json()["error"], again.text
        assert int(again.headers["Retry-After"]) > 60
        client.cookies.clear()  # someone else at that address
        assert rejoin("Robert", "10.0.0.5").status_code == 200


def test_one_address_cannot_fill_a_room(db_url: str) -> None:
    """Joins from one address stop at PEOPLE_PER_ADDRESS, so one client cannot fill a public
    room with spectators; the host can kick one of them (it never opened a socket) and that
    bars the address it joined from, and people from elsewhere still get in."""
    app = ProxyHeadersMiddleware(create_app(db_url), trusted_hosts=["testclient"])

    with TestClient(app) as client:
        ann = client.post("/api/rooms", json={"seats": 2, "name": "Ann"},
                          headers=at("10.0.0.1")).json()

        def join_as(name: str, address: str) -> httpx.Response:
            return client.post(f"/api/rooms/{ann['room']}/join",
                               json={"name": name, "spectator": True}, headers=at(address))

        crowd = [join_as(f"Watcher {i}", "10.0.0.9") for i in range(PEOPLE_PER_ADDRESS)]
        assert all(r.status_code == 200 for r in crowd), [r.text for r in crowd]
        refused = join_as("One more", "10.0.0.9")
        assert refused.status_code == 403, refused.text
        assert "from your address" in refused.json()["error"]
        assert join_as("Cy", "10.0.0.3").status_code == 200
        with client.websocket_connect(f"/ws/{ann['room']}", headers=at("10.0.0.1")) as a:
            hello(a, ann["token"])
            a.send_text(json.dumps({"type": "kick", "player": crowd[0].json()["player"]}))
            gone = crowd[0].json()["player"]
            while gone in {p["id"] for p in recv_until(a, "room")[0]["room"]["players"]}:
                pass
        # The seat left is free, but not to the address the kicked one joined from.
        again = join_as("Someone new", "10.0.0.9")
        assert again.status_code == 403 and "removed" in again.json()["error"], again.text
        assert join_as("Dee", "10.0.0.4").status_code == 200


def test_a_kick_does_not_bar_the_hosts_own_address(client: TestClient) -> None:
    """A household shares one address: kicking one of them must not lock the others out."""
    ann = create_room(client, seats=3)
    bob = join(client, ann.room, "Bob")
    with client.websocket_connect(f"/ws/{ann.room}") as a, \
            client.websocket_connect(f"/ws/{ann.room}") as b:
        hello(a, ann.token)
        hello(b, bob.token)
        a.send_text(json.dumps({"type": "kick", "player": bob.player}))
        while recv(b)["type"] != "kicked":
            pass
    assert client.post(f"/api/rooms/{ann.room}/join", json={"name": "Cy"}).status_code == 200
    assert client.post(f"/api/rooms/{ann.room}/join", json={"name": "Bob"}).status_code == 403


def test_joins_and_public_rooms_sent_at_once_keep_to_the_address_limits(db_url: str) -> None:
    # Each used to pass the count before any of them was counted (the join awaits the store
    # between the two): thirty joins at once filled a room, fifteen rooms at once were listed.
    from nertz.server.players.listing import PER_LISTER

    async def at_once(base: str) -> tuple[list[int], list[int]]:
        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            room = (await http.post("/api/rooms", json={"seats": 2})).json()["room"]
            joins = await asyncio.gather(*(
                http.post(f"/api/rooms/{room}/join", json={"name": f"N{i}", "spectator": True})
                for i in range(PEOPLE_PER_ADDRESS + 8)))
            rooms = await asyncio.gather(*(
                http.post("/api/rooms", json={"seats": 2, "public": True})
                for _ in range(PER_LISTER + 4)))
        return [r.status_code for r in joins], [r.status_code for r in rooms]

    with live_server(create_app(db_url)) as base:
        joins, rooms = asyncio.run(at_once(base))
        assert sorted(joins) == [200] * PEOPLE_PER_ADDRESS + [403] * 8
        assert sorted(rooms) == [201] * PER_LISTER + [429] * 4
        assert len(httpx.get(base + "/api/rooms").json()["rooms"]) == PER_LISTER
