"""Shared helpers for the property, perft and unit tests (not a test module itself).

``snapshot`` takes a deep, comparable picture of a round; ``check_invariants`` asserts SPEC
section 6; ``layout`` builds a complete layout from the few cards a test cares about, putting
every other card of the deck into the stock in deck order; ``fairy_loop_layouts`` deals the
endless Fairy Fly round (the engine's, the simulator's, the environment's and the server's
tests of the referee all play it); ``stop_process`` ends a server process a test started.
``pyproject.toml`` puts this folder on the path, so the tests in ``tests/server`` import it too.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from nertz.cards import Card, deck
from nertz.engine import Round, valid_run
from nertz.match import Match
from nertz.moves import STUCK, TURN, Kind, Move
from nertz.playout import greedy_move
from nertz.rules import Rules
from nertz.state import Layout


def c(text: str) -> Card:
    return Card.parse(text)


def cards(text: str) -> list[Card]:
    return [Card.parse(t) for t in text.split()]


def tableau_snapshot(tab: Any) -> tuple[Any, ...]:
    return (
        tuple(tab.nertz),
        tuple(tuple(p) for p in tab.work),
        tuple(tab.down),
        tuple(tab.stock),
        tuple(tab.waste),
    )


def snapshot(rnd: Round) -> tuple[Any, ...]:
    """Everything observable about a round, as nested tuples."""
    return (
        tuple(tableau_snapshot(t) for t in rnd.tableaus),
        tuple(
            (
                f.suit,
                tuple(f.ranks),
                tuple(f.cards),
                tuple(f.owners),
                tuple(f.times),
                f.direction,
                tuple(f.needs),
            )
            for f in rnd.foundations
        ),
        tuple(rnd.stuck),
        rnd.called_by,
        rnd.called_at,
        rnd.ended,
        tuple((fc.seat, fc.each, fc.t) for fc in rnd.false_calls),
        rnd.moves_played,
        rnd.resets,
        tuple(tuple(map(str, rnd.legal_moves(s))) for s in range(rnd.seats)),
    )


def check_invariants(rnd: Round) -> None:
    """SPEC section 6: every card once, legal foundations, legal work-pile runs."""
    rules = rnd.rules
    full = Counter(deck(rules.jokers))
    owned: list[Counter[Card]] = [Counter() for _ in rnd.tableaus]
    for f in rnd.foundations:
        assert len(f.cards) == len(f.ranks) == len(f.owners)
        for owner, card in zip(f.owners, f.cards, strict=True):
            owned[owner][card] += 1
        assert rnd.policy.is_legal_sequence(list(f.ranks)), (
            f"foundation {[str(x) for x in f.cards]} ranks {f.ranks} is not a legal sequence"
        )
        for card, rank in zip(f.cards, f.ranks, strict=True):
            if not card.is_joker:
                assert card.suit == f.suit, f"{card} on a foundation of suit {f.suit}"
                assert card.rank == rank
    for seat, tab in enumerate(rnd.tableaus):
        here = Counter(tab.all_cards()) + owned[seat]
        assert here == full, (
            f"seat {seat}: missing {sorted(map(str, full - here))}, "
            f"extra {sorted(map(str, here - full))}"
        )
        assert len(tab.work) == rules.work_piles == len(tab.down)
        for k, (pile, d) in enumerate(zip(tab.work, tab.down, strict=True)):
            assert 0 <= d <= len(pile)
            if pile:
                assert d < len(pile), f"seat {seat} pile {k + 1}: no face-up card on top"
            assert valid_run(pile[d:]), (
                f"seat {seat} pile {k + 1}: {[str(x) for x in pile[d:]]} is not a run"
            )


def layout(
    rules: Rules,
    nertz: str,
    work: Sequence[str],
    waste: str = "",
    stock: str | None = None,
    exclude: Iterable[Card] = (),
) -> Layout:
    """A complete layout: ``nertz`` bottom to top, each work pile bottom to top (``~`` face down),
    ``waste`` bottom to top. With ``stock`` None the stock is every other card of the deck in
    deck order (top first); ``exclude`` names cards that are elsewhere (played to foundations by
    setup moves are not: those must be in the layout)."""
    used = cards(nertz) + cards(waste)
    work_cells = []
    for pile in work:
        cells = []
        for tok in pile.split():
            up = not tok.startswith("~")
            card = c(tok.lstrip("~"))
            used.append(card)
            cells.append((card, up))
        work_cells.append(tuple(cells))
    skip = set(used) | set(exclude)
    if stock is None:
        stock_cards = [x for x in deck(rules.jokers) if x not in skip]
    else:
        stock_cards = cards(stock)
    return Layout(
        nertz=tuple(cards(nertz)),
        work=tuple(work_cells),
        stock=tuple(stock_cards),
        waste=tuple(cards(waste)),
    )


def shown_cards(rnd: Round) -> set[tuple[int, Card]]:
    """Every (owner, card) face up at the table."""
    out: set[tuple[int, Card]] = set()
    for seat, tab in enumerate(rnd.tableaus):
        if tab.nertz:
            out.add((seat, tab.nertz[-1]))
        if tab.waste:
            out.add((seat, tab.waste[-1]))
        for pile, d in zip(tab.work, tab.down, strict=True):
            out.update((seat, x) for x in pile[d:])
    for f in rnd.foundations:
        out.update(zip(f.owners, f.cards, strict=True))
    return out


def greedy_step(rnd: Round, seat: int) -> Move | None:
    """The warm-up policy of the property tests: greedy play, else turn, else declare stuck when
    the engine says so; None when the seat has declared and waits."""
    move = greedy_move(rnd, seat)
    if move is None:
        if rnd.stuck[seat]:
            return None
        move = STUCK if rnd.is_stuck(seat) else TURN
    return move


# ------------------------------------------------------------------ the endless Fairy Fly round

FAIRY = Rules.from_spec({"preset": "fairy_fly", "nertz_pile_size": 3})
"""Fairy Fly (``rotate_either``, ``call auto``, whole runs only) with three-card Nertz piles."""


def fairy_loop_layouts() -> list[Layout]:
    """The endless Fairy Fly round of the hardening issue, in cards.

    Seat 0 has JS on QH on QD in its Nertz pile and a King on every work pile: the Queens would
    go onto the black Kings and the JS onto a Queen, emptying the pile, but only once the QH is
    on top. Its Aces and other Queens lie face down under the Kings, so nothing in its stock can
    ever play. Seat 1 can never play again: its Aces are face down under four 2s. So every seat
    is stuck, the round is not blocked (a Nertz rotation frees seat 0), and a reset that rotates
    only the stocks, as the server's did, changes nothing.
    """
    seat0 = layout(FAIRY, "QD QH JS", ["KS", "~AS KH", "~AH ~AD KD", "~AC ~QS ~QC KC"])
    seat1 = layout(FAIRY, "JD JH 9C", ["2S", "~AS 2H", "~AH ~AD 2D", "~AC ~9S ~9H 2C"],
                   waste="3C 3D 3H")
    return [seat0, seat1]


def fairy_loop() -> Round:
    """The round :func:`fairy_loop_layouts` deals."""
    return Match(FAIRY, 2).deal(fairy_loop_layouts())


def policy(rnd: Round, seat: int) -> Move | None:
    """A plain seat: the greedy play, else a turn of the stock, else wait; never declares."""
    move = greedy_move(rnd, seat)
    if move is not None:
        return move
    tab = rnd.tableaus[seat]
    return TURN if tab.stock or tab.waste else None


Policy = Callable[[Round, int], Move | None]
"""A seat's play: the move it makes in a round (None: it waits)."""


def greedy_or_idle(rng: random.Random) -> Policy:
    """The greedy play, else mostly a turn, else now and then a work-pile shuffle (the server's
    bots shuffle when the engine sees a rearrangement they do not); never declares. The seats of
    ``tests/test_referee.py`` and ``bench/referee.py``."""

    def choose(rnd: Round, seat: int) -> Move | None:
        move = greedy_move(rnd, seat)
        if move is not None:
            return move
        tab = rnd.tableaus[seat]
        if (tab.stock or tab.waste) and rng.random() < 0.9:
            return TURN
        shuffles = [m for m in rnd.legal_moves(seat)
                    if m.kind is Kind.TO_WORK and m.src.isdigit()]
        return rng.choice(shuffles) if shuffles else None

    return choose


def any_legal(rng: random.Random) -> Policy:
    """A uniformly random legal move (declarations and calls included)."""

    def choose(rnd: Round, seat: int) -> Move | None:
        moves = rnd.legal_moves(seat)
        return rng.choice(moves) if moves else None

    return choose


# ------------------------------------------------------------------ processes the tests start


def stop_process(proc: subprocess.Popen[Any], grace: float = 30.0, group: bool = False) -> None:
    """End a process a test started (a ``nertz serve``): SIGTERM, then SIGKILL if it has not
    exited within ``grace`` seconds (generous: a busy machine shuts down slowly); reaped either
    way. ``group``: signal its whole process group (a server with workers, started with
    ``start_new_session=True``)."""
    if proc.poll() is not None:
        return

    def send(sig: int) -> None:
        try:
            if group:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except ProcessLookupError:
            pass  # it exited meanwhile

    send(signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        proc.wait()
