"""What a room says: typed server messages, refused commands, and what to send to whom.

Every server message is a msgspec struct tagged by ``type`` (docs/protocol.md describes each);
those that carry table state are built only from :mod:`nertz.views`, so nothing hidden can leave
the server. A command's outcome is an :class:`Effects`: the messages it sends and to whom,
which go out only once its log entries are ``committed``. They are encoded by
:func:`nertz.server.protocol.encode`, the one encoder of everything the server sends.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from nertz import views
from nertz.engine import Round, hand_refusal
from nertz.moves import CALL, TURN, Move
from nertz.views import view

_HALF_PROBES: Final = (("N", Move.parse("N-F")), ("S", TURN), ("W", Move.parse("W-F")))
"""A move that uses each of a tableau's own piles: what :func:`own_piles` asks the engine."""


def own_piles(hand: int | None) -> list[str]:
    """Which of its seat's Nertz pile ``N``, stock ``S`` and waste ``W`` a player may play
    (the work piles are the whole seat's): all three, or, for a split partner (``hand`` 0 or
    1), the half the engine lets that partner play. The page asks this, never the rule."""
    return [pile for pile, probe in _HALF_PROBES
            if hand is None or hand_refusal(probe, hand) is None]


def tableau_json(rnd: Round, seat: int) -> dict[str, Any]:
    """Seat ``seat``'s public tableau (:func:`nertz.views.tableau_view`) and ``can_call``:
    whether the engine would take that seat's call now (an empty Nertz pile under a manual
    call, or any pile where false calls are penalised), so no client works the rule out."""
    out = views.tableau_json(rnd, seat)
    # Built for every update: while the Nertz pile holds cards and a false call is not
    # penalised, the engine refuses a call first thing (and its refusal costs a raise).
    out["can_call"] = (False if rnd.tableaus[seat].nertz and not rnd.rules.penalised_false_call
                       else rnd.can_play(seat, CALL))
    return out


def table_json(rnd: Round, seat: int) -> dict[str, Any]:
    """The table as ``seat`` sees it (-1: a spectator): :func:`nertz.views.view` with each
    tableau's ``can_call`` and ``starts``, the ranks that open a new foundation."""
    out = view(rnd, seat).to_json()
    out["tableaus"] = [tableau_json(rnd, s) for s in range(rnd.seats)]
    out["starts"] = [rnd.policy.starter]
    return out


def foundation_json(rnd: Round, index: int) -> dict[str, Any]:
    """Foundation ``index`` (0-based) as everyone sees it."""
    return views.foundation_json(rnd, index)


class CommandError(Exception):
    """A command refused: ``code`` for programs, the message for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_message(self, action_id: str | None = None) -> Error:
        """The ``error`` message that tells the sender."""
        return Error(self.code, self.message, action_id)


class ServerMessage(msgspec.Struct, tag_field="type"):
    """Any message from the server; ``v`` numbers the broadcasts (0: not one)."""


class State(ServerMessage, tag="state"):
    """The whole state for one person: the room, the table as their seat sees it."""

    v: int
    room: dict[str, Any]
    you: dict[str, Any] | None
    table: dict[str, Any] | None
    result: dict[str, Any] | None
    countdown_ms: int


class TableState(State, tag="table"):
    """The whole state as every seat sees it, broadcast when a match or round starts."""


class RoomChanged(ServerMessage, tag="room"):
    """The lobby changed: who is here, where they sit, the phase."""

    room: dict[str, Any]
    v: int = 0


class Update(ServerMessage, tag="update"):
    """One applied move: its public events and the tableaus and foundations it changed."""

    seat: int
    move: str
    t: int
    events: list[dict[str, Any]]
    tableaus: list[dict[str, Any]]
    foundations: list[dict[str, Any]]
    ended: str | None
    called_by: int | None
    v: int = 0


class RoundOver(ServerMessage, tag="round_over"):
    """A round's result (and the match's, when it was the last)."""

    result: dict[str, Any]
    room: dict[str, Any]
    v: int = 0


class Ack(ServerMessage, tag="ack"):
    """The sender's move ``id`` was applied and stored, at ``t``; ``v`` is its update's."""

    id: str
    move: str
    t: int
    v: int


class Rejected(ServerMessage, tag="rejected", omit_defaults=True):
    """The sender's move ``id`` changed nothing: ``error`` says why; ``race`` when another seat
    reached the foundation first."""

    id: str
    move: str
    error: str
    race: dict[str, Any] | None = None


class RaceWon(ServerMessage, tag="race_won"):
    """To the winning seat: its card stood, and seat ``loser`` lost the race with ``card`` (still
    face up on its pile), ``margin_ms`` later (None where unknown)."""

    loser: int
    loser_name: str
    foundation: int
    card: str
    margin_ms: int | None


class RaceSeen(ServerMessage, tag="race"):
    """To everyone in the room, spectators included (unversioned, a passing moment): seat
    ``winner``'s card went to ``foundation`` first and seat ``loser``'s ``card`` (still face up
    on its pile, as everyone sees it) lost the race, ``margin_ms`` later (None where unknown).
    The two seats hear it in their own answers too (``race_won``, ``rejected``)."""

    winner: int
    winner_name: str
    loser: int
    loser_name: str
    foundation: int
    card: str
    margin_ms: int | None


class Error(ServerMessage, tag="error", omit_defaults=True):
    """A command refused (``code`` for programs); ``id`` names the action it answers."""

    code: str
    message: str
    id: str | None = None


class Kicked(ServerMessage, tag="kicked"):
    """The host removed this player; the socket closes."""


class CaughtUp(ServerMessage, tag="caught_up"):
    """The missed broadcasts were replayed up to ``v``; ``you`` as the room sees you now."""

    v: int
    you: dict[str, Any] | None


class Latency(ServerMessage, tag="latency"):
    """Every connected person's last round trip in ms (unversioned: a passing measure)."""

    rtt: dict[str, int]


class Pong(ServerMessage, tag="pong"):
    """The answer to a ping: its ``id`` and ``sent`` echoed, the server's clock in ms."""

    id: str
    sent: float
    server: float


class PointerMoved(ServerMessage, tag="pointer", omit_defaults=True):
    """Seat ``seat``'s player ``player`` drags: as the client's ``pointer`` (``at`` None: the
    drag ended), with ``card`` only when it is face up to everyone at that moment
    (unversioned: a passing measure)."""

    seat: int
    player: str
    at: str | None = None
    x: float = 0.0
    y: float = 0.0
    card: str | None = None
    src: str | None = None


class Emoted(ServerMessage, tag="emote"):
    """Seat ``seat``'s player ``player`` reacted with ``emote`` (unversioned)."""

    seat: int
    player: str
    emote: str


class Ping(ServerMessage, tag="ping"):
    """The server's own round-trip probe (to a client that asked for them in ``hello``): answer
    at once with a ``pong`` carrying this ``id``."""

    id: str


class Stamp(msgspec.Struct, frozen=True):
    """What the edge (the process holding a socket) knows of one command as it hands it to the
    room: when it arrived (``arrived_ms``, the wall clock in ms since the epoch, so that
    processes on different machines compare) and the socket's round-trip estimate at that moment
    (``rtt_ms``, the server's own measurement, :mod:`nertz.server.edge.latency`; None while
    there is none). A plain value: carried unchanged wherever the command is relayed."""

    arrived_ms: float
    rtt_ms: float | None = None


EVERYONE: Final = "*"
"""Audience: every socket of the room (a versioned broadcast)."""
SENDER: Final = ""
"""Audience: the socket the command came from."""
PASSING: Final = "~"
"""Audience: every socket of the room, unversioned and kept out of the history (pointers,
emotes: passing moments, not state; a client that missed one has missed nothing)."""


@dataclass(frozen=True, slots=True)
class Send:
    """One message for one audience: :data:`EVERYONE`, :data:`SENDER` or a player's id (all
    their sockets). ``version`` is a broadcast's ``v``; ``close`` closes the audience's sockets
    after it (and forgets them at once, so nothing later reaches them)."""

    to: str
    message: ServerMessage
    version: int = 0
    close: bool = False


@dataclass(slots=True)
class Effects:
    """What one command or timer did: messages to send, in order, once ``committed`` (its log
    entries stored; None when it stored nothing) resolves."""

    sends: list[Send] = field(default_factory=list)
    committed: asyncio.Future[Any] | None = None

    def __bool__(self) -> bool:
        return bool(self.sends) or self.committed is not None
