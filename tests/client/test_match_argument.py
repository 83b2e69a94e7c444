"""The match named after a command's cards (issue 28): a last word of 4 to 32 hex digits,
which no card, rank or meld name is."""

from __future__ import annotations

import pytest

from client.common import chosen_match, split_match
from client.errors import CliError
from shared.rules.cards import card_text, deck


def test_no_card_reads_as_a_match() -> None:
    words = {card_text(c) for c in deck()} | {"10", "jk", "joker", "9#2", "4h-6h", "wild", ","}
    for word in words:
        assert split_match(["7h", word]) == (["7h", word], None), word


def test_a_last_word_of_hex_digits_is_the_match() -> None:
    assert split_match(["7h", "7c", "2s", "3F2A"]) == (["7h", "7c", "2s"], "3F2A")
    assert split_match(["8735"]) == ([], "8735")
    assert split_match(["0" * 32]) == ([], "0" * 32)
    assert split_match(["9", "9d", "123"]) == (["9", "9d", "123"], None)  # too short
    assert split_match([]) == ([], None)


def test_the_match_named_twice() -> None:
    assert chosen_match("3f2a", None) == "3f2a"
    assert chosen_match(None, "3f2a") == "3f2a"
    assert chosen_match("3F2A", "3f2a") == "3F2A"
    with pytest.raises(CliError) as twice:
        chosen_match("3f2a", "8735")
    assert twice.value.code == 2
