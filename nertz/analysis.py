"""What a match teaches each seat (``nertz analyse``): a pure function of its replay file.

:func:`analyse` plays the file through the engine, as :func:`nertz.replay.run` does, and watches
every seat between moves. For each seat it reports:

- **plays**: accepted moves that move cards (not turns, stuck declarations or calls), and
  ``plays_per_minute`` over the rounds' lengths; ``foundation_cards`` counts cards played to
  foundations;
- **missed plays**: a card of the seat's (a Nertz, waste or work-pile top) that could have gone
  to a foundation for more than :data:`MISSED_MS` and did not: the chance ended because the seat
  covered it (turned the stock over it, put a card on it), moved it elsewhere, another seat
  filled the step (``taken``), or the round ended. A card that waited and then went to a
  foundation was slow, not missed;
- **stuck time**: how long the engine found the seat stuck (:meth:`Round.is_stuck`: no
  productive move now nor after any number of its own turns), declared or not;
- **races** won and lost, with their margins: the file's optional ``races`` section (what the
  server recorded) and any rejected move of the file that lost a race;
- **the longest spell without a productive move** (SPEC's ``blocked_round_end`` meaning: a card
  to a foundation, a card out of the Nertz pile, a waste card onto a work pile, a work-pile move
  that turns up a card or empties a pile while the Nertz pile has cards; calling counts too).

Times are milliseconds from the round's start, as in the file. A round lasts until the move
that ended it (the call, or the blocked end), else until its last move. ``step`` in a missed
play counts the round's moves (in play order, rejected ones too) already made when the card
became playable: the replay viewer's position.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from nertz.cards import Card
from nertz.engine import Round
from nertz.events import Called, CardRevealed, CardsMoved
from nertz.moves import Kind
from nertz.replay import MoveOutcome, Race, ReplayFile, run

FORMAT: Final = "nertz-analysis/1"
"""The ``format`` value of :meth:`Analysis.to_json`."""
MISSED_MS: Final = 2000
"""A foundation play left waiting longer than this (ms) and never made counts as missed."""

_SUIT_NAMES: Final = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
_RANK_NAMES: Final = {"A": "ace", "T": "10", "J": "jack", "Q": "queen", "K": "king"}


def card_words(card: Card) -> str:
    """A card as people say it: ``5 of hearts``, ``queen of spades``, ``joker``."""
    text = str(card)
    if card.is_joker:
        return "joker"
    return f"{_RANK_NAMES.get(text[0], text[0])} of {_SUIT_NAMES[text[1]]}"


def clock(ms: int) -> str:
    """Milliseconds from a round's start as ``m:ss``."""
    seconds = ms // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"


@dataclass(frozen=True, slots=True)
class MissedPlay:
    """A foundation play a seat could have made from ``from_ms`` to ``to_ms`` and did not."""

    round: int
    """1-based."""
    card: Card
    pile: str
    """Where the card lay when it became playable: ``N``, ``W`` or a work pile ``1``..``5``."""
    from_ms: int
    to_ms: int
    step: int
    why: str
    """How the chance ended: ``covered``, ``moved`` (elsewhere), ``taken`` (another seat filled
    the step) or ``round_over``."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form, with the wait in ms and the card in words."""
        return {"round": self.round, "card": str(self.card), "words": card_words(self.card),
                "pile": self.pile, "from_ms": self.from_ms, "to_ms": self.to_ms,
                "ms": self.to_ms - self.from_ms, "step": self.step, "why": self.why}


@dataclass(frozen=True, slots=True)
class RaceEntry:
    """A contested foundation play: ``loser`` played ``card`` at ``t`` to the step ``winner``
    had filled ``margin_ms`` before (None: unknown)."""

    round: int
    t: int
    winner: int
    loser: int
    card: Card
    foundation: int
    margin_ms: int | None

    def to_json(self) -> dict[str, Any]:
        """The JSON form: the round, then the race as a replay file writes it."""
        # One race format: the report's races read like the file's (``Race.to_json``).
        race = Race(self.t, self.winner, self.loser, self.card, self.foundation, self.margin_ms)
        return {"round": self.round, **race.to_json()}


@dataclass(frozen=True, slots=True)
class Spell:
    """A stretch of a round without a productive move of the seat's."""

    round: int
    from_ms: int
    to_ms: int

    @property
    def ms(self) -> int:
        """Its length."""
        return self.to_ms - self.from_ms

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {"round": self.round, "from_ms": self.from_ms, "to_ms": self.to_ms, "ms": self.ms}


@dataclass(slots=True)
class SeatReport:
    """Everything :func:`analyse` found about one seat, over the whole match."""

    seat: int
    name: str
    plays: int = 0
    foundation_cards: int = 0
    missed: list[MissedPlay] = field(default_factory=list)
    stuck_ms: int = 0
    races_won: list[RaceEntry] = field(default_factory=list)
    races_lost: list[RaceEntry] = field(default_factory=list)
    longest_spell: Spell | None = None

    def to_json(self, played_ms: int) -> dict[str, Any]:
        """The JSON form; ``played_ms`` is the match's playing time (for the rate)."""
        return {
            "seat": self.seat, "name": self.name, "plays": self.plays,
            "plays_per_minute": _per_minute(self.plays, played_ms),
            "foundation_cards": self.foundation_cards,
            "missed": [m.to_json() for m in self.missed],
            "stuck_ms": self.stuck_ms,
            "races_won": [r.to_json() for r in self.races_won],
            "races_lost": [r.to_json() for r in self.races_lost],
            "longest_spell": None if self.longest_spell is None else self.longest_spell.to_json(),
        }


def _per_minute(count: int, ms: int) -> float:
    return round(count * 60_000 / ms, 1) if ms > 0 else 0.0


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """One round's length and how it ended."""

    round: int
    length_ms: int
    ended: str
    caller: int | None

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {"round": self.round, "length_ms": self.length_ms, "ended": self.ended,
                "caller": self.caller}


@dataclass(slots=True)
class Analysis:
    """A whole match's analysis: its rounds and a report per seat."""

    players: list[str]
    rounds: list[RoundSummary]
    seats: list[SeatReport]

    @property
    def played_ms(self) -> int:
        """The rounds' lengths added up."""
        return sum(r.length_ms for r in self.rounds)

    def to_json(self) -> dict[str, Any]:
        """The ``nertz analyse --json`` object (docs/analysis.md)."""
        return {"format": FORMAT, "missed_after_ms": MISSED_MS, "players": list(self.players),
                "rounds": [r.to_json() for r in self.rounds],
                "seats": [s.to_json(self.played_ms) for s in self.seats]}

    def text(self) -> str:
        """A readable report, a paragraph per seat."""
        names = self.players
        lines = []
        for r in self.rounds:
            how = r.ended if r.caller is None else f"{r.ended}, called by {names[r.caller]}"
            lines.append(f"Round {r.round}: {r.length_ms / 1000:.1f} s ({how})")
        multi = len(self.rounds) > 1
        for s in self.seats:
            lines.append("")
            lines.append(s.name)
            rate = _per_minute(s.plays, self.played_ms)
            lines.append(f"  {rate:g} plays a minute ({_count(s.plays, 'play')}, "
                         f"{_count(s.foundation_cards, 'card')} to foundations)")
            if s.missed:
                shown = ", ".join(
                    f"{m.card} at {f'round {m.round} ' if multi else ''}{clock(m.from_ms)} "
                    f"({_PILE_WORDS.get(m.pile, 'work pile ' + m.pile)}, "
                    f"{m.to_ms - m.from_ms} ms, {m.why.replace('_', ' ')})"
                    for m in s.missed)
                lines.append(f"  {_count(len(s.missed), 'missed play')}: {shown}")
            else:
                lines.append("  no missed plays")
            lines.append(f"  stuck {s.stuck_ms / 1000:.1f} s")
            won = ", ".join(f"{r.card} against {names[r.loser]} by {_ms(r.margin_ms)}"
                            for r in s.races_won)
            lost = ", ".join(f"{r.card} to {names[r.winner]} by {_ms(r.margin_ms)}"
                             for r in s.races_lost)
            lines.append(f"  races won {len(s.races_won)}{': ' + won if won else ''}; "
                         f"lost {len(s.races_lost)}{': ' + lost if lost else ''}")
            spell = s.longest_spell
            if spell is not None:
                where = f"round {spell.round}, " if multi else ""
                lines.append(f"  longest spell without a productive move: "
                             f"{spell.ms / 1000:.1f} s ({where}{clock(spell.from_ms)} to "
                             f"{clock(spell.to_ms)})")
        return "\n".join(lines)


_PILE_WORDS: Final = {"N": "Nertz pile", "W": "waste"}


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' * (n != 1)}"


def _ms(margin: int | None) -> str:
    return "? ms" if margin is None else f"{margin} ms"


@dataclass(slots=True)
class _Window:
    pile: str
    from_ms: int
    step: int


class _RoundWatch:
    """Follows one round move by move, for every seat at once."""

    def __init__(self, index: int, rnd: Round, reports: list[SeatReport]) -> None:
        self.index = index
        self.rnd = rnd
        self.reports = reports
        self.steps = 0
        self.last_t = 0
        self.end_t: int | None = None
        seats = rnd.seats
        self.windows: list[dict[Card, _Window]] = [{} for _ in range(seats)]
        self.stuck_since: list[int | None] = [None] * seats
        self.last_productive = [0] * seats
        self.races: list[RaceEntry] = []
        if rnd.ended is not None:
            self.end_t = 0  # blocked as dealt
        self._scan(0, -1, (), rnd.ended is not None)

    def move(self, outcome: MoveOutcome) -> None:
        """One move of the file, just applied (or rejected) on :attr:`rnd`."""
        tm = outcome.move
        self.steps += 1
        self.last_t = max(self.last_t, tm.t)
        if not outcome.ok:
            race = outcome.race
            if race is not None:
                self.races.append(RaceEntry(self.index + 1, tm.t, race.winner, tm.p,
                                            self._source_card(tm.p, tm.m.src),
                                            race.foundation, race.margin_ms))
            return
        seat = tm.p
        report = self.reports[seat]
        moved: set[Card] = set()
        to_foundation: set[Card] = set()
        productive = False
        for e in outcome.events:
            if isinstance(e, CardsMoved):
                moved.update(e.cards)
                if e.dst == "F":
                    to_foundation.update(e.cards)
                    productive = True
                elif e.src in ("W", "N") or self._emptied(seat, e.src):
                    productive = True
            elif isinstance(e, CardRevealed) or (isinstance(e, Called) and e.seat == seat):
                productive = True
        if tm.m.kind in (Kind.TO_FOUNDATION, Kind.TO_WORK):
            report.plays += 1
            report.foundation_cards += len(to_foundation)
        if self.end_t is None:
            if productive:
                self._spell(seat, tm.t)
                self.last_productive[seat] = tm.t
            ended = self.rnd.ended is not None
            if ended:
                self.end_t = tm.t
            self._scan(tm.t, seat, (moved, to_foundation), ended)

    def _emptied(self, seat: int, src: str) -> bool:
        tab = self.rnd.tableaus[seat]
        return src.isdigit() and not tab.work[int(src) - 1] and bool(tab.nertz)

    def _source_card(self, seat: int, src: str) -> Card:
        tab = self.rnd.tableaus[seat]
        if src == "N":
            return tab.nertz[-1]
        if src == "W":
            return tab.waste[-1]
        return tab.work[int(src) - 1][-1]

    def _spell(self, seat: int, until: int) -> None:
        report = self.reports[seat]
        spell = Spell(self.index + 1, self.last_productive[seat], until)
        if report.longest_spell is None or spell.ms > report.longest_spell.ms:
            report.longest_spell = spell

    def _playable(self, seat: int) -> dict[Card, str]:
        """The seat's top cards that fit a foundation now, and where each lies."""
        rnd = self.rnd
        tab = rnd.tableaus[seat]
        tops: list[tuple[Card, str]] = []
        if tab.nertz:
            tops.append((tab.nertz[-1], "N"))
        if tab.waste:
            tops.append((tab.waste[-1], "W"))
        for k, pile in enumerate(tab.work):
            if len(pile) > tab.down[k]:
                tops.append((pile[-1], str(k + 1)))
        return {card: pile for card, pile in tops if rnd.foundation_for(card) != -2}

    def _scan(self, t: int, mover: int, cards: tuple[set[Card], set[Card]] | tuple[()],
              ended: bool) -> None:
        """After a change at ``t``: close the chances that ended, open new ones, and follow
        each seat's stuck state."""
        moved, to_foundation = cards if cards else (set(), set())
        for seat in range(self.rnd.seats):
            now = {} if ended else self._playable(seat)
            open_ = self.windows[seat]
            for card in [c for c in open_ if c not in now]:
                window = open_.pop(card)
                if seat == mover and card in to_foundation:
                    continue  # played: slow perhaps, not missed
                if ended:
                    why = "round_over"
                elif seat == mover and card in moved:
                    why = "moved"
                elif card in self._tops(seat):
                    why = "taken"
                else:
                    why = "covered"
                self._close(seat, card, window, t, why)
            for card, pile in now.items():
                if card not in open_:
                    open_[card] = _Window(pile, t, self.steps)
            stuck = False if ended else self.rnd.is_stuck(seat)
            since = self.stuck_since[seat]
            if stuck and since is None:
                self.stuck_since[seat] = t
            elif not stuck and since is not None:
                self.reports[seat].stuck_ms += t - since
                self.stuck_since[seat] = None

    def _tops(self, seat: int) -> set[Card]:
        tab = self.rnd.tableaus[seat]
        tops = {p[-1] for k, p in enumerate(tab.work) if len(p) > tab.down[k]}
        tops.update(pile[-1] for pile in (tab.nertz, tab.waste) if pile)
        return tops

    def _close(self, seat: int, card: Card, window: _Window, t: int, why: str) -> None:
        if t - window.from_ms > MISSED_MS:
            self.reports[seat].missed.append(MissedPlay(
                self.index + 1, card, window.pile, window.from_ms, t, window.step, why))

    def finish(self, file_races: list[RaceEntry]) -> RoundSummary:
        """Close what is still open at the round's end; file the races; the round's summary."""
        end = self.end_t if self.end_t is not None else self.last_t
        if self.end_t is None:
            # The moves ran out (an open round): what was still open ends with them.
            for seat in range(self.rnd.seats):
                for card, window in sorted(self.windows[seat].items(),
                                           key=lambda kv: kv[1].from_ms):
                    self._close(seat, card, window, end, "round_over")
                self.windows[seat].clear()
        for seat in range(self.rnd.seats):
            since = self.stuck_since[seat]
            if since is not None:
                self.reports[seat].stuck_ms += end - since
            self._spell(seat, end)
        seen = {(r.t, r.loser, r.card, r.foundation) for r in self.races}
        races = self.races + [r for r in file_races
                              if (r.t, r.loser, r.card, r.foundation) not in seen]
        for race in sorted(races, key=lambda r: r.t):
            self.reports[race.winner].races_won.append(race)
            self.reports[race.loser].races_lost.append(race)
        for report in self.reports:
            report.missed.sort(key=lambda m: (m.round, m.from_ms))
        rnd = self.rnd
        return RoundSummary(self.index + 1, end, rnd.ended or "open", rnd.called_by)


def analyse(replay: ReplayFile) -> Analysis:
    """The analysis of a replay file: its rounds, and what each seat did, missed and lost.

    Raises :class:`~nertz.errors.ReplayError` as :func:`nertz.replay.run` does.
    """
    reports = [SeatReport(seat, name) for seat, name in enumerate(replay.players)]
    watches: list[_RoundWatch] = []

    def on_deal(r: int, rnd: Round) -> None:
        watches.append(_RoundWatch(r, rnd, reports))

    def on_move(r: int, outcome: MoveOutcome, rnd: Round) -> None:
        watches[r].move(outcome)

    run(replay, on_move, on_deal)
    rounds = []
    for r, watch in enumerate(watches):
        file_races = [RaceEntry(r + 1, x.t, x.winner, x.loser, x.card, x.foundation,
                                x.margin_ms) for x in replay.rounds[r].races]
        rounds.append(watch.finish(file_races))
    return Analysis(list(replay.players), rounds, reports)
