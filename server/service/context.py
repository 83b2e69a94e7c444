"""What every part of the service shares: database, keys, settings, clock, caches, locks, and
where stored changes are announced.

The context is the ground the wings stand on (with the match facts, ``matches``, and the
clocks), so it imports no wing. The notifier it holds is the live wing's
(``server.service.live.streams.Notifier``), handed in by whoever builds the context; the
context knows it only as a ``Publisher``, the two things the wings that store changes ask of
it. The live wing, which also subscribes and relays, is given the notifier itself.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from server.config import ServerConfig
from server.domain import Change, Hand, Match, MatchStatus
from server.keys import ServerKeys
from server.metrics import Metrics
from server.store.db import Database, Transaction
from server.store.repository import Repository
from shared.rules import GameState, Phase

K = TypeVar("K")
V = TypeVar("V")


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class LruCache(Generic[K, V]):
    """A small thread-safe least-recently-used map. Values must be immutable."""

    def __init__(self, capacity: int = 4096) -> None:
        self._capacity = capacity
        self._lock = threading.Lock()
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)

    def discard(self, key: K) -> None:
        with self._lock:
            self._items.pop(key, None)

    def discard_where(self, unwanted: Callable[[K], bool]) -> None:
        with self._lock:
            for key in [k for k in self._items if unwanted(k)]:
                del self._items[key]

    def __len__(self) -> int:
        return len(self._items)


class MatchCache(LruCache[str, Match]):
    """Matches by id as last written by this process: a finished match is not kept, nor its
    hands' records (a finished match's readers are few; they read it from the database)."""

    def __init__(self, capacity: int, hands: LruCache[tuple[str, int], Hand]) -> None:
        super().__init__(capacity)
        self._hands = hands

    def put(self, key: str, value: Match) -> None:
        if value.status is not MatchStatus.FINISHED:
            super().put(key, value)
            return
        self.discard(key)
        self._hands.discard_where(lambda hand: hand[0] == key)


class StateCache:
    """Recently used match states by ``(match id, revision)``: a hit skips parsing the snapshot.

    States are immutable values, so sharing one between threads is safe.
    """

    def __init__(self, capacity: int = 2048) -> None:
        self._items: LruCache[str, tuple[int, GameState]] = LruCache(capacity)

    def __len__(self) -> int:
        return len(self._items)

    def get(self, match_id: str, revision: int) -> GameState | None:
        item = self._items.get(match_id)
        if item is None or item[0] != revision:
            return None
        return item[1]

    def put(self, match_id: str, revision: int, state: GameState) -> None:
        if state.phase is Phase.MATCH_OVER:  # a finished match is not kept (``MatchCache``)
            self._items.discard(match_id)
            return
        current = self._items.get(match_id)
        if current is None or current[0] <= revision:
            self._items.put(match_id, (revision, state))


class MatchLocks:
    """Striped locks that serialize changes to one match within this process."""

    def __init__(self, stripes: int = 256) -> None:
        self._locks = [threading.Lock() for _ in range(stripes)]

    @contextmanager
    def hold(self, match_id: str) -> Iterator[None]:
        with self._locks[hash(match_id) % len(self._locks)]:
            yield


class Publisher(Protocol):
    """Where a change this process stored is announced: Watch streams and in-process listeners
    (the bot runner) hear it."""

    def publish(self, change: Change) -> None: ...

    def add_listener(self, listener: Callable[[Change], None]) -> None: ...


@dataclass
class ServiceContext:
    db: Database
    keys: ServerKeys
    config: ServerConfig
    notifier: Publisher
    """The live wing's notifier (``server.service.live.streams.Notifier``)."""
    clock: Callable[[], int] = wall_clock_ms
    states: StateCache = field(init=False)
    """States of the matches in play, ``config.match_cache_size`` at most."""
    hands: LruCache[tuple[str, int], Hand] = field(init=False)
    """Commit-reveal records by (match id, hand number); the secret never changes."""
    matches: MatchCache = field(init=False)
    """Matches by id as last written by this process (seats are fixed once a match starts)."""
    metrics: Metrics = field(default_factory=Metrics)
    """This process's counters (served only with ``metrics_listen``)."""
    locks: MatchLocks = field(default_factory=MatchLocks)
    """Moves of one match take turns within this process (the database decides between
    processes); the moves of other matches never wait."""

    def __post_init__(self) -> None:
        size = self.config.match_cache_size
        self.states = StateCache(size)
        self.hands = LruCache(2 * size)
        self.matches = MatchCache(size, self.hands)

    def repo(self, session: Transaction) -> Repository:
        return Repository(session, self.keys.bot_public)
