"""The one interface every bot speaks: a seat's observation in, an action out.

A bot is told what its seat sees (:class:`Observation`) and answers a :class:`~nertz.moves.Move`
or ``None`` (nothing to do now: wait until the table changes). The simulator and the server feed
the very same bots, in one of two ways:

- **in-process** (the simulator's fast path): :meth:`Observation.from_round` wraps the live round.
  Bots read only what a seat may see there (tops, face-up runs, foundations, counts) and ask the
  engine for their legal moves, which depend on nothing hidden;
- **from a view** (the server, or a client over the network): :meth:`Observation.from_view` takes
  a :class:`~nertz.views.SeatView` (or its JSON) plus the rules and rebuilds a *determinized*
  round: every hidden card is filled in, in a fixed canonical order, from the cards that seat
  cannot see. Legal moves, and so every decision, come out the same as in-process.

Hidden information is never read, only sampled: :func:`sample_world` re-deals every hidden card of
a round (own and others') from a seeded generator, starting from a canonical order, so the world a
bot imagines depends only on what its seat sees (and, if the bot passes it, what the seat saw
earlier of its own stock) and on its seed. That is what makes the
expert's look-ahead honest and the two feeding paths give identical decisions.

No bot asks the engine whether a seat is truly stuck (:meth:`~nertz.engine.Round.is_stuck`
looks at hidden cards): a bot judges that from what it has seen, like a person
(:mod:`nertz.bots.idle`). The table and the server keep that exact check as the referee.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Final

from nertz.cards import Card, deck
from nertz.engine import Round
from nertz.events import Ended
from nertz.moves import Move
from nertz.rules import Rules
from nertz.state import Tableau
from nertz.views import SeatView

_DECK_ORDER: Final[dict[Card, int]] = {c: i for i, c in enumerate(deck(True))}
"""Canonical order of the cards of a deck: how hidden cards are sorted before sampling."""


class Observation:
    """What one seat knows when it decides: the round as it sees it, the time, the seat.

    ``round`` is the live round (in-process) or a determinized one rebuilt from a view; either
    way a bot may read only its face-up cards and the counts. ``t`` is milliseconds since the
    round's start.
    """

    __slots__ = ("round", "seat", "t")

    def __init__(self, rnd: Round, seat: int, t: int = 0) -> None:
        self.round = rnd
        self.seat = seat
        self.t = t

    @property
    def rules(self) -> Rules:
        """The ruleset in play."""
        return self.round.rules

    @property
    def tableau(self) -> Tableau:
        """This seat's own tableau (read its face-up cards only)."""
        return self.round.tableaus[self.seat]

    def legal_moves(self) -> list[Move]:
        """Every move this seat may make now (the same from the live or a determinized round)."""
        return self.round.legal_moves(self.seat)

    @classmethod
    def from_round(cls, rnd: Round, seat: int, t: int = 0) -> Observation:
        """The in-process form: the live round itself."""
        return cls(rnd, seat, t)

    @classmethod
    def from_view(
        cls,
        view: SeatView | Mapping[str, Any],
        rules: Rules,
        t: int = 0,
    ) -> Observation:
        """Rebuild what ``view`` (a :class:`SeatView` or its ``to_json()``) shows as a round.

        Hidden cards are filled in canonically (each seat's unseen cards in deck order), so the
        result depends on the view alone.
        """
        data = view.to_json() if isinstance(view, SeatView) else view
        return cls(determinize(data, rules), int(data["seat"]), t)


class Bot(ABC):
    """A player: :meth:`start` once a round, then :meth:`decide` whenever it may act.

    Bots are deterministic given the seed passed to :meth:`start` and the observations they get.
    A bot may keep memory between decisions of one round (how long it has been turning idly).
    """

    name: str = "bot"
    """The registry name."""

    def __init__(self) -> None:
        self.seat = 0
        self.rng = random.Random(0)

    def start(self, seat: int, rules: Rules, seed: int | str = 0) -> None:
        """Begin a round in ``seat`` under ``rules``; forget the last round."""
        self.seat = seat
        self.rng = random.Random(f"{self.name}:{seed}")

    @abstractmethod
    def decide(self, obs: Observation) -> Move | None:
        """The seat's next action, or None to wait until the table changes."""


# ------------------------------------------------------------------------- determinizing


def _unseen(data: Mapping[str, Any], rules: Rules) -> list[list[Card]]:
    """Per seat, the cards of its deck that nobody can see, in canonical deck order."""
    seen: list[set[Card]] = [set() for _ in data["tableaus"]]
    for tv in data["tableaus"]:
        own = seen[tv["seat"]]
        for key in ("nertz_top", "waste_top"):
            if tv[key] is not None:
                own.add(Card.parse(tv[key]))
        for pile in tv["work"]:
            own.update(Card.parse(c) for c in pile["up"])
    for fv in data["foundations"]:
        for text, owner in zip(fv["cards"], fv["owners"], strict=True):
            seen[owner].add(Card.parse(text))
    full = deck(rules.jokers)
    return [[c for c in full if c not in own] for own in seen]


def determinize(data: Mapping[str, Any], rules: Rules) -> Round:
    """A round matching a seat view's JSON, hidden cards filled in canonically."""
    unseen = _unseen(data, rules)
    tableaus = []
    for tv in data["tableaus"]:
        pool = iter(unseen[tv["seat"]])
        nertz = [next(pool) for _ in range(max(0, tv["nertz_count"] - 1))]
        if tv["nertz_top"] is not None:
            nertz.append(Card.parse(tv["nertz_top"]))
        work, down = [], []
        for pile in tv["work"]:
            work.append([next(pool) for _ in range(pile["down"])] +
                        [Card.parse(c) for c in pile["up"]])
            down.append(pile["down"])
        waste = [next(pool) for _ in range(max(0, tv["waste_count"] - 1))]
        if tv["waste_top"] is not None:
            waste.append(Card.parse(tv["waste_top"]))
        stock = [next(pool) for _ in range(tv["stock_count"])]
        tableaus.append(Tableau(nertz, work, down, stock, waste))
    # The foundations go in after the tableaus: no blocked check on the half-built round.
    rnd = Round(rules, tableaus, check_blocked=False)
    for fv in data["foundations"]:
        rnd.add_foundation(
            [(Card.parse(text), owner) for text, owner in zip(fv["cards"], fv["owners"],
                                                               strict=True)]
        )
    rnd.stuck = [tv["stuck"] for tv in data["tableaus"]]
    rnd.ended = Ended(data["ended"]) if data["ended"] else None
    rnd.called_by = data["called_by"]
    return rnd


def sample_world(
    rnd: Round, rng: random.Random, known: Mapping[int, Sequence[Card | None]] | None = None
) -> Round:
    """A copy of ``rnd`` with every seat's hidden cards re-dealt at random.

    The hidden cards of each seat (under its Nertz top, its stock, under its waste top, its
    face-down work cards) are sorted canonically and shuffled with ``rng``, so the sample
    depends only on what is visible and on ``rng``: never on where the hidden cards really are.

    ``known`` maps a seat to what it remembers of its own stock and waste (a
    :class:`~nertz.bots.memory.StockMemory` cycle: the waste bottom to top, then the stock top
    to bottom, None where unseen). Those cards are put back where they were seen and only the
    rest is shuffled. A remembered card that is not hidden now (the memory went wrong) is
    ignored, so the sample always holds the same cards as the round.
    """
    world = rnd.copy()
    for seat, tab in enumerate(world.tableaus):
        hidden = tab.nertz[:-1] + tab.stock + tab.waste[:-1]
        for pile, d in zip(tab.work, tab.down, strict=True):
            hidden += pile[:d]
        if not hidden:
            continue
        cycle = known.get(seat) if known is not None else None
        if cycle is not None and len(cycle) != len(tab.stock) + len(tab.waste):
            cycle = None
        fixed: dict[Card, int] = {}  # a remembered hidden card -> its one place in the cycle
        if cycle is not None:
            pool = set(hidden)
            top = len(tab.waste) - 1  # the waste top shows: not a hidden place
            for k, c in enumerate(cycle):
                if c is not None and k != top and c in pool and c not in fixed:
                    fixed[c] = k
            hidden = [c for c in hidden if c not in fixed]
        hidden.sort(key=_DECK_ORDER.__getitem__)
        rng.shuffle(hidden)
        i = 0
        if tab.nertz:
            n = len(tab.nertz) - 1
            tab.nertz[:n] = hidden[i:i + n]
            i += n
        for pile, d in zip(tab.work, tab.down, strict=True):
            pile[:d] = hidden[i:i + d]
            i += d
        if cycle is None:
            if tab.waste:
                n = len(tab.waste) - 1
                tab.waste[:n] = hidden[i:i + n]
                i += n
            tab.stock[:] = hidden[i:i + len(tab.stock)]
            continue
        # The remembered places first; the unseen ones from the shuffled rest, in order.
        rest = iter(hidden[i:])
        w = len(tab.waste)
        for k in range(w - 1):
            c = cycle[k]
            tab.waste[k] = c if c is not None and fixed.get(c) == k else next(rest)
        s = len(tab.stock)
        for k in range(s):
            c = cycle[w + k]
            # The cycle runs the stock top (its last item) to bottom.
            tab.stock[s - 1 - k] = c if c is not None and fixed.get(c) == w + k else next(rest)
    return world
