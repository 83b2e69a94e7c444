"""Glicko-2 (``shared.glicko2``) against the worked example of Glickman's paper ("Example of
the Glicko-2 system", 2012): a player rated 1500 (RD 200, volatility 0.06) beats a 1400 (RD
30) and loses to a 1550 (RD 100) and a 1700 (RD 300) in one period, with tau 0.5, and ends at
1464.06, RD 151.52, volatility 0.05999."""

from __future__ import annotations

import itertools

import pytest

from shared.glicko2 import Rating, Tally, composite, expected_score, idle, rated

PLAYER = Rating(1500, 200, 0.06)
GAMES = [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)]


def test_the_paper_s_example() -> None:
    tally = Tally()
    for opponent, score in GAMES:
        tally = tally.plus(PLAYER, opponent, score)
    after = rated(PLAYER, tally)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_a_period_s_results_count_in_any_order(order: tuple[int, ...]) -> None:
    tally = Tally()
    for index in order:
        opponent, score = GAMES[index]
        tally = tally.plus(PLAYER, opponent, score)
    assert rated(PLAYER, tally).rating == pytest.approx(1464.06, abs=0.01)


def test_a_period_without_games_widens_the_rd_only() -> None:
    after = idle(PLAYER, 1)
    assert after.rating == PLAYER.rating
    assert after.rd == pytest.approx(200.2714, abs=0.0001)  # step 6: sqrt(phi^2 + sigma^2)
    assert idle(Rating(1500, 349), 1000).rd == 350  # never past a new player's


def test_a_side_plays_as_the_mean_of_its_partners() -> None:
    side = composite([Rating(1600, 100), Rating(1400, 100)])
    assert side.rating == 1500
    assert side.rd == pytest.approx(100)
    assert expected_score(side, Rating(1500, 100)) == pytest.approx(0.5)
    assert expected_score(Rating(1700, 50), Rating(1500, 50)) > 0.75
