"""Rule options have types and ranges (issue 10); stored matches load under types alone."""

from __future__ import annotations

import pytest

from shared.rules import ConfigError, RuleConfig, make_config


def test_a_stored_config_outside_todays_ranges_still_loads() -> None:
    """A match stored before a range was narrowed keeps loading; a new one is refused."""
    stored = {**make_config("classic").to_dict(), "target": 60_000, "hand_size": 12}
    with pytest.raises(ConfigError, match="option target must be a whole number"):
        make_config("classic", {"target": 60_000})
    loaded = RuleConfig.from_dict(stored)
    assert loaded.target == 60_000
    with pytest.raises(ConfigError, match="decks"):
        RuleConfig.from_dict({**stored, "decks": 2.0})  # types are always checked


@pytest.mark.parametrize("sides", [[[0, 1, 2]], [[0], [1, 2]], [[0, 1], [2]]])
def test_cutthroat_needs_three_sides_of_one(sides: list[list[int]]) -> None:
    with pytest.raises(ConfigError, match="cutthroat"):
        make_config("three_cutthroat", {"partnerships": sides})


@pytest.mark.parametrize("preset", ["classic", "two_player", "three_simple", "three_cutthroat",
                                    "six_2x3", "six_3x2", "samba", "bolivia",
                                    "modern_american", "hand_and_foot"])  # fmt: skip
def test_every_preset_is_within_the_ranges(preset: str) -> None:
    config = make_config(preset)
    assert RuleConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize(
    ("name", "value"),
    [("decks", 9), ("decks", 0), ("jokers_per_deck", 5), ("target", 99), ("target", 50_001),
     ("red3_value", 1001), ("ask_limit_per_hand", -1), ("draw_count", 4), ("hand_size", 23),
     ("natural_canasta_bonus", True), ("black3_freezes", 0), ("wild_limit", "max4"),
     ("foot_size", 23), ("pile_take_count", 0), ("hands_per_match", 0),
     ("min_meld_by_hand", [50, 1001]), ("min_meld_by_hand", [50] * 11), ("closed_books", 1),
     ("clean_sevens_bonus", -5), ("red3_unplayed_value", 1001)],
)  # fmt: skip
def test_values_outside_the_ranges_name_the_option(name: str, value: object) -> None:
    with pytest.raises(ConfigError, match=name):
        make_config("classic", {name: value})


def test_a_foot_counts_toward_the_cards_a_deal_needs() -> None:
    """§3.7: hands and feet together must leave a stock: one pack holds four 11-card hands
    and a stock of ten, but not their feet as well."""
    assert make_config("hand_and_foot").deck_size == 270
    make_config("hand_and_foot", {"decks": 1, "foot_size": 0})
    with pytest.raises(ConfigError, match="stock"):
        make_config("hand_and_foot", {"decks": 1})


def test_closed_books_take_no_sequences_3_7() -> None:
    """§3.7: Hand and Foot's books are melds of one rank, or with ``allow_wild_melds`` (the
    wild books some groups play) of wild cards; sequences are refused with them."""
    with pytest.raises(ConfigError, match="closed books"):
        make_config("hand_and_foot", {"allow_sequences": True})
    # Without closed books, several melds of a rank take at most three packs (§3.4's search).
    open_books = {"closed_books": False, "clean_books_to_go_out": 0, "dirty_books_to_go_out": 0}
    assert make_config("hand_and_foot", {**open_books, "allow_sequences": True, "decks": 3})
    assert make_config("hand_and_foot", {"allow_wild_melds": True}).allow_wild_melds


@pytest.mark.parametrize(
    ("preset", "options"),
    [("classic", {"clean_books_to_go_out": 2}), ("samba", {"dirty_books_to_go_out": 1}),
     ("hand_and_foot", {"closed_books": False, "decks": 3}),
     ("modern_american", {"closed_books": True, "clean_books_to_go_out": 1})],
)  # fmt: skip
def test_books_to_go_out_need_closed_books_3_7(preset: str, options: dict[str, object]) -> None:
    """§3.7: clean and dirty books to go out are Hand and Foot's, books closed at seven;
    without ``closed_books``, or under Modern American's own rules (§3.6), they are refused
    (accepted, they left a player without a legal move, ``test_playouts``). With closed
    books any preset may ask for them."""
    with pytest.raises(ConfigError, match="books_to_go_out"):
        make_config(preset, options)
    config = make_config("classic", {"closed_books": True, "clean_books_to_go_out": 2})
    assert config.clean_books_to_go_out == 2
    assert make_config("hand_and_foot").dirty_books_to_go_out == 1


@pytest.mark.parametrize(
    ("preset", "options"),
    [("three_cutthroat", {"closed_books": True}),
     ("three_cutthroat", {"closed_books": True, "clean_books_to_go_out": 1}),
     ("hand_and_foot", {"players": 3, "partnerships": [[0], [1], [2]], "cutthroat": True,
                        "multiple_melds_per_rank": False})],
)  # fmt: skip
def test_cutthroat_refuses_closed_books_3_2_3_7(preset: str, options: dict[str, object]) -> None:
    """§3.7: a book closes at seven cards; §3.2 (SC35): cutthroat's partners join their
    melds, and two melds of a rank joined can pass seven (random play made a book of eight
    fours). The combination is refused; either option alone stays playable."""
    with pytest.raises(ConfigError, match="closed_books is not for cutthroat"):
        make_config(preset, options)
    assert make_config("three_cutthroat").cutthroat
    assert make_config("three_simple", {"closed_books": True}).closed_books


@pytest.mark.parametrize(
    ("preset", "options"),
    [("three_cutthroat", {"closed_books": True}), ("classic", {"clean_books_to_go_out": 2}),
     ("samba", {"decks": 4})],
)  # fmt: skip
def test_a_stored_match_keeps_loading_after_its_combination_was_refused(
    preset: str, options: dict[str, object]
) -> None:
    """§3.2, §3.4, §3.7: combinations refused after matches may have been stored with them
    (``RuleConfig.check_new``) are refused for a new match, but a stored match's config
    still reads back, so that its players can see it and end it."""
    with pytest.raises(ConfigError):
        make_config(preset, options)
    stored = {**make_config(preset).to_dict(), **options}
    config = RuleConfig.from_dict(stored)
    assert config.to_dict() == stored
    with pytest.raises(ConfigError):
        config.check_new()
