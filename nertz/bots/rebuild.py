"""Rebuilding a seat's changing view as a round, reusing what did not change since the last look.

:meth:`Observation.from_view <nertz.bots.Observation.from_view>` re-derives a whole
determinized round from a view at every decision: it parses every visible card, works out each
seat's unseen cards from the whole deck, and lays every foundation out again card by card. A
network bot decides about once per move of its room, and between two of its looks only the
tableaus and foundations that moved are new: the rest of the view is the same as last time.
Over loopback that re-derivation was a third of the load generator's CPU per move
(``bench/server_load.py``, docs/deploy.md); this takes about a third off each look
(``bench/view_rebuild.py``), not more, because between two looks of a seat the other seats have
moved too: most tableaus and often a foundation are new.

A :class:`ViewRebuilder` keeps what it derived from each part of the last view it saw and
derives again only what changed. Its answer is always equal to
:func:`~nertz.bots.base.determinize` of the same view (the same cards in the same places, the
same foundations and their index), so a bot decides exactly as if fed by ``from_view``; every
call still returns a new :class:`~nertz.engine.Round` with tableaus of its own, so a bot may keep
or change what it was given without touching the next one.

A part of the view counts as unchanged when it is *the same object* as last time: the view's
tableaus and foundations must be replaced, never changed in place, between calls. That is how
:class:`nertz.net.client.Client` keeps its mirror (an ``update`` puts the tableaus and
foundations it carries in place of the old ones), and how a view decoded afresh from JSON
behaves (every part new: nothing is reused, the answer is still right).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import filterfalse
from typing import Any, Final

from nertz.bots.base import Observation, determinize
from nertz.cards import Card, deck
from nertz.engine import Round
from nertz.events import Ended
from nertz.rules import Rules
from nertz.state import Tableau
from nertz.views import SeatView

_CARDS: Final[dict[str, Card]] = {str(c): c for c in deck(True)}
"""Every card by its canonical notation, the form the server sends: one lookup per card."""


def _card(text: str) -> Card:
    # Canonical text is a dictionary hit; anything else goes through the parser (which
    # accepts other spellings and raises on what is not a card, as determinize does).
    card = _CARDS.get(text)
    return card if card is not None else Card.parse(text)


class _Inconsistent(Exception):
    """A view no deal can show (determinize itself says how it fails)."""


class _SeatPart:
    """What one tableau view gave: its visible cards parsed, and the determinized tableau
    (built for ``owned``, the seat's cards on the foundations at the time)."""

    __slots__ = ("down", "hidden", "nertz_top", "owned", "slices", "tableau", "ups", "view",
                 "visible", "waste_top")

    def __init__(self, view: Mapping[str, Any]) -> None:
        self.view = view
        # Where the hidden places take their cards from the seat's unseen ones, in
        # determinize's order: the Nertz pile's, each work pile's face-down cards, the
        # waste's, then the stock's (``hidden`` in all).
        self.down: list[int] = [pile["down"] for pile in view["work"]]
        i = max(0, view["nertz_count"] - 1)
        slices = [(0, i)]
        for d in self.down:
            slices.append((i, i + d))
            i += d
        n = max(0, view["waste_count"] - 1)
        slices.append((i, i + n))
        slices.append((i + n, i + n + view["stock_count"]))
        self.slices = slices
        self.hidden = i + n + view["stock_count"]
        nertz_top, waste_top = view["nertz_top"], view["waste_top"]
        self.nertz_top = None if nertz_top is None else _card(nertz_top)
        self.waste_top = None if waste_top is None else _card(waste_top)
        try:
            self.ups = [[_CARDS[c] for c in pile["up"]] for pile in view["work"]]
        except KeyError:  # not the canonical notation: the parser's way
            self.ups = [[Card.parse(c) for c in pile["up"]] for pile in view["work"]]
        visible = {c for up in self.ups for c in up}
        if self.nertz_top is not None:
            visible.add(self.nertz_top)
        if self.waste_top is not None:
            visible.add(self.waste_top)
        self.visible = visible
        self.owned: list[Card] | None = None
        self.tableau: Tableau | None = None


class ViewRebuilder:
    """:func:`~nertz.bots.base.determinize` for one seat's view seen again and again as it
    changes (see the module's docstring for what counts as a change).

    One rebuilder follows one view (one seat of one room, say); feeding it another view is
    right too, only slower, as nothing of the last one is the same object.
    """

    __slots__ = ("_base", "_dirty", "_found_pairs", "_found_views", "_full", "_owned", "_rules",
                 "_seats")

    def __init__(self) -> None:
        self._rules: Rules | None = None
        self._full: tuple[Card, ...] = ()
        self._found_views: list[Mapping[str, Any]] = []
        self._found_pairs: list[list[tuple[Card, int]]] = []
        self._base: Round | None = None
        """The foundations of the last view laid out on a round with no tableaus."""
        self._seats: list[_SeatPart] = []
        self._owned: list[list[Card]] = []
        """Per seat, its cards on the foundations (a new list whenever they change)."""
        self._dirty: set[int] | None = None
        """Seats whose cards on the foundations changed since ``_owned`` (None: any)."""

    def observe(self, view: SeatView | Mapping[str, Any], rules: Rules, t: int = 0
                ) -> Observation:
        """What :meth:`Observation.from_view` gives for ``view``, from less work."""
        data = view.to_json() if isinstance(view, SeatView) else view
        return Observation(self.round(data, rules), int(data["seat"]), t)

    def round(self, data: Mapping[str, Any], rules: Rules) -> Round:
        """A new round equal to ``determinize(data, rules)``."""
        try:
            return self._round(data, rules)
        except _Inconsistent:
            self._rules = None  # start afresh next time
            return determinize(data, rules)
        except BaseException:
            # A view that failed half-way may have left some parts taken in and others not:
            # start afresh next time rather than trust them.
            self._rules = None
            raise

    def _round(self, data: Mapping[str, Any], rules: Rules) -> Round:
        tvs: Sequence[Mapping[str, Any]] = data["tableaus"]
        seats = len(tvs)
        if any(tv["seat"] != i for i, tv in enumerate(tvs)):
            # Not a view the server makes (each tableau at its seat's place): no shortcut.
            return determinize(data, rules)
        if rules is not self._rules:
            self._rules = rules
            self._full = deck(rules.jokers)
            self._found_views, self._found_pairs, self._base, self._seats = [], [], None, []
            self._dirty = None
        base = self._foundations(data["foundations"])
        owned, dirty = self._owned, self._dirty
        if dirty is None or len(owned) != seats:
            # Whose cards are on the foundations, seat by seat, from scratch.
            owned = [[] for _ in range(seats)]
            for pairs in self._found_pairs:
                for card, owner in pairs:
                    owned[owner].append(card)
            self._owned = owned
        else:
            # Only the seats whose cards went onto a foundation: a new list for each, so the
            # tableau kept for the old one is seen to be out of date.
            for seat in dirty:
                owned[seat] = [card for pairs in self._found_pairs for card, owner in pairs
                               if owner == seat]
        self._dirty = set()
        parts = self._seats
        del parts[seats:]
        tableaus = []
        for i, tv in enumerate(tvs):
            part = parts[i] if i < len(parts) else None
            if part is None or part.view is not tv:
                part = _SeatPart(tv)
                if i < len(parts):
                    parts[i] = part
                else:
                    parts.append(part)
            # The same list as last time: the seat's foundation cards did not change.
            if part.tableau is None or part.owned is not owned[i]:
                part.owned = owned[i]
                part.tableau = self._tableau(part, owned[i])
            # A copy: the bot may play on its round; the kept tableau must stay as the view.
            tableaus.append(part.tableau.copy())
        rnd = base.copy()
        rnd.tableaus = tableaus
        rnd.stuck = [tv["stuck"] for tv in tvs]
        rnd.ended = Ended(data["ended"]) if data["ended"] else None
        rnd.called_by = data["called_by"]
        return rnd

    def _foundations(self, fvs: Sequence[Mapping[str, Any]]) -> Round:
        """A round with no tableaus holding the foundations ``fvs`` show (the last one again if
        every foundation is the same object as last time); the seats whose cards on them
        changed are added to ``_dirty`` (None: any may have)."""
        views, pairs = self._found_views, self._found_pairs
        dirty = self._dirty
        same = len(fvs) == len(views)
        if len(fvs) < len(views):
            dirty = None  # a foundation gone: not a round going on, start afresh
        for i, fv in enumerate(fvs):
            if i < len(views) and views[i] is fv:
                continue
            same = False
            parsed = [(_card(text), owner) for text, owner in zip(fv["cards"], fv["owners"],
                                                                 strict=True)]
            old = pairs[i] if i < len(views) else []
            if dirty is not None:
                # A foundation only grows while a round goes on: the owners of its new cards
                # are the seats whose foundation cards changed. Anything else: every seat.
                if parsed[:len(old)] == old:
                    dirty.update(owner for _, owner in parsed[len(old):])
                else:
                    dirty = None
            if i < len(views):
                views[i], pairs[i] = fv, parsed
            else:
                views.append(fv)
                pairs.append(parsed)
        del views[len(fvs):], pairs[len(fvs):]
        self._dirty = dirty
        if same and self._base is not None:
            return self._base
        assert self._rules is not None
        base = Round(self._rules, [], check_blocked=False)
        for cards in pairs:
            base.add_foundation(cards)
        self._base = base
        return base

    def _tableau(self, part: _SeatPart, owned: list[Card]) -> Tableau:
        """One seat's tableau as determinize lays it out: its hidden places filled, in deck
        order, from the cards of its deck that neither its view nor ``owned`` shows."""
        seen = part.visible.union(owned)
        # determinize draws the hidden cards one by one from this list, in the order of
        # part.slices: slices of it are the same cards in the same places.
        pool = list(filterfalse(seen.__contains__, self._full))
        if part.hidden > len(pool):
            raise _Inconsistent  # more hidden places than unseen cards: no view of a deal
        slices = part.slices
        a, b = slices[0]
        nertz = pool[a:b]
        if part.nertz_top is not None:
            nertz.append(part.nertz_top)
        work = [pool[a:b] + up for (a, b), up in zip(slices[1:-2], part.ups, strict=True)]
        a, b = slices[-2]
        waste = pool[a:b]
        if part.waste_top is not None:
            waste.append(part.waste_top)
        a, b = slices[-1]
        return Tableau(nertz, work, part.down[:], pool[a:b], waste)


__all__ = ["ViewRebuilder"]
