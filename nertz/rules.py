"""House rules as data (SPEC section 3): one :class:`Rules` value, the options, the presets.

Every option has a default and the rulebook it comes from (``../shared/seeds``: 000 the
encyclopedia article, 001 Fairy Fly, 003 Pounce/pagat, 004 Sanna's family page). A preset is a
named :class:`Rules`; any option can be overridden on top of one::

    >>> rules = Rules.from_spec({"preset": "standard", "turn_count": 1})
    >>> rules.work_piles, rules.turn_count
    (5, 1)

Bad input raises :class:`RulesError` naming the option and the value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from nertz.errors import NotationError, RulesError
from nertz.moves import Kind, Move

FoundationName = Literal[
    "up", "swinging_door", "double_swinging_door", "starter9", "evil_jacks", "evil_jacks_one_eyed"
]
CardPoints = Literal["flat", "aces_double", "face_value", "swinging_door"]


@dataclass(frozen=True, slots=True)
class Rules:
    """A complete ruleset. Field order and defaults follow SPEC's catalogue."""

    work_piles: int = 4
    """Number of work piles, 4 (003, 001) or 5 (000)."""
    work_pile_deal: Literal["one_up", "staircase"] = "one_up"
    """``one_up``: one face-up card a pile; ``staircase``: pile k has k-1 face-down cards (001)."""
    nertz_pile_size: int = 13
    """Cards dealt to each Nertz pile, 1..20 (004 uses 10)."""
    adaptive_nertz_pile: bool = False
    """Next round: the caller's pile +1, a seat with a negative round score -1 (004)."""
    turn_count: int = 3
    """Cards turned from the stock at a time, 3 or 1."""
    stock_end: Literal["short_turn", "continuous"] = "short_turn"
    """What a turn does when fewer cards remain than it takes (003/000/001; 004)."""
    move_partial_runs: bool = True
    """Whether part of a work pile's run may move (003) or only the whole run (001)."""
    stuck_reset: Literal["rotate_stock", "rotate_either"] = "rotate_stock"
    """How a reset moves cards once every seat has declared stuck (003; 001)."""
    blocked_round_end: bool = True
    """End the round as ``blocked`` when no seat can ever make a productive move (003)."""
    foundation: FoundationName = "up"
    """How foundations start and grow (000's variants)."""
    call: Literal["manual", "auto"] = "manual"
    """``manual``: an empty Nertz pile may play on before calling (003); ``auto``: ends at once."""
    call_grace_ms: int = 0
    """Moves reaching the table within this many ms after the call still count (003)."""
    false_call: Literal["rejected", "penalised"] = "rejected"
    """A call with cards left: rejected like any illegal move, or penalised (000)."""
    teams: Literal["off", "shared", "split"] = "off"
    """Partners as one seat: both act anywhere (003) or one Nertz, one stock and waste (001)."""
    jokers: bool = False
    """Two jokers a deck, wild on work piles and foundations (003)."""
    card_points: CardPoints = "flat"
    """What a foundation card is worth (000)."""
    points_per_card: int = 1
    """The unit of ``flat`` and ``aces_double`` (1 in 003, 10 in 000)."""
    nertz_penalty: int | Literal["card_points"] = 2
    """Cost of each card left in a Nertz pile, or ``card_points`` for each card's own value."""
    caller_bonus: int = 0
    """Points for the seat that calls (001: 10, 004: 5)."""
    lotto: bool = False
    """A round's negative scores form a pot the next round's top scorer takes (000)."""
    call_word: str = "Nertz"
    """The word that ends a round (``Nerts``, ``Pounce``, ``Hoorah``, ``Squeal``)."""
    target_score: int | None = 100
    """The match ends once a total reaches this (003: 100, 000: 500); None for no target."""
    rounds: int | None = None
    """Play exactly this many rounds (004); with a target too, whichever comes first."""
    duplicate_deal: bool = False
    """The project's, not a rulebook's: across each N rounds for N seats the same N hands are
    dealt, each seat playing every hand once (the luck of the deal evened out)."""

    # Flags derived once from the options above, for the engine's hot paths (they are no
    # options: no constructor argument, not compared, not in the spec).
    rotate_either: bool = field(init=False, repr=False, compare=False)
    """``stuck_reset`` is ``rotate_either``: a declaration chooses the pile to rotate."""
    manual_call: bool = field(init=False, repr=False, compare=False)
    """``call`` is ``manual``: an empty Nertz pile may play on and must call."""
    continuous_stock: bool = field(init=False, repr=False, compare=False)
    """``stock_end`` is ``continuous``: a short turn goes on into the turned-over waste."""
    penalised_false_call: bool = field(init=False, repr=False, compare=False)
    """``false_call`` is ``penalised``: a call with cards left is allowed and costs."""
    split_teams: bool = field(init=False, repr=False, compare=False)
    """``teams`` is ``split``: one partner the Nertz pile, the other the stock and waste."""

    def __post_init__(self) -> None:
        derived = {
            "rotate_either": self.stuck_reset == "rotate_either",
            "manual_call": self.call == "manual",
            "continuous_stock": self.stock_end == "continuous",
            "penalised_false_call": self.false_call == "penalised",
            "split_teams": self.teams == "split",
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    def __reduce__(self) -> tuple[object, tuple[dict[str, Any]]]:
        # Pickled as its options (worker processes, Ray tasks): the compiled class cannot
        # restore a frozen dataclass's slots one by one.
        return (_from_options, (self.to_options(),))

    def replace(self, **changes: Any) -> Rules:
        """A copy with some options changed, each validated."""
        return Rules.from_spec({**self.to_options(), **changes})

    def to_options(self) -> dict[str, Any]:
        """Every option and its value, in catalogue order."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}

    def to_spec(self) -> str | dict[str, Any]:
        """The shortest replay-file form: a preset name, or a preset plus its overrides."""
        best_name, best_diff = "pagat", self.diff(PRESETS["pagat"])
        for name, preset in PRESETS.items():
            diff = self.diff(preset)
            if len(diff) < len(best_diff):
                best_name, best_diff = name, diff
        if not best_diff:
            return best_name
        return {"preset": best_name, **best_diff}

    def diff(self, other: Rules) -> dict[str, Any]:
        """The options whose values differ from ``other``, with this ruleset's values."""
        return {k: v for k, v in self.to_options().items() if getattr(other, k) != v}

    @property
    def deck_size(self) -> int:
        """Cards in one deck: 52, or 54 with jokers."""
        return 54 if self.jokers else 52

    @staticmethod
    def from_spec(spec: object) -> Rules:
        """Read a ruleset: a preset name, a :class:`Rules`, or ``{"preset": NAME, OPTION: VALUE}``.

        Raises :class:`RulesError` naming the unknown preset, unknown option or bad value.
        """
        if isinstance(spec, Rules):
            return spec
        if isinstance(spec, str):
            return preset(spec)
        if not isinstance(spec, Mapping):
            raise RulesError(f"rules must be a preset name or an object, not {type(spec).__name__}")
        options = dict(spec)
        base_name = options.pop("preset", "pagat")
        if not isinstance(base_name, str):
            raise RulesError(f"preset must be a name, not {base_name!r}")
        base = preset(base_name)
        values = base.to_options()
        for name, raw in options.items():
            if not isinstance(name, str) or name not in OPTIONS:
                raise RulesError(f"unknown option {name!r}")
            values[name] = OPTIONS[name].check(raw)
        rules = Rules(**values)
        rules._check_whole()
        return rules

    def check_new(self) -> Rules:
        """This ruleset, if it may start something new (a room, a simulation); else raise
        :class:`RulesError` naming what may not be.

        The call word calls when typed as a move (:meth:`nertz.moves.Move.parse`): one that
        already reads as another move (in any case, with or without its "!") would make that
        move instead. Checked only here, where a ruleset comes in, never where a stored one is
        read (:meth:`from_spec`): a room, a snapshot or a replay made before the check must still
        load (a replay records a call as ``NERTZ``, whatever the word)."""
        word = self.call_word
        for text in (word, word.strip().rstrip("!")):
            try:
                move = Move.parse(text)
            except NotationError:
                continue
            if move.kind is not Kind.CALL:
                raise RulesError(f"call_word {word!r} is already a move "
                                 f"({_MOVE_WORDS[move.kind]}): choose another word")
        return self

    def _check_whole(self) -> None:
        # Options that are fine alone but not together.
        dealt = self.nertz_pile_size + (
            self.work_piles * (self.work_piles + 1) // 2
            if self.work_pile_deal == "staircase"
            else self.work_piles
        )
        if dealt > self.deck_size:
            raise RulesError(f"nertz_pile_size {self.nertz_pile_size} leaves no deck to deal")


_MOVE_WORDS: Final[dict[Kind, str]] = {
    Kind.TURN: "turn the stock",
    Kind.STUCK: "declare stuck",
    Kind.TO_FOUNDATION: "a play to a foundation",
    Kind.TO_WORK: "a play onto a work pile",
    Kind.CALL: "the call",
}
"""What each kind of move does, as a refused call word names it."""


@dataclass(frozen=True, slots=True)
class Option:
    """One option of the catalogue: its name, choices or range, source and meaning."""

    name: str
    choices: tuple[Any, ...] = ()
    low: int | None = None
    high: int | None = None
    nullable: bool = False
    text: bool = False
    source: str = ""
    doc: str = ""

    @property
    def default(self) -> Any:
        """The value in a ruleset with no overrides."""
        return getattr(Rules(), self.name)

    def check(self, raw: object) -> Any:
        """Validate one value, converting ``"on"``/``"off"`` and ``"none"`` where they apply."""
        value = raw
        if isinstance(value, str) and not self.text:
            low = value.strip().lower()
            if low in ("on", "true", "yes") and True in self.choices:
                value = True
            elif low in ("off", "false", "no") and False in self.choices:
                value = False
            elif low == "none" and self.nullable:
                value = None
            elif low.lstrip("-").isdigit() and (
                self.low is not None or any(type(c) is int for c in self.choices)
            ):
                value = int(low)
            else:
                value = low
        if value is None:
            if self.nullable:
                return None
            raise RulesError(f"option {self.name} cannot be none")
        if self.text:
            if not isinstance(value, str) or not value.strip() or len(value) > 24:
                raise RulesError(f"option {self.name} takes a word of 1 to 24 characters")
            return value.strip()
        if self.name == "teams" and value is False:
            return "off"
        # bool is an int in Python; an on/off option must not take 1 or 0 and vice versa.
        if isinstance(value, bool):
            if value in self.choices and all(isinstance(c, bool) for c in self.choices):
                return value
            raise RulesError(f"bad value {raw!r} for option {self.name}: {self.describe()}")
        if isinstance(value, float) or (
            self.choices and all(isinstance(c, bool) for c in self.choices)
        ):
            raise RulesError(f"bad value {raw!r} for option {self.name}: {self.describe()}")
        if isinstance(value, int) and self.low is not None:
            if value < self.low or (self.high is not None and value > self.high):
                raise RulesError(f"bad value {raw!r} for option {self.name}: {self.describe()}")
            return value
        if value in self.choices and not isinstance(value, bool):
            return value
        raise RulesError(f"bad value {raw!r} for option {self.name}: {self.describe()}")

    def describe(self) -> str:
        """The values this option takes, in words."""
        parts = [_show(c) for c in self.choices]
        if self.low is not None:
            parts.append(f"{self.low}..{self.high}" if self.high is not None else f">= {self.low}")
        if self.nullable:
            parts.append("none")
        if self.text:
            parts.append("any word")
        return "one of " + ", ".join(parts)


def _show(value: Any) -> str:
    if value is True:
        return "on"
    if value is False:
        return "off"
    return str(value)


_ON_OFF = (False, True)
OPTIONS: Final[dict[str, Option]] = {
    o.name: o
    for o in (
        Option("work_piles", choices=(4, 5), source="003, 001; 000",
               doc="number of work piles"),
        Option("work_pile_deal", choices=("one_up", "staircase"), source="001",
               doc="one face-up card a pile, or pile k with k-1 face-down cards under one up"),
        Option("nertz_pile_size", low=1, high=20, source="all; 004 uses 10",
               doc="cards in each Nertz pile"),
        Option("adaptive_nertz_pile", choices=_ON_OFF, source="004",
               doc="next round: caller +1 card, a seat with a negative round -1 (1..20)"),
        Option("turn_count", choices=(3, 1), source="000, 001, 003",
               doc="cards turned from the stock at a time"),
        Option("stock_end", choices=("short_turn", "continuous"), source="003, 000, 001; 004",
               doc="last cards turned alone then the waste turned over; or wrap and complete"),
        Option("move_partial_runs", choices=_ON_OFF, source="003; 001",
               doc="part of a work pile's run may move, or only the whole run"),
        Option("stuck_reset", choices=("rotate_stock", "rotate_either"), source="003; 001",
               doc="on all stuck: waste back and stock top to bottom; or Nertz or stock top"),
        Option("blocked_round_end", choices=_ON_OFF, source="003",
               doc="end the round when no seat can ever make a productive move"),
        Option("foundation", choices=("up", "swinging_door", "double_swinging_door", "starter9",
                                      "evil_jacks", "evil_jacks_one_eyed"), source="000",
               doc="how foundations start and grow"),
        Option("call", choices=("manual", "auto"), source="003; 001, 004",
               doc="the caller may play on before calling, or the round ends as the pile empties"),
        Option("call_grace_ms", low=0, high=60_000, source="003",
               doc="moves within this many ms after the call still count"),
        Option("false_call", choices=("rejected", "penalised"), source="000",
               doc="a call with cards left is rejected, or penalised"),
        Option("teams", choices=("off", "shared", "split"), source="003; 001",
               doc="partners as one seat: both anywhere, or split Nertz / stock and waste"),
        Option("jokers", choices=_ON_OFF, source="003",
               doc="two jokers a deck, wild on work piles and foundations"),
        Option("card_points", choices=("flat", "aces_double", "face_value", "swinging_door"),
               source="000", doc="what a foundation card is worth"),
        Option("points_per_card", low=1, high=1000, source="003; 000",
               doc="the unit of flat and aces_double"),
        Option("nertz_penalty", choices=("card_points",), low=0, high=1000,
               source="003, 004; 001 (1), 000 (10, or values)",
               doc="cost of each card left in a Nertz pile"),
        Option("caller_bonus", low=0, high=1000, source="001 (10), 004 (5)",
               doc="points for the caller"),
        Option("lotto", choices=_ON_OFF, source="000",
               doc="negative round scores form a pot for the next round's top scorer"),
        Option("call_word", text=True, source="all", doc="the word that ends a round"),
        Option("target_score", low=1, high=1_000_000, nullable=True, source="003 (100), 000 (500)",
               doc="the match ends once a total reaches this"),
        Option("rounds", low=1, high=1000, nullable=True, source="004",
               doc="play exactly this many rounds"),
        Option("duplicate_deal", choices=_ON_OFF, source="nertz",
               doc="each N rounds for N seats deal the same N hands, every seat playing each"),
    )
}
"""The catalogue: every option by name."""


def _presets() -> dict[str, tuple[Rules, str, str]]:
    base = Rules()
    standard = dataclasses.replace(
        base, work_piles=5, points_per_card=10, nertz_penalty=10, false_call="penalised",
        target_score=500,
    )
    swinging = dataclasses.replace(
        standard, foundation="swinging_door", card_points="swinging_door",
        nertz_penalty="card_points",
    )
    return {
        "pagat": (base, "003",
                  "the Pounce rules: 4 piles, turn 3, +1 a card, -2 a Nertz card, to 100"),
        "standard": (standard, "000",
                     "Standard Nertz: 5 piles, 10 a card, -10 a Nertz card, to 500"),
        "hoorah": (dataclasses.replace(base, call_word="Hoorah"), "000",
                   "Hoorah: 4 piles, +1 a card, -2 a Nertz card, to 100"),
        "fairy_fly": (dataclasses.replace(
            base, work_pile_deal="staircase", move_partial_runs=False,
            stuck_reset="rotate_either", call="auto", nertz_penalty=1, caller_bonus=10,
            target_score=None, rounds=1), "001",
            "Fairy Fly: staircase deal, whole runs only, one round, +10 to the caller"),
        "sanna": (dataclasses.replace(
            base, nertz_pile_size=10, adaptive_nertz_pile=True, stock_end="continuous",
            call="auto", caller_bonus=5), "004",
            "Sanna's family: 10-card Nertz piles that grow and shrink, +5 to the caller"),
        "swinging_door": (swinging, "000",
                          "Swinging Door: foundations go up or down from the Ace; face cards 15"),
        "double_swinging_door": (dataclasses.replace(swinging, foundation="double_swinging_door"),
                                 "000", "Double Swinging Door: every step up or down"),
        "starter9": (dataclasses.replace(standard, foundation="starter9"), "000",
                     "Starter 9: foundations start with 9 and race to the 3"),
        "evil_jacks": (dataclasses.replace(standard, foundation="evil_jacks"), "000",
                       "Evil Jacks: Starter 9 where the Jack of an up pile costs its player"),
        "evil_jacks_one_eyed": (dataclasses.replace(standard, foundation="evil_jacks_one_eyed"),
                                "000", "Evil Jacks with one-eyed Jacks (JS, JH) that earn instead"),
    }


_PRESET_TABLE: Final = _presets()
PRESETS: Final[dict[str, Rules]] = {name: r for name, (r, _, _) in _PRESET_TABLE.items()}
"""Every preset by name; ``pagat`` is the default."""
PRESET_SOURCES: Final[dict[str, str]] = {name: s for name, (_, s, _) in _PRESET_TABLE.items()}
"""The rulebook each preset comes from."""
PRESET_SUMMARIES: Final[dict[str, str]] = {name: d for name, (_, _, d) in _PRESET_TABLE.items()}
"""A plain-words summary of each preset."""
DEFAULT_PRESET: Final = "pagat"
"""The preset used when none is named."""


def _from_options(options: dict[str, Any]) -> Rules:
    """A ruleset from :meth:`Rules.to_options`'s output (unpickling)."""
    return Rules(**options)


def preset(name: str) -> Rules:
    """The preset called ``name``; raises :class:`RulesError` naming an unknown one."""
    rules = PRESETS.get(name.strip().lower()) if isinstance(name, str) else None
    if rules is None:
        raise RulesError(f"unknown preset {name!r} (presets: {', '.join(PRESETS)})")
    return rules
