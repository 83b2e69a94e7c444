"""Abuse limits: token buckets per peer address and per identity, kept in memory.

A correspondence player makes a few calls a minute; a flooder makes thousands. The limits are
generous for the first and stop the second before the database does any work:

* calls that need no token (server info, register, challenge, authenticate) are counted per
  peer address (the host, without the port), since nobody is signed in yet;
* writes (creating, joining, filling and starting matches, and moves) are counted per
  identity: the signed-in player, or the peer address of a call without a token (a resent
  envelope proves nothing about its sender, so it must not spend its signer's allowance).

Each limit is "N calls a minute", a bucket of N that refills at N per minute, so a burst of N
is fine and a steady flood gets ``N/60`` calls a second. 0 turns a limit off. The buckets
are per server process and forgotten on restart; the map holds at most ``MAX_TRACKED``
callers (the least recently seen are dropped first), so a flood from many addresses cannot
grow it without bound.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from server.exceptions import LimitExceededError

MAX_TRACKED = 100_000


class RateLimit:
    """ "At most ``per_minute`` calls a minute for each key", as token buckets. Thread-safe."""

    def __init__(
        self,
        per_minute: int,
        what: str,
        clock: Callable[[], float] = time.monotonic,
        max_tracked: int = MAX_TRACKED,
    ) -> None:
        self.per_minute = per_minute
        self.what = what
        """Who is counted, for the refusal's message ("this address", "you")."""
        self._clock = clock
        self._max_tracked = max_tracked
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        """key -> (tokens left, when they were counted)."""
        self._lock = threading.Lock()

    def spend(self, key: str) -> None:
        """Count one call of ``key``; raise ``LimitExceededError`` when its bucket is empty."""
        if self.per_minute <= 0:
            return
        capacity = float(self.per_minute)
        rate = capacity / 60.0
        now = self._clock()
        with self._lock:
            tokens, then = self._buckets.pop(key, (capacity, now))
            tokens = min(capacity, tokens + (now - then) * rate)
            if tokens >= 1.0:
                tokens -= 1.0
                wait = 0.0
            else:
                wait = (1.0 - tokens) / rate
            self._buckets[key] = (tokens, now)
            while len(self._buckets) > self._max_tracked:
                self._buckets.popitem(last=False)
        if wait:
            raise LimitExceededError(
                f"too many requests from {self.what}: at most {self.per_minute} a minute; "
                f"try again in {max(1, round(wait))} s"
            )


def peer_host(peer: str) -> str:
    """The address part of a gRPC peer string (``ipv4:1.2.3.4:5678`` -> ``ipv4:1.2.3.4``,
    ``ipv6:[::1]:5678`` -> ``ipv6:[::1]``); other forms (``unix:...``) are kept whole."""
    if peer.startswith(("ipv4:", "ipv6:")):
        host, sep, port = peer.rpartition(":")
        if sep and port.isdigit():
            return host
    return peer
