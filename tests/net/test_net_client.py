"""The Python client, ``nertz bot`` and the load bench, against a real ``nertz serve`` process.

One server process serves the module (a fresh SQLite file); every test opens its own rooms.
Rooms use short rules (three-card Nertz piles, one round) so that whole matches take seconds.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _support import stop_process

from nertz.net.client import Client, ClientError, apply_update, parse_room_url
from nertz.net.netbot import NetworkBot

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0
"""How long a client waits for the table to reach a state it must reach (a busy CI machine)."""
SHORT = {"preset": "pagat", "nertz_pile_size": 3, "rounds": 1}
"""A match of one quick round."""


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    # A guard against a hang, not a speed target: generous for a busy CI machine.
    return asyncio.run(asyncio.wait_for(coro, 240))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``nertz serve`` in a subprocess; yields its base URL."""
    port = _free_port()
    db = tmp_path_factory.mktemp("client") / "nertz.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "nertz.cli", "serve", "--port", str(port), "--db",
         f"sqlite:///{db}"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        # A fresh process imports the compiled engine: slow on a busy machine.
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("nertz serve did not start")
            time.sleep(0.1)
        yield base
    finally:
        stop_process(proc)


async def _two_players(base: str, rules: Any = SHORT) -> tuple[Client, Client]:
    host = await Client.create_room(base, "Ann", rules, seats=2, ping_interval=None)
    await host.connect()
    code = (host.room or {})["code"]
    ben = await Client.join(f"{base}/r/{code}", "Ben", ping_interval=None)
    await ben.connect()
    return host, ben


async def _playing(host: Client, ben: Client) -> None:
    await host.wait_for(lambda c: len((c.room or {})["players"]) == 2, timeout=WAIT)
    await host.start(0)
    for c in (host, ben):
        await c.wait_for(lambda c: c.phase == "playing", timeout=WAIT)


# --------------------------------------------------------------------------- addresses


def test_room_urls_in_every_form() -> None:
    assert parse_room_url("http://h:8000/r/AB12CD").key == "AB12CD"
    assert parse_room_url("http://h:8000/r/AB12CD").base == "http://h:8000"
    assert parse_room_url("h:8000/r/AB12CD").base == "http://h:8000"
    assert parse_room_url("https://x.org/nertz/api/rooms/0a1b/join").base == "https://x.org/nertz"
    assert parse_room_url("https://x.org/nertz/api/rooms/0a1b/join").key == "0a1b"
    assert parse_room_url("ws://h:1/ws/0a1b") == parse_room_url("http://h:1/api/rooms/0a1b")
    assert parse_room_url("wss://h/ws/0a1b").ws_base == "wss://h"
    assert parse_room_url("http://h:8000/").key is None
    for bad in ("", "ftp://h/r/X", "http:///r/X", "http://h:99999/r/X", "http://h/r/"):
        with pytest.raises(ClientError):
            parse_room_url(bad)


def test_an_update_replaces_tableaus_and_foundations() -> None:
    table: dict[str, Any] = {
        "seat": 0, "tableaus": [{"seat": 0, "stuck": ""}, {"seat": 1, "stuck": ""}],
        "foundations": [{"number": 1, "cards": ["AS"], "owners": [0], "finished": False}],
        "ended": None, "called_by": None, "t": 0,
    }
    apply_update(table, {
        "tableaus": [{"seat": 1, "stuck": "S", "nertz_count": 4}],
        "foundations": [{"number": 1, "cards": ["AS", "2S"], "owners": [0, 1],
                         "finished": False},
                        {"number": 2, "cards": ["AH"], "owners": [1], "finished": False}],
        "ended": None, "called_by": None, "t": 1500,
    })
    assert table["tableaus"][1]["nertz_count"] == 4
    assert [f["cards"] for f in table["foundations"]] == [["AS", "2S"], ["AH"]]
    assert table["t"] == 1500
    assert table["stuck_flags"] == [False, True]


def test_updates_merge_as_the_shared_cases_say() -> None:
    """The cases the page's merge is tested against too (tests/web/test_web_sync.py)."""
    cases = json.loads((ROOT / "tests" / "data" / "update_merge.json").read_text())["cases"]
    for case in cases:
        table = case["table"]
        for update in case["updates"]:
            apply_update(table, update)
        assert table == case["expected"], case["name"]


# --------------------------------------------------------------------------- the client


def test_create_join_hello_play_ack_and_reject(server: str) -> None:
    async def go() -> None:
        host, ben = await _two_players(server)
        assert host.is_host and not ben.is_host
        assert (host.seat, ben.seat) == (0, 1)
        assert host.phase == "lobby"
        await _playing(host, ben)
        assert host.table is not None and host.table["seat"] == 0
        assert ben.table is not None and ben.table["seat"] == 1
        before = host.table["tableaus"][0]["stock_count"]
        result = await host.play("T")
        assert result.ok and result.v is not None and result.rtt_ms > 0
        assert host.version == result.v  # the update came before its ack
        assert host.table["tableaus"][0]["stock_count"] == before - 3
        await ben.wait_for(lambda c: c.version == result.v, timeout=WAIT)
        assert ben.table["tableaus"][0] == host.table["tableaus"][0]
        malformed = await host.play("Q-Z")
        assert not malformed.ok and "not a move" in (malformed.error or "")
        illegal = await ben.play("5-F")
        assert not illegal.ok and "work pile 5" in (illegal.error or "")
        assert host.version == result.v  # nothing changed
        spectator = await Client.join(server, "Cat", room=host.room_id, spectator=True,
                                      ping_interval=None)
        await spectator.connect()
        assert spectator.seat is None
        assert spectator.table is not None and spectator.table["tableaus"] == \
            host.table["tableaus"]
        for c in (host, ben, spectator):
            await c.close()

    run(go())


def test_ping_measures_the_round_trip(server: str) -> None:
    async def go() -> None:
        host = await Client.create_room(server, "Ann", SHORT, seats=2, ping_interval=0.05)
        await host.connect()
        rtt = await host.ping()
        assert 0 < rtt < 1000
        await host.wait_for(lambda c: len(c.rtts) >= 3, timeout=WAIT)  # the background pinger
        stats = host.rtt_stats()
        assert stats["min"] <= stats["mean"] <= stats["max"]
        await host.close()

    run(go())


def test_host_commands_and_refusals(server: str) -> None:
    async def go() -> None:
        host, ben = await _two_players(server, "pagat")
        await ben.start(0)  # not the host: refused with an error, connection stays up
        await ben.wait_for(lambda c: any(e.get("code") == "not_host" for e in c.errors),
                           timeout=WAIT)
        await host.ready()
        await ben.wait_for(lambda c: any(p["ready"] for p in (c.room or {})["players"]),
                           timeout=WAIT)
        await host.kick(ben.player or "")
        await ben.wait_for(lambda c: c.kicked or c.closed, timeout=WAIT)
        assert ben.kicked
        await host.add_bot(level="expert")
        await host.wait_for(lambda c: any(p["bot"] for p in (c.room or {})["players"]),
                            timeout=WAIT)
        await host.close()
        await ben.close()
        with pytest.raises(ClientError):
            await Client.join(server, "Dan", room="NOSUCH")

    run(go())


def test_reconnect_catches_up_with_since_and_resends_moves(server: str) -> None:
    async def go() -> None:
        host, ben = await _two_players(server)
        await _playing(host, ben)
        await host.drop_connection()
        # While the host is away: the other seat plays, and the host's own move waits.
        assert (await ben.play("T")).ok
        pending = await host.submit("T")
        result = await asyncio.wait_for(pending, WAIT)
        assert result.ok
        await host.wait_for(lambda c: c.version == ben.version, timeout=WAIT)
        assert host.reconnects == 1
        assert host.table is not None and ben.table is not None
        assert host.table["tableaus"] == ben.table["tableaus"]
        assert host.table["seat"] == 0
        # The same id again is answered, not applied twice.
        again = await host.submit("T", action_id=result.id)
        assert (await again).v == result.v
        for c in (host, ben):
            await c.close()

    run(go())


def test_an_update_lost_on_the_wire_is_caught_up_not_skipped(server: str) -> None:
    """On a version gap the client applies nothing and advances nothing until it has caught
    up: the missed update arrives in the replay and is applied in its turn."""
    async def go() -> None:
        host, ben = await _two_players(server)
        await _playing(host, ben)
        lost: list[str | bytes] = []
        hear = ben._receive

        def lossy(raw: str | bytes) -> None:
            text = raw.decode() if isinstance(raw, bytes) else raw
            if not lost and '"type":"update"' in text:
                lost.append(raw)  # the wire loses it
                return
            hear(raw)

        ben._receive = lossy  # type: ignore[method-assign]
        assert (await host.play("T")).ok  # ben never sees this update (the host's tableau)
        assert (await ben.play("T")).ok  # ben's own update: one version too far, a gap
        await ben.wait_for(lambda c: c.version == host.version, timeout=WAIT)
        assert lost and not ben.mirror.syncing
        assert host.table is not None and ben.table is not None
        assert ben.table["tableaus"] == host.table["tableaus"]
        assert ben.table["foundations"] == host.table["foundations"]
        for c in (host, ben):
            await c.close()

    run(go())


def test_mirrors_match_a_fresh_state_after_bots_play(server: str) -> None:
    async def go() -> None:
        host = await Client.create_room(server, "Ann", "pagat", seats=3, ping_interval=None)
        clients = [host] + [await Client.join(server, n, room=host.room_id, ping_interval=None)
                            for n in ("Ben", "Cat")]
        for c in clients:
            await c.connect()
        bots = [NetworkBot(c, "greedy", "expert", countdown_ms=0) for c in clients]
        tasks = [asyncio.create_task(b.run()) for b in bots]
        await host.wait_for(lambda c: c.phase == "playing", timeout=WAIT)
        # The bots play until a few moves are in (on a busy machine that takes longer).
        deadline = time.monotonic() + 120
        while sum(b.stats.acked for b in bots) <= 5 and not all(t.done() for t in tasks):
            assert time.monotonic() < deadline, [b.stats for b in bots]
            await asyncio.sleep(0.05)
        for b in bots:
            b.stop()
        await asyncio.gather(*tasks)
        await asyncio.sleep(0.3)  # answers in flight land
        assert sum(b.stats.acked for b in bots) > 5
        assert sum(b.stats.unexpected for b in bots) == 0
        watcher = await Client.join(server, "Eve", room=host.room_id, spectator=True,
                                    ping_interval=None)
        await watcher.connect()
        # Eve's arrival is itself broadcast: let every mirror take in the last messages.
        deadline = time.monotonic() + 60
        while len({c.version for c in [*clients, watcher]}) != 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        fresh = watcher.table
        assert fresh is not None
        for c in clients:
            assert c.version == watcher.version
            assert c.table is not None
            for key in ("tableaus", "foundations", "ended", "called_by"):
                assert c.table[key] == fresh[key], key
        for c in [*clients, watcher]:
            await c.close()

    run(go())


# --------------------------------------------------------------------------- nertz bot


def _nertz(*args: str) -> list[str]:
    return [sys.executable, "-m", "nertz.cli", *args]


def test_nertz_bots_fill_a_room_and_finish_a_match(server: str) -> None:
    room = httpx.post(server + "/api/rooms", json={"rules": SHORT, "seats": 3}).json()
    procs = [
        subprocess.Popen(_nertz("bot", "--url", room["url"], "--level", "expert",
                                "--name", f"Bot {i}", "--matches", "1"),
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(3)
    ]
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=300)  # a whole match, on a busy machine
            outs.append(out)
            assert p.returncode == 0, err
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for out in outs:
        assert "joined room" in out and "match over" in out
    assert sum("(host)" in out for out in outs) == 1
    info = httpx.get(f"{server}/api/rooms/{room['code']}").json()
    assert info["phase"] == "match_over" and info["matches"]
    played = sum(int(out.rsplit("nertz bot: ", 1)[1].split()[0]) for out in outs)
    assert played > 0
    replay = httpx.get(f"{server}/api/matches/{info['matches'][0]}/replay").json()
    assert len(replay["rounds"]) == 1 and replay["rounds"][0]["moves"]


def test_nertz_bot_bad_url_or_no_server_is_one_line(server: str) -> None:
    for url, says in (("nope://x", "not a room URL"),
                      (f"http://127.0.0.1:{_free_port()}/r/ABC", "cannot reach"),
                      (f"{server}/r/NOSUCH", "no room")):
        p = subprocess.run(_nertz("bot", "--url", url, "--level", "expert"), cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 2
        assert p.stderr.count("\n") == 1 and says in p.stderr, p.stderr
    p = subprocess.run(_nertz("bot", "--url", server + "/r/X", "--level", "instant"), cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "for simulation" in p.stderr


# --------------------------------------------------------------------------- the load bench


def test_load_bench_runs_small_and_reports_json() -> None:
    """A small run reports its figures; ``--server-arg`` options reach ``nertz serve`` (one it
    did not know would keep it from starting) and the report names them."""
    p = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "server_load.py"), "--rooms", "2", "--seconds",
         "3", "--json", "--server-arg=--max-sockets=500"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["server_args"] == ["--max-sockets=500"]
    assert report["rooms"] == 2 and report["clients"] == 8
    assert report["errors"] == 0, report.get("error_samples")
    assert report["moves_per_second"] > 0
    assert 0 < report["rtt_ms"]["p50"] <= report["rtt_ms"]["p99"]
    assert report["server_rss_mb"] > 10


def _cgroup_cpu() -> bool:
    unified = Path("/sys/fs/cgroup/cgroup.controllers")
    return os.geteuid() == 0 and (
        (unified.exists() and "cpu" in unified.read_text().split())
        or Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists())


@pytest.mark.skipif(not _cgroup_cpu(), reason="needs root and the cgroup CPU controller")
def test_load_bench_holds_the_server_to_a_cpu_budget() -> None:
    """``--server-cores``: the server's process is held to its share of a core (a cgroup made
    for the run and removed after it), and the report says so."""
    roots = [Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/cpu")]
    # A run killed before its clean-up leaves its groups: only this run's must go.
    before = {g for r in roots if r.exists() for g in r.glob("nertz-load-*")}
    p = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "server_load.py"), "--rooms", "2", "--seconds",
         "3", "--json", "--server-cores", "0.5"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["server_cores_each"] == 0.5 and report["server_processes_held"] == 1
    assert report["errors"] == 0 and report["moves_per_second"] > 0
    assert not [g for r in roots if r.exists() for g in r.glob("nertz-load-*")
                if g not in before]
    bad = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "server_load.py"), "--server-cores", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert bad.returncode != 0 and "--server-cores must be above 0" in bad.stderr


def test_the_client_keeps_its_identity_across_rooms(server: str, identity_file: Path) -> None:
    from nertz.net.identity import IdentityFile

    async def go() -> None:
        first = await Client.create_room(server, "Ann", "pagat", seats=2, ping_interval=None)
        kept = IdentityFile(identity_file).get(server)
        assert kept is not None and oct(identity_file.stat().st_mode)[-3:] == "600"
        second = await Client.create_room(server, "Ann", "pagat", seats=2, ping_interval=None)
        async with httpx.AsyncClient() as http:
            me = (await http.get(f"{server}/api/me",
                                 headers={"authorization": f"Bearer {kept}"})).json()
            r1 = (await http.get(f"{server}/api/rooms/{first.room_id}/ratings")).json()
            r2 = (await http.get(f"{server}/api/rooms/{second.room_id}/ratings")).json()
        profiles = {p["profile"] for p in r1["players"] + r2["players"]}
        assert profiles == {me["player"]["id"]}
        # Asked to be nobody, a client is a new guest.
        third = await Client.create_room(server, "Ann", "pagat", seats=2, ping_interval=None,
                                         identity=False)
        async with httpx.AsyncClient() as http:
            r3 = (await http.get(f"{server}/api/rooms/{third.room_id}/ratings")).json()
        assert {p["profile"] for p in r3["players"]} != profiles

    run(go())


def test_the_mirror_counts_a_reset_whichever_move_carried_it() -> None:
    """A reset made by the last seat's own ``STUCK`` counts as one, as the referee's ``RESET``
    does: a network bot's idle count starts again after either. (Before, only ``RESET`` was
    counted, and in the chaos test two bots whose declarations reset the table declared again
    at once, forever: 3,000 ``STUCK`` moves and no turn.)"""

    async def main() -> list[int]:
        client = Client("http://127.0.0.1:1", "room", "token", seat=0)
        client.mirror.v = 1
        client.mirror.table = {"tableaus": [], "foundations": []}
        seen = []
        for v, move, events in ((2, "STUCK", [{"kind": "stuck", "seat": 1, "pile": "S"}]),
                                (3, "STUCK", [{"kind": "stuck", "seat": 0, "pile": "S"},
                                              {"kind": "reset", "piles": ["S", "S"]}]),
                                (4, "RESET", [{"kind": "reset", "piles": ["S", "S"]}])):
            client._receive(json.dumps({
                "type": "update", "v": v, "seat": 0, "move": move, "t": v, "events": events,
                "tableaus": [], "foundations": [], "ended": None, "called_by": None}))
            seen.append(client.mirror.resets)
        return seen

    assert run(main()) == [0, 1, 2]


def test_waits_end_at_the_next_message_of_their_kinds_or_the_timeout() -> None:
    """A wait ends at the next message (of the kinds asked for, if any), on its timeout, or
    when the connection ends; waits that ended leave nothing behind."""

    async def main() -> None:
        client = Client("http://127.0.0.1:1", "room", "token", seat=0)
        any_message = asyncio.ensure_future(client.wait_changed(5.0))
        room_only = asyncio.ensure_future(client.wait_changed(5.0, {"room"}))
        await asyncio.sleep(0)
        client._receive(json.dumps({"type": "latency", "rtt": {}}))
        await asyncio.sleep(0)
        assert any_message.done() and any_message.result() is True
        assert not room_only.done()  # a latency message says nothing about the room
        client._receive(json.dumps({"type": "room", "room": {"phase": "lobby"}}))
        assert await room_only is True
        assert await client.wait_changed(0.01) is False  # no message: timed out
        assert client._waiters == []
        cancelled = asyncio.ensure_future(client.wait_changed(None, {"room"}))
        await asyncio.sleep(0)
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        last = asyncio.ensure_future(client.wait_changed(None, {"room"}))
        await asyncio.sleep(0)
        await client.close()  # the end of the connection ends every wait
        assert await last is True
        assert client._waiters == []

    run(main())


def test_a_move_unanswered_times_out_and_a_late_answer_is_ignored() -> None:
    async def main() -> None:
        client = Client("http://127.0.0.1:1", "room", "token", seat=0)
        client._ws = None  # nothing is sent: the answer never comes
        with pytest.raises(TimeoutError):
            await client.play("N-F", timeout=0.01)
        (action_id,) = client._pending
        client._receive(json.dumps({"type": "ack", "id": action_id, "move": "N-F", "t": 1,
                                    "v": 2}))
        assert client.pending == 0

    run(main())


def test_whole_text_frames_skip_the_librarys_queue_and_order_holds_after_a_piece() -> None:
    """Whole text frames go straight to the client as they are parsed; once a frame comes in
    pieces (never from nertz serve), it and every frame after it take the library's queue, so
    messages keep their order."""
    from websockets.client import ClientProtocol
    from websockets.frames import Frame, Opcode
    from websockets.uri import parse_uri

    from nertz.net.client import _Connection

    class Transport(asyncio.Transport):
        def pause_reading(self) -> None:
            pass

        def resume_reading(self) -> None:
            pass

        def set_write_buffer_limits(self, high: int | None = None, low: int | None = None
                                    ) -> None:
            pass

    async def main() -> tuple[list[bytes], list[str]]:
        conn = _Connection(ClientProtocol(parse_uri("ws://127.0.0.1:1/ws/room")))
        conn.connection_made(Transport())
        conn.response = object()  # type: ignore[assignment]  # the handshake is done
        direct: list[bytes] = []
        conn.on_text = direct.append
        conn.process_event(Frame(Opcode.TEXT, b'{"type": "a"}'))
        conn.process_event(Frame(Opcode.TEXT, b'{"type": "b1', fin=False))
        conn.process_event(Frame(Opcode.CONT, b'"}'))
        conn.process_event(Frame(Opcode.TEXT, b'{"type": "c"}'))
        queued = [await conn.recv(), await conn.recv()]
        return direct, [str(m) for m in queued]

    direct, queued = run(main())
    assert direct == [b'{"type": "a"}']
    assert queued == ['{"type": "b1"}', '{"type": "c"}']
