"""Tests for commit-reveal dealing and the normative shuffle."""

import hashlib
from collections import Counter
from itertools import permutations

import pytest

from shared.crypto.fairdeal import (
    SECRET_SIZE,
    _uniform_below,
    _words,
    commitment,
    deal_seed,
    derived_secret,
    new_secret,
    shuffle,
    verify_commitment,
)

SECRET = bytes(range(32))


def _reference_shuffle(n: int, seed: bytes) -> list[int]:
    """A naive transcription of the module docstring, to check the code matches the spec."""
    stream = hashlib.shake_256(b"canasta.v1/shuffle\x00" + seed).digest(64 * n + 64)
    position = 0
    deck = list(range(n))
    for i in range(n - 1, 0, -1):
        m = i + 1
        limit = 2**32 - (2**32 % m)
        while True:
            w = int.from_bytes(stream[position : position + 4], "big")
            position += 4
            if w < limit:
                break
        j = w % m
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def test_new_secret_is_fresh() -> None:
    a, b = new_secret(), new_secret()
    assert len(a) == SECRET_SIZE
    assert len(b) == SECRET_SIZE
    assert a != b


def test_a_derived_secret_is_the_same_for_a_hand_and_differs_for_any_other() -> None:
    """Issue 30: a restored server derives the very secret it drew before (HMAC-SHA256 of
    the hand's context under the deal key), and nothing about one hand's secret tells
    another's."""
    key = bytes(range(100, 132))
    secret = derived_secret(key, "m1", 3)
    assert len(secret) == SECRET_SIZE
    assert derived_secret(key, "m1", 3) == secret
    others = {
        derived_secret(key, "m1", 4),
        derived_secret(key, "m2", 3),
        derived_secret(bytes(32), "m1", 3),
        derived_secret(key, "m13", 0),
    }
    assert secret not in others
    assert len(others) == 4
    with pytest.raises(ValueError, match="at least 32 bytes"):
        derived_secret(b"short", "m1", 3)


def test_commitment_known_answer_and_verification() -> None:
    c = commitment(bytes(32), "match-1", 1)
    assert c.hex() == "e509c1f9874dde8ba8b10c50d6cbe53f5430811ab005032dae3e7226c18ee945"
    assert verify_commitment(bytes(32), "match-1", 1, c)
    assert not verify_commitment(SECRET, "match-1", 1, c)
    assert not verify_commitment(bytes(32), "match-1", -1, c)


def test_commitment_changes_with_every_input() -> None:
    base = commitment(SECRET, "match-1", 1)
    assert commitment(SECRET, "match-1", 1) == base
    assert commitment(bytes(32), "match-1", 1) != base
    assert commitment(SECRET, "match-2", 1) != base
    assert commitment(SECRET, "match-1", 2) != base
    assert commitment(SECRET + b"\x00", "match-1", 1) != base


def test_deal_seed_known_answer() -> None:
    seed = deal_seed(bytes(32), "match-1", 1, [b"a", b"bc"])
    assert seed.hex() == "7fdd19527a50b77475a7ca244fb30b1c310331adc966e1b4db64768954268a05"


def test_deal_seed_changes_with_every_input_and_order() -> None:
    contributions = [b"sig-north", b"sig-east", b"sig-south"]
    base = deal_seed(SECRET, "match-1", 3, contributions)
    variants = [
        deal_seed(bytes(32), "match-1", 3, contributions),
        deal_seed(SECRET, "match-9", 3, contributions),
        deal_seed(SECRET, "match-1", 4, contributions),
        deal_seed(SECRET, "match-1", 3, list(reversed(contributions))),
        deal_seed(SECRET, "match-1", 3, [b"sig-northsig-east", b"sig-south"]),
        deal_seed(SECRET, "match-1", 3, contributions[:2]),
        deal_seed(SECRET, "match-1", 3, [*contributions, b""]),
        deal_seed(SECRET, "match-1", 3, [b"sig-nortX", b"sig-east", b"sig-south"]),
    ]
    assert len({base, *variants}) == len(variants) + 1
    assert deal_seed(SECRET, "match-1", 3, tuple(contributions)) == base
    assert base != commitment(SECRET, "match-1", 3)


def test_hand_number_range_is_checked() -> None:
    with pytest.raises(ValueError, match="hand_number"):
        commitment(SECRET, "m", -1)
    with pytest.raises(ValueError, match="hand_number"):
        deal_seed(SECRET, "m", 2**64, [])


def test_shuffle_known_answer_vector() -> None:
    assert shuffle(108, b"\x00" * 32)[:10] == [78, 15, 16, 31, 46, 77, 79, 25, 18, 98]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 52, 108, 162])
def test_shuffle_is_permutation_matching_reference(n: int) -> None:
    seed = hashlib.sha256(str(n).encode()).digest()
    deck = shuffle(n, seed)
    assert sorted(deck) == list(range(n))
    assert deck == _reference_shuffle(n, seed)


def test_shuffle_is_deterministic_and_seed_sensitive() -> None:
    seed = deal_seed(SECRET, "match-1", 1, [b"x"])
    assert shuffle(108, seed) == shuffle(108, seed)
    assert shuffle(108, seed) != shuffle(108, seed[:-1] + b"\x00")
    assert shuffle(108, seed) != shuffle(108, bytes(32))


def test_shuffle_rejects_bad_size() -> None:
    with pytest.raises(ValueError, match="n must be"):
        shuffle(-1, bytes(32))
    with pytest.raises(ValueError, match="n must be"):
        shuffle(2**32 + 1, bytes(32))


def test_word_stream_extends_seamlessly() -> None:
    seed = b"stream"
    words = _words(seed, 0)
    got = [next(words) for _ in range(200)]  # far beyond the first chunk
    stream = hashlib.shake_256(b"canasta.v1/shuffle\x00" + seed).digest(800)
    assert got == [int.from_bytes(stream[i : i + 4], "big") for i in range(0, 800, 4)]


def test_uniform_below_rejects_the_biased_tail() -> None:
    # m = 3: 2**32 % 3 == 1, so only the very top word is rejected.
    assert _uniform_below(iter([2**32 - 1, 7]), 3) == 1
    assert _uniform_below(iter([2**32 - 2, 7]), 3) == (2**32 - 2) % 3
    # m = 3 * 2**30: the top quarter of the word space is rejected.
    m = 3 * 2**30
    assert _uniform_below(iter([2**32 - 1, m, m - 1]), m) == m - 1
    # Powers of two reject nothing.
    assert _uniform_below(iter([2**32 - 1]), 4) == 3


def test_shuffle_is_uniform_for_small_n() -> None:
    trials = 24_000
    counts = Counter(tuple(shuffle(4, i.to_bytes(4, "big"))) for i in range(trials))
    assert set(counts) == set(permutations(range(4)))
    expected = trials / 24
    assert all(abs(c - expected) < 200 for c in counts.values())  # about 6 standard deviations
    chi_square = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi_square < 80  # 23 degrees of freedom: mean 23, p(>80) is far below 1e-6
