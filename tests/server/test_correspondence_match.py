"""Issue 12's whole-match test: four people play a slow match by mail, through a deadline
reminder, a vacation, a timeout with a bot taking over and the player coming back, a digest day,
the end of a hand and a resignation; a second match ends by forfeit under the other policy.

Everything is real but the clock: a gRPC server on 127.0.0.1, a SQLite file, an SMTP server
(``aiosmtpd``) that receives the mails. The service's clock is moved by the test, and the
periodic work (deadline sweep, reminders, delivery) is called directly instead of waiting for
its thread. Every mail is checked as it arrives: it is addressed to one player, shows that
player's own hand and no card of anyone else's, and names the command to run next."""

from __future__ import annotations

from collections.abc import Callable
from email.message import Message

import grpc
import pytest

from server.app import App
from server.domain import DAY_MS
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient, plain_turn

from .conftest import AppFactory
from .mailkit import (
    CARD,
    FakeClock,
    Mailbox,
    mail_text,
    own_table,
    update,
    verified,
    without_own_table,
)
from .test_notifications import MONDAY_7AM

HOUR = 3_600_000
NAMES = ("ann", "ben", "cid", "dee")


@pytest.fixture
def app(make_app: AppFactory, mailbox: tuple[Mailbox, int]) -> App:
    return make_app(
        token_ttl_seconds=365 * 86_400,
        smtp_host="127.0.0.1",
        smtp_port=mailbox[1],
        smtp_security="none",
        mail_from="canasta@example.org",
    )


class Table:
    """The four players of one match, their mailboxes, and the server's periodic work."""

    def __init__(self, app: App, box: Mailbox, clients: dict[int, PlayerClient], match_id: str):
        self.app, self.box, self.clients, self.match_id = app, box, clients, match_id
        self.read = 0  # mails already checked

    def view(self, seat: int = 0) -> pb.MatchView:
        return self.clients[seat].view(self.match_id)

    def to_act(self) -> int:
        return self.view().match.to_act

    def move(self) -> int:
        """The seat to act makes the plainest move (cut, draw, discard); returns the seat."""
        seat = self.to_act()
        view = self.view(seat)
        if view.HasField("dealing_seat"):
            self.clients[seat].deal(view)
        else:
            self.clients[seat].submit(view, plain_turn(view))
        return seat

    def tick(self) -> list[Message]:
        """One round of the server's periodic work; the mails it sent, each checked."""
        self.app.service.absence.sweep()
        self.app.bots.drain()
        self.app.service.outbox.deliver()
        new = self.box.messages[self.read :]
        self.read = len(self.box.messages)
        for mail in new:
            self.check(mail)
        return new

    def check(self, mail: Message) -> None:
        """A mail shows its reader's own table as it is now (as `canasta show` prints it),
        no card besides it, and names a command; it goes to one player."""
        (seat,) = [s for s in range(4) if mail["To"] == address(s)]
        text = mail_text(mail)
        around = without_own_table(text, own_table(self.app, self.clients[seat], self.match_id))
        assert CARD.findall(around.lower()) == [], (seat, around)
        assert "canasta " in text  # the command to run
        assert "canasta notify email off" in text  # and how to stop the mails


def address(seat: int) -> str:
    return f"{NAMES[seat]}@example.org"


def _four_players(
    app: App, box: Mailbox, players: Callable[..., PlayerClient], control: pb.TimeControl
) -> tuple[Table, FakeClock]:
    """Ann, Ben, Cid and Dee, each with a verified address (a mail per event), seated in a
    classic match with ``control``, on the service's clock stopped at Monday 07:00 UTC."""
    clock = FakeClock(MONDAY_7AM)
    app.service.ctx.clock = clock
    clients = {seat: players(name) for seat, name in enumerate(NAMES)}
    for seat, client in clients.items():
        verified(app, box, client, address(seat), "each")
    created = clients[0].stub.CreateMatch(
        pb.CreateMatchRequest(preset="classic", seat=0, time_control=control),
        metadata=clients[0].metadata,
    )
    for seat in (1, 2, 3):
        clients[seat].join_match(created.invite_code, seat=seat)
    return Table(app, box, clients, created.match.match_id), clock


def subjects(mails: list[Message], seat: int) -> list[str]:
    return [str(m["Subject"]).split(" - ")[0] for m in mails if m["To"] == address(seat)]


@pytest.mark.slow  # a hand and more of four players with mail: in make test
def test_a_whole_slow_match_by_mail(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    control = pb.TimeControl(days_per_move=2, bank_days=1, on_timeout="substitute")
    table, clock = _four_players(app, box, players, control)
    clients = table.clients
    match_id = table.match_id

    # The match starts full; the cutter hears it is their turn.
    cutter = table.to_act()
    mails = table.tick()
    assert subjects(mails, cutter) == ["Your turn"]
    assert f"your move: canasta deal {match_id}" in mail_text(mails[-1])  # the cut is due
    assert "Your move: cut and deal hand 1 (canasta deal)" in mail_text(mails[-1])
    table.move()
    mover = table.to_act()
    # One of the others reads one mail a day from now on, a digest.
    digest_reader = min({0, 1, 2, 3} - {cutter, mover})
    assert update(clients[digest_reader], email_mode="digest").email_mode == "digest"
    everyone_else = {address(s) for s in range(4) if s != digest_reader}
    assert table.view().view.hand_number == 1

    # -- a reminder a day before the deadline -------------------------------------------------
    summary = table.view().match
    assert summary.clock.seat == mover
    due = summary.clock.due_at_ms
    assert due == clock.now + 3 * DAY_MS  # two days a move, and the bank's day
    table.tick()
    clock.now = due - 23 * HOUR
    mails = table.tick()
    assert subjects(mails, mover) == ["Reminder: your move is due soon"]
    assert "Due " in mail_text(mails[-1])

    # -- a vacation stops the clock, and it runs on with the time that was left -----------------
    left = due - clock.now
    update(clients[mover], vacation=True)
    others = table.view((mover + 1) % 4).match
    assert others.seats[mover].on_vacation  # the others see it
    assert not others.HasField("clock")
    clock.now += 5 * DAY_MS
    table.tick()
    assert table.to_act() == mover  # nothing timed out
    update(clients[mover], vacation=False)
    assert table.view().match.clock.due_at_ms == clock.now + left

    # -- the deadline passes: a bot plays the seat until its player comes back ------------------
    clock.now += left
    mails = table.tick()
    assert table.view().match.seats[mover].covered == "timeout"
    assert table.to_act() != mover  # the bot played the turn at once
    assert "Your time ran out" in subjects(mails, mover)
    assert "canasta cover off" in mail_text(next(m for m in mails if m["To"] == address(mover)))
    history = clients[mover].history(match_id).entries
    assert [e.played_by_bot for e in history if e.seat == mover][-1:] == [True]
    for _ in range(4):  # a round of the others' moves; the bot plays the absent seat again
        if table.to_act() != mover:
            table.move()
            clock.now += HOUR
        table.tick()
    back = clients[mover].stub.SetCover(
        pb.SetCoverRequest(match_id=match_id, covered=False), metadata=clients[mover].metadata
    )
    assert back.match.seats[mover].covered == ""
    while table.to_act() != mover:
        table.move()
        clock.now += HOUR
        table.tick()
    table.move()  # the player's own move again, signed with their own key
    history = clients[mover].history(match_id).entries
    assert not history[-1].played_by_bot
    assert history[-1].seat == mover

    # -- a digest day: the reader's news waits for 08:00, their hour, and comes in one mail ----
    table.tick()
    sent_before = len(subjects(box.messages, digest_reader))
    next_eight = clock.now + (8 * HOUR - clock.now % DAY_MS) % DAY_MS
    while clock.now < next_eight - 2 * HOUR:  # a day of moves, their turns among them
        table.move()
        clock.now += HOUR
        table.tick()
    assert len(subjects(box.messages, digest_reader)) == sent_before
    clock.now = next_eight
    mails = table.tick()
    (digest,) = [m for m in mails if m["To"] == address(digest_reader)]
    assert "notification" in str(digest["Subject"])
    assert mail_text(digest).count("It is your turn") >= 1
    assert subjects(table.tick(), digest_reader) == []  # one a day

    # -- the hand ends when the stock is gone: everybody hears the score ------------------------
    hand = table.view().view.hand_number
    ended: list[Message] = []
    for _ in range(400):
        if table.view().view.hand_number != hand:
            break
        table.move()
        clock.now += HOUR
        ended += table.tick()
    assert table.view().view.hand_number == hand + 1
    over = [m for m in ended if str(m["Subject"]).startswith("Hand over")]
    assert {m["To"] for m in over} == everyone_else  # the digest reader's is in the digest
    assert "Scores:" in mail_text(over[0])

    # -- a side resigns: the match is over for everyone ------------------------------------------
    while table.view().match.to_act not in (0, 2) or table.view().HasField("dealing_seat"):
        table.move()
        clock.now += HOUR
        table.tick()
    seat = table.to_act()
    clients[seat].submit(table.view(seat), ["resign"])
    mails = table.tick()
    assert table.view().match.status == pb.MATCH_STATUS_FINISHED
    assert list(table.view().match.winners) == [1]  # the other side
    finished = [m for m in mails if str(m["Subject"]).startswith("Match over")]
    assert {m["To"] for m in finished} == everyone_else
    assert "Final scores" in mail_text(finished[0])
    assert not table.view().match.HasField("clock")
    clock.now += DAY_MS
    (last,) = [m for m in table.tick() if m["To"] == address(digest_reader)]
    assert "Final scores" in mail_text(last)  # the digest reader, in the next day's digest
    only_digests = subjects(box.messages, digest_reader)
    assert len(only_digests) >= 2
    assert all(s.startswith("Canasta: ") for s in only_digests)


def test_a_match_under_forfeit_ends_when_a_side_runs_out_of_time(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    table, clock = _four_players(
        app, box, players, pb.TimeControl(days_per_move=1, on_timeout="forfeit")
    )
    clients = table.clients
    # A one-day turn and the 24-hour reminder: the turn fits inside it, so the "your turn"
    # mail comes alone, not with a "due soon" in the same second (issue 28).
    cutter = table.to_act()
    assert subjects(table.tick(), cutter) == ["Your turn"]
    table.move()  # the cut and deal
    mover = table.to_act()
    clock.now += 60_000  # the server's next sweep
    assert subjects(table.tick(), mover) == ["Your turn"]
    for _ in range(3):
        table.move()
        clock.now += HOUR
        table.tick()
    late = table.to_act()
    clock.now = table.view().match.clock.due_at_ms
    mails = table.tick()
    match = table.view().match
    assert match.status == pb.MATCH_STATUS_FINISHED
    assert list(match.winners) == [1 - match.seats[late].side]
    told = subjects(mails, late)
    assert "Your time ran out" in told
    assert "Match over" in told
    # The bot only resigned: nobody tells the player a bot played or to take the seat back.
    assert "A bot played your turn" not in told
    assert not [m for m in mails if "cover off" in mail_text(m)]
    for seat in range(4):
        assert "Match over" in subjects(mails, seat)
    with pytest.raises(grpc.RpcError) as refused:  # nothing more can be played
        clients[late].submit(table.view(late), ["draw"])
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
