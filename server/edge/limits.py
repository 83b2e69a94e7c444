"""Abuse limits: token buckets per peer address and per identity, and caps on connections,
kept in memory.

A correspondence player makes a few calls a minute; a flooder makes thousands. The limits are
generous for the first and stop the second before the database does much work:

* calls that need no token and touch the database (register, challenge, authenticate) are
  counted per peer address (the host without the port; an IPv6 host by its /64 network, the
  block one subscriber usually holds), since nobody is signed in yet;
* bearer tokens that turn out not valid are counted per peer address too: past that
  allowance the address's failures are refused as a flood. Every token is still looked up
  (one read by key), so a valid one is never refused for what its address did;
* writes (creating, joining, filling and starting matches, and moves) are counted per
  identity: the signed-in player, or the peer address of a call without a token (a resent
  envelope proves nothing about its sender, so it must not spend its signer's allowance);
* reads (views, moves, history, the match list, settings, opening a Watch stream) are
  counted per signed-in player, so that one account's flood of costly reads cannot take the
  server's time from everyone else.

Each limit is "N calls a minute", a bucket of N that refills at N per minute, so a burst of N
is fine and a steady flood gets ``N/60`` calls a second. 0 turns a limit off. The buckets
are per server process and forgotten on restart; the map holds at most ``MAX_TRACKED``
callers (the least recently seen are dropped first), so a flood from many addresses cannot
grow it without bound.

``ConnectionCaps`` counts open connections per address and in all, for the listeners (the
gRPC port's gate, ``server.edge.gate``, and the metrics endpoint).
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from server.service.errors import LimitExceededError

MAX_TRACKED = 100_000
log = logging.getLogger("canasta.server")


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
        if self.per_minute <= 0:
            return
        capacity = float(self.per_minute)
        rate = capacity / 60.0
        now = self._clock()
        with self._lock:
            tokens, then = self._buckets.pop(key, (capacity, now))
            tokens = min(capacity, tokens + (now - then) * rate)
            wait = 0.0 if tokens >= 1.0 else (1.0 - tokens) / rate
            if tokens >= 1.0:
                tokens -= 1.0
            self._buckets[key] = (tokens, now)
            while len(self._buckets) > self._max_tracked:
                self._buckets.popitem(last=False)
        if wait:
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
                return address_key(host.removeprefix("ipv6:").strip("[]"))
            return host
    return peer


def address_key(host: str) -> str:
    """``peer_host`` of a bare IP address (as a socket names it): ``ipv4:1.2.3.4``, or an IPv6
    address's /64 (an IPv4-mapped one as its IPv4 address); text that is no address is kept."""
    try:
        ip = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv4Address):
        return f"ipv4:{ip}"
    if ip.ipv4_mapped is not None:  # an IPv4 client on a dual-stack socket
        return f"ipv4:{ip.ipv4_mapped}"
    return f"ipv6:{ipaddress.IPv6Network((ip, 64), strict=False)}"


class ConnectionCaps:
    """At most ``per_peer`` connections open at once from one address (``address_key``) and
    ``total`` in all, on one listener. Thread-safe.

    A connection past a cap is refused (closed at once) and logged, at most once a minute per
    address (and once a minute for the total cap) with how many were refused since the last
    line: a peer opening thousands of connections must not write thousands of log lines. The
    map of log times holds at most ``MAX_TRACKED`` addresses, like the rate limits'.
    """

    def __init__(
        self,
        listener: str,
        total: int,
        per_peer: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.listener = listener
        """The listener's name in the log ("gRPC", "metrics")."""
        self.total = total
        self.per_peer = per_peer
        """0: no cap per address (only the total)."""
        self._clock = clock
        self._open: dict[str, int] = {}
        self._count = 0
        self._logged: OrderedDict[str, tuple[float, int]] = OrderedDict()
        """address (or ``ALL``) -> (when its refusals were last logged, refusals since)."""
        self._lock = threading.Lock()

    @property
    def open(self) -> int:
        """Connections admitted and not yet released."""
        with self._lock:
            return self._count

    def admit(self, key: str) -> bool:
        """Count a new connection from ``key``, or refuse it (False, logged) past a cap."""
        with self._lock:
            held = self._open.get(key, 0)
            if self._count >= self.total:
                self._refused(ALL, f"{self.total} connections are open, the most in all")
                return False
            if self.per_peer and held >= self.per_peer:
                self._refused(key, f"{held} connections are open from it, the most per address")
                return False
            self._open[key] = held + 1
            self._count += 1
            return True

    def release(self, key: str) -> None:
        """Forget one connection ``admit`` let in from ``key``."""
        with self._lock:
            held = self._open.pop(key, 0) - 1
            if held > 0:
                self._open[key] = held
            self._count -= 1

    def _refused(self, key: str, why: str) -> None:
        now = self._clock()
        last, since = self._logged.pop(key, (now - 60.0, 0))
        since += 1
        if now - last >= 60.0:
            log.warning(
                "%s: refused %d connection(s) from %s since the last such line: %s "
                "(logged at most once a minute per address)",
                self.listener, since, key, why,
            )  # fmt: skip
            last, since = now, 0
        self._logged[key] = (last, since)
        while len(self._logged) > MAX_TRACKED:
            self._logged.popitem(last=False)


ALL = "all addresses"
"""``ConnectionCaps``' key for refusals by the total cap."""
