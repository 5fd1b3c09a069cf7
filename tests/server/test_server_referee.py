"""The server table and the engine's referee: the endless Fairy Fly round ends, a reset tells
what each seat rotated, and the reset is in the log and the replay file as it was played."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from _support import FAIRY, fairy_loop_layouts, layout, policy
from server_support import FixedMatch, until_playing

from nertz import replay
from nertz.events import Ended
from nertz.server import protocol
from nertz.server.room import entries as entries_module
from nertz.server.room import lobby as lobby_module
from nertz.server.room.lobby import Player
from nertz.server.room.messages import Effects, Update
from nertz.server.room.table import Table
from nertz.server.store import Store
from nertz.state import Layout

pytestmark = pytest.mark.anyio

SPEC = {"preset": "fairy_fly", "nertz_pile_size": 3}


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    s = await Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture(autouse=True)
def fast_hands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lobby_module, "MOVES_PER_SECOND", 1e9)


async def seated(store: Store, monkeypatch: pytest.MonkeyPatch, layouts: list[Layout],
                 heard: list[Update]) -> tuple[Table, Player, Player]:
    """A two-seat Fairy Fly table dealt ``layouts``, its round begun; every update it sends
    goes into ``heard``."""
    monkeypatch.setattr(FixedMatch, "LAYOUTS", [layouts])
    monkeypatch.setattr(entries_module, "Match", FixedMatch)
    table = await Table.create(store, FAIRY, 2, "referee-room", "REFREE")

    def hear(fx: Effects) -> None:
        heard.extend(s.message for s in fx.sends if isinstance(s.message, Update))

    table.connect(hear)
    ann, _, _ = table.join("Ann")
    bob, _, _ = table.join("Bob")
    assert (ann.seat, bob.seat) == (0, 1)
    table.handle(bob, protocol.Ready(True))
    hear(table.handle(ann, protocol.Start(0)))
    await until_playing(table)
    return table, ann, bob


def play(table: Table, people: list[Player], heard: list[Update], max_moves: int,
         choose: Callable[[Any, int], Any] = policy) -> int:
    """People play ``choose`` in turn, as clients would; returns the moves sent."""
    sent = 0
    while sent < max_moves and table.round is not None and not table.round.over:
        for p in people:
            assert p.seat is not None and table.round is not None
            move = choose(table.round, p.seat)
            if move is None or table.round.over:
                continue
            fx = table.handle(p, protocol.Play(f"m{sent}", str(move)))
            heard.extend(s.message for s in fx.sends if isinstance(s.message, Update))
            sent += 1
    return sent


def resets(heard: list[Update]) -> list[list[str]]:
    return [e["piles"] for u in heard if u.move == "RESET" for e in u.events
            if e["kind"] == "reset"]


async def test_the_endless_fairy_fly_round_ends_at_the_server(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every seat is stuck at the deal, and only seat 0's Nertz pile can free it. The server used
    # to rotate every stock, after every move, for ever.
    heard: list[Update] = []
    table, ann, bob = await seated(store, monkeypatch, fairy_loop_layouts(), heard)
    sent = play(table, [ann, bob], heard, 200)
    rnd = table.round
    assert rnd is not None and rnd.ended is Ended.NERTZ and rnd.called_by == 0, sent
    assert resets(heard) == [["N", "S"]]
    await table.settled()
    # The replay file holds the reset as the seats' declarations, and plays to the same end.
    assert table.recorder is not None
    file = table.recorder.file
    stuck = [(m.p, str(m.m)) for m in file.rounds[0].moves if m.m.kind.name == "STUCK"]
    assert stuck == [(0, "STUCK N"), (1, "STUCK")]
    again = replay.run(replay.from_json(file.to_json())).rounds[0]
    assert again.round.ended is Ended.NERTZ and again.round.called_by == 0
    assert again.round.resets == 1 and all(o.ok for o in again.outcomes)
    table.close()


async def test_a_reset_tells_what_each_seat_rotated(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seat 1 declares STUCK N; seat 0 then plays its last free card and every seat is stuck.
    # The reset rotates seat 1's Nertz pile, as declared, and seat 0's, as the referee rules
    # (its QH lies under the top); the update used to say S for both.
    seat0 = layout(FAIRY, "QD QH JS", ["KS", "~AS KH", "~AH ~AD KD", "~AC ~QS ~9D KC"],
                   waste="QC")
    heard: list[Update] = []
    table, ann, bob = await seated(store, monkeypatch, [seat0, fairy_loop_layouts()[1]], heard)
    assert resets(heard) == []
    hear = table.handle(bob, protocol.Play("b1", "STUCK N"))
    hear = table.handle(ann, protocol.Play("a1", "W-2"))
    heard.extend(s.message for s in hear.sends if isinstance(s.message, Update))
    assert resets(heard) == [["N", "N"]]
    rnd = table.round
    assert rnd is not None
    assert [str(c) for c in rnd.tableaus[1].nertz] == ["9C", "JD", "JH"]
    assert [str(c) for c in rnd.tableaus[0].nertz] == ["JS", "QD", "QH"]
    await table.settled()
    # Rebuilt from its log, the table is the same: the ruling is stored, not asked again.
    entries = await store.load_log(table.id)
    assert [e.data.get("piles") for e in entries if e.kind == "reset"] == [["N", ""]]
    rebuilt = await Table.restore(store, table.id, table.code, FAIRY, 2, entries)
    assert rebuilt.round is not None
    assert [t.nertz for t in rebuilt.round.tableaus] == [t.nertz for t in rnd.tableaus]
    assert rebuilt.recorder is not None and table.recorder is not None
    assert rebuilt.recorder.file.to_json() == table.recorder.file.to_json()
    table.close()
    rebuilt.close()


async def test_a_reset_entry_from_before_the_referee_rotates_every_stock(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    heard: list[Update] = []
    table, _, _ = await seated(store, monkeypatch, fairy_loop_layouts(), heard)
    await table.settled()
    entries = await store.load_log(table.id)
    for e in entries:
        if e.kind == "reset":
            e.data.pop("piles")  # as the server wrote it before
    old = await Table.restore(store, table.id, table.code, FAIRY, 2, entries)
    assert old.round is not None and old.round.resets == 1
    assert [str(c) for c in old.round.tableaus[0].nertz] == ["QD", "QH", "JS"]
    table.close()
    old.close()
