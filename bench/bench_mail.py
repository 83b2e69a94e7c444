"""Simulation: four players by mail, whole matches, with and without standing orders.

    .venv/bin/python -m bench.bench_mail [--matches 3] [--reads 3] [--seed 1]

What it measures (issue 28): how many mail round trips a turn costs a correspondence player,
and how many days a classic match takes, at one day and at twelve hours per move, with the
standing orders (``canasta orders --draw --answer yes``) off and on.

The players' model, stated so the figures can be judged:

* Four people, one per seat of a classic partnership match, each playing as the engine's bot
  would (``shared.rules.bot.choose_action``).
* Each reads mail ``--reads`` times a day, at times drawn uniformly between 08:00 and 22:00
  (UTC, everyone's zone), and at each reading answers at most once: a player who replies
  ``draw`` sees the card at their next reading, not in the same sitting.
* At a reading, a player whose move it is replies with everything they can write without news:
  the cut; an answer to partner; a take of the pile with the rest of the turn; after a draw
  (theirs, or the server's under a standing order) the rest of the turn; or, when drawing is
  their choice, ``draw`` alone (the drawn card is news to them).
* A turn that runs out is covered by a bot (``substitute``); its player takes the seat back
  at their next reading (``cover off``, not counted as a reply).

The replies go through the real service in process (``server.service``), over a SQLite file,
each as the player's own signed move submitted when they read their mail; the server's clock
is a fake one that jumps from one reading to the next, so nothing sleeps. The mail itself (the
outbox, the SMTP hop, the reply code) is not simulated: the tests cover it
(``tests/e2e/test_cli_mail_orders.py``).

It prints, per case: turns played by the people, their replies, replies per turn, timeouts,
hands, and days per match (median and range). A turn is one seat's draw or take to its
discard; the cut between hands counts as a turn too, and so does an answer to partner.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from server.app import open_service
from server.config import ServerConfig
from server.domain import DAY_MS, HOUR_MS, Match, MatchStatus, Player
from server.service import matches
from server.service.clocks import ClockChoice
from server.service.people.accounts import Caller
from server.service.people.preferences import SettingsChange
from server.service.play.bots import BotRunner
from server.service.wings import CanastaService
from shared import protocol, rules
from shared.crypto.keys import PrivateKey, generate_private_key
from shared.rules import GameState, Phase
from shared.rules.bot import choose_action

START_MS = 1_796_630_400_000
"""Monday 7 December 2026, 08:00 UTC."""
WAKING = (8 * HOUR_MS, 22 * HOUR_MS)
MAX_READINGS = 100_000
"""A match that has not ended after this many readings is reported, not waited for."""


@dataclass
class Person:
    seat: int
    key: PrivateKey
    caller: Caller
    readings: Iterator[int]
    """This person's reading times, in order."""
    next_read: int = 0
    mid_turn: bool = False
    """They replied ``draw`` and have not seen the card yet."""


@dataclass
class Tally:
    turns: int = 0
    replies: int = 0
    timeouts: int = 0
    hands: int = 0
    days: float = 0.0


def _readings(rng: random.Random, reads: int, after: int) -> Iterator[int]:
    """``reads`` times a day between 08:00 and 22:00, day after day, from ``after`` on."""
    day = (after - START_MS) // DAY_MS
    while True:
        midnight = START_MS - 8 * HOUR_MS + day * DAY_MS
        for moment in sorted(midnight + rng.randrange(*WAKING) for _ in range(reads)):
            if moment > after:
                yield moment
        day += 1


def _writable(state: GameState, seat: int, rng: random.Random) -> list[str]:
    """What ``seat`` can write now without news (see the module's model)."""
    if state.phase is Phase.ANSWER:
        return [str(choose_action(state, seat, rng))]
    written: list[str] = []
    while state.actor() == seat and state.phase in (Phase.DRAW, Phase.PLAY):
        action = choose_action(state, seat, rng)
        written.append(str(action))
        if state.phase is Phase.DRAW and isinstance(action, rules.Draw):
            break  # the card drawn is news: the rest waits for the next reading
        state = rules.apply(state, seat, action)
    return written


class Simulation:
    """Whole matches played by four mail players against one in-process service."""

    def __init__(
        self, service: CanastaService, bots: BotRunner, rng: random.Random, reads: int
    ) -> None:
        self.service = service
        self.bots = bots
        self.ctx = service.ctx
        self.rng = rng
        self.reads = reads
        self.now = START_MS
        self.ctx.clock = lambda: self.now

    def _person(self, seat: int, name: str) -> Person:
        key = generate_private_key()
        request = protocol.register_request(
            key, self.ctx.keys.server_public, name, client_time_ms=self.now
        )
        player: Player = self.service.accounts.register(request.payload, request.signature)
        readings = _readings(self.rng, self.reads, self.now)
        return Person(seat, key, Caller(player, 2**62), readings, next(readings))

    def play_match(self, hours_per_move: int, orders: bool, number: int) -> Tally:
        service = self.service
        people = [self._person(s, f"p{number}-{s}") for s in range(4)]
        if orders:
            for person in people:
                change = SettingsChange(order_draw=True, order_answer="yes")
                service.update_settings(person.caller.player, change)
        clock = ClockChoice(hours_per_move=hours_per_move, bank_hours=24)
        summary, invite = service.lobby.create(
            people[0].caller.player, "classic", {}, 0, 0, (), clock
        )
        match_id = summary.match.id
        for person in people[1:]:
            service.lobby.join(person.caller.player, invite, person.seat)
        started = self.now
        tally = Tally()
        for _ in range(MAX_READINGS):
            reader = min(people, key=lambda p: p.next_read)
            self._advance(reader.next_read, match_id)
            reader.next_read = next(reader.readings)
            match, state = self._load(match_id)
            if match.status is not MatchStatus.PLAYING:
                break
            self._read_mail(reader, match_id, tally)
        else:
            raise RuntimeError(f"match {number} did not end within {MAX_READINGS} readings")
        tally.days = (self.now - started) / DAY_MS
        tally.hands = state.hand_number
        return tally

    def _advance(self, until: int, match_id: str) -> None:
        """Move the fake clock to ``until``, letting every deadline on the way fire in turn."""
        while True:
            match, _ = self._load(match_id)
            due = match.clock.due_ms if match.clock is not None else 0
            self.now = due if self.now < due <= until else until
            self.service.absence.sweep()
            self.bots.play(match_id)  # bots covering a seat; standing orders
            if self.now == until:
                return

    def _load(self, match_id: str) -> tuple[Match, GameState]:
        with self.ctx.db.read() as session:
            repo = self.ctx.repo(session)
            match = matches.require_match(repo, match_id)
            return match, matches.load_state(self.ctx, repo, match)

    def _read_mail(self, person: Person, match_id: str, tally: Tally) -> None:
        """``person`` reads their mail: back from a cover, and one reply if it is their move."""
        service = self.service
        match, state = self._load(match_id)
        if match.seats[person.seat].covered:  # their turn ran out: they take the seat back
            tally.timeouts += 1
            person.mid_turn = False
            service.absence.set_cover(person.caller.player, match_id, False)
            match, state = self._load(match_id)
        if not matches.waits_for(match, state, person.seat):
            return
        if state.phase is Phase.DEAL:
            view = service.play.view(person.caller.player, match_id)
            request = protocol.deal_request(
                person.key, match_id, person.seat, match.version, match.head_hash,
                view.deal_commitment,
            )  # fmt: skip
            tally.turns += 1
        else:
            written = _writable(state, person.seat, self.rng)
            if not person.mid_turn:
                tally.turns += 1  # a turn (or an answer) begins; a standing draw may have begun it
            person.mid_turn = written == ["draw"]
            request = protocol.move_request(
                person.key, match_id, person.seat, match.version, match.head_hash, written,
                client_time_ms=self.now,
            )  # fmt: skip
        tally.replies += 1
        service.play.submit(request.payload, request.signature, person.caller.player.id)
        self.bots.play(match_id)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=3, help="matches per case")
    parser.add_argument("--reads", type=int, default=3, help="mail readings a day per player")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"model: {args.reads} readings a day (08:00-22:00), one reply a reading, bank 24 h")
    print(f"{'per move':<9} {'orders':<7} {'turns':>6} {'replies':>8} {'per turn':>9} "
          f"{'timeouts':>9} {'hands':>6} {'days/match (median, range)':>28}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        db, service, bots = open_service(ServerConfig(data_dir=Path(tmp), listen="127.0.0.1:0"))
        try:
            for hours in (24, 12):
                for orders in (False, True):
                    sim = Simulation(service, bots, random.Random(args.seed), args.reads)
                    tallies = []
                    began = time.perf_counter()
                    for number in range(args.matches):
                        sim.now = START_MS
                        tallies.append(sim.play_match(hours, orders, number))
                    turns = sum(t.turns for t in tallies)
                    replies = sum(t.replies for t in tallies)
                    days = [t.days for t in tallies]
                    print(
                        f"{hours:>3} h     {'on' if orders else 'off':<7} {turns:>6} {replies:>8} "
                        f"{replies / max(1, turns):>9.2f} {sum(t.timeouts for t in tallies):>9} "
                        f"{sum(t.hands for t in tallies):>6} "
                        f"{statistics.median(days):>10.1f} ({min(days):.1f}-{max(days):.1f})"
                        f"   [{time.perf_counter() - began:.0f} s]"
                    )
        finally:
            db.dispose()


if __name__ == "__main__":
    main()
