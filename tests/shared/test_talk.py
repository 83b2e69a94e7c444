"""Table talk's bytes and bounds (``shared.talk``): what a seat signs, what may be said."""

from __future__ import annotations

import hashlib
import struct

import pytest

from shared.talk import (
    MAX_CONVENTIONS,
    MAX_SAY,
    TALK_RECEIPT_TAG,
    TALK_TAG,
    talk_hash,
    talk_message,
    talk_receipt_message,
    text_problem,
)

H1 = bytes(range(32))
H2 = bytes(range(32, 64))


def test_the_signed_bytes_are_the_documented_layout() -> None:
    message = talk_message("m1", 3, H1, 7, H2, 2, 1234, "say", "gl hf ♥")
    text = "gl hf ♥".encode()
    assert message == (
        b"canasta.v1/talk\x00"
        + struct.pack(">I", 2)
        + b"m1"
        + struct.pack(">Q", 3)
        + H1
        + struct.pack(">Q", 7)
        + H2
        + struct.pack(">I", 2)
        + struct.pack(">Q", 1234)
        + struct.pack(">I", 3)
        + b"say"
        + struct.pack(">I", len(text))
        + text
    )
    signature = bytes(64)
    assert (
        talk_hash(message, signature)
        == hashlib.sha256(
            b"canasta.v1/talk-entry\x00"
            + struct.pack(">I", len(message))
            + message
            + struct.pack(">I", 64)
            + signature
        ).digest()
    )
    assert talk_receipt_message("m1", 3, H1) == (
        TALK_RECEIPT_TAG + struct.pack(">I", 2) + b"m1" + struct.pack(">Q", 3) + H1
    )
    # Every field counts: each change gives other bytes, and the tags are the talk's own.
    variants = {
        talk_message("m2", 3, H1, 7, H2, 2, 1234, "say", "gl hf ♥"),
        talk_message("m1", 4, H1, 7, H2, 2, 1234, "say", "gl hf ♥"),
        talk_message("m1", 3, H2, 7, H2, 2, 1234, "say", "gl hf ♥"),
        talk_message("m1", 3, H1, 8, H2, 2, 1234, "say", "gl hf ♥"),
        talk_message("m1", 3, H1, 7, H1, 2, 1234, "say", "gl hf ♥"),
        talk_message("m1", 3, H1, 7, H2, 0, 1234, "say", "gl hf ♥"),
        talk_message("m1", 3, H1, 7, H2, 2, 1235, "say", "gl hf ♥"),
        talk_message("m1", 3, H1, 7, H2, 2, 1234, "conventions", "gl hf ♥"),
        talk_message("m1", 3, H1, 7, H2, 2, 1234, "say", "gl hf ♡"),
    }
    assert message not in variants
    assert len(variants) == 9
    assert message.startswith(TALK_TAG)
    assert TALK_TAG != b"canasta.v1/entry\x00"


def test_a_hash_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match="prev_hash must be 32 bytes"):
        talk_message("m1", 1, b"short", 0, H2, 0, 0, "say", "hi")
    with pytest.raises(ValueError, match="seat"):
        talk_message("m1", 1, H1, 0, H2, -1, 0, "say", "hi")


@pytest.mark.parametrize(
    "text",
    [
        "good luck, all",
        "¡Buena suerte! 👍 ça va?",
        "نلعب",  # right-to-left script is fine: no override
        "e\u0301",  # one combining mark
        "x" * MAX_SAY,
        "日本語のテキスト",
    ],
)
def test_printable_text_may_be_said(text: str) -> None:
    assert text_problem(text) is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("x" * (MAX_SAY + 1), f"at most {MAX_SAY}"),
        ("line\nbreak", "U+000A"),
        ("tab\there", "U+0009"),
        ("\x1b[31mred", "U+001B"),
        ("evil \u202egnp.exe", "U+202E"),  # right-to-left override
        ("isolate \u2066x\u2069", "U+2066"),
        ("zero\u200bwidth", "U+200B"),
        ("bom\ufeff", "U+FEFF"),
        ("para\u2029graph", "U+2029"),
        ("line\u2028sep", "U+2028"),
        ("nbsp\u00a0here", "U+00A0"),  # a separator other than the space
        ("private \ue000 use", "U+E000"),
        ("\u0301starts with a mark", "combining mark"),
        ("z\u0301\u0302\u0303\u0304algo", "combining marks"),
        ("soft\u00adhyphen", "U+00AD"),
    ],
)
def test_anything_that_could_change_how_text_renders_is_refused(text: str, problem: str) -> None:
    found = text_problem(text)
    assert found is not None
    assert problem in found


def test_conventions_may_be_longer_and_kinds_are_named() -> None:
    assert text_problem("x" * MAX_CONVENTIONS, "conventions") is None
    assert text_problem("x" * (MAX_CONVENTIONS + 1), "conventions") is not None
    assert text_problem("x" * (MAX_SAY + 1), "conventions") is None
    found = text_problem("hi", "whisper")
    assert found is not None
    assert "say, conventions" in found
