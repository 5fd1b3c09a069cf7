"""One room: its lobby, its match, its round; the single owner that applies every action.

A :class:`Table` takes commands one at a time, in arrival order, on the event loop (each
command's check-and-apply is synchronous, so nothing interleaves). Every change is an entry of
the room's log: the handler builds the entry, applies it with :meth:`Table._apply` (the same code
that rebuilds a table from its stored log on any process), queues it to the store, and only
once it is committed are its messages sent, in order, from the table's outbox: nobody sees, nor
is acknowledged, an action that is not durable.

Every message about the table is built from :mod:`nertz.views`, and every seat sees the same
face-up cards, so a table update is encoded once and sent to everyone; acknowledgements and
rejections go to their sender only. Versions number the broadcasts; a short history lets a
client that missed some catch up, else it gets the whole state.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from nertz.cards import Card
from nertz.engine import Round
from nertz.errors import IllegalMoveError, LostRace, NotationError
from nertz.events import (
    Called,
    CardRevealed,
    CardsMoved,
    Event,
    FalseCallPenalty,
    ResetDone,
    RoundEnded,
    StockTurned,
    StuckDeclared,
)
from nertz.match import Match, RoundResult
from nertz.moves import STUCK, Move
from nertz.replay import Race, Recorder
from nertz.rules import Rules
from nertz.server import protocol
from nertz.server.limits import TokenBucket
from nertz.server.store import LogEntry, Store, StoreError
from nertz.views import foundation_view, tableau_view, view

log = logging.getLogger("nertz.table")

HISTORY: Final = 512
"""Broadcasts kept for catching up; a client further behind gets the whole state."""
RECONNECT_SECONDS: Final = 300.0
"""How long a dropped player's seat waits for them before it counts as vacant."""
MOVES_PER_SECOND: Final = 10.0
"""The fastest a human can play; faster actions are refused (token bucket, this burst)."""
DEDUP: Final = 128
"""Action ids remembered per player, to answer a resent action without applying it twice."""
MAX_COUNTDOWN_MS: Final = 10_000
"""The longest start countdown the host may ask for."""


class Sink(Protocol):
    """Where a connection's messages go (a WebSocket, or a test's list)."""

    def send(self, data: bytes) -> None:
        """Queue one encoded message; must not block."""

    def close(self) -> None:
        """Close the connection once what is queued has gone."""


def bot_name(level: str, seat: int) -> str:
    """The name a room gives its bot: ``Expert bot 2`` (its level and seat)."""
    return f"{level.title()} bot {seat + 1}"


_BOT_NAME: Final = re.compile(r"^\w+ bot \d+$")
"""Names of :func:`bot_name`'s shape, compared as :func:`protocol.name_key` folds them: kept
from people, so nobody passes for a bot."""


def token_hash(token: str) -> str:
    """What the log keeps of a seat token: its SHA-256, never the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(slots=True)
class Player:
    """Someone in the room: a person (with a token) or a bot; seated or spectating."""

    id: str
    name: str
    token_hash: str | None
    seat: int | None
    hand: int = 0
    bot: str | None = None
    level: str | None = None
    ready: bool = False
    # Runtime only, never logged: sockets open now, and when the last one closed.
    sockets: int = 0
    left_at: float | None = None
    rtt: float | None = None
    moves: TokenBucket = field(default_factory=lambda: TokenBucket(MOVES_PER_SECOND,
                                                                   MOVES_PER_SECOND))
    answers: OrderedDict[str, bytes] = field(default_factory=OrderedDict)

    @property
    def vacant(self) -> bool:
        """A person gone longer than the reconnect window."""
        return (
            self.bot is None
            and self.sockets == 0
            and self.left_at is not None
            and time.monotonic() - self.left_at > RECONNECT_SECONDS
        )

    def to_json(self) -> dict[str, Any]:
        """Public facts about the player (no token)."""
        return {
            "id": self.id,
            "name": self.name,
            "seat": self.seat,
            "hand": self.hand,
            "bot": self.bot,
            "level": self.level,
            "ready": self.ready,
            "connected": self.bot is not None or self.sockets > 0,
            "vacant": self.vacant,
        }


class CommandError(Exception):
    """A command refused: ``code`` for programs, the message for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(slots=True)
class _Outgoing:
    fut: asyncio.Future[None] | None
    sends: list[tuple[Sink | None, bytes, int]]
    closes: list[Sink] = field(default_factory=list)


BotStarter = Callable[["Table", Player], None]


class Table:
    """The owner of one room. Build with :meth:`create` or :meth:`restore`."""

    def __init__(
        self, store: Store, room_id: str, code: str, rules: Rules, seats: int
    ) -> None:
        self.store = store
        self.id = room_id
        self.code = code
        self.rules = rules
        self.seats = seats
        self.players: dict[str, Player] = {}
        self.host: str | None = None
        self.phase = "lobby"
        self.match: Match | None = None
        self.round: Round | None = None
        self.recorder: Recorder | None = None
        self.match_id: str | None = None
        self.match_number = 0
        self.last_result: RoundResult | None = None
        self.finished_matches: list[str] = []
        self.seq = 0
        self.version = 0
        self.history: deque[tuple[int, bytes]] = deque(maxlen=HISTORY)
        self.sinks: dict[Sink, str | None] = {}
        self._sink_from: dict[Sink, int] = {}
        self.round_t0 = 0.0
        self.last_t = 0
        self.countdown_ms = 0
        self.broken = False
        self.changed = asyncio.Event()
        self.bot_starter: BotStarter | None = None
        self.deal_seed: int | None = None
        """Set by ``nertz serve --deal-seed``: matches are dealt from it, not at random."""
        self.same_deal: tuple[str, int | str] | None = None
        """A "same deal" room: the finished match (id, seed) whose cards its first match deals."""
        self.closed = False
        self._vacancy_timer: asyncio.TimerHandle | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self._outbox: deque[_Outgoing] = deque()
        self._timers: list[asyncio.TimerHandle] = []
        self._replaying = False

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def create(
        cls, store: Store, rules: Rules, seats: int, room_id: str, code: str,
        same_deal: tuple[str, int | str] | None = None,
    ) -> Table:
        """A new room, stored. ``same_deal`` (a finished match's id and deal seed) makes the
        room's first match deal that match's cards again: the "same deal" challenge."""
        table = cls(store, room_id, code, rules, seats)
        spec = rules.to_spec()
        await store.create_room(room_id, code, spec, seats)
        data: dict[str, Any] = {"rules": spec, "seats": seats}
        if same_deal is not None:
            data["same_deal"] = {"match": same_deal[0], "seed": same_deal[1]}
        table._log("created", data)
        await table._drain()
        return table

    @classmethod
    async def restore(
        cls, store: Store, room_id: str, code: str, rules: Rules, seats: int,
        entries: list[LogEntry],
    ) -> Table:
        """Rebuild a room from its log, then pick up its clocks where they stopped."""
        table = cls(store, room_id, code, rules, seats)
        # Versions number one process's broadcasts, and a client may still hold one from the
        # process before: start above any it can have reached (that would take more than one
        # broadcast a millisecond), so an old ``since`` gets the whole state, never a history
        # that does not follow from it.
        table.version = int(time.time() * 1000)
        table._replaying = True
        for entry in entries:
            table._apply(entry.kind, entry.data)
            table.seq = entry.seq + 1
        table._replaying = False
        now = asyncio.get_running_loop().time()
        table.round_t0 = now - table.last_t / 1000
        if table.phase == "countdown":
            table._schedule(table.countdown_ms / 1000, table._begin)
        elif table.phase == "playing" and table.round is not None and table.round.ended:
            table._after_end()
        if (table.phase == "match_over" and table.match_id is not None
                and table.recorder is not None
                and await store.get_match(table.match_id) is None):
            # Killed between closing the last round and saving the match: save it now.
            assert table.match is not None
            await store.save_match(table.match_id, room_id, table.recorder.file.to_json(),
                                   table.match.winner)
        return table

    def close(self) -> None:
        """Stop the table's timers, bots and sockets (the room stays stored)."""
        self.closed = True
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
        for task in list(self.tasks):
            task.cancel()
        for sink in list(self.sinks):
            sink.close()
        self.changed.set()

    def now_t(self) -> int:
        """Milliseconds since the round began, on the server's clock."""
        return int((asyncio.get_running_loop().time() - self.round_t0) * 1000)

    def _schedule(self, delay: float, fn: Callable[[], None]) -> asyncio.TimerHandle:
        loop = asyncio.get_running_loop()
        holder: list[asyncio.TimerHandle] = []
        handle = loop.call_later(max(0.0, delay), self._guarded, fn, holder)
        holder.append(handle)
        self._timers.append(handle)
        return handle

    def _guarded(self, fn: Callable[[], None], holder: list[asyncio.TimerHandle]) -> None:
        # A fired timer is forgotten: a client reconnecting in a loop must not grow the list.
        with contextlib.suppress(ValueError):
            self._timers.remove(holder[0])
        if self.broken or self.closed:
            return
        try:
            fn()
        except CommandError:
            pass  # a timer whose moment passed (the phase changed meanwhile)
        except Exception:  # pragma: no cover - a bug must not take the server down
            log.exception("table %s: timer failed", self.id)

    # ------------------------------------------------------------------ the log

    def _log(self, kind: str, data: dict[str, Any]) -> asyncio.Future[None]:
        """Apply an entry, queue it to the store; returns the commit future."""
        self._check_alive()
        self._apply(kind, data)
        return self._store_entry(kind, data)

    def _store_entry(self, kind: str, data: dict[str, Any]) -> asyncio.Future[None]:
        """Queue an entry already applied in memory; its messages wait for its commit."""
        fut = self.store.append_nowait(self.id, self.seq, kind, data)
        self.seq += 1
        fut.add_done_callback(self._committed)
        self._outbox.append(_Outgoing(fut, []))
        return fut

    def _committed(self, fut: asyncio.Future[None]) -> None:
        if fut.exception() is not None:
            self._break(fut.exception())
        self._flush()

    def _flush(self) -> None:
        if self.broken:
            # Nothing more goes out: what is queued may show changes the log does not hold.
            self._outbox.clear()
            return
        while self._outbox:
            head = self._outbox[0]
            if head.fut is not None and not head.fut.done():
                return
            self._outbox.popleft()
            if head.fut is not None and head.fut.exception() is not None:
                continue
            for sink, data, version in head.sends:
                if sink is None:
                    for s in list(self.sinks):
                        # A socket that joined later got this change in its catch-up already.
                        if self._sink_from.get(s, 0) < version:
                            s.send(data)
                else:
                    sink.send(data)
            for sink in head.closes:
                sink.close()

    def _queue(self, sink: Sink | None, data: bytes, version: int = 0) -> None:
        """Send after everything logged so far is committed (in order)."""
        if self._outbox:
            self._outbox[-1].sends.append((sink, data, version))
        else:
            self._outbox.append(_Outgoing(None, [(sink, data, version)]))
            self._flush()

    def _broadcast(self, message: dict[str, Any]) -> None:
        self.version += 1
        message["v"] = self.version
        data = protocol.encode(message)
        self.history.append((self.version, data))
        self._queue(None, data, self.version)
        self.changed.set()
        self.changed = asyncio.Event()

    async def _drain(self) -> None:
        """Wait until everything logged so far is committed."""
        futs = [o.fut for o in self._outbox if o.fut is not None]
        if futs:
            await asyncio.gather(*futs, return_exceptions=True)

    def _break(self, exc: BaseException | None) -> None:
        # The store refused an entry that is already applied in memory: this table no longer
        # matches its log. Stop taking commands; the hub rebuilds it from the log.
        if not self.broken:
            log.error("table %s: store failed, table must be rebuilt: %s", self.id, exc)
        self.broken = True
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()

    # ------------------------------------------------------------------ applying entries

    def _apply(self, kind: str, data: dict[str, Any]) -> None:
        """Change the table by one log entry; shared by live play and rebuilding."""
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            raise ValueError(f"unknown log entry {kind!r}")
        handler(data)

    def _on_created(self, data: dict[str, Any]) -> None:
        self.rules = Rules.from_spec(data["rules"])
        self.seats = int(data["seats"])
        same = data.get("same_deal")
        if same is not None:
            self.same_deal = (str(same["match"]), same["seed"])

    def _on_joined(self, data: dict[str, Any]) -> None:
        p = Player(data["player"], data["name"], data.get("token"), data.get("seat"),
                   data.get("hand", 0), data.get("bot"), data.get("level"))
        self.players[p.id] = p
        if self.host is None and p.bot is None:
            self.host = p.id
        # A person has the reconnect window from joining (or from a restart) to connect.
        p.left_at = time.monotonic()

    def _on_left(self, data: dict[str, Any]) -> None:
        p = self.players.pop(data["player"], None)
        if p is not None and self.host == p.id:
            self.host = next((q.id for q in self.players.values() if q.bot is None), None)

    def _on_assigned(self, data: dict[str, Any]) -> None:
        p = self.players[data["player"]]
        p.seat = data["seat"]
        p.hand = data.get("hand", 0)

    def _on_ready(self, data: dict[str, Any]) -> None:
        self.players[data["player"]].ready = bool(data["ready"])

    def _on_host(self, data: dict[str, Any]) -> None:
        self.host = data["player"]

    def _on_bot_seat(self, data: dict[str, Any]) -> None:
        old = self.players.pop(data["replaces"], None)
        p = Player(data["player"], data["name"], None, data["seat"], 0, data["bot"],
                   data["level"])
        self.players[p.id] = p
        if old is not None and self.host == old.id:
            self.host = next((q.id for q in self.players.values() if q.bot is None), None)

    def _on_start(self, data: dict[str, Any]) -> None:
        self.match_number += 1
        self.match = Match(self.rules, self.seats, data["seed"])
        self.match_id = data["match"]
        names = [self._seat_name(s) for s in range(self.seats)]
        self.recorder = Recorder(self.rules, names, data["seed"])
        self.last_result = None
        self._deal(int(data.get("countdown_ms", 0)))

    def _on_next(self, data: dict[str, Any]) -> None:
        self._deal(int(data.get("countdown_ms", 0)))

    def _deal(self, countdown_ms: int) -> None:
        assert self.match is not None and self.recorder is not None
        self.round = self.match.deal()
        self.recorder.start_round(self.round)
        self.phase = "countdown"
        self.countdown_ms = countdown_ms
        self.last_t = 0

    def _on_begin(self, data: dict[str, Any]) -> None:
        self.phase = "playing"
        self.last_t = 0
        if not self._replaying:
            self.round_t0 = asyncio.get_running_loop().time()

    def _on_move(self, data: dict[str, Any]) -> None:
        assert self.round is not None and self.recorder is not None
        move = Move.parse(data["m"], self.rules.call_word)
        t = int(data["t"])
        self.round.play(data["s"], move, t, data.get("h"))
        self.recorder.record(t, data["s"], move, data.get("h"))
        self.last_t = max(self.last_t, t)
        player = self.players.get(data.get("p", ""))
        if "id" in data and player is not None:
            # A client that lost the ack when the server went down resends the action: it gets
            # the answer again (its move is in the state it gets now), not a second application.
            self._remember(player, data["id"], protocol.encode(
                {"type": "ack", "id": data["id"], "move": data["m"], "t": t, "v": self.version}))

    def _on_reset(self, data: dict[str, Any]) -> None:
        # The server's reset is every seat declaring stuck at once: made (and written to the
        # replay file) as those declarations, so a downloaded replay plays the same reset.
        assert self.round is not None and self.recorder is not None
        t = int(data["t"])
        for seat in range(self.round.seats):
            if not self.round.stuck[seat] and self.round.ended is None:
                self.round.play(seat, STUCK, t)
                self.recorder.record(t, seat, STUCK)
        self.last_t = max(self.last_t, t)

    def _on_race(self, data: dict[str, Any]) -> None:
        assert self.recorder is not None
        self.recorder.race(Race(int(data["t"]), int(data["winner"]), int(data["loser"]),
                                Card.parse(data["card"]), int(data["foundation"]),
                                data.get("margin_ms")))

    def _on_close(self, data: dict[str, Any]) -> None:
        assert self.match is not None and self.round is not None
        self.last_result = self.match.finish(self.round)
        self.phase = "match_over" if self.match.over else "round_over"
        if self.match.over and self.match_id is not None:
            self.finished_matches.append(self.match_id)

    # ------------------------------------------------------------------ people

    def join(self, name: str, spectator: bool = False) -> tuple[Player, str]:
        """Add a person; returns the player and the seat token (shown once, stored hashed)."""
        self._check_alive()
        clean = protocol.clean_name(name)
        if len(self.players) >= 64:
            raise CommandError("room_full", "this room has as many people as it takes")
        key = protocol.name_key(clean)
        if _BOT_NAME.match(key):
            raise CommandError("name_taken", f"names like {clean!r} are the room's bots' names: "
                                             "pick another name")
        if any(protocol.name_key(p.name) == key for p in self.players.values()):
            raise CommandError("name_taken", f"someone here is already called {clean!r}: "
                                             "pick another name")
        seat, hand = (None, 0) if spectator else self._free_seat()
        token = secrets.token_urlsafe(24)
        pid = secrets.token_hex(6)
        self._log("joined", {"player": pid, "name": clean, "token": token_hash(token),
                             "seat": seat, "hand": hand})
        self._broadcast_lobby()
        return self.players[pid], token

    def _free_seat(self) -> tuple[int | None, int]:
        if self.phase != "lobby":
            return None, 0  # mid-match newcomers watch until a seat is handed to them
        taken = {(p.seat, p.hand) for p in self.players.values() if p.seat is not None}
        hands = (0, 1) if self.rules.teams != "off" else (0,)
        for hand in hands:
            for seat in range(self.seats):
                if (seat, hand) not in taken and (hand == 0 or (seat, 0) in taken):
                    return seat, hand
        return None, 0

    def player_for_token(self, token: str) -> Player | None:
        """The person this token belongs to (the server decides who a client is)."""
        digest = token_hash(token)
        for p in self.players.values():
            if p.token_hash is not None and secrets.compare_digest(p.token_hash, digest):
                return p
        return None

    def _seat_name(self, seat: int) -> str:
        names = [p.name for p in self.players.values() if p.seat == seat]
        return " & ".join(names) if names else f"seat {seat + 1}"

    def hand_of(self, player: Player) -> int | None:
        """Which half of its seat's tableau ``player`` may play: its partner slot (0: the Nertz
        pile, 1: the stock and waste) under ``teams: split`` when the other slot is filled, else
        None (everything). A partner alone at a seat plays both halves, or it could never turn
        its stock (or never play its Nertz pile)."""
        if self.rules.teams != "split" or player.seat is None:
            return None
        if self.seat_player(player.seat, 1 - player.hand) is None:
            return None
        return player.hand

    def seat_player(self, seat: int, hand: int = 0) -> Player | None:
        """Who sits at ``seat`` (the partner ``hand`` under teams)."""
        for p in self.players.values():
            if p.seat == seat and p.hand == hand:
                return p
        return None

    def _check_alive(self) -> None:
        if self.broken:
            raise CommandError("unavailable", "this table is being restored; try again")

    def _require_host(self, player: Player) -> None:
        if player.id != self.host:
            raise CommandError("not_host", "only the host may do that")

    # ------------------------------------------------------------------ sockets

    def attach(self, sink: Sink, player: Player | None, since: int | None) -> None:
        """A socket joins: bring it up to date from ``since`` or send the whole state."""
        self.sinks[sink] = player.id if player is not None else None
        if player is not None:
            player.sockets += 1
            player.left_at = None
        self._catch_up(sink, player, since)
        self._broadcast_lobby_if(player)

    def _catch_up(self, sink: Sink, player: Player | None, since: int | None) -> None:
        # What the socket gets covers every change made so far, stored or not; so it goes out
        # through the outbox, after those changes are committed, and the broadcasts of those
        # same changes still waiting there skip this socket.
        self._sink_from[sink] = self.version
        oldest = self.history[0][0] if self.history else self.version + 1
        if since is not None and oldest - 1 <= since <= self.version:
            # Close enough: replay the broadcasts it missed (all public, the same for everyone).
            for v, data in self.history:
                if v > since:
                    self._queue(sink, data)
            self._queue(sink, protocol.encode({"type": "caught_up", "v": self.version,
                                               "you": self._you(player)}))
        else:
            self._queue(sink, protocol.encode(self.snapshot(player)))

    def _broadcast_lobby_if(self, player: Player | None) -> None:
        if player is not None and player.sockets == 1:
            self._broadcast_lobby()

    def detach(self, sink: Sink) -> None:
        """A socket closed. The seat waits :data:`RECONNECT_SECONDS` for its player."""
        pid = self.sinks.pop(sink, None)
        self._sink_from.pop(sink, None)
        p = self.players.get(pid) if pid is not None else None
        if p is not None:
            p.sockets = max(0, p.sockets - 1)
            if p.sockets == 0:
                p.left_at = time.monotonic()
                self._broadcast_lobby()
                if self._vacancy_timer is None:
                    # One pending check covers every departure until it runs.
                    self._vacancy_timer = self._schedule(RECONNECT_SECONDS + 0.5,
                                                         self._check_vacancies)

    def _check_vacancies(self) -> None:
        self._vacancy_timer = None
        waiting = [p.left_at for p in self.players.values()
                   if p.bot is None and p.sockets == 0 and p.left_at is not None and not p.vacant]
        if waiting:
            # Someone left later than the first departure: check again when their time is up.
            wait = min(waiting) + RECONNECT_SECONDS + 0.5 - time.monotonic()
            self._vacancy_timer = self._schedule(wait, self._check_vacancies)
        host = self.players.get(self.host) if self.host else None
        if host is not None and host.vacant:
            heir = next(
                (p for p in self.players.values() if p.bot is None and p.sockets > 0), None
            )
            if heir is not None:
                self._log("host", {"player": heir.id})
        self._broadcast_lobby()

    def resync(self, sink: Sink, player: Player | None, since: int | None) -> None:
        """Answer a ``sync``: the missed broadcasts, or the whole state (the socket stays
        attached: nothing changes for the others, so nothing is broadcast)."""
        self._catch_up(sink, player, since)

    def report_rtt(self, player: Player, rtt: float) -> None:
        """A client's measured round trip; the table shows each seat's latency."""
        if 0 <= rtt < 60_000:
            player.rtt = rtt

    def latency(self) -> dict[str, Any]:
        """Every connected person's last round trip (ms), for the periodic ``latency`` message."""
        return {"type": "latency",
                "rtt": {p.id: round(p.rtt) for p in self.players.values()
                        if p.rtt is not None and p.sockets}}

    def send_latency(self) -> None:
        """Send :meth:`latency` to everyone (unversioned: a passing measure, not state)."""
        if self.sinks:
            data = protocol.encode(self.latency())
            for sink in list(self.sinks):
                sink.send(data)

    # ------------------------------------------------------------------ messages

    def room_info(self) -> dict[str, Any]:
        """The lobby as everyone sees it."""
        match = None
        if self.match is not None:
            match = {
                "id": self.match_id,
                "number": self.match_number,
                "round": len(self.match.results) + (0 if self.phase in
                                                    ("round_over", "match_over") else 1),
                "totals": list(self.match.totals),
                "over": self.match.over,
                "winner": self.match.winner,
                "nertz_sizes": list(self.match.nertz_sizes),
            }
        return {
            "id": self.id,
            "code": self.code,
            "rules": self.rules.to_spec(),
            "options": self.rules.to_options(),
            "seats": self.seats,
            "phase": self.phase,
            "host": self.host,
            "players": [p.to_json() for p in self.players.values()],
            "match": match,
            "matches": list(self.finished_matches),
            "same_deal": None if self.same_deal is None else self.same_deal[0],
        }

    def snapshot(self, player: Player | None) -> dict[str, Any]:
        """The whole state for one person: the room, the table as their seat sees it."""
        table = None
        if self.round is not None:
            seat = player.seat if player is not None and player.seat is not None else -1
            table = view(self.round, seat).to_json()
            table["t"] = self.now_t() if self.phase == "playing" else self.last_t
            table["stuck_flags"] = [bool(s) for s in self.round.stuck]
        return {
            "type": "state",
            "v": self.version,
            "room": self.room_info(),
            "you": self._you(player),
            "table": table,
            "result": None if self.last_result is None else self._result_json(),
            "countdown_ms": self.countdown_ms if self.phase == "countdown" else 0,
        }

    def _you(self, player: Player | None) -> dict[str, Any] | None:
        if player is None:
            return None
        return {"player": player.id, "name": player.name, "seat": player.seat,
                "hand": player.hand, "host": player.id == self.host}

    def _broadcast_lobby(self) -> None:
        self._broadcast({"type": "room", "room": self.room_info()})

    def _result_json(self) -> dict[str, Any]:
        assert self.last_result is not None and self.match is not None
        r = self.last_result
        return {
            "round": r.index + 1,
            "ended": r.score.ended,
            "caller": r.score.caller,
            "scores": r.scores,
            "breakdown": [s.to_json() for s in r.score.seats],
            "totals": list(self.match.totals),
            "over": self.match.over,
            "winner": self.match.winner,
            "match": self.match_id if self.match.over else None,
        }

    # ------------------------------------------------------------------ host commands

    def add_bot(self, by: Player, seat: int | None, bot: str, level: str) -> Player:
        """Host: seat a bot (``seat`` None: the first free seat)."""
        self._require_host(by)
        self._check_bot(bot, level)
        if self.phase != "lobby":
            raise CommandError("bad_phase", "bots join in the lobby (or take a vacant seat)")
        if seat is None:
            seat, hand = self._free_seat()
            if seat is None:
                raise CommandError("no_seat", "every seat is taken")
        else:
            self._check_seat(seat)
            hand = 0
            if self.seat_player(seat, 0) is not None:
                raise CommandError("seat_taken", f"seat {seat + 1} is taken")
        pid = "bot-" + secrets.token_hex(4)
        self._log("joined", {"player": pid, "name": bot_name(level, seat),
                             "seat": seat, "hand": hand, "bot": bot, "level": level})
        self._broadcast_lobby()
        p = self.players[pid]
        if self.bot_starter is not None:
            self.bot_starter(self, p)
        return p

    def _check_bot(self, bot: str, level: str) -> None:
        from nertz.server import bots

        problem = bots.check(bot, level)
        if problem:
            raise CommandError("bad_bot", problem)

    def _check_seat(self, seat: int) -> None:
        if not 0 <= seat < self.seats:
            raise CommandError("bad_seat", f"there is no seat {seat + 1} (1 to {self.seats})")

    def kick(self, by: Player, player_id: str) -> None:
        """Host: remove someone (in the lobby, or a spectator at any time)."""
        self._require_host(by)
        target = self.players.get(player_id)
        if target is None:
            raise CommandError("no_player", f"nobody with id {player_id!r} is in this room")
        if target.id == by.id:
            raise CommandError("bad_target", "the host cannot kick themself")
        if target.seat is not None and self.phase not in ("lobby", "match_over"):
            raise CommandError(
                "bad_phase", "a seated player can be kicked only between matches; "
                "a vacant seat can be handed to a bot"
            )
        self._log("left", {"player": target.id})
        for sink, pid in list(self.sinks.items()):
            if pid == target.id:
                self.sinks.pop(sink, None)
                self._sink_from.pop(sink, None)
                self._queue(sink, protocol.encode({"type": "kicked"}))
                self._outbox[-1].closes.append(sink)
        self._broadcast_lobby()

    def assign(self, by: Player, player_id: str, seat: int | None, hand: int) -> None:
        """Host: move someone to a seat (and partner slot), or to the spectators."""
        self._require_host(by)
        if self.phase not in ("lobby", "match_over"):
            raise CommandError("bad_phase", "seats change only between matches")
        target = self.players.get(player_id)
        if target is None:
            raise CommandError("no_player", f"nobody with id {player_id!r} is in this room")
        if seat is not None:
            self._check_seat(seat)
            if hand not in ((0, 1) if self.rules.teams != "off" else (0,)):
                raise CommandError("bad_hand", "partner slots exist only in team rules")
            other = self.seat_player(seat, hand)
            if other is not None and other.id != target.id:
                raise CommandError("seat_taken", f"seat {seat + 1} is taken")
        if (target.seat, target.hand) == (seat, hand if seat is not None else target.hand):
            return  # already there: nothing to store or tell anyone
        self._log("assigned", {"player": target.id, "seat": seat, "hand": hand})
        self._broadcast_lobby()

    def set_ready(self, by: Player, ready: bool) -> None:
        """A seated player says they are ready (shown in the lobby, between matches)."""
        if by.seat is None:
            raise CommandError("not_seated", "only seated players say they are ready")
        if self.phase not in ("lobby", "match_over"):
            raise CommandError("bad_phase", "ready counts only between matches")
        self._throttle(by)
        self._log("ready", {"player": by.id, "ready": ready})
        self._broadcast_lobby()

    def start(self, by: Player, countdown_ms: int, rematch: bool = False) -> None:
        """Host: start a match once every seat is filled."""
        self._require_host(by)
        self._check_alive()
        allowed = ("match_over",) if rematch else ("lobby", "match_over")
        if self.phase not in allowed:
            raise CommandError("bad_phase", "the match is under way")
        empty = [s + 1 for s in range(self.seats) if self.seat_player(s, 0) is None]
        if empty:
            raise CommandError("empty_seats", "fill every seat first (empty: "
                               + ", ".join(map(str, empty)) + ")")
        countdown = max(0, min(MAX_COUNTDOWN_MS, int(countdown_ms)))
        self._log("start", {"seed": self._match_seed(), "match": secrets.token_hex(8),
                            "countdown_ms": countdown})
        self._broadcast_state()
        self._schedule(countdown / 1000, self._begin)

    def _match_seed(self) -> int | str:
        """A fresh match's deal seed: 128 secret random bits (too many to search for the deal
        that fits the cards on show), unless the server was started with a deal seed (tests
        and demos), when a room's n-th match is always dealt alike. A "same deal" room's first
        match takes its finished match's seed (public already, in that match's replay)."""
        if self.same_deal is not None and self.match_number == 0:
            return self.same_deal[1]
        if self.deal_seed is None:
            return secrets.token_hex(16)
        digest = hashlib.sha256(f"nertz-deal:{self.deal_seed}:{self.match_number}".encode())
        return int.from_bytes(digest.digest()[:6], "big")

    def next_round(self, by: Player, countdown_ms: int = 2000) -> None:
        """Host: deal the next round."""
        self._require_host(by)
        self._check_alive()
        if self.phase != "round_over":
            raise CommandError("bad_phase", "the round is not over" if self.phase == "playing"
                               else "there is no next round now")
        countdown = max(0, min(MAX_COUNTDOWN_MS, int(countdown_ms)))
        self._log("next", {"countdown_ms": countdown})
        self._broadcast_state()
        self._schedule(countdown / 1000, self._begin)

    def _begin(self) -> None:
        if self.phase != "countdown":
            return
        self._log("begin", {})
        self._broadcast_state()
        self._after_change()

    def bot_seat(self, by: Player, seat: int, bot: str, level: str) -> Player:
        """Host: hand a vacant seat (its person gone) to a bot, mid-match too."""
        self._require_host(by)
        self._check_seat(seat)
        self._check_bot(bot, level)
        current = self.seat_player(seat, 0)
        if current is not None and not current.vacant:
            raise CommandError("seat_taken", f"seat {seat + 1} is not vacant")
        pid = "bot-" + secrets.token_hex(4)
        self._log("bot_seat", {"player": pid, "name": bot_name(level, seat),
                               "seat": seat, "bot": bot, "level": level,
                               "replaces": current.id if current else None})
        self._broadcast_lobby()
        p = self.players[pid]
        if self.bot_starter is not None:
            self.bot_starter(self, p)
        return p

    def _broadcast_state(self) -> None:
        message = self.snapshot(None)
        message["type"] = "table"
        self._broadcast(message)

    # ------------------------------------------------------------------ play

    def play(self, player: Player, action_id: str, text: str, hand: int | None,
             reply: Sink | None) -> None:
        """A move from ``player``: applied in arrival order, stored, then acknowledged.

        A repeated ``action_id`` gets the first answer again. Rejections (illegal, a lost race,
        too fast, no round) go to the sender only and change nothing.
        """
        if not isinstance(action_id, str) or not 1 <= len(action_id) <= 64:
            raise CommandError("bad_id", "an action id is 1 to 64 characters")
        seen = player.answers.get(action_id)
        if seen is not None:
            if reply is not None:
                self._queue(reply, seen)  # after the first one's commit, like the first answer
            return
        self._check_alive()
        if player.seat is None:
            raise CommandError("not_seated", "spectators cannot play")
        if player.bot is None:
            self._throttle(player)
        rnd = self.round
        if rnd is None or self.phase != "playing":
            raise CommandError("no_round", "no round is being played")
        # The server knows which partner this player is; a client's claim counts for nothing.
        hand = self.hand_of(player)
        t = self.now_t()
        try:
            move = Move.parse(text, self.rules.call_word)
            events = rnd.play(player.seat, move, t, hand)
        except (IllegalMoveError, NotationError) as exc:
            answer: dict[str, Any] = {"type": "rejected", "id": action_id, "move": str(text)[:32],
                      "error": exc.reason if isinstance(exc, IllegalMoveError) else str(exc)}
            if isinstance(exc, LostRace):
                card = self._race_card(player.seat, move)
                answer["race"] = {"winner": exc.winner, "foundation": exc.foundation,
                                  "margin_ms": exc.margin_ms, "card": str(card),
                                  "loser": player.seat,
                                  "winner_name": self._seat_name(exc.winner)}
                self._race(Race(t, exc.winner, player.seat, card, exc.foundation,
                                exc.margin_ms))
            data = protocol.encode(answer)
            self._remember(player, action_id, data)
            if reply is not None:
                self._queue(reply, data)
            return
        # Applied in memory; log it (the entry replays the same move), publish after commit.
        entry: dict[str, Any] = {"p": player.id, "s": player.seat, "h": hand, "m": str(move),
                                 "t": t}
        if player.bot is None:
            entry["id"] = action_id  # bots number their actions afresh in each process
        # Already applied (applying it is how it was checked; play() checked the table is
        # alive first): store it as it is.
        self._store_entry("move", entry)
        assert self.recorder is not None
        self.recorder.record(t, player.seat, move, hand)
        self.last_t = max(self.last_t, t)
        self._broadcast(self._update(player.seat, str(move), t, events))
        ack = protocol.encode({"type": "ack", "id": action_id, "move": str(move), "t": t,
                               "v": self.version})
        self._remember(player, action_id, ack)
        if reply is not None:
            self._queue(reply, ack)
        self._after_change()

    def _race_card(self, seat: int, move: Move) -> Card:
        """The card a seat tried to play (its move was refused, so it is still on its pile)."""
        assert self.round is not None
        tab = self.round.tableaus[seat]
        if move.src == "N":
            return tab.nertz[-1]
        if move.src == "W":
            return tab.waste[-1]
        return tab.work[move.work_src][-1]

    def _race(self, race: Race) -> None:
        """A contested play: into the race log (the log, then the match's replay file), and
        the winning seat is told (the loser hears it in its ``rejected``)."""
        self._log("race", race.to_json())
        message = protocol.encode({
            "type": "race_won", "loser": race.loser, "loser_name": self._seat_name(race.loser),
            "foundation": race.foundation, "card": str(race.card),
            "margin_ms": race.margin_ms})
        for sink, pid in list(self.sinks.items()):
            winner = self.players.get(pid) if pid is not None else None
            if winner is not None and winner.seat == race.winner:
                self._queue(sink, message)

    def _remember(self, player: Player, action_id: str, data: bytes) -> None:
        player.answers[action_id] = data
        while len(player.answers) > DEDUP:
            player.answers.popitem(last=False)

    def _throttle(self, player: Player) -> None:
        if not player.moves.take(time.monotonic()):
            raise CommandError("too_fast", f"too fast: at most {MOVES_PER_SECOND:g} moves "
                               "a second")

    def _update(self, seat: int, move: str, t: int, events: tuple[Event, ...]) -> dict[str, Any]:
        """The broadcast for one applied move: public facts only, from the views."""
        rnd = self.round
        assert rnd is not None
        seats = {seat} if seat >= 0 else set()
        founds: set[int] = set()
        summary: list[dict[str, Any]] = []
        for e in events:
            if isinstance(e, CardsMoved):
                summary.append({"kind": "moved", "seat": e.seat, "src": e.src, "dst": e.dst,
                                "cards": [str(c) for c in e.cards],
                                "foundation": e.foundation, "started": e.started})
                if e.dst == "F":
                    founds.add(e.foundation - 1)
            elif isinstance(e, CardRevealed):
                summary.append({"kind": "revealed", "seat": e.seat, "pile": e.pile,
                                "card": str(e.card)})
            elif isinstance(e, StockTurned):
                summary.append({"kind": "turned", "seat": e.seat, "count": e.count,
                                "recycled": e.recycled})
            elif isinstance(e, StuckDeclared):
                summary.append({"kind": "stuck", "seat": e.seat, "pile": e.pile})
            elif isinstance(e, ResetDone):
                summary.append({"kind": "reset", "piles": list(e.piles)})
                seats.update(range(rnd.seats))
            elif isinstance(e, FalseCallPenalty):
                # Only the count: the cards went face down under the new Nertz top.
                summary.append({"kind": "false_call", "seat": e.seat, "count": len(e.cards),
                                "each": e.each})
            elif isinstance(e, Called):
                summary.append({"kind": "called", "seat": e.seat, "t": e.t, "auto": e.auto,
                                "word": e.word})
            elif isinstance(e, RoundEnded):
                summary.append({"kind": "ended", "reason": e.reason, "caller": e.caller})
        return {
            "type": "update",
            "seat": seat,
            "move": move,
            "t": t,
            "events": summary,
            "tableaus": [tableau_view(rnd, s).to_json() for s in sorted(seats)],
            "foundations": [foundation_view(rnd, i).to_json() for i in sorted(founds)],
            "ended": rnd.ended,
            "called_by": rnd.called_by,
        }

    def _after_change(self) -> None:
        """After a move: end the round if it ended; reset at once if every seat is stuck."""
        rnd = self.round
        if rnd is None or self.phase != "playing":
            return
        if rnd.ended is not None:
            self._after_end()
            return
        if rnd.all_stuck():
            t = self.now_t()
            self._log("reset", {"t": t})
            self.last_t = max(self.last_t, t)
            self._broadcast(self._update(-1, "RESET", t, (ResetDone(("S",) * rnd.seats),)))

    def _after_end(self) -> None:
        rnd = self.round
        assert rnd is not None
        if rnd.ended == "nertz" and rnd.called_at is not None and self.rules.call_grace_ms:
            wait = (rnd.called_at + self.rules.call_grace_ms - self.now_t()) / 1000
            self._schedule(wait, self._close_round)
        else:
            self._close_round()

    def _close_round(self) -> None:
        if self.phase != "playing":
            return
        self._log("close", {"t": self.now_t()})
        assert self.match is not None
        if self.match.over and self.recorder is not None and self.match_id is not None:
            # The results name the match's replay: it must be there to download when they
            # arrive, so the save joins the outbox ahead of them.
            before = [o.fut for o in self._outbox if o.fut is not None]
            task = asyncio.get_running_loop().create_task(self._save_match(
                before, self.match_id, self.recorder.file.to_json(), self.match.winner))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
            task.add_done_callback(lambda _t: self._flush())
            self._outbox.append(_Outgoing(task, []))
        result = self._result_json()
        self._broadcast({"type": "round_over", "result": result, "room": self.room_info()})

    async def _save_match(self, before: list[asyncio.Future[None]], match_id: str,
                          replay: dict[str, Any], winner: int | None) -> None:
        # After the log entries that close the match: a replay never outruns its log.
        await asyncio.gather(*before, return_exceptions=True)
        try:
            await self.store.save_match(match_id, self.id, replay, winner)
        except Exception:  # pragma: no cover - the log still holds every move
            log.exception("table %s: could not save match %s", self.id, match_id)

__all__ = ["CommandError", "Player", "Sink", "StoreError", "Table", "token_hash"]
