"""Table talk: what a match's players say to the whole table, and a side's declared conventions.

One channel per match, which every seat reads, and so do its spectators when its players allow
spectators (policy ``table`` or a later one): ``may_read_talk`` is the one place that decides.
Spectators read; only seated players talk. There is no private channel
between partners. A talk entry is signed by its seat's own key over ``shared.talk``'s bytes,
chained to the talk entry before it and bound to the move log's head where it was said, then
checked, stored and receipted here; it is never a log entry, so saying something never makes a
pending move stale. The server's signed end names the talk chain's count and head
(``talk_head``, read by ``server.service.play``'s end).

What ``say`` checks, in order: the kind and the text (``shared.talk.text_problem``: printable
text only, bounded); the match; the caller's seat (only the seated player of a person's seat
talks: bots and the attest key never do); the match started and not over (talk ends with the
match: its signed end closes the record); the rate (``PER_HOUR`` and ``PER_DAY`` per player
and match); then, under the match's lock, the chain (seq and prev_hash: the talk's head now),
the position named (the log's head or one of the ``RECENT`` entries before it, and its hash),
a side's conventions (once, before the first hand is over), and the signature. Every refusal
changes nothing.

Each other person seated hears of it as a notification of the kind ``talk`` (Watch streams it;
a mail about the match carries the talk since the player's last mail; a digest lists it; a
webhook gets a short notice without the text: ``server.service.news.words``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from server.domain import (
    Match,
    MatchStatus,
    Notice,
    Player,
    SeatKind,
    Spectators,
    Talk,
    TalkEntry,
)
from server.service import matches
from server.service.context import ServiceContext
from server.service.errors import (
    ConflictError,
    InvalidRequestError,
    LimitExceededError,
    PermissionDeniedError,
    UnauthenticatedError,
)
from server.store.errors import DuplicateKeyError
from server.store.repository import Repository
from shared.matchlog import header_hash
from shared.talk import (
    CONVENTIONS,
    MAX_TIME_MS,
    SAY,
    TalkHead,
    side_of,
    sign_talk_receipt,
    talk_hash,
    talk_message,
    text_problem,
    verify_talk_signature,
)

PER_HOUR = 10
"""The most talk entries one player may store in one match in any hour."""
PER_DAY = 50
"""... and in any 24 hours."""
HOUR_MS = 3_600_000
RECENT = 16
"""A talk entry may name the log's head or one of this many entries before it: a player who
typed while a move came in need not sign again."""
PAGE = 200
"""Talk entries one GetTalk answer holds."""
SHOWN_AT_TABLE = 5
"""Lines of talk the table shows (``canasta show``)."""


class Relation(enum.Enum):
    """What a caller is to a match, for reading its talk."""

    SEATED = "seated"
    SPECTATOR = "spectator"
    STRANGER = "stranger"


SPECTATOR_POLICIES_READING_TALK = frozenset({"table", "after-hand", "after-match"})
"""The spectator policies (issue 32) under which spectators read the talk."""


def may_read_talk(relation: Relation, spectators: str = "none") -> bool:
    """Whether a caller so related to a match may read its talk: every seated player; a
    spectator when the match's spectator policy is ``table`` or a later one; nobody else."""
    if relation is Relation.SEATED:
        return True
    if relation is Relation.SPECTATOR:
        return spectators in SPECTATOR_POLICIES_READING_TALK
    return False


def relation_of(match: Match, player: Player) -> Relation:
    """The caller's relation to the match: seated; a spectator (any registered player, not
    blocked, when its players allow spectators: ``server.service.spectators``); or neither."""
    if match.seat_of(player.id) is not None:
        return Relation.SEATED
    if match.spectators is Spectators.NONE or player.blocked:
        return Relation.STRANGER
    return Relation.SPECTATOR


def first_prev(match: Match) -> bytes:
    """The ``prev_hash`` of a match's first talk entry: its header's hash."""
    return header_hash(match.header or b"")


def talk_head(repo: Repository, match: Match) -> TalkHead:
    """The match's talk chain now: its count and the hash of its last entry."""
    last = repo.talk_head(match.id)
    if last is None:
        return TalkHead(0, first_prev(match))
    return TalkHead(last.seq, last.talk_hash)


@dataclass(frozen=True, slots=True)
class Said:
    """A talk entry as a client sends it: its signed fields and the seat's signature."""

    match_id: str
    seat: int
    seq: int
    prev_hash: bytes
    at_seq: int
    at_hash: bytes
    client_ms: int
    kind: str
    text: str
    signature: bytes


class TalkService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    def read(self, player: Player, match_id: str, after_seq: int, last: int = 0) -> Talk:
        """A page of the match's talk after ``after_seq`` (``last``: only the last so many
        of it), and its declared conventions, for a caller who may read it."""
        ctx = self.ctx
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id)
            if not may_read_talk(relation_of(match, player), match.spectators.value):
                raise PermissionDeniedError(
                    "you do not sit in this match, and its players allow no spectators"
                )
            head = talk_head(repo, match)
            start = min(after_seq, head.count)
            if last:
                start = max(start, head.count - min(last, PAGE))
            found = repo.talk(match.id, start, PAGE + 1)
            conventions = repo.conventions_of(match.id)
        return Talk(
            match, tuple(found[:PAGE]), len(found) > PAGE, head.count, head.head, tuple(conventions)
        )

    def say(self, player: Player, said: Said) -> TalkEntry:
        """Check, store and receipt one talk entry (see the module's docstring)."""
        match_id, seat, seq, prev_hash = said.match_id, said.seat, said.seq, said.prev_hash
        at_seq, at_hash, client_ms = said.at_seq, said.at_hash, said.client_ms
        kind, text, signature = said.kind, said.text, said.signature
        problem = text_problem(text, kind)
        if problem is not None:
            raise InvalidRequestError(problem)
        if not 0 <= client_ms <= MAX_TIME_MS:
            raise InvalidRequestError(f"client_time_ms must be from 0 to {MAX_TIME_MS}")
        ctx = self.ctx
        now = ctx.clock()
        try:
            with ctx.locks.hold(match_id), ctx.db.write() as session:
                repo = ctx.repo(session)
                match = matches.require_match(repo, match_id)
                mine = matches.require_seat(match, player.id)
                if seat != mine:
                    raise PermissionDeniedError(f"you sit in seat {mine}, not seat {seat}")
                if match.seats[mine].kind is not SeatKind.HUMAN:
                    raise PermissionDeniedError("only a person's seat talks")
                if match.status is MatchStatus.WAITING or not match.header:
                    raise ConflictError("the match has not started yet: talk begins with it")
                if match.status is MatchStatus.FINISHED:
                    raise ConflictError("the match is over: its record, talk included, is closed")
                self._check_rate(repo, match, player, now)
                head = talk_head(repo, match)
                if seq != head.count + 1 or prev_hash != head.head:
                    raise ConflictError(
                        f"talk moved on: the next talk entry is {head.count + 1} after the one "
                        "stored last; read the talk and sign again"
                    )
                self._check_position(repo, match, at_seq, at_hash)
                if kind == CONVENTIONS:
                    self._check_conventions(repo, match, mine)
                message = talk_message(
                    match.id, seq, prev_hash, at_seq, at_hash, mine, client_ms, kind, text
                )
                if not verify_talk_signature(match.seats[mine].public_key, message, signature):
                    raise UnauthenticatedError(
                        f"the talk entry's signature does not verify with the key of seat {mine}"
                    )
                digest = talk_hash(message, signature)
                entry = TalkEntry(
                    seq=seq,
                    kind=kind,
                    seat=mine,
                    player_id=player.id,
                    at_seq=at_seq,
                    at_hash=at_hash,
                    client_ms=client_ms,
                    text=text,
                    signature=signature,
                    talk_hash=digest,
                    receipt_signature=sign_talk_receipt(ctx.keys.server, match.id, seq, digest),
                    created_ms=now,
                )
                repo.add_talk(match.id, entry)
                repo.add_notices(_heard(match, entry), now)
        except DuplicateKeyError:  # another process stored that seq first
            raise ConflictError(
                "talk moved on: another talk entry was stored first; read the talk and sign again"
            ) from None
        return entry

    def _check_rate(self, repo: Repository, match: Match, player: Player, now: int) -> None:
        for limit, span, words in (
            (PER_HOUR, HOUR_MS, "an hour"),
            (PER_DAY, 24 * HOUR_MS, "a day"),
        ):
            if repo.talk_said(match.id, player.id, now - span) >= limit:
                raise LimitExceededError(
                    f"you said {limit} things in this match within {words}, the most allowed: "
                    "try again later"
                )

    def _check_position(self, repo: Repository, match: Match, at_seq: int, at_hash: bytes) -> None:
        """The move log's position a talk entry names: the head, or a recent entry before it,
        with its hash; never before the position of the talk entry before it."""
        if at_seq > match.version or at_seq < max(0, match.version - RECENT):
            raise ConflictError(
                f"a talk entry names the log's head (move {match.version}) or one of the "
                f"{RECENT} moves before it, not move {at_seq}: fetch the view and sign again"
            )
        if at_seq == 0:
            expected = first_prev(match)
        else:
            found = repo.entry(match.id, at_seq)
            expected = found.entry_hash if found is not None else b""
        if at_hash != expected:
            raise InvalidRequestError(f"at_hash is not the hash of move {at_seq}")
        last = repo.talk_head(match.id)
        if last is not None and at_seq < last.at_seq:
            raise ConflictError(
                f"the talk entry before was said at move {last.at_seq}: name that move or a "
                "later one"
            )

    def _check_conventions(self, repo: Repository, match: Match, seat: int) -> None:
        """A side declares its conventions once, before its first hand is over."""
        state = matches.load_state(self.ctx, repo, match)
        if state.last_hand is not None or state.hand_number > 1:
            raise ConflictError("conventions are declared before the first hand is over")
        sides = match.config.partnerships
        side = side_of(sides, seat)
        if any(side_of(sides, c.seat) == side for c in repo.conventions_of(match.id)):
            raise ConflictError("your side declared its conventions already")


def _heard(match: Match, entry: TalkEntry) -> list[Notice]:
    """A ``talk`` notice for every other person seated (what every seat may know anyway)."""
    speaker = match.seats[entry.seat]
    facts: dict[str, object] = {
        "talk_seq": entry.seq,
        "talk_kind": entry.kind,
        "seat": entry.seat,
        "name": speaker.display_name,
        "text": entry.text,
    }
    return [
        Notice(s.player_id, match.id, "talk", facts, s.reachable)
        for s in match.seats
        if s.kind is SeatKind.HUMAN and s.player_id is not None and s.seat != entry.seat
    ]


__all__ = [
    "CONVENTIONS",
    "PER_DAY",
    "PER_HOUR",
    "SAY",
    "Relation",
    "Said",
    "TalkService",
    "may_read_talk",
    "relation_of",
    "talk_head",
]
