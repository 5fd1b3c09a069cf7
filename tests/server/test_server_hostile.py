"""Hostile messages, generated: random JSON, real message types with wrong or extra fields, huge
strings, deep nesting, binary frames. Each gets an ``error``, the socket stays up, and nothing
at the table changes (the host sends them: the most powerful seat)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from server_support import ask, in_loop, reply, table_of, two_players
from starlette.testclient import TestClient, WebSocketTestSession

import nertz.server.edge.app as app_module
from nertz.server import protocol
from nertz.server.edge.app import create_app
from nertz.server.room.table import Table

TYPES: dict[str, type[msgspec.Struct]] = {
    cls.__struct_config__.tag: cls  # type: ignore[misc]
    for cls in (protocol.Hello, protocol.Play, protocol.Ping, protocol.Sync, protocol.Ready,
                protocol.AddBot, protocol.Kick, protocol.Assign, protocol.Start,
                protocol.NextRound, protocol.Rematch, protocol.BotSeat)
}

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=20,
)
containers = st.lists(json_values, min_size=1, max_size=3) | st.dictionaries(
    st.text(max_size=5), json_values, min_size=1, max_size=3)


@st.composite
def typed_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A real ``type`` with random values for its fields, and either an unknown field or a
    known field given a list or an object (no field takes one): never a valid message."""
    tag = draw(st.sampled_from(sorted(TYPES)))
    fields: list[str] = list(TYPES[tag].__struct_fields__)
    msg: dict[str, Any] = {"type": tag}
    for field in fields:
        if draw(st.booleans()):
            msg[field] = draw(json_values)
    wrong_type: bool = draw(st.booleans())
    if fields and wrong_type:
        name: str = draw(st.sampled_from(fields))
        msg[name] = draw(containers)
    else:
        extra = draw(st.text(min_size=1, max_size=10).filter(lambda k: k not in fields
                                                               and k != "type"))
        msg[extra] = draw(json_values)
    return msg


def nested(depth: int, kind: str) -> str:
    if kind == "list":
        return "[" * depth + "]" * depth
    if kind == "tag_after":  # the decoder must look past the nesting for the tag
        return '{"x":' + "[" * depth + "]" * depth + ',"type":"ping","id":"p1"}'
    return '{"type":"ping","id":' + '{"a":' * depth + "1" + "}" * depth + "}"


frames = st.one_of(
    json_values.filter(lambda v: not (isinstance(v, dict) and v.get("type") in TYPES)).map(
        json.dumps),
    typed_messages().map(json.dumps),
    st.text(min_size=protocol.MAX_MESSAGE_BYTES + 1, max_size=12_000, alphabet="xé\"{}"),
    st.integers(1, 4_000).map(lambda n: '{"type":"ping","id":"' + "y" * n + '"}x'),
    st.builds(nested, st.integers(1, 1_500), st.sampled_from(["list", "dict", "tag_after"])),
    st.text(max_size=200),
    st.binary(max_size=300),
)


def picture(client: TestClient, table: Table) -> Any:
    def take() -> Any:
        rnd = table.round
        assert rnd is not None
        return (table.seq, table.phase, table.host,
                [(p.id, p.seat, p.hand, p.ready, p.bot) for p in table.players.values()],
                [(t.nertz[:], [w[:] for w in t.work], t.stock[:], t.waste[:])
                 for t in rnd.tableaus],
                [f.cards[:] for f in rnd.foundations], rnd.moves_played)
    return in_loop(client, take)


def send(ws: WebSocketTestSession, frame: str | bytes) -> None:
    if isinstance(frame, bytes):
        ws.send_bytes(frame)
    else:
        ws.send_text(frame)


def test_hostile_messages(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Hundreds of messages as fast as the test can send them: the per-socket message limit
    # (tested on its own) would answer most of them with too_fast instead.
    monkeypatch.setattr(app_module, "MESSAGE_BURST", 1e9)
    with TestClient(create_app(db_url)) as client, \
            two_players(client) as (ann, _bob, a, _b):
        table = table_of(client, ann.room)
        before = picture(client, table)
        answers: list[str] = []

        @settings(max_examples=400, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(frames)
        def attack(frame: str | bytes) -> None:
            if isinstance(frame, str):
                data = frame.encode()
                if len(data) <= protocol.MAX_MESSAGE_BYTES:
                    try:
                        protocol.decode(data)
                    except protocol.ProtocolError:
                        pass
                    else:  # a valid message by chance (st.text can say '{"type":"sync"}')
                        assume(False)
            send(a, frame)
            m = reply(a)
            assert m["type"] == "error", (frame, m)
            assert m["code"] == "bad_message" and m["message"]
            answers.append(m["message"][:12])

        attack()
        assert picture(client, table) == before
        # Still up, still answering, and still playing.
        assert ask(a, {"type": "ping", "id": "p", "sent": 1})["type"] == "pong"
        assert ask(a, {"type": "play", "id": "after", "move": "T"})["type"] == "ack"
        assert len(answers) > 300
        assert {"not JSON: JS", "message too "} <= set(answers)


def test_nesting_deeper_than_the_decoder_is_an_error_not_a_crash(db_url: str) -> None:
    # Under the size cap a message can nest some 2,000 arrays deep; with its tag after them the
    # decoder runs out of stack. An error names it, the socket stays up, and over HTTP it is
    # a 400 in the API's shape, not a 500.
    deep = nested(2_000, "tag_after")
    assert len(deep.encode()) <= protocol.MAX_MESSAGE_BYTES
    with TestClient(create_app(db_url)) as client, \
            two_players(client) as (_ann, _bob, a, _b):
        a.send_text(deep)
        m = reply(a)
        assert (m["type"], m["code"]) == ("error", "bad_message")
        assert m["message"] == "not JSON: nested too deeply"
        assert ask(a, {"type": "ping", "id": "p", "sent": 1})["type"] == "pong"
        body = '{"rules":{"preset":"pagat","x":' + "[" * 2_000 + "]" * 2_000 + '},"seats":2}'
        r = client.post("/api/rooms", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400, r.text
        assert r.json() == {"error": "not JSON: nested too deeply"}


def test_half_a_surrogate_pair_is_named_not_called_truncated(db_url: str) -> None:
    # JSON may escape a character outside the BMP as a surrogate pair; half of one is not a
    # character. The decoder calls it "truncated", which sends a client looking for a cut-off
    # frame: the error names the escape, and a whole pair is still fine.
    half = r'{"type":"play","id":"s","move":"\ud800"}'
    with TestClient(create_app(db_url)) as client, \
            two_players(client) as (_ann, _bob, a, _b):
        a.send_text(half)
        m = reply(a)
        assert (m["type"], m["code"]) == ("error", "bad_message")
        assert "\\ud800" in m["message"] and "surrogate" in m["message"], m
        assert "truncated" not in m["message"]
        a.send_text(r'{"type":"play","id":"s2","move":"\ud800\udc00"}')
        m = reply(a)  # read as one character: a move it cannot parse
        assert m["type"] == "rejected" and m["error"] == "bad move '\U00010000': not a move", m
        body = r'{"seats":2,"rules":{"preset":"\udbff"}}'
        r = client.post("/api/rooms", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400, r.text
        assert "\\udbff" in r.json()["error"] and "truncated" not in r.json()["error"]
    with pytest.raises(protocol.ProtocolError, match="lone surrogate"):
        protocol.decode('{"type":"ping","id":"\ud800"}')


def test_a_key_named_twice_is_read_with_its_last_value_as_browsers_read_it() -> None:
    # docs/protocol.md: one reading, the one JSON.parse gives, whatever a proxy in between
    # would make of it; an unknown field is still refused by name.
    assert protocol.decode('{"type":"play","id":"a","move":"1N","move":"W1"}') == \
        protocol.Play(id="a", move="W1")
    with pytest.raises(protocol.ProtocolError, match="unknown field `zz`"):
        protocol.decode('{"type":"play","id":"a","move":"W1","zz":1}')


def test_a_move_longer_than_any_in_the_notation_is_refused_by_its_length() -> None:
    # A refused move is echoed, logged and remembered for the match: not a page of digits.
    with pytest.raises(protocol.ProtocolError, match="length <= 32"):
        protocol.decode('{"type":"play","id":"a","move":"N-F' + "9" * 4000 + '"}')
