"""The bus seam: the local bus owns what this process holds and hands a room's effects to the
outlets subscribed to it; the hub claims each room it adopts and releases it when it leaves."""

from __future__ import annotations

from typing import Any

from server_support import create_room, hub_of
from starlette.testclient import TestClient

from nertz.server.bus import LocalBus
from nertz.server.edge.fanout import Sink
from nertz.server.room.messages import EVERYONE, Effects, Kicked, Send


class Heard:
    def __init__(self) -> None:
        self.got: list[tuple[Effects, Sink | None]] = []

    def publish(self, fx: Effects, sender: Sink | None = None) -> None:
        self.got.append((fx, sender))


def test_local_bus_owns_and_routes() -> None:
    bus = LocalBus("p1")
    assert bus.owner("r1") is None
    assert bus.claim("r1") and bus.owner("r1") == "p1"
    a, b, other = Heard(), Heard(), Heard()
    bus.subscribe("r1", a)
    bus.subscribe("r1", b)
    bus.subscribe("r2", other)
    fx = Effects([Send(EVERYONE, Kicked(), 1)])
    bus.publish("r1", fx)
    assert [f for f, _ in a.got] == [fx] and [f for f, _ in b.got] == [fx] and not other.got
    bus.unsubscribe("r1", a)
    bus.publish("r1", fx)
    assert len(a.got) == 1 and len(b.got) == 2
    bus.release("r1")
    assert bus.owner("r1") is None


def test_the_hub_claims_its_rooms_and_releases_them(client: TestClient) -> None:
    ann = create_room(client, "pagat", 2, "Ann")
    hub = hub_of(client)
    assert hub.bus.owner(ann.room) == hub.bus.process
    room = hub.rooms[ann.room]

    async def unload() -> Any:
        await hub.unload(room)

    assert client.portal is not None
    client.portal.call(unload)
    assert hub.bus.owner(ann.room) is None
