"""Abuse limits: token buckets per peer address and per identity, kept in memory.

A correspondence player makes a few calls a minute; a flooder makes thousands. The limits are
generous for the first and stop the second before the database does any work:

* calls that need no token and touch the database (register, challenge, authenticate) are
  counted per peer address (the host without the port; an IPv6 host by its /64 network, the
  block one subscriber usually holds), since nobody is signed in yet;
* bearer tokens that turn out not valid are counted per peer address too, and an address
  that used up that allowance gets no token looked up until it refills;
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

import ipaddress
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from server.service.errors import LimitExceededError

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

    @property
    def tracked(self) -> int:
        """How many keys have a bucket now (at most ``max_tracked``)."""
        with self._lock:
            return len(self._buckets)

    def spend(self, key: str) -> None:
        """Count one call of ``key``; raise ``LimitExceededError`` when its bucket is empty."""
        self._take(key, spend=True, strict=True)

    def check(self, key: str) -> None:
        """Raise ``LimitExceededError`` if ``key``'s bucket is empty; count nothing."""
        self._take(key, spend=False, strict=True)

    def charge(self, key: str) -> None:
        """Count one call of ``key`` that already happened (never raises)."""
        self._take(key, spend=True, strict=False)

    def _take(self, key: str, *, spend: bool, strict: bool) -> None:
        if self.per_minute <= 0:
            return
        capacity = float(self.per_minute)
        rate = capacity / 60.0
        now = self._clock()
        with self._lock:
            tokens, then = self._buckets.pop(key, (capacity, now))
            tokens = min(capacity, tokens + (now - then) * rate)
            wait = 0.0 if tokens >= 1.0 else (1.0 - tokens) / rate
            if spend and (tokens >= 1.0 or not strict):
                tokens = max(0.0, tokens - 1.0)
            self._buckets[key] = (tokens, now)
            while len(self._buckets) > self._max_tracked:
                self._buckets.popitem(last=False)
        if wait and strict:
            raise LimitExceededError(
                f"too many requests from {self.what}: at most {self.per_minute} a minute; "
                f"try again in {max(1, round(wait))} s"
            )


def peer_host(peer: str) -> str:
    """Whom to count a call of the gRPC peer ``peer`` against: ``ipv4:1.2.3.4:5678`` ->
    ``ipv4:1.2.3.4``, ``ipv6:[2001:db8::1]:5678`` -> ``ipv6:2001:db8::/64`` (one subscriber
    usually holds a whole /64); other forms (``unix:...``) are kept whole."""
    if peer.startswith(("ipv4:", "ipv6:")):
        host, sep, port = peer.rpartition(":")
        if sep and port.isdigit():
            if host.startswith("ipv6:"):
                address = host.removeprefix("ipv6:").strip("[]").split("%")[0]
                try:
                    ip = ipaddress.IPv6Address(address)
                except ValueError:
                    return host
                if ip.ipv4_mapped is not None:  # an IPv4 client on a dual-stack socket
                    return f"ipv4:{ip.ipv4_mapped}"
                return f"ipv6:{ipaddress.IPv6Network((ip, 64), strict=False)}"
            return host
    return peer
