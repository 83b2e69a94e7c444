"""The mail players' simulation (``bench/bench_mail.py``, issue 28) through the real service:
with standing orders on, a whole classic match takes about one reply a turn (the turns that
cost two are those where drawing was the player's choice over a take), and without them far
more. A behaviour, not a timing: the counts come from the service's own answers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bench.bench_mail import Simulation
from server.app import open_service
from server.config import ServerConfig

pytestmark = pytest.mark.slow


def test_standing_orders_make_one_reply_a_turn_over_a_whole_match(tmp_path: Path) -> None:
    db, service, bots = open_service(ServerConfig(data_dir=tmp_path, listen="127.0.0.1:0"))
    try:
        with_orders = Simulation(service, bots, random.Random(2), 3).play_match(24, True, 0)
        without = Simulation(service, bots, random.Random(2), 3).play_match(24, False, 1)
    finally:
        db.dispose()
    assert with_orders.hands >= 2
    assert with_orders.replies <= 1.1 * with_orders.turns, with_orders
    assert without.replies >= 1.4 * without.turns, without  # a draw, then the rest
