"""Bots seated at a server table: the simulator's bots, at human speeds, through the same door.

A :class:`BotDriver` is one asyncio task per bot seat. It looks at the table as its seat sees it
(:class:`~nertz.bots.Observation`), decides, waits its speed profile's time for that move, then
submits it through :meth:`Table.play` like any client: checked against its seat, stored before
it counts, and free to lose a race to a faster hand. With nothing to do it waits for the table to
change, plus its reaction delay.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random

from nertz.bots import Observation, UnknownName, find_bot, find_speed
from nertz.bots.speed import HUMAN_LEVELS
from nertz.engine import Round, hand_refusal
from nertz.moves import Kind, Move
from nertz.server.table import CommandError, Player, Table

log = logging.getLogger("nertz.bots")

SERVER_LEVELS = HUMAN_LEVELS
"""Speed levels a room may seat."""


def check(bot: str, level: str) -> str | None:
    """Why ``bot`` at ``level`` cannot sit at a table, or None if it can."""
    try:
        find_bot(bot)
        find_speed(level)
    except UnknownName as exc:
        return str(exc)
    if level not in SERVER_LEVELS:
        return f"level {level!r} is for simulation; rooms take {', '.join(SERVER_LEVELS)}"
    return None


class BotDriver:
    """Plays one bot seat of a table until the bot leaves the room."""

    def __init__(self, table: Table, player: Player, seed: int | None = None) -> None:
        assert player.bot is not None and player.level is not None
        self.table = table
        self.player = player
        self.bot = find_bot(player.bot)()
        self.speed = find_speed(player.level)
        self.rng = random.Random(seed if seed is not None else f"{table.id}:{player.id}")
        self._ids = itertools.count()
        self._round: object = None

    async def run(self) -> None:
        """The bot's life: decide, think, play; wait when there is nothing to do."""
        table = self.table
        while self.player.id in table.players and not table.closed:
            changed = table.changed
            rnd = table.round
            seat = self.player.seat
            if table.phase != "playing" or rnd is None or seat is None or rnd.ended:
                await changed.wait()
                continue
            if rnd is not self._round:
                self._round = rnd
                self.bot.start(seat, table.rules, f"{table.id}:{table.match_number}:"
                               f"{len(table.match.results) if table.match else 0}")
            move = self.bot.decide(Observation.from_round(rnd, seat, table.now_t()))
            hand = table.hand_of(self.player)
            if move is not None and hand is not None and not fits_hand(move, hand):
                move = own_half_move(rnd, seat, hand)
            if move is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), timeout=2.0)
                await asyncio.sleep(self.speed.react_ms(self.rng) / 1000)
                continue
            await asyncio.sleep(self.speed.think_ms(move, self.rng) / 1000)
            if table.round is not rnd or table.phase != "playing":
                continue
            try:
                table.play(self.player, f"b{next(self._ids)}", str(move), None, None)
            except CommandError:
                await asyncio.sleep(0.2)


def fits_hand(move: Move, hand: int) -> bool:
    """Whether a partner (``hand`` 0: the Nertz pile, 1: the stock and waste) may make
    ``move`` under ``teams: split``: the engine's rule, asked without raising."""
    return hand_refusal(move, hand) is None


def own_half_move(rnd: Round, seat: int, hand: int) -> Move | None:
    """A split partner's play when its bot chose the other half's: a foundation play, else a
    card of its own half onto a work pile, else (the stock partner) a turn; None: wait."""
    legal = [m for m in rnd.legal_moves(seat) if fits_hand(m, hand)]
    ranked = [m for m in legal if m.kind is Kind.TO_FOUNDATION]
    ranked += [m for m in legal if m.kind is Kind.TO_WORK and m.src in ("N", "W")]
    ranked += [m for m in legal if m.kind is Kind.TURN]
    return ranked[0] if ranked else None


def start_bot(table: Table, player: Player) -> None:
    """Start a bot's driver task (kept on the table so it is not collected)."""
    driver = BotDriver(table, player)
    task = asyncio.get_running_loop().create_task(driver.run(), name=f"bot-{player.id}")
    table.tasks.add(task)
    task.add_done_callback(_done(table))


def _done(table: Table):  # type: ignore[no-untyped-def]
    def callback(task: asyncio.Task[None]) -> None:
        table.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("table %s: bot stopped: %r", table.id, task.exception())

    return callback
