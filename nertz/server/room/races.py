"""Latency-fair races and the automation flag: the room's rules about when plays were made.

**Fair races.** Two seats play the same step of one foundation: at a real table the first hand
down wins. Over a network the play that *arrives* first is usually the one from the shorter
round trip, so the table orders such plays by when each was *sent*, estimated as its arrival
(:class:`~nertz.server.room.messages.Stamp`, from the edge) less half its socket's round trip
as the server measured it (:mod:`nertz.server.edge.latency`), at most :data:`CAP_MS`:
:func:`compensation`. A play that another seat could answer (another seat shows a card that fits
the same step) waits until no play sent earlier can still arrive: its estimated send time plus
the largest compensation of any other seat (plus :data:`SLACK_MS`), never more than
:data:`CAP_MS` after it was sent. A play nobody could answer from the cards on show is decided
at once. The table's log holds the order decided, so a rebuilt table (and the replay file)
follows it exactly; :class:`Waiting` is one play waiting its turn.

**Automation flag.** :class:`ReactionWatch` follows each person's card plays: the reaction time
of a play is how long after the last change the player can have seen (a broadcast that reached
them, one estimated one-way trip after it was made) they sent it; the rhythm is the spread of
the intervals between their plays. A person whose median reaction is under
:data:`FLAG_REACTION_MS`, or whose intervals' coefficient of variation is under
:data:`FLAG_CV`, over at least :data:`FLAG_MIN_PLAYS` plays, plays faster or more evenly than
any person can: the room marks the seat (:class:`Flag`), for everyone to see, with the figures.
"""

from __future__ import annotations

import bisect
import itertools
import math
import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from nertz.server.room.messages import Effects, Stamp

CAP_MS: Final = 100.0
"""The most one-way compensation a play can get (ms): a client that makes itself look slower
(holding back its pongs) gains nothing beyond it, and no play waits longer than this."""

SLACK_MS: Final = 5.0
"""Extra wait for the other seats' estimates moving between two of their commands (ms)."""

FLAG_REACTION_MS: Final = 150.0
"""A median reaction under this (ms) over enough plays is beyond any person."""

FLAG_CV: Final = 0.1
"""Intervals between plays whose standard deviation is under this fraction of their mean are
more even than any person's rhythm (people vary by half their mean and more)."""

FLAG_MIN_PLAYS: Final = 30
"""Plays a person must have made (in the match) before their figures can raise the flag."""

FLAG_WINDOW: Final = 60
"""The flag looks at a person's most recent plays, at most this many."""


def wall_ms() -> float:
    """The wall clock in ms since the epoch: what a :class:`Stamp` says (it may cross
    processes, where monotonic clocks mean nothing to each other)."""
    return time.time() * 1000


def compensation(rtt_ms: float | None) -> float:
    """How much earlier than its arrival a play is taken to have been sent (ms): half the
    measured round trip, at most :data:`CAP_MS`; none without a measurement."""
    if rtt_ms is None:
        return 0.0
    return min(CAP_MS, max(0.0, rtt_ms / 2))


Reply = Callable[[Effects], None]
"""Where the effects of a command decided later go (the socket it came from)."""


@dataclass(slots=True)
class Waiting:
    """A command the table has not decided yet: a play (or a call) waiting for plays sent
    before it, or a later command of the same seat queued behind one (``ordered`` False)."""

    player_id: str
    seat: int
    action_id: str
    text: str
    stamp: Stamp
    reply: Reply | None
    order: int
    """Arrival order at the table: breaks ties of equal send times."""
    ordered: bool = False
    """Waiting for its turn by send time (else queued behind its seat's waiting command)."""
    deadline_ms: float = 0.0
    """Wall-clock ms at which it is decided whatever else arrives."""

    @property
    def sent_ms(self) -> float:
        """When it was sent, as estimated: arrival less the compensation."""
        return self.stamp.arrived_ms - compensation(self.stamp.rtt_ms)


@dataclass(slots=True)
class HoldStats:
    """How long plays waited for the order (runtime figures for benchmarks and the report)."""

    decided_at_once: int = 0
    """Foundation plays applied at once (nobody could answer them)."""
    held: list[float] = field(default_factory=list)
    """Each ordered play's wait from arrival to decision (ms)."""


# --------------------------------------------------------------------------- automation


@dataclass(frozen=True, slots=True)
class Flag:
    """A person marked as playing beyond any person: their seat and name, which figure raised
    it (``reaction``: median reaction too short; ``rhythm``: intervals too even) and the
    figures, over ``plays`` plays."""

    seat: int
    player: str
    name: str
    why: str
    plays: int
    median_reaction_ms: float
    interval_cv: float | None

    def to_json(self) -> dict[str, Any]:
        """The form in the room, the log and the match's record."""
        return {"seat": self.seat, "player": self.player, "name": self.name, "why": self.why,
                "plays": self.plays, "median_reaction_ms": self.median_reaction_ms,
                "interval_cv": self.interval_cv}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Flag:
        """Back from :meth:`to_json`."""
        cv = data.get("interval_cv")
        return cls(int(data["seat"]), str(data["player"]), str(data["name"]), str(data["why"]),
                   int(data["plays"]), float(data["median_reaction_ms"]),
                   None if cv is None else float(cv))

    def describe(self) -> str:
        """One line for people: ``Ann: median reaction 92 ms over 41 plays``."""
        if self.why == "reaction":
            return (f"{self.name}: median reaction {self.median_reaction_ms:.0f} ms over "
                    f"{self.plays} plays (no person is under {FLAG_REACTION_MS:.0f} ms)")
        return (f"{self.name}: plays at an even rhythm, intervals vary by "
                f"{100 * (self.interval_cv or 0):.1f}% over {self.plays} plays (people vary by "
                f"far more than {100 * FLAG_CV:.0f}%)")


@dataclass(slots=True)
class _Person:
    reactions: deque[float] = field(default_factory=lambda: deque(maxlen=FLAG_WINDOW))
    arrivals: deque[float] = field(default_factory=lambda: deque(maxlen=FLAG_WINDOW))
    plays: int = 0
    known: tuple[int, tuple[int, float, float | None]] | None = None
    """The figures as last worked out, and at how many plays: they change only with a play,
    and the table asks at every move of the person's."""


class ReactionWatch:
    """Each person's reaction times and rhythm over a match, from the table's log entries.

    :meth:`change` takes the round time (ms) of every change the table broadcast (a move, a
    reset, play beginning); :meth:`play` a person's card play: when it arrived (round ms) and
    their round trip then. Both are fed by applying log entries, so a rebuilt table has the
    same figures.
    """

    def __init__(self) -> None:
        self.people: dict[str, _Person] = {}
        self._changes: list[int] = [0]

    def to_json(self) -> dict[str, Any]:
        """Everything the watch holds, for a table's snapshot (:mod:`..snapshot`)."""
        return {"people": {pid: [list(p.reactions), list(p.arrivals), p.plays]
                           for pid, p in self.people.items()},
                "changes": list(self._changes)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReactionWatch:
        """Back from :meth:`to_json`."""
        watch = cls()
        for pid, (reactions, arrivals, plays) in data["people"].items():
            person = _Person()
            person.reactions.extend(float(r) for r in reactions)
            person.arrivals.extend(float(a) for a in arrivals)
            person.plays = int(plays)
            watch.people[pid] = person
        watch._changes = [int(t) for t in data["changes"]]
        return watch

    def new_round(self) -> None:
        """Round times start again (the people's figures run on over the match)."""
        self._changes = [0]

    def new_match(self) -> None:
        """Everyone starts afresh."""
        self.people.clear()
        self._changes = [0]

    def change(self, t: int) -> None:
        """The table broadcast a change at round time ``t``."""
        if t >= self._changes[-1]:
            self._changes.append(t)
        else:  # pragma: no cover - the log's times never go back within a round
            bisect.insort(self._changes, t)

    def play(self, player: str, arrived_t: float, rtt_ms: float | None) -> None:
        """Person ``player``'s card play reached the server at round time ``arrived_t``."""
        rtt = rtt_ms or 0.0
        one_way = rtt / 2
        sent = arrived_t - one_way
        # The last change they can have seen: broadcast one way's trip before they sent.
        i = bisect.bisect_right(self._changes, sent - one_way) - 1
        seen = self._changes[max(0, i)]
        p = self.people.get(player)
        if p is None:  # not setdefault: a new _Person (three deques) for every play
            p = self.people[player] = _Person()
        p.reactions.append(max(0.0, sent - (seen + one_way)))
        p.arrivals.append(arrived_t)
        p.plays += 1

    def figures(self, player: str) -> tuple[int, float, float | None] | None:
        """``(plays, median reaction ms, intervals' coefficient of variation)`` over the recent
        plays, or None before :data:`FLAG_MIN_PLAYS` of them."""
        p = self.people.get(player)
        if p is None or len(p.reactions) < FLAG_MIN_PLAYS:
            return None
        known = p.known
        if known is not None and known[0] == p.plays:
            return known[1]
        figures = self._work_out(p)
        p.known = (p.plays, figures)
        return figures

    @staticmethod
    def _work_out(p: _Person) -> tuple[int, float, float | None]:
        median = round(float(statistics.median(p.reactions)), 1)
        arrivals = list(p.arrivals)
        # Intervals across a round's end mean nothing (the clock starts again): only those
        # going forward in time count.
        gaps = [b - a for a, b in itertools.pairwise(arrivals) if b > a]
        cv = None
        if len(gaps) >= FLAG_MIN_PLAYS - 1:
            mean = statistics.fmean(gaps)
            # Not statistics.pstdev: it sums exact fractions, some 0.2 ms for a window of gaps
            # (a tenth of that here), at every play of every person not flagged.
            spread = math.sqrt(math.fsum((g - mean) ** 2 for g in gaps) / len(gaps))
            cv = round(spread / mean, 3) if mean > 0 else 0.0
        return len(p.reactions), median, cv

    def verdict(self, player: str) -> tuple[str, int, float, float | None] | None:
        """Why ``player``'s plays are beyond any person's (``reaction`` or ``rhythm``) with the
        figures, or None."""
        figures = self.figures(player)
        if figures is None:
            return None
        plays, median, cv = figures
        if median < FLAG_REACTION_MS:
            return "reaction", plays, median, cv
        if cv is not None and cv < FLAG_CV:
            return "rhythm", plays, median, cv
        return None
