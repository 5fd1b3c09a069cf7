"""The how-to-play lesson: one round on a fixed deal, played for the learner's seat by the
greedy bot, as the steps the page walks a newcomer through (``GET /api/tutorial``).

The page shows the deal, points at the card of each step and waits for the learner to make that
very move; it then applies the step's changes as the server made them. So the page knows no
rule: every table it shows comes from the engine here, through the same views as live play.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from nertz.bots import GreedyBot, Observation
from nertz.match import Match
from nertz.moves import CALL, STUCK, TURN, Move
from nertz.rules import Rules
from nertz.server.room.messages import foundation_json, table_json, tableau_json

RULES: Final = {"preset": "pagat", "nertz_pile_size": 5}
"""A short round: a five-card Nertz pile."""
SEED: Final = 153
"""The deal the lesson plays: eleven steps that show a work pile move, a foundation start, a
turn of the stock, a play from the waste and the call."""
MAX_STEPS: Final = 120
"""The lesson stops here even if the Nertz pile is not empty (a deal too hard to teach)."""
NAMES: Final = ("You", "Sleepy bot")


@cache
def lesson() -> dict[str, Any]:
    """The lesson: ``{"rules", "names", "deal", "steps"}``; ``deal`` is the table as the
    learner's seat 0 sees it, each step ``{"move", "tableaus", "foundations", "ended"}`` with
    what the move changed (as in ``update``). The second seat never moves: it is asleep."""
    rules = Rules.from_spec(RULES)
    rnd = Match(rules, len(NAMES), SEED).deal()
    deal = table_json(rnd, 0)
    bot = GreedyBot()
    bot.start(0, rules, SEED)
    steps: list[dict[str, Any]] = []
    t = 0
    while rnd.ended is None and len(steps) < MAX_STEPS:
        t += 1000
        move: Move | None
        if not rnd.tableaus[0].nertz and rnd.can_play(0, CALL):
            move = CALL
        else:
            move = bot.decide(Observation.from_round(rnd, 0, t))
        if move is None or move == STUCK:
            move = TURN
        if not rnd.can_play(0, move, t):
            break
        sizes = [len(f.cards) for f in rnd.foundations]
        rnd.play(0, move, t)
        changed = [i for i, f in enumerate(rnd.foundations)
                   if i >= len(sizes) or len(f.cards) != sizes[i]]
        steps.append({"move": str(move), "tableaus": [tableau_json(rnd, 0)],
                      "foundations": [foundation_json(rnd, i) for i in changed],
                      "ended": rnd.ended})
    return {"rules": rules.to_spec(), "names": list(NAMES), "deal": deal, "steps": steps}
