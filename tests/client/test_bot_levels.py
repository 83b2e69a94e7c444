"""The bot levels in the client: ``canasta create --bot SEAT[:LEVEL]`` and the seat line."""

from __future__ import annotations

import pytest

from client.cmd_lobby import _bot_seats
from client.errors import CliError
from shared.pb import canasta_pb2 as pb
from shared.tabletext import SeatNames, _seat_rows


def test_bot_option_takes_a_seat_and_a_level() -> None:
    assert _bot_seats(["1", "2:strong", "3:Easy"]) == ([1, 2, 3], {2: "strong", 3: "easy"})
    assert _bot_seats([]) == ([], {})
    with pytest.raises(CliError, match="unknown bot level"):
        _bot_seats(["1:grandmaster"])
    with pytest.raises(CliError, match="SEAT or SEAT:LEVEL"):
        _bot_seats(["strong"])


def test_the_seat_line_says_the_level() -> None:
    seats = [
        pb.SeatInfo(seat=0, kind=pb.SEAT_KIND_HUMAN, display_name="ann"),
        pb.SeatInfo(seat=1, kind=pb.SEAT_KIND_BOT, display_name="bot 1", bot_level="strong"),
        pb.SeatInfo(seat=2, kind=pb.SEAT_KIND_BOT, display_name="bot 2", bot_level="easy"),
        pb.SeatInfo(seat=3, kind=pb.SEAT_KIND_BOT, display_name="bot 3"),  # an older server
    ]
    view = pb.PlayerView(seat=0, hand_counts=[11, 11, 11, 11], dealer=3)
    line = "\n".join(_seat_rows(view, SeatNames(seats, 0, [0, 2]), color=False))
    assert "1 bot 1 (strong bot): 11" in line
    assert "2 bot 2 (partner, easy bot): 11" in line
    assert "3 bot 3 (bot, dealer): 11" in line
