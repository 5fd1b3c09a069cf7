"""No message to any client carries a card its seat cannot see.

Every message the server encodes is checked against the true round as it was when the table
made the message (a command's messages are encoded once the command is done, and a later step
of the same command, a reset after the last seat's turn, may already have turned a card face
down again; any other message, at its encoding): each card it shows (with its owner) must be
face up at the table at that moment (a card that becomes visible later is fine only from then
on). Every message any test socket receives must be
one of those checked messages, byte for byte. A person (played by the test from its own views,
with now and then a move naming a card it cannot see, a false call, a resync) sits with three
fast bots and a spectator watches, over whole rounds of several rulesets.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from contextlib import ExitStack
from typing import Any

import pytest
from server_support import (
    apply_update,
    cards_in,
    create_room,
    hello,
    hub_of,
    join,
    recv_raw,
)
from starlette.testclient import TestClient, WebSocketTestSession

from nertz.bots import SPEEDS, GreedyBot, Observation, SpeedProfile
from nertz.cards import Card
from nertz.rules import Rules
from nertz.server import protocol
from nertz.server.room.phase import Phase
from nertz.server.room.table import Table
from nertz.views import hidden_cards, view, visible_cards

Sight = tuple[set[tuple[int, Card]], set[tuple[int, Card]]]
"""What the table showed and hid at one moment: (visible, hidden) pairs of (owner, card)."""


class Watch:
    """Checks every message as it is encoded; remembers what was checked."""

    def __init__(self) -> None:
        self.table: Table | None = None
        self.checked: set[bytes] = set()
        self.movers: dict[int, int] = {}
        self.cards = Counter[str]()
        self.kinds = Counter[str]()
        # Each message the table made, kept alive with what its table showed then.
        self._made: dict[int, tuple[Any, Sight | None]] = {}

    def sight(self) -> Sight | None:
        """What the table shows and hides now (None: no round)."""
        rnd = self.table.round if self.table is not None else None
        if rnd is None:
            return None
        return visible_cards(view(rnd, -1)), hidden_cards(rnd)

    def made(self, message: Any) -> None:
        """The table made ``message`` now: it is checked against this moment's table."""
        self._made[id(message)] = (message, self.sight())

    def check(self, data: bytes, made: Any = None) -> None:
        """Check an encoded message (``made``: the object encoded, if the table made it)."""
        message: dict[str, Any] = json.loads(data)
        kind = message.get("type", "")
        self.kinds[kind] += 1
        if kind == "update" and message["seat"] >= 0:
            self.movers[message["v"]] = message["seat"]
        mover = self.movers.get(message.get("v", -1)) if kind == "ack" else None
        shown = cards_in(message, mover)
        # Each message the table made is encoded once: forgotten once checked.
        kept = self._made.pop(id(made), None) if made is not None else None
        if shown:
            sight = kept[1] if kept is not None and kept[0] is made else self.sight()
            assert sight is not None, message
            visible, hidden = sight
            for owner, card in shown:
                assert (owner, card) in visible, f"{kind} shows {card} of seat {owner}: {message}"
                assert (owner, card) not in hidden
                self.cards[kind] += 1
        self.checked.add(data)


class Person:
    """The test's seated player: plays from its view alone."""

    def __init__(self, ws: WebSocketTestSession, watch: Watch, rules: Rules, seat: int) -> None:
        self.ws = ws
        self.watch = watch
        self.rules = rules
        self.seat = seat
        self.view: dict[str, Any] | None = None
        self.bot = GreedyBot()
        self.rng = random.Random(seat)
        self.n = 0
        self.results: list[dict[str, Any]] = []

    def read(self, timeout: float) -> dict[str, Any] | None:
        try:
            text = recv_raw(self.ws, timeout)
        except TimeoutError:
            return None
        assert text.encode() in self.watch.checked, text
        m: dict[str, Any] = json.loads(text)
        if m["type"] in ("state", "table"):
            self.view = m["table"]
            # A resync while a round's results wait for their commit is answered with the
            # whole state, results included, and the round_over it covers is not sent again:
            # a client learns the results from either (a busy machine makes the wait long).
            self.result(m.get("result"))
        elif m["type"] == "update" and self.view is not None:
            apply_update(self.view, m)
        elif m["type"] == "round_over":
            self.result(m["result"])
        return m

    def result(self, result: dict[str, Any] | None) -> None:
        """Take in a round's results (each round's once, from whichever message has them)."""
        if result is not None and not (self.results
                                       and self.results[-1]["round"] == result["round"]):
            self.results.append(result)

    def act(self) -> None:
        v = self.view
        if v is None or v["ended"] is not None:
            return
        self.n += 1
        if self.n % 12 == 3:
            self.ws.send_json({"type": "sync", "since": None})
            return
        if self.n % 4 == 2:
            # A drag: now of a card it holds face up, now of one it may not see (a probe the
            # server must pass on without its card).
            own = v["tableaus"][self.seat]
            held = [(c, "N") for c in [own["nertz_top"]] if c] + [
                (c, str(i + 1)) for i, p in enumerate(own["work"]) for c in p["up"]]
            card, src = (self.rng.choice(held) if held and self.n % 8 == 2 else
                         (self.rng.choice(["KS", "7H", "AD", "2C", "X1"]),
                          self.rng.choice(["N", "W", "1", "2"])))
            self.ws.send_json({"type": "pointer", "at": "F", "x": 0.5, "y": 0.5,
                               "card": card, "src": src})
            if self.n % 16 == 14:
                self.ws.send_json({"type": "pointer", "at": None})
        if self.n % 6 == 1:
            # Probe for hidden cards: a run starting at a card this seat may not see.
            move = f"{self.rng.randint(1, 4)}:{self.rng.choice(['KS', '7H', 'AD', '2C'])}-2"
        elif self.n % 12 == 8:
            move = "NERTZ"
        else:
            self.bot.start(self.seat, self.rules, self.n)
            choice = self.bot.decide(Observation.from_view(v, self.rules))
            move = "T" if choice is None else str(choice)
        self.ws.send_json({"type": "play", "id": f"m{self.n}", "move": move})


def held_back(client: TestClient, room: str) -> dict[str, Any]:
    """Where a room's messages wait, if they do (for a failure's message): its outbox (sent
    once each command's log entries are committed), the table's uncommitted entries and match
    saves, the store's queue."""

    def look() -> dict[str, Any]:
        hub = hub_of(client)
        live = hub.rooms.get(room)
        table = hub.tables.get(room)
        outbox = list(live.fanout._outbox) if live is not None else []
        return {
            "outbox": len(outbox),
            "outbox_head_committed": None if not outbox or outbox[0].committed is None
            else outbox[0].committed.done(),
            "broken": live.fanout.broken if live is not None else None,
            "table_pending": len(table._pending) if table is not None else None,
            "saves": len(table.archive.tasks) if table is not None else None,
            "store_queue": len(hub.store._pending),
            "store_commits": hub.store.commits,
        }

    assert client.portal is not None
    return client.portal.call(lambda: look())  # type: ignore[no-any-return]


RULESETS = [
    {"preset": "pagat", "rounds": 2, "nertz_pile_size": 8},
    {"preset": "fairy_fly", "nertz_pile_size": 8},  # staircase: face-down work cards
    {"preset": "standard", "rounds": 1, "nertz_pile_size": 8},  # false calls penalised
    {"preset": "pagat", "jokers": True, "rounds": 1, "nertz_pile_size": 8},
]


@pytest.mark.parametrize("spec", RULESETS, ids=lambda s: "-".join(map(str, s.values())))
def test_no_hidden_card_leaves_the_server(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, spec: dict[str, Any]
) -> None:
    # Bots a little slower than a tournament player's tenth, so the test's player gets moves in.
    monkeypatch.setitem(SPEEDS, "expert", SpeedProfile("expert", 60, 30))
    watch = Watch()
    real = protocol.encode

    def encode(message: Any) -> bytes:
        data = real(message)
        watch.check(data, message)
        return data

    monkeypatch.setattr(protocol, "encode", encode)
    send, broadcast, point = Table._send, Table._broadcast, Table._pointer

    def sending(self: Table, to: str, message: Any, close: bool = False) -> None:
        watch.made(message)
        send(self, to, message, close)

    def broadcasting(self: Table, message: Any) -> None:
        watch.made(message)
        broadcast(self, message)

    in_play = 0

    def pointing(self: Table, player: Any, msg: protocol.Pointer) -> None:
        # A drag that reaches the table while a round is played is passed on (one that lands
        # after the round's end, which a busy machine makes common, is not).
        nonlocal in_play
        if msg.at is not None and self.phase is Phase.PLAYING and self.round is not None \
                and not self.round.ended:
            in_play += 1
        point(self, player, msg)

    monkeypatch.setattr(Table, "_send", sending)
    monkeypatch.setattr(Table, "_broadcast", broadcasting)
    monkeypatch.setattr(Table, "_pointer", pointing)
    rules = Rules.from_spec(spec)
    ann = create_room(client, spec, 4, "Ann")
    table = hub_of(client).tables[ann.room]
    watch.table = table
    eve = join(client, ann.room, "Eve", spectator=True)
    with ExitStack() as sockets:
        a = sockets.enter_context(client.websocket_connect(f"/ws/{ann.room}"))
        e = sockets.enter_context(client.websocket_connect(f"/ws/{ann.room}"))
        person = Person(a, watch, rules, 0)
        watchers = [Person(e, watch, rules, -1)]
        hello(a, ann.token)
        hello(e, eve.token)
        for seat, bot in ((1, "greedy"), (2, "expert"), (3, "random")):
            a.send_json({"type": "add_bot", "seat": seat, "bot": bot, "level": "expert"})
        a.send_json({"type": "start", "countdown_ms": 0})
        dealt = 1
        deadline = time.monotonic() + 240  # a whole match, on a busy machine
        while not (person.results and person.results[-1]["over"]):
            assert time.monotonic() < deadline, (table.phase, person.results, watch.kinds,
                                                 held_back(client, ann.room))
            while person.read(0.03) is not None:
                pass
            for w in watchers:
                while w.read(0.001) is not None:
                    pass
            if len(person.results) == dealt and not person.results[-1]["over"]:
                a.send_json({"type": "next_round"})
                dealt += 1
                continue
            person.act()
            if len(watchers) == 1 and watch.kinds["update"] > 30:
                # Eve opens a second socket, catching up from what she saw: the history replay.
                e2 = sockets.enter_context(client.websocket_connect(f"/ws/{ann.room}"))
                e2.send_json({"type": "hello", "token": eve.token, "since": max(watch.movers)})
                watchers.append(Person(e2, watch, rules, -1))
        a.send_json({"type": "sync", "since": None})  # the whole state of a finished round
        for w in [person, *watchers]:
            while w.read(0.05) is not None:
                pass
    assert watch.kinds["update"] > 20 and watch.kinds["ack"] > 0
    # The person's first move is a probe, answered with ``rejected`` (unless the bots ended
    # every round before the person moved at all, which a busy machine can make happen).
    assert watch.kinds["rejected"] > 0 or person.n == 0
    assert watch.kinds["state"] >= 2
    assert watch.cards["update"] > 20 and watch.cards["state"] > 0
    # Drags were passed on, some with the card held (each checked face up when sent).
    assert in_play == 0 or watch.kinds["pointer"] > 0


def test_the_check_catches_a_leak() -> None:
    """The checker itself: a tableau showing its stock's top card is caught."""
    from types import SimpleNamespace

    from nertz.match import Match
    from nertz.views import tableau_view

    rnd = Match(Rules.from_spec("pagat"), 2, 7).deal()
    watch = Watch()
    watch.table = SimpleNamespace(round=rnd)  # type: ignore[assignment]
    honest = {"type": "update", "v": 1, "seat": 0, "move": "T", "events": [],
              "tableaus": [tableau_view(rnd, 0).to_json()], "foundations": [],
              "ended": None, "called_by": None}
    watch.check(protocol.encode(honest))
    leaky = json.loads(json.dumps(honest))
    leaky["tableaus"][0]["waste_top"] = str(rnd.tableaus[0].stock[-1])
    with pytest.raises(AssertionError, match="shows"):
        watch.check(protocol.encode(leaky))
    sneaky = dict(honest, note=str(rnd.tableaus[1].nertz[0]))
    with pytest.raises(AssertionError, match="outside any pile"):
        watch.check(protocol.encode(sneaky))
    # A drag holding a card under the Nertz top (or a stock card) is caught too.
    held = {"type": "pointer", "seat": 0, "player": "p", "at": "F", "x": 0.5, "y": 0.5,
            "card": str(rnd.tableaus[0].nertz[-1]), "src": "N"}
    watch.check(protocol.encode(held))
    for hidden in (rnd.tableaus[0].nertz[0], rnd.tableaus[0].stock[-1]):
        with pytest.raises(AssertionError, match="shows"):
            watch.check(protocol.encode(dict(held, card=str(hidden))))
