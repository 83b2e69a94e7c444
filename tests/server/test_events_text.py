"""A log entry's events as stored (issue 29): the compact form, and the object form entries
stored before it hold, read alike."""

from __future__ import annotations

import json
import random

from server.store.repository.records import events_from_text, events_text
from shared.rules import (
    Event,
    apply,
    deal_hand,
    legal_actions,
    make_config,
    new_match,
    shuffled_deck,
)


def _events() -> list[Event]:
    """The events of the deal and a few hundred random legal actions of a classic match, and
    one made up with every field set (text, both kinds of card)."""
    rng = random.Random(3)
    config = make_config("classic")
    state = deal_hand(new_match(config, seed=3), shuffled_deck(config, 3))
    seen: list[Event] = list(state.events)
    for _ in range(300):
        actor = state.actor()
        if actor is None:
            break
        before = len(state.events)
        state = apply(state, actor, rng.choice(legal_actions(state, actor)))
        seen.extend(state.events[before:])
    seen.append(Event(1, "meld", seen[0].private[:3], seen[1].private[:2], "3 and 2"))
    return seen


def test_the_compact_form_gives_back_the_events() -> None:
    events = tuple(_events())
    assert len({e.kind for e in events}) >= 4
    text = events_text(events)
    assert events_from_text(text) == events
    assert len(text) < len(json.dumps([e.to_json() for e in events], separators=(",", ":"))) / 2


def test_the_object_form_stored_before_is_read_alike() -> None:
    events = tuple(_events())
    old = json.dumps([e.to_json() for e in events], separators=(",", ":"))
    assert events_from_text(old) == events
    assert events_from_text("[]") == ()
