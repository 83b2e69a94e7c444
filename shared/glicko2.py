"""The Glicko-2 rating system (Mark E. Glickman, "Example of the Glicko-2 system", 2012),
written from the paper's steps; the club ladder (``server.service.ladder``) rates players by it.

A player has a rating (1500 to start), a rating deviation (RD: how uncertain the rating is,
350 to start) and a volatility (how erratic their results are, 0.06 to start). Results are
collected over a rating period; at its end each player's rating moves by how much better or
worse they did than their rating expected against each opponent, weighted by how sure the
opponent's rating is. A period with no result only widens the RD (step 6).

The period's results enter through two sums (``Tally``), which do not depend on the results'
order: the ladder adds each finished match's results to them as it finishes, and a player's
rating at any moment is the period's update from the sums so far (``rated``), exact once the
period ends. Partnerships play as composites (``composite``): the expected score of a side is
its partners' mean rating against the other side's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCALE = 173.7178
"""Glicko-2's own scale: rating = 1500 + SCALE * mu, RD = SCALE * phi (the paper's step 2)."""
START_RATING = 1500.0
START_RD = 350.0
START_VOLATILITY = 0.06
TAU = 0.5
"""How far volatility may move in a period: the paper suggests 0.3 to 1.2; smaller is steadier."""
EPSILON = 0.000001
"""The convergence tolerance of the volatility's iteration (the paper's)."""


@dataclass(frozen=True, slots=True)
class Rating:
    rating: float = START_RATING
    rd: float = START_RD
    volatility: float = START_VOLATILITY

    @property
    def mu(self) -> float:
        return (self.rating - START_RATING) / SCALE

    @property
    def phi(self) -> float:
        return self.rd / SCALE


@dataclass(frozen=True, slots=True)
class Tally:
    """A period's results for one player, as the update needs them: the sum of
    ``g(phi_j)^2 E (1 - E)`` (the inverse of the estimated variance ``v``) and of
    ``g(phi_j) (s - E)`` over every game. Empty: no game this period."""

    information: float = 0.0
    surprise: float = 0.0
    games: int = 0

    def plus(self, own: Rating, opponent: Rating, score: float) -> Tally:
        """The tally with one more game: ``score`` (1 a win, 0.5 a draw, 0 a loss) for a
        player (or side) rated ``own`` against ``opponent``, both as rated when the period
        began."""
        weight = _g(opponent.phi)
        expected = _expected(own.mu, opponent.mu, opponent.phi)
        return Tally(
            self.information + weight * weight * expected * (1 - expected),
            self.surprise + weight * (score - expected),
            self.games + 1,
        )


def _g(phi: float) -> float:
    return 1 / math.sqrt(1 + 3 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1 / (1 + math.exp(-_g(phi_j) * (mu - mu_j)))


def expected_score(own: Rating, opponent: Rating) -> float:
    """The score ``own`` is expected to make against ``opponent`` (0 to 1)."""
    return _expected(own.mu, opponent.mu, opponent.phi)


def composite(ratings: Sequence[Rating]) -> Rating:
    """A side of several players as one opponent: the mean rating, the RD of the mean
    (root mean square of the RDs) and the mean volatility."""
    count = len(ratings)
    return Rating(
        sum(r.rating for r in ratings) / count,
        math.sqrt(sum(r.rd * r.rd for r in ratings) / count),
        sum(r.volatility for r in ratings) / count,
    )


def rated(player: Rating, tally: Tally, tau: float = TAU) -> Rating:
    """The player's rating after a period with ``tally``'s results (the paper's steps 3 to 8;
    with no game, step 6 alone: only the RD widens)."""
    phi, sigma = player.phi, player.volatility
    if not tally.games:
        return idle(player, 1)
    v = 1 / tally.information
    delta = v * tally.surprise
    sigma = _new_volatility(phi, sigma, v, delta, tau)
    phi_star = math.sqrt(phi * phi + sigma * sigma)
    new_phi = 1 / math.sqrt(1 / (phi_star * phi_star) + 1 / v)
    new_mu = player.mu + new_phi * new_phi * tally.surprise
    return Rating(START_RATING + SCALE * new_mu, SCALE * new_phi, sigma)


def idle(player: Rating, periods: int) -> Rating:
    """The rating after ``periods`` periods without a game: the RD widens (step 6), never
    past a new player's."""
    phi_squared = player.phi**2 + periods * player.volatility**2
    return Rating(player.rating, min(SCALE * math.sqrt(phi_squared), START_RD), player.volatility)


def _new_volatility(phi: float, sigma: float, v: float, delta: float, tau: float) -> float:
    """Step 5: the new volatility, the root of the paper's ``f`` by the Illinois method."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        top = ex * (delta * delta - phi * phi - v - ex)
        bottom = 2 * (phi * phi + v + ex) ** 2
        return top / bottom - (x - a) / (tau * tau)

    upper = a
    if delta * delta > phi * phi + v:
        lower = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        lower = a - k * tau
    f_upper, f_lower = f(upper), f(lower)
    while abs(lower - upper) > EPSILON:
        c = upper + (upper - lower) * f_upper / (f_lower - f_upper)
        f_c = f(c)
        if f_c * f_lower <= 0:
            upper, f_upper = lower, f_lower
        else:
            f_upper /= 2
        lower, f_lower = c, f_c
    return math.exp(upper / 2)
