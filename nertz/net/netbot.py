"""Bots over the network: the simulator's bots playing a seat through :mod:`nertz.net.client`.

A :class:`NetworkBot` drives one :class:`~nertz.net.client.Client` with one bot of
:mod:`nertz.bots` at a speed level of :mod:`nertz.bots.speed`, on the one bot loop of
:mod:`nertz.bots.driver` (the loop the server runs for a bot it seats itself): its
:class:`NetworkSeat` reads the seat's view from the client's mirror
(what :meth:`Observation.from_view <nertz.bots.Observation.from_view>` gives, re-derived only
where the view changed: :class:`~nertz.bots.rebuild.ViewRebuilder`), sends each move and waits
for the answer, counting what came back. Every move crosses the network and may lose a race to a
faster hand.

If its player is the room's host, the bot also keeps the room going: it starts the match once
every seat is filled, deals the next round after a short pause and asks for a rematch when a
match ends (while it has matches left to play). ``nertz bot`` (:func:`run_bot`) is the command
line's front door; ``bench/server_load.py`` runs hundreds of these on one event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from nertz.bots import find_bot, find_speed
from nertz.bots.driver import LIVE_LEVELS, BotDriver, Look, level_problem
from nertz.bots.rebuild import ViewRebuilder
from nertz.moves import Move
from nertz.net.client import ROOM_MESSAGES, Client, ClientError, Message, MoveResult
from nertz.rules import Rules

NETWORK_LEVELS: Final = LIVE_LEVELS
"""Speed levels a room accepts."""


@dataclass(slots=True)
class BotStats:
    """What a network bot saw of its own moves (the load bench sums these)."""

    sent: int = 0
    acked: int = 0
    races: int = 0
    """Rejected with ``race``: another seat got the card there first."""
    stale: int = 0
    """Rejected after another seat's play changed the table since the decision (a race the
    server did not name as one: the card's place was taken, a run was covered)."""
    unexpected: int = 0
    """Rejected with nothing changed by anyone else: the bot's view and the server disagree."""
    errors: list[str] = field(default_factory=list)
    """``error`` answers to moves (``too_fast``, ``no_round``...) and refused host commands."""
    ack_ms: list[float] = field(default_factory=list)
    """Move sent -> ack received, in ms (collected when ``keep_rtts`` is set)."""
    rounds: int = 0
    matches: int = 0


class NetworkBot:
    """One bot playing one seat over a :class:`Client` (already created or joined).

    ``matches``: leave after this many finished matches (0: stay until stopped).
    ``host_duties``: as host, start, deal and rematch. ``pause_s``: how long a host lets the
    round's results stand before the next deal. ``on_answer`` hears every move's result.
    """

    def __init__(
        self,
        client: Client,
        bot: str = "greedy",
        level: str = "expert",
        *,
        matches: int = 0,
        host_duties: bool = True,
        countdown_ms: int = 3000,
        pause_s: float = 2.0,
        seed: int | str | None = None,
        keep_rtts: bool = False,
        on_answer: Callable[[MoveResult, bool], None] | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        _check_level(level)
        self.client = client
        self.matches = matches
        self.host_duties = host_duties
        self.countdown_ms = countdown_ms
        self.pause_s = pause_s
        self.keep_rtts = keep_rtts
        self.on_answer = on_answer
        self.log = log
        self.stats = BotStats()
        self.stopped = False
        self._rules_key: str | None = None
        self._rules: Rules | None = None
        self._rules_spec: object = None
        self.others_moves = 0
        """Updates of other seats' moves heard so far."""
        self._counted: set[tuple[Any, ...]] = set()
        self._host_asked: tuple[Any, ...] | None = None
        client.listeners.append(self._hear)
        self.driver = BotDriver(NetworkSeat(self), bot, level,
                                seed if seed is not None else f"{client.room_id}:{client.name}")

    # ------------------------------------------------------------------ listening

    def _hear(self, msg: Message) -> None:
        kind = msg.get("type")
        if kind == "update" and msg.get("seat") != self.client.seat:
            self.others_moves += 1
        elif kind == "round_over":
            result = msg["result"]
            match = (msg.get("room") or {}).get("match") or {}
            key = (match.get("id"), result.get("round"))
            if key not in self._counted:
                self._counted.add(key)
                self.stats.rounds += 1
                if result.get("over"):
                    self.stats.matches += 1
                if self.log is not None:
                    self._log_result(msg)
        elif kind == "error" and msg.get("id") is None:
            self.stats.errors.append(f"{msg.get('code')}: {msg.get('message')}")

    def _log_result(self, msg: Message) -> None:
        assert self.log is not None
        result = msg["result"]
        room = msg.get("room") or {}
        names = {p["seat"]: p["name"] for p in room.get("players", ()) if p.get("seat") is not None}
        scores = ", ".join(f"{names.get(s, s)} {v:+d}" for s, v in enumerate(result["scores"]))
        line = f"round {result['round']} ({result['ended']}): {scores}"
        if result.get("over"):
            w = result.get("winner")
            line += "; match over: " + ("a tie" if w is None else f"{names.get(w, w)} wins")
        self.log(line)

    # ------------------------------------------------------------------ the loop

    def rules(self) -> Rules:
        """The room's rules (parsed once per distinct ruleset)."""
        room = self.client.room
        spec = room["rules"] if room is not None else "pagat"
        if spec is self._rules_spec and self._rules is not None:
            # The same object as last time (the room was not broadcast again since): asked at
            # every look, and dumping the spec to compare it cost more than the answer.
            return self._rules
        key = json.dumps(spec, sort_keys=True)
        if key != self._rules_key or self._rules is None:
            self._rules = Rules.from_spec(spec)
            self._rules_key = key
        self._rules_spec = spec
        return self._rules

    def stop(self) -> None:
        """Ask the bot to leave its loop at the next step."""
        self.stopped = True

    def done(self) -> bool:
        """Stopped, the match count reached, or the connection gone."""
        return (self.stopped or self.client.closed
                or bool(self.matches and self.stats.matches >= self.matches))

    async def run(self) -> None:
        """Play until stopped, the match count is reached, or the connection is gone; as the
        host, keep the room going meanwhile."""
        client = self.client
        host = asyncio.get_running_loop().create_task(self._host_loop())
        try:
            await self.driver.run()
        finally:
            host.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await host
        if client.kicked:
            raise ClientError("the host removed this bot from the room")

    async def _host_loop(self) -> None:
        client = self.client
        while not self.done():
            if self.host_duties and client.is_host:
                await self._host_step(client.phase)
            # Only a message about the room can change what a host does (the phase, the seats
            # filled, who hosts): waking for every update and ack of a round cost every client,
            # host or not, a wake-up per message.
            await client.wait_changed(1.0, ROOM_MESSAGES)

    def count_answer(self, result: MoveResult, others_moved: bool) -> None:
        """Count one move's answer in :attr:`stats` (``others_moved``: another seat played
        since the bot looked, so a refusal is stale, not unexpected)."""
        s = self.stats
        expected = True
        if result.ok:
            s.acked += 1
            if self.keep_rtts:
                s.ack_ms.append(result.rtt_ms)
        elif result.race is not None:
            s.races += 1
        elif result.code is not None and result.code != "race":
            # An error naming the move: too fast, no round (the round ended meanwhile).
            if result.code == "no_round":
                s.stale += 1
            else:
                s.errors.append(f"{result.code}: {result.error}")
                expected = False
        elif others_moved:
            s.stale += 1
        else:
            s.unexpected += 1
            expected = False
        if self.on_answer is not None:
            self.on_answer(result, expected)

    async def _host_step(self, phase: str | None) -> None:
        client = self.client
        room = client.room
        if room is None:
            return
        match = room.get("match") or {}
        key = (phase, match.get("id"), match.get("round"))
        if key == self._host_asked:
            return
        if phase == "lobby":
            filled = {p["seat"] for p in room["players"]
                      if p.get("seat") is not None and p.get("hand", 0) == 0}
            if len(filled) < room["seats"]:
                return
            self._host_asked = key
            await client.start(self.countdown_ms)
        elif phase == "round_over":
            self._host_asked = key
            await asyncio.sleep(self.pause_s)
            if client.phase == "round_over":
                await client.next_round()
        elif phase == "match_over":
            if self.matches and self.stats.matches >= self.matches:
                return
            self._host_asked = key
            await asyncio.sleep(self.pause_s)
            if client.phase == "match_over":
                await client.rematch()


def _check_level(level: str) -> None:
    find_speed(level)  # an unknown name raises with the list of levels
    problem = level_problem(level)
    if problem:
        raise ClientError(problem)


class NetworkSeat:
    """The bot loop's :class:`~nertz.bots.driver.SeatLink` over a client: the seat's view from
    the client's mirror, moves sent and their answers counted in the bot's :class:`BotStats`."""

    def __init__(self, owner: NetworkBot) -> None:
        self.owner = owner
        self.client = owner.client
        self._others_at_look = 0
        # The mirror replaces the parts of the view an update carries and keeps the rest: the
        # rebuilder re-derives only those (Observation.from_view would redo the whole table).
        self._rebuilder = ViewRebuilder()

    def present(self) -> bool:
        """Whether the bot still plays (not stopped, matches left, connected)."""
        return not self.owner.done()

    def _round_key(self) -> str:
        match = (self.client.room or {}).get("match") or {}
        return f"{self.client.room_id}:{match.get('id')}:{match.get('round')}:{self.client.seat}"

    def look(self) -> Look | None:
        """The seat's view of the round being played, or None while none is."""
        client = self.client
        table = client.table
        seat = client.seat
        if (client.phase != "playing" or table is None or table.get("ended") is not None
                or seat is None):
            return None
        rules = self.owner.rules()
        obs = self._rebuilder.observe(table, rules, t=int(table.get("t") or 0))
        # The view does not count resets; the greedy bot's idle logic starts afresh after one.
        obs.round.resets = client.mirror.resets
        me: Message = next((p for p in (client.room or {}).get("players", ())
                   if p.get("id") == client.player), {})
        self._others_at_look = self.owner.others_moves
        return Look(obs, seat, rules, self._round_key(), me.get("plays"))

    async def changed(self, timeout: float | None) -> None:
        """Wait for the next message (a second at most, so the loop looks again)."""
        await self.client.wait_changed(1.0 if timeout is None else timeout)

    def still(self, look: Look) -> bool:
        """Whether the round of ``look`` is still being played."""
        client = self.client
        return (client.phase == "playing" and not client.closed and client.table is not None
                and client.table.get("ended") is None and self._round_key() == look.round_key)

    async def play(self, move: Move) -> bool:
        """Send the move and wait for its answer, counting it; True (answers are no refusal of
        the loop: it simply looks again)."""
        owner, client = self.owner, self.client
        owner.stats.sent += 1
        try:
            result = await client.play(str(move))
        except (ClientError, TimeoutError) as exc:
            if not client.closed:
                owner.stats.errors.append(f"no answer to {move}: {exc}")
            return True
        owner.count_answer(result, owner.others_moves != self._others_at_look)
        return True


# --------------------------------------------------------------------------- nertz bot


async def run_bot(
    url: str,
    level: str,
    bot: str = "greedy",
    name: str | None = None,
    matches: int = 0,
    say: Callable[[str], None] | None = None,
) -> int:
    """``nertz bot``: join the room at ``url`` as ``name`` and play until the match count is
    reached (0: until stopped). Raises :class:`ClientError` with a one-line message on a bad URL,
    an unreachable server or a refused join."""
    _check_level(level)
    find_bot(bot)
    if say is None:
        def say(line: str) -> None:
            print(line, flush=True)
    display = name or f"{level.title()} {bot} bot"
    client = None
    # Names are unique in a room: a second bot of the same kind takes the next number.
    for n in range(1, 10 if name is None else 2):
        tried = display if n == 1 else f"{display} {n}"
        try:
            # A bot is not the person running it: a fresh guest, never their identity.
            client = await Client.join(url, tried, identity=False)
        except ClientError as exc:
            if exc.status != 409 or name is not None:
                raise
            continue
        display = tried
        break
    if client is None:
        raise ClientError(f"could not join: the names {display!r} to {display!r} 9 are taken")
    await client.connect()
    try:
        room = client.room or {}
        seat = client.seat
        where = f"seat {seat + 1}" if seat is not None else "as a spectator (no free seat)"
        say(f"nertz bot: {display} joined room {room.get('code', client.room_id)}, {where}"
            + (" (host)" if client.is_host else ""))
        player = NetworkBot(client, bot, level, matches=matches, log=say)
        await player.run()
        s = player.stats
        say(f"nertz bot: {s.acked} moves played, {s.races} races lost, "
            f"{s.rounds} rounds, {s.matches} matches")
    finally:
        await client.close()
    return 0


__all__ = ["NETWORK_LEVELS", "BotStats", "NetworkBot", "NetworkSeat", "run_bot"]
