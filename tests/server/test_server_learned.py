"""The learned bot at the server: a room's bot seat plays the shipped policy file, fed its seat
like every bot, while a person (played by the test from its views alone) plays the other seat.
(That its decisions depend on its seat's view alone is tests/test_rl.py's.)"""

from __future__ import annotations

import time
from typing import Any

import pytest

pytest.importorskip("numpy")

from server_support import (
    apply_update,
    create_room,
    drain,
    hello,
    in_loop,
    moves_of,
    table_of,
    wait_phase,
)
from starlette.testclient import TestClient

from nertz.bots import SPEEDS, GreedyBot, Observation, SpeedProfile
from nertz.rules import Rules
from nertz.server.edge.app import create_app


def test_a_room_plays_with_the_learned_bot(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SPEEDS, "beginner", SpeedProfile("beginner", 400, 200))
    spec = {"preset": "pagat", "rounds": 1, "nertz_pile_size": 5}
    rules = Rules.from_spec(spec)
    with TestClient(create_app(db_url, deal_seed=4)) as client:
        ann = create_room(client, spec, 2, "Ann")
        with client.websocket_connect(f"/ws/{ann.room}") as a:
            hello(a, ann.token)
            a.send_json({"type": "add_bot", "seat": 1, "bot": "learned", "level": "beginner"})
            a.send_json({"type": "start", "countdown_ms": 0})
            view: dict[str, Any] = wait_phase(a, "playing")["table"]
            person = GreedyBot()
            person.start(0, rules, 1)
            table = table_of(client, ann.room)
            result = None
            n = waiting = 0
            bot_moves = 0
            deadline = time.monotonic() + 60
            # Until the round is over or the bot has played a good few moves of its own.
            while result is None and bot_moves < 5:
                assert time.monotonic() < deadline
                for m in drain(a, 0.12):
                    if m["type"] == "update":
                        apply_update(view, m)
                    elif m["type"] == "round_over":
                        result = m["result"]
                    elif m["type"] == "error":
                        assert m["code"] == "no_round", m
                if result is None and view["ended"] is None:
                    choice = person.decide(Observation.from_view(view, rules))
                    waiting = 0 if choice is not None else waiting + 1
                    move = str(choice) if choice else "STUCK" if waiting % 8 == 0 else ""
                    if move:
                        n += 1
                        a.send_json({"type": "play", "id": str(n), "move": move})
                bot_moves = in_loop(client, lambda: sum(tm.p == 1 for tm in moves_of(table)))
            assert bot_moves >= 5 or result is not None
            assert in_loop(client, lambda: sum(tm.p == 1 for tm in moves_of(table))) > 0
