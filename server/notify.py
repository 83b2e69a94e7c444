"""In-process change notifications: the service publishes, Watch streams and the bot runner
listen. (Across server replicas this needs the database outbox of a later issue.)
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable

from server.domain import Change

Listener = Callable[[Change], None]


class Subscription:
    """A queue of the changes one watcher may hear about."""

    def __init__(self, hub: Notifier, player_id: int | None, match_ids: frozenset[str]) -> None:
        self._hub = hub
        self.player_id = player_id
        self.match_ids = match_ids
        self.queue: queue.Queue[Change] = queue.Queue(maxsize=10_000)

    def wants(self, change: Change) -> bool:
        if self.match_ids:
            return change.match_id in self.match_ids and (
                self.player_id is None or self.player_id in change.player_ids
            )
        return self.player_id is None or self.player_id in change.player_ids

    def get(self, timeout: float) -> Change | None:
        try:
            return self.queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        self._hub.unsubscribe(self)


class Notifier:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscriptions: list[Subscription] = []
        self._listeners: list[Listener] = []

    def subscribe(self, player_id: int | None, match_ids: frozenset[str]) -> Subscription:
        subscription = Subscription(self, player_id, match_ids)
        with self._lock:
            self._subscriptions.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            if subscription in self._subscriptions:
                self._subscriptions.remove(subscription)

    def add_listener(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def publish(self, change: Change) -> None:
        with self._lock:
            targets = [s for s in self._subscriptions if s.wants(change)]
            listeners = list(self._listeners)
        for subscription in targets:
            # A watcher that stopped reading misses changes; the publisher never waits for it.
            with contextlib.suppress(queue.Full):
                subscription.queue.put_nowait(change)
        for listener in listeners:
            listener(change)
