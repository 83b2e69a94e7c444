"""Colours, suit symbols and card text for the terminal, and the decision to use them at all.

Two output modes exist, and everything that renders goes through this module so they never mix:

* plain: ASCII only, cards written exactly as players type them (``7h``, ``10d``, ``jk``), so
  output can be pasted into a command, grepped and diffed by scripts;
* colour: ANSI colours and suit symbols (``7♥`` in red, wild cards highlighted). The symbols are
  still valid card notation (``parse_card`` reads ``7♥``), so pasting keeps working.

Card text is parsed here from the server's canonical form instead of importing
``shared.rules.cards``: importing ``shared.rules`` loads the whole engine (tens of
milliseconds), and the CLI must start fast. Display order is a presentation matter, not a rule.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TextIO

RANKS = ("4", "5", "6", "7", "8", "9", "10", "j", "q", "k", "a")
"""Natural ranks in display order (low to high); wild and three groups come after them."""
SUITS = "cdhs"
SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
RED_SUITS = frozenset("dh")
JOKER = "jk"

_RESET = "\x1b[0m"
_CODES = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "magenta": "35",
    "cyan": "36",
    "wild": "1;35",
    "alert": "1;31",
    "good": "1;32",
}
_LATE = {JOKER: 20, "2": 21, "3": 30}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def use_color(no_color: bool = False, stream: TextIO | None = None) -> bool:
    """Whether to write colours and suit symbols to ``stream`` (default ``sys.stdout``).

    Off when asked (``--no-color``), when ``NO_COLOR`` is set to anything non-empty
    (no-color.org), when ``TERM=dumb``, when the stream is not a terminal (piped output is for
    scripts), and when the stream's encoding cannot write suit symbols (a printed ``?`` would
    break copy-and-paste of cards).
    """
    if no_color or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    out = sys.stdout if stream is None else stream
    try:
        if not out.isatty():
            return False
    except (AttributeError, ValueError, OSError):  # closed or unusual streams: be plain
        return False
    encoding = getattr(out, "encoding", None) or "ascii"
    try:
        "".join(SUIT_SYMBOLS.values()).encode(encoding)
    except (LookupError, UnicodeEncodeError):
        return False
    return True


def paint(text: str, style: str, color: bool) -> str:
    """``text`` in a named style (``"red"``, ``"bold"``, ``"wild"``...) when colour is on."""
    if not color or not text:
        return text
    return f"\x1b[{_CODES[style]}m{text}{_RESET}"


def visible_len(text: str) -> int:
    """The printed width of ``text``: escape codes take no room (suit symbols take one)."""
    return len(_ANSI.sub("", text))


def strip_ansi(text: str) -> str:
    """``text`` without colour codes."""
    return _ANSI.sub("", text)


def split_card(text: str) -> tuple[str, str]:
    """``("10", "d")`` for ``"10d"``, ``("jk", "")`` for a joker; unknown text is kept whole."""
    word = text.strip().lower()
    if word == JOKER:
        return JOKER, ""
    if len(word) >= 2 and word[-1] in SUITS and word[:-1] in (*RANKS, "2", "3"):
        return word[:-1], word[-1]
    return word, ""


def is_wild(text: str) -> bool:
    """Jokers and deuces."""
    return split_card(text)[0] in (JOKER, "2")


def group_of(text: str) -> str:
    """The hand group of a card: its natural rank, ``"wild"`` or ``"3"``."""
    rank = split_card(text)[0]
    return "wild" if rank in (JOKER, "2") else rank


def sort_key(text: str) -> tuple[int, int]:
    """Display order: naturals 4..A, then jokers and deuces, then threes; suits c d h s."""
    rank, suit = split_card(text)
    order = RANKS.index(rank) if rank in RANKS else _LATE.get(rank, 40)
    return order, SUITS.find(suit)


def card(text: str, color: bool) -> str:
    """One card for display: the typed notation in plain mode, a coloured symbol otherwise."""
    if not color:
        return text
    rank, suit = split_card(text)
    if rank == JOKER:
        return paint("JK", "wild", color)
    if not suit:
        return text
    face = rank.upper() + SUIT_SYMBOLS[suit]
    if rank == "2":
        return paint(face, "wild", color)
    return paint(face, "red", color) if suit in RED_SUITS else face


def cards(texts: Iterable[str], color: bool) -> str:
    """Several cards separated by spaces, in the order given."""
    return " ".join(card(t, color) for t in texts)


def group_hand(hand: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The hand sorted and grouped: ``[("4", ["4h", "4s"]), ..., ("wild", [...]), ("3", ...)]``."""
    groups: dict[str, list[str]] = {}
    for text in sorted(hand, key=sort_key):
        groups.setdefault(group_of(text), []).append(text)
    return list(groups.items())


def wrap(parts: Sequence[str], *, first: str, indent: str, sep: str, width: int = 80) -> list[str]:
    """Join ``parts`` with ``sep`` into lines of at most ``width`` printed columns.

    The first line starts with ``first``, later ones with ``indent``; a part is never split, so
    a card or a command hint stays whole on one line.
    """
    lines: list[str] = []
    line = first
    fresh = True
    for part in parts:
        if fresh:
            line, fresh = line + part, False
        elif visible_len(line + sep + part) > width:
            lines.append(line.rstrip())
            line = indent + part
        else:
            line = line + sep + part
    lines.append(line.rstrip())
    return lines
