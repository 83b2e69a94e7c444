"""The engine's bounded memos (``shared.rules.memo``): the oldest entries go first, a quarter
at a time, and the newest stay, so a full memo keeps what is still being asked about."""

from __future__ import annotations

import sys
import threading

from shared.rules.memo import remember


def test_a_memo_below_its_limit_keeps_every_entry() -> None:
    memo: dict[int, str] = {}
    for key in range(8):
        assert remember(memo, key, str(key), 8) == str(key)
    assert memo == {key: str(key) for key in range(8)}


def test_a_full_memo_drops_its_oldest_quarter_and_keeps_the_newest() -> None:
    memo: dict[int, int] = {}
    for key in range(8):
        remember(memo, key, key, 8)
    remember(memo, 8, 8, 8)
    assert list(memo) == [2, 3, 4, 5, 6, 7, 8]
    for key in range(9, 20):
        remember(memo, key, key, 8)
    assert len(memo) <= 8
    assert list(memo) == sorted(memo)
    assert list(memo)[-6:] == list(range(14, 20))


def test_the_oldest_is_the_first_stored_not_the_first_asked() -> None:
    """Order is by storing: an entry asked again is not made younger (a hit costs a dict
    lookup and nothing more)."""
    memo: dict[str, int] = {}
    for key in "abcd":
        remember(memo, key, 0, 4)
    assert memo.get("a") == 0
    remember(memo, "e", 0, 4)
    assert list(memo) == ["b", "c", "d", "e"]


def test_a_tiny_memo_still_drops_one_entry() -> None:
    memo: dict[str, int] = {}
    remember(memo, "a", 1, 1)
    remember(memo, "b", 2, 1)
    assert memo == {"b": 2}


def test_threads_storing_into_one_full_memo_never_fail_it() -> None:
    """The server's worker threads list moves of several matches at once, so two evictions
    can meet in one memo: each must find the keys it drops (review of issue 27's caches)."""
    memo: dict[tuple[int, int], int] = {}
    failures: list[BaseException] = []

    def store(thread: int) -> None:
        for i in range(20_000):
            try:
                remember(memo, (thread, i), i, 32)
            except Exception as exc:  # (a KeyError or RuntimeError, before the lock)
                failures.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # (threads switch often, so a race shows within the test)
    try:
        threads = [threading.Thread(target=store, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not failures, failures[:3]
    assert len(memo) <= 32
