"""Find bots and speed levels by name: ``greedy``, ``expert:casual``, ``random:instant``.

A player spec is ``BOT`` or ``BOT:LEVEL``; without a level the caller's default applies. An
unknown name raises :class:`UnknownName`, whose message lists what exists (the command line shows
it as one line and exits 2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from nertz.bots.base import Bot
from nertz.bots.basic import GreedyBot, RandomBot
from nertz.bots.expert import ExpertBot
from nertz.bots.pounce import PounceBot
from nertz.bots.speed import SPEEDS, SpeedProfile
from nertz.errors import NertzError


def _learned() -> Bot:
    """The ``learned`` bot (:mod:`nertz.rl.bot`), imported when asked: it needs numpy (the
    ``ai`` extra) and a policy file, which the other bots do not."""
    try:
        from nertz.rl.bot import LearnedBot
    except ImportError as exc:
        raise NertzError(
            f"the learned bot needs the ai extra (pip install 'nertz[ai]'): {exc}"
        ) from None
    return LearnedBot()


BOTS: Final[dict[str, Callable[[], Bot]]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "expert": ExpertBot,
    "pounce": PounceBot,
    "learned": _learned,
}
"""Every bot by name: a factory for a fresh one."""


class UnknownName(NertzError, ValueError):
    """A bot or speed level that does not exist."""


def find_bot(name: str) -> Callable[[], Bot]:
    """The factory of the bot called ``name``."""
    try:
        return BOTS[name.strip().lower()]
    except KeyError:
        raise UnknownName(f"unknown bot {name!r} (bots: {', '.join(BOTS)})") from None


def find_speed(name: str) -> SpeedProfile:
    """The speed level called ``name``."""
    try:
        return SPEEDS[name.strip().lower()]
    except KeyError:
        raise UnknownName(
            f"unknown speed level {name!r} (levels: {', '.join(SPEEDS)})"
        ) from None


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    """A bot and its speed, as named on the command line (``expert:skilled``)."""

    bot: str
    speed: str

    def __str__(self) -> str:
        return f"{self.bot}:{self.speed}"

    def make(self) -> Bot:
        """A fresh bot of this kind."""
        return find_bot(self.bot)()

    @property
    def profile(self) -> SpeedProfile:
        """The speed profile."""
        return find_speed(self.speed)

    @staticmethod
    def parse(text: str, default_speed: str = "instant") -> PlayerSpec:
        """Read ``BOT`` or ``BOT:LEVEL``; raises :class:`UnknownName` for a name that is none."""
        bot, _, speed = text.strip().partition(":")
        find_bot(bot)
        level = speed or default_speed
        find_speed(level)
        return PlayerSpec(bot.strip().lower(), level.strip().lower())
