"""Armored moves (``shared.armor``): a block carries the exact signed envelope, and any block
whose text was changed, doubled, quoted or cut is refused before anything is checked."""

from __future__ import annotations

import base64

import pytest

from shared import protocol
from shared.armor import BEGIN, END, ArmorError, armor, count_blocks, dearmor
from shared.crypto.keys import generate_private_key
from shared.pb import canasta_pb2 as pb

KEY = generate_private_key()


def _request(actions: list[str]) -> pb.SubmitRequest:
    return protocol.move_request(KEY, "m-1", 2, 11, b"\x01" * 32, actions, client_time_ms=5)


def test_a_block_carries_the_exact_envelope_and_says_what_it_is() -> None:
    request = _request(["meld 7h 7c 2s", "discard kd"])
    text = armor(request)
    lines = text.splitlines()
    assert (lines[0], lines[-1]) == (BEGIN, END)
    assert lines[1:5] == ["Match: m-1", "Seat: 2", "Seq: 12", "Move: meld 7h 7c 2s; discard kd"]
    assert all(len(line) <= 64 for line in lines[6:-1])
    found, move = dearmor(f"Here is my move:\n\n{text}\nthanks")
    assert found == request
    assert (move.seq, move.actions) == (12, ("meld 7h 7c 2s", "discard kd"))
    # Mail clients indent; the block still reads.
    assert dearmor("\n".join("   " + line for line in lines))[0] == request


def test_a_changed_readable_line_is_refused() -> None:
    text = armor(_request(["draw"]))
    with pytest.raises(ArmorError, match="do not match"):
        dearmor(text.replace("Move: draw", "Move: pickup"))
    with pytest.raises(ArmorError, match="do not match"):
        dearmor(text.replace("Seq: 12", "Seq: 13"))
    with pytest.raises(ArmorError, match="unknown line"):
        dearmor(text.replace("Seat: 2", "Seat: 2\nNote: hi"))


def test_damaged_doubled_quoted_or_cut_blocks_are_refused() -> None:
    text = armor(_request(["draw"]))
    lines = text.splitlines()
    with pytest.raises(ArmorError, match="no signed move"):
        dearmor("draw")
    with pytest.raises(ArmorError, match="no signed move"):
        dearmor("\n".join("> " + line for line in lines))  # a quoted earlier mail
    with pytest.raises(ArmorError, match="more than one"):
        dearmor(text + text)
    assert count_blocks(text + text) == 2
    with pytest.raises(ArmorError, match="no end line"):
        dearmor("\n".join(lines[:-1]))
    broken = [*lines[:6], lines[6][:-4] + "!!!!", *lines[7:]]
    with pytest.raises(ArmorError, match="damaged"):
        dearmor("\n".join(broken))
    other = base64.b64encode(b"\x0a\x00\x12\x00").decode()  # empty payload and signature
    with pytest.raises(ArmorError, match="damaged"):
        dearmor("\n".join([*lines[:6], other, END]))
    with pytest.raises(ArmorError, match="longer"):
        dearmor("\n".join([*lines[:6], *(["QUFB" * 16] * 500), END]))
