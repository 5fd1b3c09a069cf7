"""Play seeded random rounds and print one digest per round of everything that happened.

    python tests/differential_play.py ROUNDS [MOVES_PER_ROUND]

Not a test module: ``tests/test_form.py`` runs it twice, once on the compiled engine and once
with ``NERTZ_PURE=1``, and compares the outputs line by line. Each round picks a ruleset from a
fixed list (the presets and the option combinations that take other code paths), deals from its
seed, and plays random legal moves of random seats (declarations and calls included, now and
then a malformed or illegal move text, which must be refused alike), with a greedy move mixed in
so that rounds reach foundations, resets and calls. After every step the digest takes in the
move, the events (or the refusal's message), the seat's legal moves, every fourth step its view,
and the whole state: tableaus, foundations, declarations, the call. The first line names the
form loaded.
"""

from __future__ import annotations

import hashlib
import random
import sys
from typing import Any

import nertz
from nertz.cards import deck
from nertz.engine import Round
from nertz.errors import IllegalMoveError, NotationError
from nertz.match import Match
from nertz.playout import greedy_move
from nertz.rules import PRESETS, Rules
from nertz.scoring import score_round
from nertz.views import view

_OVERRIDES: tuple[dict[str, Any], ...] = (
    {"preset": "pagat", "jokers": True},
    {"preset": "double_swinging_door", "jokers": True},
    {"preset": "pagat", "teams": "split"},
    {"preset": "pagat", "turn_count": 1, "stock_end": "continuous"},
    {"preset": "pagat", "work_piles": 5, "work_pile_deal": "staircase"},
    {"preset": "pagat", "call_grace_ms": 400, "nertz_pile_size": 3, "call": "auto"},
    {"preset": "pagat", "false_call": "penalised", "card_points": "aces_double"},
    {"preset": "pagat", "move_partial_runs": False, "stuck_reset": "rotate_either"},
)
_ODD_TEXTS = ("5-F", "W-F9", "3:QH-1", "STUCK N", "NERTZ", "T", "1-1", "N-F1", "Q-Z", "")


_CHAR = {card: chr(64 + i) for i, card in enumerate(deck(True))}.__getitem__
"""One character a card: the state is written after every step, so it must be cheap."""


def _state(rnd: Round) -> str:
    parts: list[str] = []
    for tab in rnd.tableaus:
        parts.append("".join(map(_CHAR, tab.nertz)))
        parts.append("|".join("".join(map(_CHAR, p)) for p in tab.work))
        parts.append(repr(tab.down))
        parts.append("".join(map(_CHAR, tab.stock)))
        parts.append("".join(map(_CHAR, tab.waste)))
    for f in rnd.foundations:
        parts.append(f"{f.suit}:{f.ranks}:{f.owners}:{f.times}:{f.direction}:{f.needs}")
    parts.append(f"{rnd.stuck}{rnd.ended}{rnd.called_by}{rnd.called_at}{rnd.moves_played}")
    parts.append(f"{rnd.resets}{rnd.false_calls}")
    return "\n".join(parts)


def play(index: int, moves: int) -> str:
    """The digest of round ``index``: its ruleset, deal and play all follow from the index."""
    rulesets = [*sorted(PRESETS), *_OVERRIDES]
    spec = rulesets[index % len(rulesets)]
    rules = Rules.from_spec(spec)
    seats = 2 + index % 3
    rng = random.Random(f"differential:{index}")
    rnd = Match(rules, seats, seed=index).deal()
    digest = hashlib.sha256(_state(rnd).encode())
    t = 0
    for step in range(moves):
        if rnd.ended is not None and rng.random() < 0.9:
            break
        seat = rng.randrange(seats)
        t += rng.randrange(0, 300)
        legal = rnd.legal_moves(seat)
        roll = rng.random()
        move: Any
        if roll < 0.05:
            move = rng.choice(_ODD_TEXTS)
        elif roll < 0.35 or not legal:
            move = greedy_move(rnd, seat) or "T"
        else:
            move = legal[rng.randrange(len(legal))]
        hand = rng.randrange(2) if rules.teams == "split" else None
        try:
            outcome = repr(rnd.play(seat, move, t, hand))
        except (IllegalMoveError, NotationError) as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        digest.update(f"{seat} {move} {outcome}\n".encode())
        digest.update(" ".join(map(str, legal)).encode())
        if step % 4 == 0:
            digest.update(repr(view(rnd, seat).to_json()).encode())
        digest.update(_state(rnd).encode())
        if rnd.ended is None and rng.random() < 0.01:
            digest.update(f"stuck {rnd.all_stuck()} blocked {rnd.is_blocked()}".encode())
    digest.update(repr(score_round(rnd)).encode())
    return f"{index} {digest.hexdigest()}"


def main() -> None:
    """Print the form, then one line per round."""
    rounds = int(sys.argv[1])
    moves = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    print(nertz.FORM)
    for index in range(rounds):
        print(play(index, moves))


if __name__ == "__main__":
    main()
