"""The WebSocket protocol: every message, typed (msgspec), tagged by ``type``.

Client messages are decoded into one tagged union; anything else (not JSON, an unknown
``type``, a missing or mistyped field, too long) becomes a :class:`ProtocolError` whose text names
the problem, and the connection stays up. Server messages are typed too
(:mod:`nertz.server.room.messages`), encoded once by :func:`encode` and, where they carry table
state, built only from :mod:`nertz.views` so that nothing hidden can leave the server.
docs/protocol.md describes each message.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, Final, Literal

import msgspec

from nertz.server.confusables import skeleton

MAX_MESSAGE_BYTES: Final = 4096
"""The largest client message accepted; larger ones are refused (and the socket caps frames)."""

MAX_NAME = 24
"""Display names are cut to this many characters."""


class ProtocolError(ValueError):
    """A client message that cannot be read; ``str()`` says what was wrong."""


# --------------------------------------------------------------------------- client -> server


class Hello(msgspec.Struct, tag="hello", forbid_unknown_fields=True):
    """First message on a socket: the seat token from joining, and the last version seen (to
    catch up from history), or None for a full state."""

    token: str
    since: int | None = None
    pings: bool = False
    """The client answers the server's ``ping`` with a ``pong``: the server measures its round
    trip itself (what latency-fair races go by; a client that never answers gets no
    compensation)."""


MAX_MOVE_CHARS: Final = 32
"""The longest move a client may send (the longest in SPEC notation is a dozen characters): a
refused move is echoed, logged and remembered for the match, so it must not be a page long."""


class Play(msgspec.Struct, tag="play", forbid_unknown_fields=True):
    """A move (SPEC notation). ``id`` is the client's own id for it: a repeated id is answered
    with the first answer and never applied twice. ``hand`` names the partner under split teams."""

    id: str
    move: Annotated[str, msgspec.Meta(max_length=MAX_MOVE_CHARS)]
    hand: int | None = None


class Ping(msgspec.Struct, tag="ping", forbid_unknown_fields=True):
    """Round-trip probe; ``sent`` is the client's clock in ms, echoed back in the pong.
    ``rtt`` is the client's last measured round trip (ms), shown to the table as its latency."""

    id: str
    sent: float = 0.0
    rtt: float | None = None


class Pong(msgspec.Struct, tag="pong", forbid_unknown_fields=True):
    """The answer to the server's ``ping``: its ``id``, sent back at once."""

    id: str


class Sync(msgspec.Struct, tag="sync", forbid_unknown_fields=True):
    """Ask for what happened after version ``since`` (or everything, with None)."""

    since: int | None = None


class Ready(msgspec.Struct, tag="ready", forbid_unknown_fields=True):
    """In the lobby: this player is ready (or not)."""

    ready: bool = True


SeatIndex = Annotated[int, msgspec.Meta(ge=0)]
"""A seat as the protocol numbers it, from 0 (a negative one is refused as it is read)."""

MAX_COUNTDOWN_MS: Final = 10_000
"""The longest countdown before a deal the host may ask for."""

CountdownMs = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNTDOWN_MS)]
"""A countdown before a deal, in ms."""

Fraction = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
"""A place across a region, 0 to 1."""


class AddBot(msgspec.Struct, tag="add_bot", forbid_unknown_fields=True):
    """Host: put a bot in ``seat`` (None: the first free one) at a speed ``level``."""

    seat: SeatIndex | None = None
    level: str = "skilled"
    bot: str = "greedy"


class Kick(msgspec.Struct, tag="kick", forbid_unknown_fields=True):
    """Host: remove the player (or bot) ``player`` from the room."""

    player: str


class Assign(msgspec.Struct, tag="assign", forbid_unknown_fields=True):
    """Host: move ``player`` to ``seat`` (None: spectator); ``hand`` picks the partner slot
    (0 Nertz pile, 1 stock and waste) when seats are teams."""

    player: str
    seat: SeatIndex | None
    hand: Annotated[int, msgspec.Meta(ge=0)] = 0


class Start(msgspec.Struct, tag="start", forbid_unknown_fields=True):
    """Host: start the match after a countdown of ``countdown_ms``."""

    countdown_ms: CountdownMs = 3000


class NextRound(msgspec.Struct, tag="next_round", forbid_unknown_fields=True):
    """Host: deal the next round of the match, after a countdown of ``countdown_ms``."""

    countdown_ms: CountdownMs = 2000


class Rematch(msgspec.Struct, tag="rematch", forbid_unknown_fields=True):
    """Host: after the match, start a new one with the same seats."""


class BotSeat(msgspec.Struct, tag="bot_seat", forbid_unknown_fields=True):
    """Host: hand a vacant seat (its player gone) to a bot at ``level``."""

    seat: SeatIndex
    level: str = "skilled"
    bot: str = "greedy"


EMOTES: Final = ("wave", "gg", "wow", "oops", "hurry", "thanks")
"""The quick reactions a seat may send (no free chat): what the page shows for each is its own."""

EmoteName = Literal["wave", "gg", "wow", "oops", "hurry", "thanks"]


class Emote(msgspec.Struct, tag="emote", forbid_unknown_fields=True):
    """A seated player's quick reaction, one of :data:`EMOTES`, shown by their seat."""

    emote: EmoteName


PointerPlace = Literal["F", "own"]
PileName = Literal["N", "W", "1", "2", "3", "4", "5"]


class Pointer(msgspec.Struct, tag="pointer", forbid_unknown_fields=True):
    """Where a seated player's pointer is while they drag: ``at`` names the region it is over
    (``F`` the foundations, ``own`` their own tableau), ``x`` and ``y`` its place in that
    region as fractions (0 to 1) of its width and height; ``card`` the face-up card they hold,
    lifted from their pile ``src``. ``at`` None: the drag ended."""

    at: PointerPlace | None = None
    x: Fraction = 0.0
    y: Fraction = 0.0
    card: str | None = None
    src: PileName | None = None


ClientMessage = (
    Hello | Play | Ping | Pong | Sync | Ready | AddBot | Kick | Assign | Start | NextRound
    | Rematch | BotSeat | Emote | Pointer
)
"""Every message a client may send."""

_decoder: Final = msgspec.json.Decoder(ClientMessage)
_encoder: Final = msgspec.json.Encoder()


def decode(raw: str | bytes) -> ClientMessage:
    """Read one client message; raises :class:`ProtocolError` naming what is wrong."""
    try:
        data = raw.encode() if isinstance(raw, str) else raw
    except UnicodeEncodeError:
        # A text frame is checked as UTF-8 before it gets here; a str from elsewhere may not be.
        raise ProtocolError("not JSON: text with a lone surrogate is not UTF-8") from None
    if len(data) > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"message too long: {len(data)} bytes (at most {MAX_MESSAGE_BYTES})")
    try:
        return _decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise ProtocolError(f"bad message: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ProtocolError(not_json(exc, data)) from None
    except RecursionError:
        # Under the size cap a message can still nest a thousand arrays deep; the decoder
        # then runs out of stack (with the tag after the nested value, it looks ahead).
        raise ProtocolError("not JSON: nested too deeply") from None


_LONE_HIGH: Final = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})")


def not_json(exc: msgspec.DecodeError, data: bytes) -> str:
    """The text of an error for ``data`` that is not JSON, from the decoder's ``exc``.

    msgspec calls a high-surrogate escape without its low half (``"\\ud800"``) "truncated",
    which sends a client looking for a cut-off message; this names the escape instead."""
    lone = _LONE_HIGH.search(data) if "truncated" in str(exc) else None
    if lone is not None:
        return (f"not JSON: {lone.group().decode()} at byte {lone.start()} is half of a "
                "UTF-16 surrogate pair with no other half")
    return f"not JSON: {exc}"


BAD_ID: Final = "an action id is 1 to 64 printable characters"
"""The refusal of an id :func:`valid_id` refuses (an ``error`` ``bad_id``, with no id)."""


def valid_id(value: object) -> bool:
    """Whether ``value`` is an action id the server may echo: 1 to 64 printable characters
    (no control or format characters: the id goes back to the client, and into the log)."""
    return isinstance(value, str) and 1 <= len(value) <= 64 and value.isprintable()


def message_id(raw: str | bytes) -> str | None:
    """The client's ``id`` in a message that could not be read (an ``id`` of 1 to 64
    printable characters in a JSON object), so that the ``error`` can carry it back; else None."""
    data = raw.encode() if isinstance(raw, str) else raw
    if len(data) > MAX_MESSAGE_BYTES:
        return None
    try:
        found = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(found, dict):
        return None
    value = found.get("id")
    return value if valid_id(value) else None


def encode(message: dict[str, Any] | msgspec.Struct) -> bytes:
    """Encode one server message (the structs of :mod:`nertz.server.room.messages`): every
    message the server sends passes here."""
    return _encoder.encode(message)


BLANK_LOOKING: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
"""Printable characters that show as nothing (Hangul fillers, the blank Braille pattern):
a name of them alone would look empty."""


_IGNORABLE: Final = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
"""Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt) less the
blank-looking ones read as spaces: characters that show as nothing, some of them combining
marks (variation selectors, the grapheme joiner) that the format-character test misses."""

MAX_MARKS: Final = 2
"""Combining marks kept on one character (``é``, ``ệ``); a tower of them overdraws its
neighbours' lines."""


def _ignorable(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _IGNORABLE)


def clean_name(name: object) -> str:
    """A display name as the server keeps it: text, control and invisible characters dropped
    (format characters and Unicode's default-ignorable ones), blank-looking ones read as
    spaces, spaces folded, combining marks only on a character and at most :data:`MAX_MARKS`
    on one, at most :data:`MAX_NAME` characters; raises :class:`ProtocolError` if nothing is
    left.

    HTML is kept as text: it is the page's job to show it as text (it uses ``textContent``).
    """
    if not isinstance(name, str):
        raise ProtocolError("name must be text")
    out: list[str] = []
    marks = 0
    for ch in name:
        category = unicodedata.category(ch)
        if ch in BLANK_LOOKING:
            ch, category = " ", "Zs"
        elif not ch.isprintable() or category == "Cf" or _ignorable(ch):
            continue
        if category.startswith("M"):
            # A mark needs a character to sit on, and only a couple fit on one.
            if not out or out[-1].isspace() or marks >= MAX_MARKS:
                continue
            marks += 1
        else:
            marks = 0
        out.append(ch)
    kept = " ".join("".join(out).split())[:MAX_NAME]
    if not kept:
        raise ProtocolError("name is empty")
    return kept


def name_key(name: str) -> str:
    """A name folded for matching a pattern: ``Ann``, ``ANN`` and ``Ann`` in full-width letters
    give one key."""
    return unicodedata.normalize("NFKC", name).casefold()


def _looks(name: str) -> tuple[str, str, str]:
    folded = unicodedata.normalize("NFKC", name)
    as_written = skeleton(folded)
    return as_written, skeleton(folded.casefold()), as_written.casefold()


def name_skeleton(name: str) -> str:
    """One key for a name and most names that look like it, case aside (its NFKC form's TS 39
    skeleton, case-folded)."""
    return _looks(name)[2]


_BOT_NAME: Final = re.compile(r"^\w+ bot \d+$")
"""Names of a room's bots' shape (``Expert bot 2``), folded as :func:`name_key` folds them."""

_BOT_LOOK: Final = re.compile(r"^\w+ bot \w{1,2}$")
"""A bot's name by look: a skeleton turns digits into letters (``1`` and ``I`` into ``l``)."""


def bot_like(name: str) -> bool:
    """Whether a (clean) name is of the shape a room names its bots (``Expert bot 2``), as
    written or by look (``Expert bot 2`` with a Cyrillic ``o``): kept from people, at a table
    and as an account's name, so that nobody passes for a bot."""
    return bool(_BOT_NAME.match(name_key(name)) or _BOT_LOOK.match(name_skeleton(name)))


def names_clash(a: str, b: str) -> bool:
    """Whether two names would pass for one another at a table: equal when case-folded, or
    with the same Unicode TS 39 skeleton (Cyrillic ``\u0410nn`` beside ``Ann``, ``rn``
    beside ``m``): skeletons compared as written (``I`` passes for ``l``), of the case-folded
    names, and case-folded themselves (Greek capitals ``\u0391\u039d\u039d`` for ``Ann``)."""
    return any(x == y for x, y in zip(_looks(a), _looks(b), strict=True))
