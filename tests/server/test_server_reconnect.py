"""Reconnecting: within the window a player has their seat and view back; after it the seat is
vacant and the host may hand it to a bot; catching up never spans two server processes."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
from server_support import (
    Person,
    ask,
    create_room,
    hello,
    join,
    public,
    quiet,
    recv,
    recv_until,
    table_of,
    two_players,
    wait_phase,
)
from starlette.testclient import TestClient

import nertz.server.room.lobby as lobby_module
from nertz.server.edge.app import create_app


def players(client: TestClient, room: str) -> dict[str, dict[str, object]]:
    return {p["name"]: p for p in client.get(f"/api/rooms/{room}").json()["players"]}


def test_reconnect_within_the_window(client: TestClient) -> None:
    ann = create_room(client)
    bob = join(client, ann.room, "Bob")
    with client.websocket_connect(f"/ws/{ann.room}") as a:
        hello(a, ann.token)
        with client.websocket_connect(f"/ws/{ann.room}") as b:
            hello(b, bob.token)
            a.send_json({"type": "start", "countdown_ms": 0})
            wait_phase(b, "playing")
            assert ask(b, {"type": "play", "id": "b1", "move": "T"})["type"] == "ack"
            b.send_json({"type": "sync", "since": None})
            seen = recv_until(b, "state")[0]
        gone = players(client, ann.room)["Bob"]
        assert gone["connected"] is False and gone["vacant"] is False
        for i in range(3):
            assert ask(a, {"type": "play", "id": f"a{i}", "move": "T"})["type"] == "ack"
        a.send_json({"type": "sync", "since": None})
        truth = recv_until(a, "state")[0]
        with client.websocket_connect(f"/ws/{ann.room}") as b:
            back = hello(b, bob.token)
            assert back["type"] == "state"
            assert back["you"] == seen["you"] and back["you"]["seat"] == 1
            assert back["table"]["seat"] == 1
            assert public(back["table"]) == public(truth["table"])
            assert back["table"]["tableaus"][1] == seen["table"]["tableaus"][1]  # his, as left
            assert ask(b, {"type": "play", "id": "b2", "move": "T"})["type"] == "ack"
            # His old action id is still his: answered again, not applied again.
            assert ask(b, {"type": "play", "id": "b1", "move": "T"})["move"] == "T"
        assert players(client, ann.room)["Bob"]["connected"] is False


@pytest.mark.usefixtures("fast_bots")
def test_vacant_seat_goes_to_a_bot(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    ann = create_room(client, {"preset": "pagat", "nertz_pile_size": 10})
    bob = join(client, ann.room, "Bob")
    with client.websocket_connect(f"/ws/{ann.room}") as a:
        hello(a, ann.token)
        with client.websocket_connect(f"/ws/{ann.room}") as b:
            hello(b, bob.token)
            a.send_json({"type": "start", "countdown_ms": 0})
            wait_phase(b, "playing")
        m = ask(a, {"type": "bot_seat", "seat": 1, "bot": "greedy", "level": "expert"})
        assert m["code"] == "seat_taken"  # Bob may still come back
        m = ask(a, {"type": "bot_seat", "seat": 0, "bot": "greedy", "level": "expert"})
        assert m["code"] == "seat_taken"  # Ann is here
        # The window ends (a seat's vacancy is read against the window when asked): the window
        # was the full one above, however long a busy machine took between Bob's leaving and
        # the host's request, and is over now.
        monkeypatch.setattr(lobby_module, "RECONNECT_SECONDS", 0.3)
        deadline = time.monotonic() + 60
        while not players(client, ann.room)["Bob"]["vacant"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        quiet(a)
        a.send_json({"type": "bot_seat", "seat": 1, "bot": "greedy", "level": "expert"})
        room = recv_until(a, "room")[0]["room"]
        seat1 = [p for p in room["players"] if p["seat"] == 1]
        assert len(seat1) == 1 and seat1[0]["bot"] == "greedy" and seat1[0]["level"] == "expert"
        assert "Bob" not in [p["name"] for p in room["players"]]
        update = recv_until(a, "update", seat=1)[0]  # the bot plays Bob's cards
        assert update["tableaus"][0]["seat"] == 1
    with client.websocket_connect(f"/ws/{ann.room}") as b:
        assert hello(b, bob.token)["code"] == "bad_token"


def wait_host(ws: Any, player: str, timeout: float = 60.0) -> None:
    """Read up to the room broadcast that names ``player`` host (it goes out once the change
    is stored: read it, or it could come after a later request and be taken for its answer).
    A deadline for the whole wait: the room's periodic messages would keep a per-message
    wait going for ever."""
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, f"{player} never became host"
        m = recv(ws, timeout)
        if m["type"] == "room" and m["room"]["host"] == player:
            return


@contextlib.contextmanager
def host_gone(client: TestClient, *, play: bool) -> Iterator[tuple[Person, Person, Any]]:
    """Ann hosts, Bob joins, both connect (and start a round if ``play``); Ann's socket
    closes, and the room is read up to Bob's taking it over: (Ann, Bob, Bob's socket)."""
    ann = create_room(client)
    bob = join(client, ann.room, "Bob")
    with client.websocket_connect(f"/ws/{ann.room}") as b:
        hello(b, bob.token)
        with client.websocket_connect(f"/ws/{ann.room}") as a:
            hello(a, ann.token)
            if play:
                a.send_json({"type": "start", "countdown_ms": 0})
                wait_phase(b, "playing")
        wait_host(b, bob.player)
        assert client.get(f"/api/rooms/{ann.room}").json()["host"] == bob.player
        yield ann, bob, b


def test_vacant_host_passes_the_host_on(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The host's seat falling vacant hands the room on, however long the away wait is.
    monkeypatch.setattr(lobby_module, "RECONNECT_SECONDS", 0.2)
    monkeypatch.setattr(lobby_module, "HOST_AWAY_SECONDS", 1e6)
    with host_gone(client, play=True) as (_ann, _bob, b):
        b.send_json({"type": "bot_seat", "seat": 0, "bot": "random", "level": "casual"})
        room = recv_until(b, "room")[0]["room"]
        assert [p["bot"] for p in room["players"] if p["seat"] == 0] == ["random"]


def test_an_away_host_hands_the_room_on_long_before_the_seat_is_free(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between rounds and in the lobby the room waits on its host: one who went to another
    # page stalled it for the whole reconnect window. Someone connected hosts instead after
    # HOST_AWAY_SECONDS, while the host's seat still waits for them.
    monkeypatch.setattr(lobby_module, "HOST_AWAY_SECONDS", 0.2)
    with host_gone(client, play=False) as (ann, _bob, _b):
        assert players(client, ann.room)["Ann"]["seat"] == 0
        assert not players(client, ann.room)["Ann"]["vacant"]


def test_a_seated_player_is_heir_before_a_watcher(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lobby_module, "HOST_AWAY_SECONDS", 0.2)
    ann = create_room(client)
    cy = join(client, ann.room, "Cy", spectator=True)  # joined first, but only watches
    bob = join(client, ann.room, "Bob")
    with client.websocket_connect(f"/ws/{ann.room}") as c, \
            client.websocket_connect(f"/ws/{ann.room}") as b:
        hello(c, cy.token)
        hello(b, bob.token)
        with client.websocket_connect(f"/ws/{ann.room}") as a:
            hello(a, ann.token)
        wait_host(b, bob.player)


def test_an_abandoned_room_waits_for_someone_to_host_without_polling(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The host leaves with nobody else connected: no timer keeps checking for an heir (it
    # rescheduled itself twenty times a second for as long as the room stayed open); the
    # first person to connect takes the room.
    monkeypatch.setattr(lobby_module, "HOST_AWAY_SECONDS", 0.2)
    ann = create_room(client)
    bob = join(client, ann.room, "Bob")
    table = table_of(client, ann.room)
    with client.websocket_connect(f"/ws/{ann.room}") as a:
        hello(a, ann.token)
    deadline = time.monotonic() + 60
    while players(client, ann.room)["Ann"]["connected"]:  # her leaving is taken in
        assert time.monotonic() < deadline, "the host never left"
        time.sleep(0.05)
    while table._host_timer is not None:  # the one check, once the away time is up
        assert time.monotonic() < deadline, "the host check kept running"
        time.sleep(0.05)
    assert client.get(f"/api/rooms/{ann.room}").json()["host"] == ann.player
    with client.websocket_connect(f"/ws/{ann.room}") as b:
        hello(b, bob.token)
        wait_host(b, bob.player)


def test_since_from_before_a_restart_gets_the_whole_state(db_url: str) -> None:
    """Versions number one process's broadcasts: a ``since`` that a client kept from before the
    server restarted must never be bridged by the new process's history."""
    with TestClient(create_app(db_url)) as client, two_players(client) as (ann, bob, _a, b):
        b.send_json({"type": "sync", "since": None})
        bobs = recv_until(b, "state")[0]
        view, since = bobs["table"], bobs["v"]
    with TestClient(create_app(db_url)) as client, \
            client.websocket_connect(f"/ws/{ann.room}") as a:  # the server restarted
        hello(a, ann.token)
        assert ask(a, {"type": "play", "id": "t", "move": "T"})["type"] == "ack"
        with client.websocket_connect(f"/ws/{ann.room}") as b:
            b.send_json({"type": "hello", "token": bob.token, "since": since})
            missed: list[dict[str, object]] = []
            while (m := recv(b))["type"] not in ("state", "caught_up"):
                missed.append(m)
            assert m["type"] == "state", (
                f"a since from before the restart was bridged by this process's history: "
                f"{[x['type'] for x in missed]}"
            )
            a.send_json({"type": "sync", "since": None})
            truth = recv_until(a, "state")[0]
            assert public(m["table"]) == public(truth["table"])
            assert public(m["table"]) != public(view)  # Ann has played since


def test_resent_action_after_a_restart_is_not_applied_again(db_url: str) -> None:
    """A client that lost the ack (the server went down) resends its action to the new process:
    it gets the answer again and the action is not applied twice."""
    with TestClient(create_app(db_url)) as client, two_players(client) as (ann, bob, _a, b):
        first = ask(b, {"type": "play", "id": "once", "move": "T"})
        assert first["type"] == "ack"
        b.send_json({"type": "sync", "since": None})
        before = recv_until(b, "state")[0]["table"]
    with TestClient(create_app(db_url)) as client, \
            client.websocket_connect(f"/ws/{ann.room}") as b:
        hello(b, bob.token)
        again = ask(b, {"type": "play", "id": "once", "move": "T"})
        assert again["type"] == "ack"
        assert (again["id"], again["move"], again["t"]) == (first["id"], first["move"], first["t"])
        b.send_json({"type": "sync", "since": None})
        after = recv_until(b, "state")[0]["table"]
        assert public(after) == public(before)
        assert ask(b, {"type": "play", "id": "twice", "move": "T"})["type"] == "ack"


def test_an_action_id_used_for_another_move_is_an_error(db_url: str) -> None:
    """A resent id must carry the same move: another move under a used id is an error naming
    the id and its first move (it used to get the first answer, the new move silently
    dropped), live and after a restart; the same move, written otherwise, is a resend."""
    with TestClient(create_app(db_url)) as client, two_players(client) as (ann, bob, _a, b):
        first = ask(b, {"type": "play", "id": "once", "move": "T"})
        assert first["type"] == "ack"
        assert ask(b, {"type": "play", "id": "once", "move": "t"}) == first  # the same move
        other = ask(b, {"type": "play", "id": "once", "move": "NERTZ"})
        assert (other["type"], other["code"], other["id"]) == ("error", "reused_id", "once")
        assert "'once'" in other["message"] and "'T'" in other["message"], other
        refused = ask(b, {"type": "play", "id": "bad", "move": "NOPE"})
        assert refused["type"] == "rejected"
        assert ask(b, {"type": "play", "id": "bad", "move": "NOPE"}) == refused
        assert ask(b, {"type": "play", "id": "bad", "move": "T"})["code"] == "reused_id"
    with TestClient(create_app(db_url)) as client, \
            client.websocket_connect(f"/ws/{ann.room}") as b:
        hello(b, bob.token)  # the answers now come from the log
        assert ask(b, {"type": "play", "id": "once", "move": "T"}) == first
        assert ask(b, {"type": "play", "id": "once", "move": "NERTZ"})["code"] == "reused_id"
        assert ask(b, {"type": "play", "id": "bad", "move": "NOPE"}) == refused
        assert ask(b, {"type": "play", "id": "bad", "move": "T"})["code"] == "reused_id"
