"""The table drawn as text, for ``nertz replay`` and for debugging.

This is the umpire's view (everything, hidden cards included): it is for a finished replay on
the command line, never for a client (clients get :mod:`nertz.views`).
"""

from __future__ import annotations

from collections.abc import Sequence

from nertz.engine import Round


def draw(rnd: Round, names: Sequence[str] | None = None) -> str:
    """Every tableau and the foundations, one block each."""
    lines = []
    for seat, tab in enumerate(rnd.tableaus):
        name = names[seat] if names and seat < len(names) else f"seat {seat}"
        flag = ""
        if rnd.called_by == seat:
            flag = f"  ({rnd.rules.call_word}!)"
        lines.append(f"{name}{flag}")
        nertz = " ".join(str(c) for c in tab.nertz[-1:]) or "--"
        lines.append(f"  N  {nertz:<3} ({len(tab.nertz)} cards)")
        for k, (pile, d) in enumerate(zip(tab.work, tab.down, strict=True), start=1):
            shown = ["##"] * d + [str(c) for c in pile[d:]]
            lines.append(f"  {k}  {' '.join(shown) or '--'}")
        waste = str(tab.waste[-1]) if tab.waste else "--"
        lines.append(f"  S  {len(tab.stock)} cards   W  {waste} ({len(tab.waste)} cards)")
    if rnd.foundations:
        lines.append("Foundations")
        for i, f in enumerate(rnd.foundations, start=1):
            cards = " ".join(f"{c}" for c in f.cards)
            lines.append(f"  F{i:<2} {cards}")
    else:
        lines.append("Foundations: none")
    return "\n".join(lines)
