"""The one real-time bot loop: a bot at human speed, playing a seat through a small link.

A :class:`BotDriver` plays one seat through a :class:`SeatLink`: it looks at the table as its
seat sees it (:class:`~nertz.bots.Observation`), decides, waits its speed profile's time for
that move, then submits it like any client: checked against its seat, stored before it counts,
and free to lose a race to a faster hand. With nothing to do it waits for the table to change,
plus its reaction delay. A split partner whose bot picks the other half's move plays its own
half instead (:func:`own_half_move`). Two links exist: the server's own bots play in-process
(:class:`nertz.server.room.bots.RoomSeat`), ``nertz bot`` over the network
(:class:`nertz.net.netbot.NetworkSeat`); the driver knows nothing of tables or sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass
from typing import Protocol

from nertz.bots.base import Bot, Observation
from nertz.bots.registry import UnknownName, find_bot, find_speed
from nertz.bots.speed import HUMAN_LEVELS
from nertz.engine import hand_refusal
from nertz.moves import Kind, Move
from nertz.rules import Rules


@dataclass(frozen=True, slots=True)
class Look:
    """What a seat sees of a round being played: its observation, which half of a split seat it
    plays (None: all of it), and a key naming the round (a new key: a new round)."""

    obs: Observation
    seat: int
    rules: Rules
    round_key: str
    hand: int | None = None


class SeatLink(Protocol):
    """What a bot driver needs of the seat it plays, in-process or over the network."""

    def present(self) -> bool:
        """Whether the bot still has its seat in an open room."""

    def look(self) -> Look | None:
        """The round as the seat sees it now, or None while no round is being played."""

    async def changed(self, timeout: float | None) -> None:
        """Wait until the table changes after the last :meth:`look` (or ``timeout`` passes)."""

    def still(self, look: Look) -> bool:
        """Whether the round of ``look`` is still being played."""

    async def play(self, move: Move) -> bool:
        """Submit ``move``; False if refused as a command (too fast, no round), not as a move."""


LIVE_LEVELS = HUMAN_LEVELS
"""Speed levels that play a live table (the faster ones are for simulation)."""


def level_problem(level: str) -> str | None:
    """Why speed ``level`` cannot play a live table (an unknown name, or a level for simulation
    only), or None if it can: the one check for the server's bots and ``nertz bot``."""
    try:
        find_speed(level)
    except UnknownName as exc:
        return str(exc)
    if level not in LIVE_LEVELS:
        return f"level {level!r} is for simulation; rooms take {', '.join(LIVE_LEVELS)}"
    return None


class BotDriver:
    """Plays one bot seat until it leaves the room: ``bot`` at speed ``level``."""

    def __init__(self, link: SeatLink, bot: str, level: str, seed: int | str) -> None:
        self.link = link
        self.bot: Bot = find_bot(bot)()
        self.speed = find_speed(level)
        self.rng = random.Random(seed)
        self._round: str | None = None

    async def run(self) -> None:
        """The bot's life: decide, think, play; wait when there is nothing to do."""
        link = self.link
        while link.present():
            look = link.look()
            if look is None:
                await link.changed(None)
                continue
            if look.round_key != self._round:
                self._round = look.round_key
                self.bot.start(look.seat, look.rules, look.round_key)
            move = self.bot.decide(look.obs)
            if move is not None and look.hand is not None and not fits_hand(move, look.hand):
                move = own_half_move(look.obs, look.hand)
            if move is None:
                await link.changed(2.0)
                await asyncio.sleep(self.speed.react_ms(self.rng) / 1000)
                continue
            await asyncio.sleep(self.speed.think_ms(move, self.rng) / 1000)
            if not link.still(look):
                continue
            if not await link.play(move):
                await asyncio.sleep(0.2)


async def wait_event(event: asyncio.Event, timeout: float | None) -> None:
    """Wait for ``event``, at most ``timeout`` seconds (None: without end)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), timeout=timeout)


def fits_hand(move: Move, hand: int) -> bool:
    """Whether a partner (``hand`` 0: the Nertz pile, 1: the stock and waste) may make
    ``move`` under ``teams: split``: the engine's rule, asked without raising."""
    return hand_refusal(move, hand) is None


def own_half_move(obs: Observation, hand: int) -> Move | None:
    """A split partner's play when its bot chose the other half's: a foundation play, else a
    card of its own half onto a work pile, else (the stock partner) a turn; None: wait."""
    legal = [m for m in obs.legal_moves() if fits_hand(m, hand)]
    ranked = [m for m in legal if m.kind is Kind.TO_FOUNDATION]
    ranked += [m for m in legal if m.kind is Kind.TO_WORK and m.src in ("N", "W")]
    ranked += [m for m in legal if m.kind is Kind.TURN]
    return ranked[0] if ranked else None
