"""What ``docs/transcript.md`` promises about reading a file and a header, checked against the
implementation: the rule options a header may leave out and the value each then takes, the
bounds a file's fields are held to while it is read, and the form of every refusal."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from shared.rules import PRESETS, RuleConfig, make_config
from shared.rules.config import CLASSIC, LATER_OPTIONS
from shared.transcript import (
    MAX_HEADER_BYTES,
    Header,
    Transcript,
    TranscriptError,
    canonical_json,
)
from shared.wire import Move, WireError, move_from_bytes, move_to_bytes

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
RECORDED = (VECTORS / "transcript-v1.json").read_bytes()


def _set_back_to_default() -> list[tuple[str, str]]:
    """Every (preset, later option) whose preset value differs from the option's default."""
    return [
        (preset, name)
        for preset, values in PRESETS.items()
        for name in sorted(LATER_OPTIONS)
        if name in values and values[name] != getattr(CLASSIC, name)
    ]


def _default(name: str) -> Any:
    value = getattr(CLASSIC, name)
    return list(value) if isinstance(value, tuple) else value


@pytest.mark.parametrize(("preset", "name"), _set_back_to_default())
def test_an_option_set_back_to_its_default_reads_back_as_played(preset: str, name: str) -> None:
    """A header (and a stored match) leaves a later option out while it holds its default;
    read back, the option takes that default, not the preset's value: Hand and Foot played to
    a target (``hands_per_match`` null) stays played to a target."""
    try:
        config = make_config(preset, {name: _default(name)})
    except ValueError:
        pytest.skip("the preset cannot take this option at its default")
    assert name not in config.to_dict()
    assert RuleConfig.from_dict(config.to_dict()) == config
    header = Header.from_bytes(RECORDED_HEADER)
    changed = dataclasses.replace(header, config=config)
    assert Header.from_bytes(changed.to_bytes()).config == config


RECORDED_HEADER = bytes.fromhex(json.loads(RECORDED)["header"])


def test_a_header_past_its_bound_is_refused_unparsed() -> None:
    value = json.loads(RECORDED_HEADER)
    value["match_id"] = "x" * MAX_HEADER_BYTES
    with pytest.raises(TranscriptError, match=f"larger than {MAX_HEADER_BYTES} bytes"):
        Header.from_bytes(canonical_json(value))


def _file(**fields: object) -> bytes:
    value = json.loads(RECORDED)
    value.update(fields)
    return canonical_json(value) + b"\n"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (_file(entries=[[1, "ab" * 16_385, "00" * 64, "00" * 64]]), "entry 1: not [seq,"),
        (_file(entries=[[1, "abc", "00" * 64, "00" * 64]]), "entry 1: the payload must be whole"),
        (_file(entries=[[0, "", "00" * 64, "00" * 64]]), "entry 1: the seq must be an integer"),
        (_file(entries=[[1, "", "00" * 63, "00" * 64]]), "entry 1: not [seq,"),
        (_file(entries=[[1, "", "00" * 64, "00" * 64], []]), "entry 2: not [seq,"),
        (_file(entries=[[2**63, "", "00" * 64, "00" * 64]]), "entry 1: the seq must be"),
        (_file(hands=[[1, "00" * 32, "00" * 31, 1]]), "hand row 1: not [hand_number,"),
        (_file(header="0" * (2 * MAX_HEADER_BYTES + 2)), "the file must end with the header"),
        (_file(format="canasta-transcript/2"), "canonical canasta-transcript/1 file"),
        (_file(end=[1, "7b7d", "00" * 64]), "end: it names entry 1"),
        (RECORDED.replace(b'"entries":[[1,', b'"entries":[[01,'), "entry 1: not [seq,"),
        (RECORDED.replace(b'{"entries"', b'{ "entries"'), "canonical canasta-transcript/1"),
        (RECORDED[:-1], "the file must end with one newline"),
    ],
)
def test_a_malformed_file_is_refused_naming_where(data: bytes, problem: str) -> None:
    """Every refusal of a file names the entry (``entry N: ...`` or ``entry N's ...``), the
    hand row, the header, the end, or the byte where the canonical form breaks."""
    from shared.transcript import verify

    with pytest.raises(TranscriptError) as refused:
        verify(Transcript.from_bytes(data))
    assert str(refused.value).startswith(problem) or problem in str(refused.value), refused.value


def test_a_classic_header_names_48_options_and_leaves_out_the_20_later_ones() -> None:
    written = make_config("classic").to_dict()
    assert len(written) == 48
    assert len(LATER_OPTIONS) == 20
    assert not LATER_OPTIONS & set(written)
    assert set(json.loads(RECORDED_HEADER)["rules"]) == set(written)


def test_an_empty_match_id_is_refused() -> None:
    value = json.loads(RECORDED_HEADER)
    value["match_id"] = ""
    with pytest.raises(TranscriptError, match="the match id must not be empty"):
        Header.from_bytes(canonical_json(value))


def test_a_small_order_key_passes_the_header_but_verifies_nothing() -> None:
    """docs/transcript.md: such a key is refused at use, not at the header."""
    from shared.crypto.keys import verify as verify_signature

    identity = bytes([1]) + bytes(31)  # the identity point: "signature" 01 00..00 fits all
    value = json.loads(RECORDED_HEADER)
    value["seats"][0]["key"] = identity.hex()
    assert Header.from_bytes(canonical_json(value)).seats[0].public_key == identity
    forged = bytes([1]) + bytes(63)
    assert not verify_signature(identity, b"any message", forged)


@pytest.mark.parametrize(
    ("clock", "problem"),
    [
        ({"hours_per_move": 12, "bank_hours": 36}, None),
        ({"days_per_move": 2, "bank_days": 1}, None),
        ({"hours_per_move": 48, "bank_hours": 24}, "canonical"),  # whole days: days only
        ({"hours_per_move": 3, "bank_hours": 0}, "hours_per_move"),
        ({"hours_per_move": 12, "bank_hours": 721}, "bank_hours"),
        ({"hours_per_move": 12, "bank_days": 1}, "unknown fields"),
    ],
)
def test_a_clock_in_hours_has_one_form_and_its_bounds(
    clock: dict[str, int], problem: str | None
) -> None:
    """docs/transcript.md: a clock is written in days when both times are whole days, else in
    hours (issue 28); anything else is refused."""
    value = json.loads(RECORDED_HEADER)
    value["clock"] = {**clock, "weekends_off": False, "on_timeout": "substitute"}
    data = canonical_json(value)
    if problem is None:
        header = Header.from_bytes(data)
        assert header.to_bytes() == data  # reads back to the same bytes
        assert header.clock is not None
        per_move = clock.get("hours_per_move", 24 * clock.get("days_per_move", 0))
        assert header.clock.hours_per_move == per_move
    else:
        with pytest.raises(TranscriptError, match=problem):
            Header.from_bytes(data)


# -- the move payload: how leniently it is decoded (docs/transcript.md) ------------------------


def _payload() -> bytes:
    return move_to_bytes(Move("abc", 1, 2, bytes(32), 5, ("draw",)))


@pytest.mark.parametrize(
    ("data", "seat"),
    [
        (_payload() + bytes([0x48, 0x01]), 1),  # an unknown field 9: skipped
        (_payload() + bytes([0x10, 0x03]), 3),  # seat twice: the last value
        (bytes([0x10, 0x01]) + _payload().replace(bytes([0x10, 0x01]), b"", 1), 1),  # order
        (_payload().replace(bytes([0x10, 0x01]), bytes([0x10, 0x81, 0x00]), 1), 1),  # long varint
        (_payload().replace(bytes([0x10, 0x01]), bytes([0x15, 1, 0, 0, 0]), 1), 0),  # wire type
    ],
    ids=["unknown-field", "repeated-field", "any-order", "over-long-varint", "other-wire-type"],
)
def test_a_payload_is_decoded_as_proto3_decodes(data: bytes, seat: int) -> None:
    move = move_from_bytes(data)
    assert (move.match_id, move.seat, move.seq, move.actions) == ("abc", seat, 2, ("draw",))


@pytest.mark.parametrize(
    "data",
    [
        _payload().replace(bytes([0x10, 0x01]), bytes([0x10, 0x81] + [0x80] * 9 + [0x00]), 1),
        _payload().replace(b"\x0a\x03abc", b"\x0a\x03ab\xff"),  # not UTF-8
        move_to_bytes(Move("", 1, 2, bytes(32), 5, ("draw",))),
        move_to_bytes(Move("abc", 1, 0, bytes(32), 5, ("draw",))),
        move_to_bytes(Move("abc", 1, 2, bytes(31), 5, ("draw",))),
        move_to_bytes(Move("abc", 1, 2, bytes(32), 5, ())),
        move_to_bytes(Move("abc", 1, 2, bytes(32), 5, ("draw",) * 65)),
        move_to_bytes(Move("abc", 1, 2, bytes(32), 5, ("x" * 2001,))),
        b"\x0a" + bytes([0x80, 0x80, 0x01]) + b"a" * 16_384,  # past 16,384 bytes
    ],
    ids=[
        "11-byte-varint",
        "bad-utf8",
        "no-match",
        "seq-0",
        "short-hash",
        "no-action",
        "65-actions",
        "long-action",
        "too-large",
    ],
)
def test_a_payload_outside_its_bounds_is_refused(data: bytes) -> None:
    with pytest.raises(WireError):
        move_from_bytes(data)
