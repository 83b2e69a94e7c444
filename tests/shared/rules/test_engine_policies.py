"""Engine policies where the rulebooks leave a gap (docs/rules.md §3.8a), each pinned by a test."""

from __future__ import annotations

import pytest

from shared import rules
from shared.rules.cards import parse_cards
from shared.rules.state import GameState


def _position(
    preset: str,
    hands: list[str],
    *,
    melds: list[str] | None = None,
    pile: str = "",
    turn: int = 0,
    stock: str = "",
    options: dict[str, object] | None = None,
    fill: str = "stock",
) -> GameState:
    config = rules.make_config(preset, options or {})
    state = rules.new_match(config, seed=0)
    return rules.deal_position(
        state,
        [parse_cards(h) for h in hands],
        parse_cards(stock),
        pile=parse_cards(pile),
        melds=[[parse_cards(m) for m in side.split("|") if m.strip()] for side in melds or []],
        turn=turn,
        fill=fill,
    )


def test_cutthroat_merged_meld_over_the_wild_limit_takes_naturals_but_no_wild() -> None:
    """§3.2: the partners' melds join; two legal melds of kings with three wilds each become one
    meld with six wilds. It stays; naturals may join it, another wild may not."""
    state = _position(
        "three_cutthroat",
        ["5c 6d 8h 9s jc kc 2c", "5d 6c 8d 9c jd qc qd", "9d 9h ac ad as 4c 4d 4h 6h"],
        melds=["kh ks 2d 2h jk", "kd kd 2s 2s jk", ""],
        pile="7c 9c",
        turn=2,
        stock="10c 10d 10h 10s 7d 7h",
    )
    state = rules.apply(state, 2, rules.parse_action("pickup 9d 9h, ac ad as"))
    assert state.lone_seat == 2
    merged = state.melds[state.side_of[0]][rules.cards.KING]
    assert sum(1 for c in merged if rules.cards.IS_WILD[c]) == 6
    state = rules.apply(state, 2, rules.parse_action("discard 6h"))
    state = rules.apply(state, 0, rules.parse_action("draw"))
    with pytest.raises(rules.IllegalMoveError, match="at most three wild"):
        rules.check(state, 0, rules.parse_action("lay k 2c"))
    rules.check(state, 0, rules.parse_action("lay k kc"))


def test_asking_with_one_card_is_refused() -> None:
    """§1.11.2 / §1.11.3: after taking the pile down to one card a "no" could not be obeyed
    (discarding the last card goes out), so the question may not be asked."""
    state = _position(
        "classic",
        ["kd kh 9c", "5c 5d 6c 6d 7c", "8c 8d 4c 4d 4h", "5h 5s 6h 6s 7d"],
        melds=["qc qd qh qs qc qd 2c", ""],
        pile="kc",
        turn=0,
        stock="10c 10d 10h",
    )
    state = rules.apply(state, 0, rules.parse_action("pickup kd kh"))
    assert state.hands[0] == parse_cards("9c")
    with pytest.raises(rules.IllegalMoveError, match="one card"):
        rules.check(state, 0, rules.parse_action("ask"))
    rules.check(state, 0, rules.parse_action("discard 9c"))  # going out stays open


def test_black_threes_cannot_be_melded_after_partner_says_no() -> None:
    """§1.9: black threes meld only when going out; a "no" forbids going out this turn."""
    state = _position(
        "classic",
        ["3c 3s 3c 9d 9h", "5c 5d 6c 6d 7c", "8c 8d 4c 4d 4h", "5h 5s 6h 6s 7d"],
        melds=["qc qd qh qs qc qd 2c|9c 9s 2d", ""],
        pile="7h",
        turn=0,
        stock="10c 10d 10h",
    )
    state = rules.apply(state, 0, rules.parse_action("draw"))
    state = rules.apply(state, 0, rules.parse_action("ask"))
    state = rules.apply(state, 2, rules.parse_action("answer no"))
    with pytest.raises(rules.IllegalMoveError, match="partner said no"):
        rules.check(state, 0, rules.parse_action("meld 3c 3s 3c"))


def test_black_threes_that_cannot_go_out_are_refused_naming_the_rule() -> None:
    """§1.9: the refusal of a black-three meld that leaves the player unable to go out says
    that black threes meld only when going out, not the partner's "yes" wording of §1.11.2."""
    state = _position(
        "classic",
        ["3c 3c 3s 9d 9h", "5c 5d 6c 6d 7c", "8c 8d 4c 4d 4h", "5h 5s 6h 6s 7d"],
        melds=["qc qd qh", ""],
        pile="7h",
        turn=0,
        stock="10c 10d 10h",
    )
    state = rules.apply(state, 0, rules.parse_action("draw"))
    with pytest.raises(rules.IllegalMoveError) as refused:
        rules.check(state, 0, rules.parse_action("meld 3c 3c 3s"))
    assert refused.value.rule == "1.9"
    assert refused.value.message.startswith(
        "black threes may be melded only in the turn you go out"
    )


def test_one_card_dead_end_reads_as_a_sentence() -> None:
    """§1.11.3: the guard's refusal names the missing canastas in a whole sentence."""
    state = _position(
        "classic",
        ["7h 7d 7c", "5c 5d 6c 6d 7c", "8c 8d 4c 4d 4h", "5h 5s 6h 6s 7d"],
        melds=["qc qd qh", ""],
        pile="4s",
        turn=0,
        stock="9s 10d 10h",
    )
    state = rules.apply(state, 0, rules.parse_action("draw"))
    with pytest.raises(rules.IllegalMoveError) as refused:
        rules.check(state, 0, rules.parse_action("meld 7h 7d 7c"))
    assert refused.value.rule == "1.11.3"
    assert refused.value.message == (
        "that would leave you one card, and discarding it would take you out, which you may "
        "not do: your side needs 1 canasta and has 0"
    )


@pytest.mark.parametrize(
    ("options", "hand", "melds", "says"),
    [
        ({}, "9d 5c 6h", "9c 9h 9s", "the pile's top card can be laid off on your side's meld"),
        (
            {"stock_out_forced_take": "any_legal"},
            "9d 9h 6h",
            "qc qd qh",
            "you can take the pile, and in this game any possible take is compulsory",
        ),
    ],
)
def test_compulsory_take_names_the_take_the_side_has(
    options: dict[str, object], hand: str, melds: str, says: str
) -> None:
    """§1.12 (D14): passing is refused with the reason that applies: a lay-off on a meld the
    side has, or (``any_legal``) the take by a pair, never a meld the side does not have."""
    state = _position(
        "classic",
        [hand, "5c 5d 6c 6d 7c", "8c 8d 4c 4d 4h", "5h 5s 6h 6s 7d"],
        melds=[melds, ""],
        pile="4s 9c",
        turn=0,
        options=options,
        fill="box",
    )
    with pytest.raises(rules.IllegalMoveError) as refused:
        rules.check(state, 0, rules.parse_action("pass"))
    assert refused.value.rule == "1.12"
    assert says in refused.value.message
    assert ("meld of nines" in refused.value.message) == (not options)
