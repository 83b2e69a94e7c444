"""The notifier: who hears a change, and that each revision is sent once and in order."""

from __future__ import annotations

from server.domain import Change, MatchStatus
from server.service.live.streams import Notifier


def _change(revision: int, match_id: str = "m", players: frozenset[int] = frozenset({1})) -> Change:
    return Change(match_id, revision, revision, MatchStatus.PLAYING, 0, players, server_to_act=True)


def test_publish_reaches_watchers_and_listeners_relay_only_watchers() -> None:
    notifier = Notifier()
    heard: list[Change] = []
    notifier.add_listener(heard.append)
    mine = notifier.subscribe(1, frozenset())
    notifier.publish(_change(1))
    notifier.relay(_change(2))
    assert heard == [_change(1)]  # the bot runner never hears of other processes' changes
    assert [mine.get(0.1), mine.get(0.1)] == [_change(1), _change(2)]


def test_a_revision_is_sent_once_and_never_after_a_newer_one() -> None:
    notifier = Notifier()
    mine = notifier.subscribe(1, frozenset({"m"}))
    assert notifier.relay(_change(3))
    notifier.publish(_change(3))  # this process's own move, found by the feed first
    assert not notifier.relay(_change(3))
    assert not notifier.relay(_change(2))
    assert notifier.published("m") == 3
    assert mine.get(0.1) == _change(3)
    assert mine.get(0.01) is None


def test_who_hears_what() -> None:
    notifier = Notifier()
    assert not notifier.watched()
    everything = notifier.subscribe(None, frozenset())
    one_match = notifier.subscribe(1, frozenset({"m"}))
    all_mine = notifier.subscribe(2, frozenset())
    assert notifier.watched()
    assert notifier.wanted("x", frozenset({7}))  # the operator's subscription wants it all
    everything.close()
    assert not notifier.wanted("x", frozenset({7}))
    assert notifier.wanted("x", frozenset({2}))
    assert notifier.wanted("m", frozenset({1}))
    assert not notifier.wanted("x", frozenset({1}))
    notifier.publish(_change(1, "x", frozenset({1, 2})))
    assert all_mine.get(0.1) == _change(1, "x", frozenset({1, 2}))
    assert one_match.get(0.01) is None
    one_match.close()
    all_mine.close()
    assert not notifier.watched()


def test_remembered_revisions_are_not_sent() -> None:
    notifier = Notifier()
    mine = notifier.subscribe(1, frozenset())
    notifier.remember("m", 4)
    assert not notifier.relay(_change(4))
    assert notifier.relay(_change(5))
    assert mine.get(0.1) == _change(5)


def test_a_watcher_is_not_sent_what_it_read_when_it_subscribed() -> None:
    notifier = Notifier()
    mine = notifier.subscribe(1, frozenset())
    notifier.publish(_change(1))  # queued while the watcher reads the state...
    notifier.publish(_change(1, "n"))
    mine.mark_sent([_change(2), _change(1, "n")])  # ...which is newer already
    notifier.publish(_change(3))
    assert mine.get(0.1) == _change(3)
    assert mine.get(0.01) is None


def test_only_the_most_recently_changed_matches_are_remembered() -> None:
    notifier = Notifier(remembered=2)
    for match_id in ("a", "b", "c"):
        notifier.publish(_change(1, match_id))
    assert [notifier.published(m) for m in ("a", "b", "c")] == [0, 1, 1]
