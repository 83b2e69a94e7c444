"""Bounded memos: how the engine's caches between positions let go of their entries.

The move lists and searches ask the same questions again (the same lay-off, a side's table
at each of its turns), so the engine keeps answers in module-level dicts, each with a bound
on its memory. ``remember`` is how every such memo stores an answer once its bound is
reached: the oldest entries go first, a few at a time, and the newest stay.

Why not empty a full memo at once: the entries still being asked about (a side's current
table, this turn's candidates) are lost with the dead ones and built again. Why bound it
small where only the newest entries are asked again: every dead entry that stays holds its
objects, and the cyclic garbage collector walks those again at each of its collections
(with 512 Hand and Foot tables, cleared at once when full, a tenth of its random play went
to the collector).
"""

from __future__ import annotations

import threading
from itertools import islice
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


_STORING = threading.Lock()
"""Held while ``remember`` changes a memo. The server lists and applies moves of several matches
at once in its worker threads, and an eviction reads the oldest keys and then drops them: another
thread's eviction between the two would fail it (a key gone, or a dict changed while read).
Lookups need no lock (``dict.get`` is atomic); a miss costs building the answer, not the lock."""


def remember(memo: dict[K, V], key: K, value: V, limit: int) -> V:
    """``memo[key] = value``, returned; when ``memo`` already holds ``limit`` entries, its
    oldest quarter (at least one) is dropped first, so the newest three quarters stay.

    A quarter at a time, not one entry: a dict leaves a hole where an entry went and fills
    the holes only when it grows, so dropping its oldest entry one at a time would scan the
    holes the earlier drops left, each time (tens of microseconds at 65,536 entries); a
    quarter costs one such scan for a quarter of the inserts."""
    with _STORING:
        if len(memo) >= limit:
            for old in list(islice(memo, max(1, limit // 4))):
                del memo[old]
        memo[key] = value
    return value
