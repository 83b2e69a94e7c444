"""The replay page (``canasta replay``, issue 33) in a real headless Chromium (tests/browser.py):
it loads with no console error and no request, steps forward and back with the keys and the
buttons showing, at every move, the table the engine's replay of the transcript has, takes a
screenshot of its first and last positions (in the test's tmp_path), fits a phone's screen, and
runs nothing a player's name smuggles in. A finished match of every preset is replayed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from client.replay import page, replay
from shared.rules import PRESETS, GameState, Phase, card_text
from shared.transcript import Transcript
from tests.browser import Browser
from tests.replaykit import finished, played, positions

pytestmark = pytest.mark.slow  # a browser: in make test, not in the inner loop

PHONE = (390, 844)
DESKTOP = (1200, 900)

_SNAPSHOT = """(() => {
  const cards = (box, sel) => Array.from(box.querySelectorAll(sel))
    .map((c) => c.getAttribute('data-card'));
  const seats = Array.from(document.querySelectorAll('#table .seat'));
  const pile = document.querySelector('#table .pile');
  const stock = document.querySelector('#table .stock');
  return {
    where: document.getElementById('where').textContent,
    hands: seats.map((s) => cards(s, '.hand [data-card]')),
    backs: seats.map((s) => s.querySelectorAll('.card.back').length),
    pile: pile ? cards(pile, '[data-card]') : null,
    stock: stock ? stock.textContent : null,
    melds: Array.from(document.querySelectorAll('#table .meld'))
      .flatMap((m) => cards(m, '[data-card]')),
    scores: document.querySelector('#table .scores').textContent,
    move: document.getElementById('move').textContent,
    status: document.getElementById('status').textContent,
    result: document.getElementById('result').hidden ? ''
      : document.getElementById('result').textContent,
    wide: document.documentElement.scrollWidth > window.innerWidth,
  };
})()"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One Chromium for the module's tests (each opens its own page file in it)."""
    with Browser(tmp_path_factory.mktemp("chromium")) as running:
        yield running


def _open(browser: Browser, transcript: Transcript, path: Path) -> None:
    """Write the page of ``transcript`` to ``path`` and load it: no console error, and no
    request but the file's own."""
    path.write_text(page(replay(transcript)), encoding="utf-8")
    seen = len(browser.events)
    browser.open(path)
    assert browser.problems(seen) == []
    assert browser.requests(seen) == [path.resolve().as_uri()]


def _meld_cards(state: GameState) -> list[str]:
    cards = [c for side in state.melds for meld in side for c in meld]
    cards += [c for side in state.extra for meld in side for c in meld]
    return sorted(card_text(c) for c in cards)


def _check(shown: dict[str, Any], state: GameState, index: int, *, face_up: bool) -> None:
    """The page's table at position ``index`` is the engine's ``state``."""
    assert shown["where"].startswith(f"move {index} of " if index else "start of ")
    assert not shown["wide"], "the page is wider than the screen"
    for score in state.scores:
        assert f": {score}" in shown["scores"]
    if state.hand_number == 0:
        assert shown["hands"] == [[] for _ in state.hands]
        return
    for seat, hand in enumerate(state.hands):
        if face_up:
            assert sorted(shown["hands"][seat]) == sorted(card_text(c) for c in hand)
        else:
            assert shown["hands"][seat] == []
            assert shown["backs"][seat] >= len(hand)  # (and the foot's, a card back)
    assert sorted(shown["melds"]) == _meld_cards(state)
    if state.phase in (Phase.DRAW, Phase.PLAY, Phase.ANSWER):
        assert shown["pile"] == [card_text(c) for c in state.pile[-1:]]
        assert f"{len(state.stock)} card" in shown["stock"]
    else:
        assert shown["stock"] is None
    if state.phase is Phase.MATCH_OVER:
        assert shown["status"].startswith("Match over")


def test_stepping_through_a_match_shows_the_engines_table_at_every_move(
    browser: Browser, tmp_path: Path
) -> None:
    transcript = finished("classic", hands=2, people={0: "Ann", 2: "Bob"})
    states = positions(transcript)
    browser.screen(*PHONE, mobile=True)
    _open(browser, transcript, tmp_path / "match.html")
    first = browser.screenshot(tmp_path / "first.png")
    assert first.startswith(b"\x89PNG")
    shown = browser.evaluate(_SNAPSHOT)
    assert shown["where"] == f"start of {len(states) - 1}"
    _check(shown, states[0], 0, face_up=True)
    for index in range(1, len(states)):  # forward, a key press at a time
        browser.press("ArrowRight")
        shown = browser.evaluate(_SNAPSHOT)
        _check(shown, states[index], index, face_up=True)
        assert f"#{index} " in shown["move"]
        if states[index].last_hand is not states[index - 1].last_hand:
            assert f"Hand {states[index].hand_number} " in shown["result"]
    assert shown["where"] == f"move {len(states) - 1} of {len(states) - 1}"
    last = browser.screenshot(tmp_path / "last.png")
    assert last.startswith(b"\x89PNG")
    assert last != first
    browser.press("ArrowRight")  # past the end: it stays
    assert browser.evaluate(_SNAPSHOT)["where"] == shown["where"]
    for index in range(len(states) - 2, len(states) - 40, -1):  # and back
        browser.press("ArrowLeft")
        _check(browser.evaluate(_SNAPSHOT), states[index], index, face_up=True)
    browser.press("Home")
    _check(browser.evaluate(_SNAPSHOT), states[0], 0, face_up=True)
    browser.press("PageDown")  # to the next hand's cut: hand 1's
    _check(browser.evaluate(_SNAPSHOT), states[1], 1, face_up=True)
    browser.press("PageDown")
    second = next(i for i, s in enumerate(states) if s.hand_number == 2)
    _check(browser.evaluate(_SNAPSHOT), states[second], second, face_up=True)
    browser.click("#prev")  # the buttons do what the keys do
    _check(browser.evaluate(_SNAPSHOT), states[second - 1], second - 1, face_up=True)
    browser.click("#last")
    _check(browser.evaluate(_SNAPSHOT), states[-1], len(states) - 1, face_up=True)
    assert browser.evaluate("document.getElementById('next').disabled") is True
    browser.screen(*DESKTOP, mobile=False)
    browser.screenshot(tmp_path / "last-desktop.png")
    assert browser.problems() == []


def test_a_running_matchs_hand_in_play_shows_no_card(browser: Browser, tmp_path: Path) -> None:
    transcript = played("classic", hands=2, then=12).transcript()
    states = positions(transcript)
    browser.screen(*PHONE, mobile=True)
    _open(browser, transcript, tmp_path / "running.html")
    browser.press("End")
    shown = browser.evaluate(_SNAPSHOT)
    assert states[-1].hand_number == 2
    _check(shown, states[-1], len(states) - 1, face_up=False)
    assert "to draw" in shown["status"] or "to play" in shown["status"]
    browser.press("PageUp")  # the hand in play's cut
    browser.press("ArrowLeft")  # the end of hand 1, which is over: face up
    index = next(i for i, s in enumerate(states) if s.hand_number == 2) - 1
    _check(browser.evaluate(_SNAPSHOT), states[index], index, face_up=True)
    browser.screenshot(tmp_path / "running.png")


def test_a_name_cannot_inject_markup_or_script(browser: Browser, tmp_path: Path) -> None:
    hostile = "</script><svg onload=alert(1)>&amp;"
    transcript = finished("two_player", people={0: hostile})
    browser.screen(*DESKTOP, mobile=False)
    _open(browser, transcript, tmp_path / "hostile.html")
    assert browser.evaluate("document.querySelectorAll('script').length") == 2
    assert browser.evaluate("document.querySelectorAll('svg[onload]').length") == 0
    labels = browser.evaluate(
        "Array.from(document.querySelectorAll('#table .seat .label')).map((e) => e.textContent)"
    )
    assert labels[0].startswith(hostile)  # shown as the text it is
    browser.press("End")
    assert not any(m == "Page.javascriptDialogOpening" for m, _ in browser.events)
    assert browser.problems() == []


@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_finished_match_of_every_preset_replays(
    browser: Browser, tmp_path: Path, preset: str
) -> None:
    transcript = finished(preset)
    states = positions(transcript)
    assert states[-1].phase is Phase.MATCH_OVER
    browser.screen(*PHONE, mobile=True)
    _open(browser, transcript, tmp_path / f"{preset}.html")
    browser.press("PageDown")  # the cut: every hand dealt, face up
    _check(browser.evaluate(_SNAPSHOT), states[1], 1, face_up=True)
    browser.screenshot(tmp_path / f"{preset}-first.png", whole=False)
    for index in range(2, min(len(states), 12)):
        browser.press("ArrowRight")
        _check(browser.evaluate(_SNAPSHOT), states[index], index, face_up=True)
    browser.press("End")
    shown = browser.evaluate(_SNAPSHOT)
    _check(shown, states[-1], len(states) - 1, face_up=True)
    assert shown["result"].startswith("Hand 1 ")
    browser.screenshot(tmp_path / f"{preset}-last.png", whole=False)
    assert browser.problems() == []
