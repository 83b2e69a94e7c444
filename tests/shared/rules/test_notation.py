"""Reading actions and whole turns that people type (shared/rules/notation.py).

Every malformed input must give a ``NotationError`` with one clear line; nothing else may
escape the parser. ``str(action)`` is the canonical notation and must read back exactly.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.rules import (
    Action,
    Answer,
    AskPartner,
    Discard,
    Draw,
    LayOff,
    Meld,
    NotationError,
    Pass,
    TakePile,
    parse_action,
    parse_cards,
    parse_turn,
)
from shared.rules.cards import JOKER

FUZZ = settings(max_examples=300, derandomize=True, database=None)


def cs(text: str) -> tuple[int, ...]:
    return parse_cards(text)


def one(text: str) -> int:
    (card,) = parse_cards(text)
    return card


def assert_clear(exc: NotationError) -> None:
    """One non-empty line a player can read, of sensible length."""
    message = str(exc)
    assert message == exc.message
    assert message
    assert message.strip() == message
    assert len(message.splitlines()) == 1, f"a message of several lines: {message!r}"
    assert len(message) <= 400, f"a message of {len(message)} characters"
    assert exc.kind == "notation"
    assert isinstance(exc, ValueError)


VALID: list[tuple[str, Action]] = [
    ("draw", Draw()),
    ("DRAW", Draw()),
    ("  draw  ", Draw()),
    ("d", Draw()),
    ("stock", Draw()),
    ("pickup", TakePile()),
    ("take", TakePile()),
    ("pickup 7h 7c", TakePile(cs("7h 7c"))),
    ("pick 7h, 7c", TakePile(cs("7h"), (cs("7c"),))),
    ("pick-up 7h 2c, kd kc ks", TakePile(cs("7h 2c"), (cs("kd kc ks"),))),
    ("take 9h 9s / 5c 5d 5h / jk 4c 4d", TakePile(cs("9h 9s"), (cs("5c 5d 5h"), cs("jk 4c 4d")))),
    ("meld 7h 7c 2s", Meld((cs("7h 7c 2s"),))),
    ("MELD 7H 7C 2S, kd kc ks", Meld((cs("7h 7c 2s"), cs("kd kc ks")))),
    ("m 10h td T♠", Meld((cs("10h 10d 10s"),))),
    ("meld 3c 3s 3c", Meld((cs("3c 3s 3c"),))),
    ("meld joker 8c 8d/8h 8s 2d", Meld((cs("jk 8c 8d"), cs("8h 8s 2d")))),
    ("lay 9 9d 2c", LayOff(7, cs("9d 2c"))),
    ("lay 9: 9d 2c", LayOff(7, cs("9d 2c"))),
    ("lay 9:9d", LayOff(7, cs("9d"))),
    ("lay 9d 9h", LayOff(7, cs("9d 9h"))),
    ("lay 9d 2c", LayOff(7, cs("9d 2c"))),
    ("lay k 2c", LayOff(11, cs("2c"))),
    ("layoff t td", LayOff(8, cs("10d"))),
    ("add 10 jk", LayOff(8, (JOKER,))),
    ("l 3 3c", LayOff(1, cs("3c"))),
    ("lay-off A: ah as", LayOff(12, cs("ah as"))),
    ("discard kd", Discard(one("kd"))),
    ("discard Kd", Discard(one("kd"))),
    ("x jk", Discard(JOKER)),
    ("throw 10♦", Discard(one("10d"))),
    ("discard\t3s", Discard(one("3s"))),
    ("ask", AskPartner()),
    ("answer yes", Answer(True)),
    ("answer y", Answer(True)),
    ("answer NO", Answer(False)),
    ("answer n", Answer(False)),
    ("yes", Answer(True)),
    ("no", Answer(False)),
    ("pass", Pass()),
]


@pytest.mark.parametrize(("text", "action"), VALID, ids=[t for t, _ in VALID])
def test_valid_actions(text: str, action: Action) -> None:
    parsed = parse_action(text)
    assert parsed == action
    assert parse_action(str(parsed)) == parsed


@pytest.mark.parametrize(
    ("action", "text"),
    [
        (Draw(), "draw"),
        (TakePile(), "pickup"),
        (TakePile(cs("7h 7c")), "pickup 7h 7c"),
        (TakePile(cs("7h 2c"), (cs("kd kc ks"),)), "pickup 7h 2c, kd kc ks"),
        (Meld((cs("7h 7c 2s"), cs("10d 10s 10h"))), "meld 7h 7c 2s, 10d 10s 10h"),
        (LayOff(8, cs("10h jk")), "lay 10 10h jk"),
        (Discard(JOKER), "discard jk"),
        (AskPartner(), "ask"),
        (Answer(True), "answer yes"),
        (Answer(False), "answer no"),
        (Pass(), "pass"),
    ],
)
def test_canonical_text(action: Action, text: str) -> None:
    assert str(action) == text


# Each malformed input, with a piece of text that its message must contain: the offending
# text itself, or what was expected instead.
MALFORMED: list[tuple[str, str]] = [
    ("", "expected an action"),
    ("   ", "expected an action"),
    ("\n", "expected an action"),
    ("11h", "11h"),
    ("7x", "7x"),
    ("7", "'7'"),
    ("hh", "hh"),
    ("10", "10"),
    ("7h", "unknown action"),
    ("meld", "meld needs cards"),
    ("m", "meld needs cards"),
    ("meld ,", "empty group"),
    ("meld /", "empty group"),
    ("meld 7h 7c,", "empty group"),
    ("meld 7h 7c, , kd kc ks", "empty group"),
    ("meld 7h 7c 7", "no suit"),
    ("meld 7h 7c 7x", "7x"),
    ("meld 7h, hh", "hh"),
    ("meld 7h 7c 8♠x", "8♠x"),
    ("meld 7h\x007c", "could not read the card"),
    ("discard", "discard exactly one card"),
    ("x", "discard exactly one card"),
    ("discard 7h 8h", "7h 8h"),
    ("discard jk jk", "jk jk"),
    ("discard 7x", "7x"),
    ("discard 10", "no suit"),
    ("discard 0h", "0h"),
    ("discard 15h", "15h"),
    ("discard ♠", "♠"),
    ("discard 7♠♠", "7♠♠"),
    ("DISCARD QX", "QX"),
    ("discard ☃", "☃"),
    ("draw 7h", "7h"),
    ("d 7h", "7h"),
    ("draw draw", "draw"),
    ("answer", "answer yes"),
    ("answer maybe", "answer yes"),
    ("answer yes no", "answer yes"),
    ("yes please", "please"),
    ("no thanks", "thanks"),
    ("ask now", "now"),
    ("pass 7h", "7h"),
    ("lay", "lay needs cards"),
    ("l", "lay needs cards"),
    ("lay 9", "lay needs cards"),
    ("lay 9:", "lay needs cards"),
    ("lay :", "rank"),
    ("lay 2c", "which meld"),
    ("lay jk", "which meld"),
    ("lay 2c jk", "which meld"),
    ("lay 9d 8d", "which meld"),
    ("lay zz 7h", "zz"),
    ("lay jk: 2c", "jk"),
    ("lay 9 9x", "9x"),
    ("pickup 7h,,7c", "empty group"),
    ("pickup ,", "empty group"),
    ("pickup 7h,", "empty group"),
    ("pickup 7h 7x", "7x"),
    ("frobnicate", "frobnicate"),
    ("melds 7h 7c 7d", "melds"),
    ("dicsard 7h", "dicsard"),
    ("ñ¿☃", "ñ¿☃"),
    ("🂡🂡🂡", "🂡🂡🂡"),
    ("\x00", "unknown action"),
    ("\u200b", "unknown action"),
    ("draw\u200b", "unknown action"),
    ("\x1b[31mdraw", "unknown action"),
    ("x" * 10_000, "too long"),
    ("meld " + "7h " * 700, "too long"),
    (";;", ";;"),
    ("draw;discard 7h", "draw;discard"),
]


@pytest.mark.parametrize(("text", "fragment"), MALFORMED, ids=[repr(t[:16]) for t, _ in MALFORMED])
def test_malformed_action(text: str, fragment: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_action(text)
    assert_clear(info.value)
    assert fragment.lower() in info.value.message.lower()


MALFORMED_TURNS = [t for t, _ in MALFORMED if t != "draw;discard 7h"]


@pytest.mark.parametrize("text", MALFORMED_TURNS, ids=[repr(t[:16]) for t in MALFORMED_TURNS])
def test_malformed_turn(text: str) -> None:
    """The same inputs as a whole turn: refused with a clear message too."""
    with pytest.raises(NotationError) as info:
        parse_turn(text)
    assert_clear(info.value)


# -- whole turns ---------------------------------------------------------------------------


def test_turn_with_semicolons_and_newlines() -> None:
    want = [Draw(), Meld((cs("7h 7c 7d"),)), LayOff(7, cs("9d")), Discard(one("kd"))]
    assert parse_turn("draw; meld 7h 7c 7d; lay 9: 9d; discard kd") == want
    assert parse_turn("draw\nmeld 7h 7c 7d\nlay 9 9d\ndiscard kd\n") == want
    assert parse_turn("draw\r\nmeld 7h 7c 7d;\r\nlay 9 9d ;; discard kd") == want
    assert parse_turn(";draw;") == [Draw()]


@pytest.mark.parametrize(
    ("text", "step", "part"),
    [
        ("draw; discard 7x", 2, "discard 7x"),
        ("draw\nfrobnicate", 2, "frobnicate"),
        ("draw; meld 7h 7c 7d; meld", 3, "meld"),
        ("draw 7h; discard kd", 1, "draw 7h"),
        ("draw;;\n; lay zz 9d", 2, "lay zz 9d"),
    ],
)
def test_turn_error_names_the_failing_step(text: str, step: int, part: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_turn(text)
    assert_clear(info.value)
    assert info.value.message.startswith(f"action {step} ({part!r}): ")


def test_single_action_turn_error_is_not_numbered() -> None:
    with pytest.raises(NotationError) as info:
        parse_turn("discard 7x")
    assert not info.value.message.startswith("action")
    assert "7x" in info.value.message


@pytest.mark.parametrize("text", ["", ";;", "\n\n", " ; \n ; "])
def test_empty_turn(text: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_turn(text)
    assert_clear(info.value)
    assert "at least one action" in info.value.message


# -- round trips and fuzzing -----------------------------------------------------------------

faces = st.integers(min_value=0, max_value=52)
groups = st.lists(faces, min_size=1, max_size=8).map(tuple)
actions: st.SearchStrategy[Action] = st.one_of(
    st.just(Draw()),
    st.builds(TakePile),
    st.builds(
        TakePile,
        groups,
        st.lists(groups, max_size=3).map(tuple),
    ),
    st.builds(Meld, st.lists(groups, min_size=1, max_size=4).map(tuple)),
    st.builds(LayOff, st.integers(min_value=0, max_value=12), groups),
    st.builds(Discard, faces),
    st.just(AskPartner()),
    st.builds(Answer, st.booleans()),
    st.just(Pass()),
)


@given(actions)
@FUZZ
def test_str_round_trips(action: Action) -> None:
    assert parse_action(str(action)) == action
    assert parse_action(str(action).upper()) == action


@given(st.lists(actions, min_size=1, max_size=6), st.sampled_from(["; ", ";", "\n", " ;\n"]))
@settings(max_examples=100, derandomize=True, database=None)
def test_turn_round_trips(steps: list[Action], separator: str) -> None:
    assert parse_turn(separator.join(str(a) for a in steps)) == steps


def test_pile_take_without_support_but_with_melds_round_trips() -> None:
    action = TakePile((), (cs("kd kc ks"),))
    assert parse_action(str(action)) == action


# Text that looks like notation: verbs, cards, ranks, separators and some junk.
_WORDS = [
    "draw", "d", "pickup", "take", "meld", "m", "lay", "add", "discard", "x", "ask", "answer",
    "yes", "no", "pass", "7h", "10d", "td", "jk", "joker", "Q♠", "3c", "2s", "9", "k", "10",
    ":", ",", "/", ";", "\n", "zz", "11h", "7x", "", " ", "☃", "\x00",
]  # fmt: skip
notation_like = st.lists(st.sampled_from(_WORDS), max_size=8).map(" ".join)


@given(st.one_of(st.text(max_size=40), notation_like))
@FUZZ
def test_parser_never_crashes(text: str) -> None:
    """Any text either reads as an action whose canonical text reads back the same, or is
    refused with a clear ``NotationError``; no other exception escapes."""
    try:
        action = parse_action(text)
    except NotationError as exc:
        assert_clear(exc)
    else:
        assert parse_action(str(action)) == action


@given(st.one_of(st.text(max_size=60), notation_like))
@FUZZ
def test_turn_parser_never_crashes(text: str) -> None:
    try:
        steps = parse_turn(text)
    except NotationError as exc:
        assert_clear(exc)
    else:
        assert steps
        assert parse_turn("; ".join(str(a) for a in steps)) == steps
