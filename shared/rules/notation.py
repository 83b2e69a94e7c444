"""Reading actions that people type, and the whole-turn form (DESIGN.md, docs/rules.md "Notation").

Grammar (case-insensitive; cards as in ``cards.parse_card``)::

    draw                         take from the stock            (also: d, stock)
    pickup [CARDS] [, MELD]...   take the discard pile          (also: take, pick)
    meld CARDS [, CARDS]...      one or more melds              (also: m)
    lay [MELD] CARDS             add to a meld of your side     (also: layoff, add, l)
    combine MELD MELD            join two melds of one rank     (Samba, Bolivia; also: join)
    discard CARD                 end the turn                   (also: x, throw)
    ask                          ask partner "may I go out?"
    answer yes|no                answer partner                 (also: yes, no)
    pass                         decline the pile after the stock ran out

Groups of a ``meld`` or ``pickup`` are separated by commas or slashes. ``lay`` may name its
meld as ``lay 9 9d 2c`` or ``lay 9: 9d 2c``; without a rank the cards' natural rank is used.
A whole turn is several actions separated by semicolons or new lines.

Samba and Bolivia (docs/rules.md §3.4, §3.5) name one meld among several (MELD above): ``9`` is the
first meld of nines, ``9#2`` the second (table order); ``4h-6h`` is the sequence of hearts
that holds those cards (the table's ``4h-5h-6h`` is read too); ``wild`` (``wild#2``) is a
wild-card meld. ``meld 4h 5h 6h`` starts a sequence; ``combine 9 9#2`` joins two melds of
nines (``combine 9`` alone: the first two); ``pickup to 9#2`` lays the top card off onto that
meld, and ``pickup to 9#2 9c 9d`` puts a pair with it there instead of starting a new meld.

>>> str(parse_action("lay 4h-6h 7h")), str(parse_action("combine 9"))
('lay 4h-6h 7h', 'combine 9 9#2')

>>> str(parse_action("MELD 7H 7C 2S, kd kc ks"))
'meld 7h 7c 2s, kd kc ks'
>>> [str(a) for a in parse_turn("draw; lay 9: 9d; discard td")]
['draw', 'lay 9 9d', 'discard 10d']
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .actions import (
    ASK,
    DISCARDS,
    DRAW,
    NO,
    PASS,
    RESIGN,
    YES,
    Action,
    Combine,
    LayOff,
    Meld,
    MeldRef,
    TakePile,
)
from .cards import (
    IS_NATURAL,
    IS_WILD,
    JOKER_RANK,
    RANK,
    SUIT,
    Card,
    parse_card,
    parse_cards,
    parse_rank,
)
from .errors import NotationError

_VERBS = {
    "draw": "draw", "d": "draw", "stock": "draw",
    "pickup": "pickup", "take": "pickup", "pick": "pickup", "pick-up": "pickup",
    "meld": "meld", "m": "meld",
    "lay": "lay", "layoff": "lay", "lay-off": "lay", "add": "lay", "l": "lay",
    "discard": "discard", "x": "discard", "throw": "discard",
    "ask": "ask", "answer": "answer", "yes": "yes", "no": "no", "pass": "pass",
    "resign": "resign", "combine": "combine", "join": "combine",
}  # fmt: skip
_HELP = "use draw, pickup, meld, lay, combine, discard, ask, answer yes|no, pass or resign"
MAX_WHICH = 20
"""No side holds more melds of one rank than this (a 162-card deck has 12 of each rank)."""
MAX_ACTION_TEXT = 2000
"""Longer text is refused before parsing: no real action needs more."""


def parse_action(text: str) -> Action:
    """Read one action; raises ``NotationError`` with a message a player understands."""
    if len(text) > MAX_ACTION_TEXT:
        raise NotationError("that action is far too long to be a Canasta move")
    words = text.strip().split(None, 1)
    if not words:
        raise NotationError(f"expected an action, found nothing: {_HELP}")
    verb = _VERBS.get(words[0].lower())
    rest = words[1].strip() if len(words) > 1 else ""
    if verb is None:
        raise NotationError(f"unknown action {words[0]!r}: {_HELP}")
    if verb in ("draw", "ask", "pass", "yes", "no", "resign"):
        if rest:
            raise NotationError(f"{verb} takes nothing after it (found {rest!r})")
        simple: dict[str, Action] = {
            "draw": DRAW, "ask": ASK, "pass": PASS, "yes": YES, "no": NO, "resign": RESIGN,
        }  # fmt: skip
        return simple[verb]
    if verb == "answer":
        answer = rest.lower()
        if answer in ("yes", "y"):
            return YES
        if answer in ("no", "n"):
            return NO
        raise NotationError("answer yes or answer no")
    if verb == "discard":
        cards = parse_cards(rest)
        if len(cards) != 1:
            raise NotationError(f"discard exactly one card, for example: discard kd (got {rest!r})")
        return DISCARDS[cards[0]]
    if verb == "lay":
        return _parse_lay(rest)
    if verb == "combine":
        return _parse_combine(rest)
    if verb == "meld":
        groups = _groups(rest)
        if not groups:
            raise NotationError("meld needs cards, for example: meld 7h 7c 2s")
        return Meld(groups)
    # pickup: the first group is the support (may be empty: "pickup , kd kc ks" lays the top
    # card off and opens with the melds after the comma); "pickup to MELD ..." names the meld
    onto = None
    words = rest.split(None, 2)
    if words and words[0].lower() == "to":
        if len(words) < 2:
            raise NotationError("pickup to needs a meld, for example: pickup to 9#2")
        onto = parse_meld_ref(words[1])
        rest = words[2] if len(words) > 2 else ""
    support, separator, more = rest.partition(",") if "," in rest else rest.partition("/")
    if separator and not more.strip():
        raise NotationError("an empty group after the comma: name the cards of each further meld")
    return TakePile(parse_cards(support), _groups(more), onto)


def parse_meld_ref(text: str) -> MeldRef:
    """Read a meld's name: ``9``, ``9#2``, ``wild``, ``wild#2`` or a sequence ``4h-6h``."""
    word = text.strip().lower()
    if "-" in word:
        ends = [w for w in word.split("-") if w]
        cards = [parse_card(w) for w in ends]
        if len(cards) < 2 or not all(IS_NATURAL[c] for c in cards):
            raise NotationError(f"name a sequence by two of its cards, like 4h-6h (not {text!r})")
        suits = {SUIT[c] for c in cards}
        if len(suits) != 1:
            raise NotationError(f"a sequence is of one suit: {text!r} names two")
        ranks = sorted(RANK[c] for c in cards)
        return MeldRef(ranks[0], 1, suits.pop(), ranks[-1])
    name, _, number = word.partition("#")
    which = 1
    if number:
        if not number.isdigit() or not 1 <= int(number) <= MAX_WHICH:
            raise NotationError(f"after # comes which meld of that rank, 1 to {MAX_WHICH}")
        which = int(number)
    if name in ("wild", "w", "wilds"):
        return MeldRef(JOKER_RANK, which)
    return MeldRef(parse_rank(name), which)


def _parse_combine(text: str) -> Combine:
    words = text.split()
    if len(words) == 1:
        first = parse_meld_ref(words[0])
        return Combine(first, MeldRef(first.rank, first.which + 1, first.suit, first.high))
    if len(words) != 2:
        raise NotationError("combine names two melds, for example: combine 9 9#2")
    return Combine(parse_meld_ref(words[0]), parse_meld_ref(words[1]))


def parse_turn(text: str) -> list[Action]:
    """Read several actions separated by ``;`` or new lines (a whole turn)."""
    parts = [p for p in re.split(r"[;\n]", text) if p.strip()]
    if not parts:
        raise NotationError(f"expected at least one action: {_HELP}")
    return parse_actions(parts)


def parse_actions(texts: Sequence[str]) -> list[Action]:
    """Read the actions of a turn given one text each; an error names the step that failed."""
    actions = []
    for number, text in enumerate(texts, 1):
        try:
            actions.append(parse_action(text))
        except NotationError as exc:
            if len(texts) == 1:
                raise
            raise NotationError(f"action {number} ({text.strip()!r}): {exc.message}") from None
    return actions


def _groups(text: str) -> tuple[tuple[Card, ...], ...]:
    groups = list(re.split(r"[,/]", text))
    if len(groups) > 1 and any(not g.strip() for g in groups):
        raise NotationError("an empty group between commas: each meld needs cards")
    return tuple(parse_cards(g) for g in groups if g.strip())


def _parse_lay(text: str) -> LayOff:
    words = text.replace(":", " : ").split()
    if not words:
        raise NotationError("lay needs cards, for example: lay 9 9d 2c")
    rank: int | None = None
    first = words[0]
    if len(words) > 1 and ("#" in first or "-" in first or first.lower() in ("wild", "w")):
        ref = parse_meld_ref(first)
        cards = parse_cards([w for w in words[1:] if w != ":"])
        if not cards:
            raise NotationError("lay needs cards after the meld, for example: lay 9#2 9d")
        return LayOff(ref.rank, cards, ref.which, ref.suit, ref.high)
    if len(words) > 1 and words[1] == ":":
        rank = parse_rank(first)
        words = words[2:]
    else:
        try:
            parse_card(first)
        except NotationError:
            rank = parse_rank(first)
            words = words[1:]
    words = [w for w in words if w != ":"]
    cards = parse_cards(words)
    if not cards:
        raise NotationError("lay needs cards after the meld's rank, for example: lay 9 9d")
    if rank is None:
        ranks = {RANK[c] for c in cards if not IS_WILD[c]}
        if len(ranks) != 1:
            raise NotationError(
                "say which meld to lay off to, for example: lay 9 2c (or lay 9: 9d 2c)"
            )
        rank = ranks.pop()
    return LayOff(rank, cards)
