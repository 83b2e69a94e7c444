"""Change notifications within one server process: Watch streams and the bot runner hear them.

A change reaches the ``Notifier`` in one of two ways. ``publish``: this process stored it (a
move, a lobby change); Watch subscribers hear it and so do the in-process listeners (the bot
runner, which plays a bot seat that is now to move). ``relay``: another process on the same
database stored it and ``server.service.live.feed`` found it by polling; only Watch subscribers
hear it, because the process that stored the change has already kicked its own bots, and a second
process kicking them would only make the two race for the same seat.

The notifier remembers, for recently changed matches, the highest revision it sent to
subscribers, so that a change reaches them once whichever way it comes (the feed also finds
this process's own moves in the database) and never after a newer one. Each subscription
also drops what its watcher already has (the state it read when it subscribed, or a newer
change that overtook an older one between two publishing threads).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from server.domain import Change
from server.service.errors import LimitExceededError

Listener = Callable[[Change], None]

REMEMBERED_MATCHES = 16_384
"""How many matches the notifier remembers the last published revision of. A forgotten match
costs the feed one reload of it; its watchers still hear each revision once (see
``Subscription``)."""


class Subscription:
    """A queue of the changes one watcher may hear about, read by that watcher's thread only."""

    def __init__(
        self,
        hub: Notifier,
        player_id: int | None,
        match_ids: frozenset[str],
        token_hash: bytes = b"",
    ) -> None:
        self._hub = hub
        self.player_id = player_id
        self.match_ids = match_ids
        self.token_hash = token_hash
        """The (hashed) bearer token the watcher signed in with; b"" for in-process ones."""
        self.revoked: Exception | None = None
        """Set when the token was revoked or the player blocked: the stream ends with it."""
        self.queue: queue.Queue[Change] = queue.Queue(maxsize=10_000)
        self._sent: dict[str, int] = {}
        """The highest revision of each match this watcher has been given."""
        self._on_news: Callable[[], None] | None = None
        self._spectating: set[str] = set()
        """Matches of ``match_ids`` the watcher follows as a spectator (it sits in none)."""

    def spectate(self, match_id: str) -> None:
        """Hear of ``match_id``'s changes although the watcher does not sit in it (a
        spectator: the match's players allow it, checked by the caller)."""
        self._spectating.add(match_id)

    def on_news(self, wake: Callable[[], None]) -> None:
        """Have ``wake()`` called (in the publishing thread) whenever a change is queued, so
        that a watcher on an event loop can sleep until then instead of polling."""
        self._on_news = wake

    def wants(self, match_id: str, player_ids: frozenset[int]) -> bool:
        """Whether a change of ``match_id`` (where ``player_ids`` sit) concerns this watcher."""
        if self.match_ids and match_id not in self.match_ids:
            return False
        if match_id in self._spectating:
            return True
        return self.player_id is None or self.player_id in player_ids

    def mark_sent(self, changes: Iterable[Change]) -> None:
        """Note what the watcher was given outside the queue (the state when it subscribed),
        so that the same revision, or an older one, queued meanwhile is not sent again."""
        for change in changes:
            self._is_news(change)

    def get(self, timeout: float) -> Change | None:
        """The next change newer than what the watcher has, or None after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                change = self.queue.get(timeout=left)
            except queue.Empty:
                return None
            if self._is_news(change):
                return change
        return None

    def offer(self, change: Change) -> None:
        """Queue a change for the watcher and wake it. A watcher that stopped reading misses
        changes; the publisher never waits for it."""
        with contextlib.suppress(queue.Full):
            self.queue.put_nowait(change)
        if self._on_news is not None:
            self._on_news()

    def poll(self) -> Change | None:
        """The next queued change newer than what the watcher has, or None at once."""
        while True:
            try:
                change = self.queue.get_nowait()
            except queue.Empty:
                return None
            if self._is_news(change):
                return change

    def _is_news(self, change: Change) -> bool:
        if change.revision <= self._sent.get(change.match_id, 0):
            return False
        self._sent[change.match_id] = change.revision
        return True

    def revoke(self, reason: Exception) -> None:
        """End the watch: the watcher's credentials are gone. Wakes the watcher."""
        self.revoked = reason
        if self._on_news is not None:
            self._on_news()

    def close(self) -> None:
        self._hub.unsubscribe(self)


class _Revisions:
    """A bounded map, least recently changed first out: match id -> highest revision."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._items: OrderedDict[str, int] = OrderedDict()

    def get(self, match_id: str) -> int:
        return self._items.get(match_id, 0)

    def advance(self, match_id: str, revision: int) -> bool:
        """Record ``revision`` if it is newer than the one recorded; False if it is not."""
        if revision <= self._items.get(match_id, 0):
            return False
        self._items[match_id] = revision
        self._items.move_to_end(match_id)
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)
        return True


class Notifier:
    """Fans changes out to Watch subscriptions and in-process listeners. Thread-safe."""

    def __init__(self, remembered: int = REMEMBERED_MATCHES) -> None:
        self._lock = threading.Lock()
        self._subscriptions: list[Subscription] = []
        self._listeners: list[Listener] = []
        self._published = _Revisions(remembered)

    def subscribe(
        self,
        player_id: int | None,
        match_ids: frozenset[str],
        token_hash: bytes = b"",
        limit: int | None = None,
    ) -> Subscription:
        """A new subscription; ``limit``: at most that many open at once for ``player_id``."""
        subscription = Subscription(self, player_id, match_ids, token_hash)
        with self._lock:
            if limit is not None and player_id is not None:
                open_now = sum(1 for s in self._subscriptions if s.player_id == player_id)
                if open_now >= limit:
                    raise LimitExceededError(
                        f"you have {open_now} Watch streams open on this server process, the "
                        "most it allows: close one first"
                    )
            self._subscriptions.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            if subscription in self._subscriptions:
                self._subscriptions.remove(subscription)

    def add_listener(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def watched(self) -> bool:
        """Whether any Watch stream is open (the feed polls only then)."""
        with self._lock:
            return bool(self._subscriptions)

    def signed_in(self) -> list[Subscription]:
        """The open subscriptions that hold a bearer token (to check it is still valid)."""
        with self._lock:
            return [s for s in self._subscriptions if s.token_hash]

    def wanted(self, match_id: str, player_ids: frozenset[int]) -> bool:
        """Whether any open subscription would hear of a change of this match."""
        with self._lock:
            return any(s.wants(match_id, player_ids) for s in self._subscriptions)

    def published(self, match_id: str) -> int:
        """The highest revision of the match sent to subscribers (0 if none is remembered)."""
        with self._lock:
            return self._published.get(match_id)

    def remember(self, match_id: str, revision: int) -> None:
        """Count ``revision`` as published although nobody wanted it: a watcher who comes
        later reads the match's state itself when it subscribes."""
        with self._lock:
            self._published.advance(match_id, revision)

    def publish(self, change: Change) -> None:
        """A change this process stored: to subscribers (unless already sent) and listeners."""
        self._deliver(change)
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(change)

    def relay(self, change: Change) -> bool:
        """A change another process stored: to subscribers only, unless already sent (or a
        newer one was); True if it was sent."""
        return self._deliver(change)

    def _deliver(self, change: Change) -> bool:
        with self._lock:
            if not self._published.advance(change.match_id, change.revision):
                return False
            targets = [
                s for s in self._subscriptions if s.wants(change.match_id, change.player_ids)
            ]
        for subscription in targets:
            subscription.offer(change)
        return True
