"""Three-handed cutthroat: who plays alone, and when the other two become partners (§3.2).

Every seat starts a cutthroat hand as a side of its own. The first player to take the pile
plays alone for the rest of the hand; the other two join their melds and play as partners.
A player who goes out before anyone took the pile plays alone too. The pile take (``pile``)
and going out (``goingout``) ask the ruleset's ``form_sides`` hook, answered here; scoring
the columns afterwards is ``scoring``'s (§3.2: each partner scores the partnership's total).
"""

from __future__ import annotations

from ..ruleset import Ruleset, register
from ..state import EMPTY_MELDS, GameState


def form_cutthroat_sides(s: GameState, lone: int) -> None:
    """§3.2 cutthroat: ``lone`` plays alone; the other two join their melds as partners."""
    s.lone_seat = lone
    first, second = (x for x in range(3) if x != lone)
    a, b = s.side_of[first], s.side_of[second]
    melds = list(s.melds)
    joined = [(*x, *y) for x, y in zip(melds[a], melds[b], strict=True)]
    melds[a] = tuple(joined)
    melds[b] = EMPTY_MELDS
    s.melds = tuple(melds)
    s.side_of = tuple(a if x in (first, second) else s.side_of[x] for x in range(3))


class Cutthroat(Ruleset):
    """Three-handed cutthroat (§3.2): classic Canasta whose sides form during the hand."""

    name = "cutthroat"

    def form_sides(self, s: GameState, seat: int) -> None:
        if s.lone_seat is None:
            form_cutthroat_sides(s, seat)


register(Cutthroat)  # (a call, not a decorator: a compiled build keeps the class native)
