"""Signing out, and changing the password, end the player's seats: over real HTTP and
WebSockets, a seat token copied off the computer (or left in its storage) no longer opens the
seat once its player signs out or changes the password, the sockets open with it are closed, and
joining again signed in (at once, for the device that changed the password) hands the same seat
back. Other players, guests included, play on untouched."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cluster_support import REDIS, Proc, drop_prefix, new_prefix
from server_support import WAIT, live_server
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from nertz.server.edge.app import create_app

PASSWORD = "correct horse"
NEW_PASSWORD = "battery staple"


@pytest.fixture
def served(store_url: str) -> Iterator[tuple[Any, str]]:
    """A live server (uvicorn, as ``nertz serve`` runs it), on SQLite and on PostgreSQL: the
    app (to reach its state) and the base URL."""
    app = create_app(store_url)
    with live_server(app) as url:
        yield app, url


@pytest.fixture
def base(served: tuple[Any, str]) -> str:
    """The live server's base URL."""
    return served[1]


def _socket(base: str, room: str) -> ClientConnection:
    return connect(base.replace("http", "ws", 1) + f"/ws/{room}", open_timeout=WAIT)


def _read(ws: ClientConnection) -> dict[str, Any]:
    """The next message (a frame may carry several, a line each)."""
    pending: list[str] = ws.__dict__.setdefault("pending", [])
    if not pending:
        frame = ws.recv(timeout=WAIT)
        pending.extend(str(frame).split("\n"))
    message: dict[str, Any] = json.loads(pending.pop(0))
    return message


def _hello(ws: ClientConnection, token: str) -> dict[str, Any]:
    """Say hello: the ``state``, or the ``error`` refusing the token."""
    ws.send(json.dumps({"type": "hello", "token": token}))
    while True:
        m = _read(ws)
        if m["type"] in ("state", "caught_up", "error"):
            return m


def _until_closed(ws: ClientConnection) -> list[dict[str, Any]]:
    """Everything the socket gets until the server closes it (fails after WAIT in all: the
    room's periodic messages do not extend it)."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + WAIT
    try:
        while True:
            assert time.monotonic() < deadline, f"the socket stayed open: {seen[-3:]}"
            seen.append(_read(ws))
    except ConnectionClosed:
        return seen


def _browser(base: str) -> httpx.Client:
    """A browser of its own: its cookie jar is its identity."""
    return httpx.Client(base_url=base, timeout=WAIT)


def test_signing_out_ends_the_players_seats_and_signing_in_takes_them_back(base: str) -> None:
    with _browser(base) as ann, _browser(base) as guest:
        assert ann.post("/api/account/signup", json={"name": "Ann", "password": PASSWORD}
                        ).status_code == 200
        made = ann.post("/api/rooms", json={"seats": 2, "name": "Ann"}).json()
        room, ann_seat, ann_token = made["room"], made["player"], made["token"]
        bob = guest.post(f"/api/rooms/{room}/join", json={"name": "Bob"}).json()
        assert bob["identity"]  # a guest, made at the join
        with _socket(base, room) as mine, _socket(base, room) as copied, \
                _socket(base, room) as bobs:
            # Ann's page, someone holding a copy of her seat token, and Bob (a guest).
            assert _hello(mine, ann_token)["type"] == "state"
            assert _hello(copied, ann_token)["type"] == "state"
            assert _hello(bobs, bob["token"])["type"] == "state"
            r = ann.post("/api/account/signout")
            assert r.status_code == 200 and r.json() == {"ok": True}
            for ws in (mine, copied):
                errors = [m for m in _until_closed(ws) if m["type"] == "error"]
                assert [m["code"] for m in errors] == ["signed_out"]
                assert ws.close_code == 1000  # ended, not refused
            # The copy opens nothing any more, from any socket.
            with _socket(base, room) as again:
                refused = _hello(again, ann_token)
                assert refused["type"] == "error" and refused["code"] == "bad_token"
            # The guest plays on: their socket stays, their token still opens their seat.
            bobs.send(json.dumps({"type": "ready", "ready": True}))
            with _socket(base, room) as bob_again:
                assert _hello(bob_again, bob["token"])["type"] == "state"
        # Ann's seat waits for her (the room still lists her at seat 0).
        info = guest.get(f"/api/rooms/{room}").json()
        assert {p["id"]: p["seat"] for p in info["players"]}[ann_seat] == 0
        # Signed in again (a new identity), joining hands her own seat back, with a new token.
        assert ann.post("/api/account/signin", json={"name": "Ann", "password": PASSWORD}
                        ).status_code == 200
        back = ann.post(f"/api/rooms/{room}/join", json={"name": "Ann"})
        assert back.status_code == 200, back.text
        back_seat = back.json()
        assert (back_seat["player"], back_seat["seat"], back_seat["host"]) == (ann_seat, 0, True)
        assert back_seat["token"] != ann_token
        with _socket(base, room) as mine:
            state = _hello(mine, back_seat["token"])
            assert state["type"] == "state" and state["you"]["player"] == ann_seat
        with _socket(base, room) as copied:
            assert _hello(copied, ann_token)["code"] == "bad_token"
        # Someone else who joins under her name is someone else, refused as before.
        with _browser(base) as stranger:
            assert stranger.post(f"/api/rooms/{room}/join", json={"name": "Ann"}
                                 ).status_code == 409


def test_a_guest_who_signs_out_ends_their_seats_and_others_keep_theirs(base: str) -> None:
    with _browser(base) as carol, _browser(base) as dave:
        made = carol.post("/api/rooms", json={"seats": 2, "name": "Carol"}).json()
        room = made["room"]
        joined = dave.post(f"/api/rooms/{room}/join", json={"name": "Dave"}).json()
        # Carol's second room, and a room she never sat in: only her seats end.
        other = carol.post("/api/rooms", json={"seats": 2, "name": "Carol"}).json()
        assert carol.post("/api/account/signout").json() == {"ok": True}
        for seat_room, token in ((room, made["token"]), (other["room"], other["token"])):
            with _socket(base, seat_room) as ws:
                assert _hello(ws, token)["code"] == "bad_token"
        with _socket(base, room) as ws:
            assert _hello(ws, joined["token"])["type"] == "state"
        # Signing out with nothing to sign out of is no error.
        assert carol.post("/api/account/signout").json() == {"ok": True}


@pytest.mark.parametrize("ending", ["signout", "password"])
def test_a_sign_out_ends_seats_in_rooms_another_process_owns(pg_url: str, tmp_path: Path,
                                                               ending: str) -> None:
    """Two ``nertz serve`` processes of one service (sockets relayed, as between machines):
    the sign-out (or the password change) reaches the room's owner from the other process, and
    so does the join that takes the seat back."""
    prefix = new_prefix()
    procs = [Proc(pg_url, prefix, tmp_path / f"proc{n}.log", handoff=False) for n in range(2)]
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.wait_ready()
        # The room is made where placement says; Ann's requests then go to the process that
        # does not own it (its lease names the owner's pid).
        with _browser(procs[0].url) as ann:
            assert ann.post("/api/account/signup", json={"name": "Ann", "password": PASSWORD}
                            ).status_code == 200
            made = ann.post("/api/rooms", json={"seats": 2, "name": "Ann"}).json()
            owner = asyncio.run(_owner(prefix, made["room"]))
            other = next(p for p in procs
                         if p.proc is not None and f"-{p.proc.pid}-" not in owner)
        with _browser(other.url) as ann:
            assert ann.post("/api/account/signin", json={"name": "Ann", "password": PASSWORD}
                            ).status_code == 200
            with _socket(other.url, made["room"]) as ws:
                assert _hello(ws, made["token"])["type"] == "state"
                if ending == "signout":
                    assert ann.post("/api/account/signout").json() == {"ok": True}
                else:
                    assert ann.post("/api/account/password", json={"old": PASSWORD,
                                                                   "new": NEW_PASSWORD}
                                    ).json() == {"ok": True}
                errors = [m for m in _until_closed(ws) if m["type"] == "error"]
                assert [m["code"] for m in errors] == ["signed_out"]
            for p in procs:
                with _socket(p.url, made["room"]) as ws:
                    assert _hello(ws, made["token"])["code"] == "bad_token"
            if ending == "signout":
                assert ann.post("/api/account/signin", json={"name": "Ann",
                                                             "password": PASSWORD}
                                ).status_code == 200
            back = ann.post(f"/api/rooms/{made['room']}/join", json={"name": "Ann"}).json()
            assert (back["player"], back["seat"]) == (made["player"], 0)
            with _socket(other.url, made["room"]) as ws:
                assert _hello(ws, back["token"])["type"] == "state"
    finally:
        for p in procs:
            p.stop()
        asyncio.run(drop_prefix(prefix))


def test_a_password_change_ends_every_seat_and_the_changer_joins_back(base: str) -> None:
    """Someone who thinks their account was taken changes the password: a copied identity
    and a copied seat token are both out, and the device that changed it takes its seat back
    by joining, without signing in."""
    with _browser(base) as ann, _browser(base) as thief, _browser(base) as guest:
        assert ann.post("/api/account/signup", json={"name": "Ann", "password": PASSWORD}
                        ).status_code == 200
        # The thief's device holds Ann's identity (signed in with her password).
        assert thief.post("/api/account/signin", json={"name": "Ann", "password": PASSWORD}
                          ).status_code == 200
        made = ann.post("/api/rooms", json={"seats": 2, "name": "Ann"}).json()
        room, ann_seat, ann_token = made["room"], made["player"], made["token"]
        bob = guest.post(f"/api/rooms/{room}/join", json={"name": "Bob"}).json()
        with _socket(base, room) as mine, _socket(base, room) as copied, \
                _socket(base, room) as bobs:
            assert _hello(mine, ann_token)["type"] == "state"
            assert _hello(copied, ann_token)["type"] == "state"
            assert _hello(bobs, bob["token"])["type"] == "state"
            r = ann.post("/api/account/password", json={"old": PASSWORD, "new": NEW_PASSWORD})
            assert r.status_code == 200 and r.json() == {"ok": True}
            for ws in (mine, copied):
                errors = [m for m in _until_closed(ws) if m["type"] == "error"]
                assert [m["code"] for m in errors] == ["signed_out"]
                assert "password was changed" in errors[0]["message"]
                assert ws.close_code == 1000
            with _socket(base, room) as again:
                assert _hello(again, ann_token)["code"] == "bad_token"
            with _socket(base, room) as bob_again:
                assert _hello(bob_again, bob["token"])["type"] == "state"
        # The thief is signed out, and cannot take the seat: a join under her name is refused.
        assert thief.get("/api/me").json()["player"] is None
        assert thief.post(f"/api/rooms/{room}/join", json={"name": "Ann"}).status_code == 409
        # Ann's device is still Ann: joining hands her own seat back with a new token.
        assert ann.get("/api/me").json()["player"]["name"] == "Ann"
        back = ann.post(f"/api/rooms/{room}/join", json={"name": "Ann"})
        assert back.status_code == 200, back.text
        seat = back.json()
        assert (seat["player"], seat["seat"], seat["host"]) == (ann_seat, 0, True)
        with _socket(base, room) as mine:
            state = _hello(mine, seat["token"])
            assert state["type"] == "state" and state["you"]["player"] == ann_seat
        # Only the new password opens the account.
        with _browser(base) as later:
            assert later.post("/api/account/signin", json={"name": "Ann", "password": PASSWORD}
                              ).status_code == 401
            assert later.post("/api/account/signin", json={"name": "Ann",
                                                           "password": NEW_PASSWORD}
                              ).status_code == 200


def test_a_password_change_that_cannot_end_a_seat_leaves_the_password(
        served: tuple[Any, str]) -> None:
    """A room that cannot store the end of a seat: a 503 with Retry-After, the password
    unchanged and the seat token still opening its seat; asking again finishes it.
    A wrong old password changes nothing at all."""
    app, base = served
    with _browser(base) as ann:
        assert ann.post("/api/account/signup", json={"name": "Ann", "password": PASSWORD}
                        ).status_code == 200
        made = ann.post("/api/rooms", json={"seats": 2, "name": "Ann"}).json()
        room, token = made["room"], made["token"]
        wrong = ann.post("/api/account/password", json={"old": "not it at all",
                                                        "new": NEW_PASSWORD})
        assert wrong.status_code == 401
        with _socket(base, room) as ws:
            assert _hello(ws, token)["type"] == "state"
        players = app.state.players
        ends = players.end_seats_in

        async def refuse(room_id: str, people: list[str], why: str) -> None:
            raise RuntimeError("the room's store is down")

        players.end_seats_in = refuse
        try:
            r = ann.post("/api/account/password", json={"old": PASSWORD, "new": NEW_PASSWORD})
        finally:
            players.end_seats_in = ends
        assert r.status_code == 503 and r.headers["Retry-After"] == "1"
        with _socket(base, room) as ws:
            assert _hello(ws, token)["type"] == "state"
        with _browser(base) as later:
            assert later.post("/api/account/signin", json={"name": "Ann", "password": PASSWORD}
                              ).status_code == 200
        # Asked again, it is done.
        r = ann.post("/api/account/password", json={"old": PASSWORD, "new": NEW_PASSWORD})
        assert r.status_code == 200
        with _socket(base, room) as ws:
            assert _hello(ws, token)["code"] == "bad_token"
        with _browser(base) as later:
            assert later.post("/api/account/signin", json={"name": "Ann",
                                                           "password": NEW_PASSWORD}
                              ).status_code == 200


async def _owner(prefix: str, room: str) -> str:
    """The name of the process that holds the room's lease."""
    from redis.asyncio import Redis

    from nertz.server.cluster import Leases

    redis = Redis.from_url(REDIS)
    try:
        held = await Leases(redis, prefix, "test").owner(room)
    finally:
        await redis.aclose()
    assert held is not None, f"nobody owns {room}"
    return str(held[0])
