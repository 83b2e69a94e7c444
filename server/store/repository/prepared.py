"""The move path's statements, written once in plain SQL (portable) and reused, and the
writes made of them alone (``PreparedRepository``), which run without a session too
(``Database.write_statements``: how a move is stored). The ORM's per-call statement
building costs more than the rest of a move."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import TextClause, text

from server.domain import (
    Entry,
    Hand,
    Match,
    MatchHead,
    MatchStatus,
    Notice,
    Player,
)
from server.store.db import Database, Statements
from server.store.repository.records import (
    clock_params,
    entry_params,
)
from shared.rules import GameState

HEAD = text(
    "SELECT m.status, m.version, m.revision, m.head_hash, p.blocked FROM match m"
    " LEFT JOIN seat s ON s.match_id = m.id AND s.seat = :seat"
    " LEFT JOIN player p ON p.id = s.player_id WHERE m.id = :id"
)


_MOVE_GUARD = (
    " WHERE id = :id AND revision = :expected AND NOT EXISTS (SELECT 1 FROM seat s"
    " JOIN player p ON p.id = s.player_id"
    " WHERE s.match_id = :id AND s.seat = :seat AND p.blocked = :blocked)"
)


@functools.cache
def _save_move(*, snapshot: bool, status: bool, due: bool) -> TextClause:
    """The update that stores a move's head: with the new snapshot (``snapshot``), and the
    indexed columns ``status`` and ``clock_due_ms`` only when the move changes them (SQLite
    rewrites an index's entry whenever an UPDATE assigns one of its columns, even to the
    value it holds: two of the nine pages a plain move wrote)."""
    return text(
        "UPDATE match SET version = :version, revision = :revision,"
        " head_hash = :head_hash, updated_ms = :now, clock_seat = :clock_seat,"
        " clock_reminded = CASE WHEN clock_started_ms = :clock_started"
        " AND clock_seat = :clock_seat THEN clock_reminded ELSE 0 END,"
        " clock_started_ms = :clock_started, clock_paused_left_ms = :clock_paused"
        + (", status = :status" if status else "")
        + (", clock_due_ms = :clock_due" if due else "")
        + (", state_json = :state, snapshot_version = :version" if snapshot else "")
        + _MOVE_GUARD
    )


_SEAT_BANK = text("UPDATE seat SET bank_ms = :bank WHERE match_id = :id AND seat = :seat")


_ADD_ENTRY = text(
    "INSERT INTO log_entry (match_id, seq, seat, hand_number, payload, signature, actor_key,"
    " entry_hash, receipt_signature, events_json, created_ms, standing_order) VALUES"
    " (:match_id, :seq, :seat, :hand_number, :payload, :signature, :actor_key, :entry_hash,"
    " :receipt_signature, :events_json, :created_ms, :standing_order)"
)


_TOKEN = text(
    "SELECT p.id, p.public_key, p.display_name, p.email, p.blocked, p.created_ms, t.expires_ms"
    " FROM auth_token t JOIN player p ON p.id = t.player_id WHERE t.token_hash = :hash"
)


_ADD_NOTICE = text(
    "INSERT INTO notification (player_id, match_id, kind, detail_json, created_ms, state,"
    " attempts, next_attempt_ms, lease_until_ms, email_state, webhook_state, done_ms)"
    " VALUES (:player, :match, :kind, :detail, :now, :state, 0, :now, 0, '', '', :done)"
)


TURN_KINDS = ("your_turn", "partner_asks")
"""The notices that say whose turn it is: each one makes the player's earlier ones of the match
old news (``add_notices``)."""


_TURNS_OF = (
    "player_id = :player AND match_id = :match AND kind IN ("
    + ", ".join(f"'{kind}'" for kind in TURN_KINDS)
    + ")"
)
"""A player's turn notices of a match (the condition, for the statement below)."""


_NEWEST_TURN = f"(SELECT MAX(id) FROM notification WHERE {_TURNS_OF})"


_SUPERSEDE_TURNS = text(
    f"DELETE FROM notification WHERE {_TURNS_OF}"
    " AND state <> 'pending' AND state <> 'sending' AND email_state <> 'digest'"
    f" AND id < {_NEWEST_TURN}"
    f" AND id <> (SELECT COALESCE(MAX(id), 0) FROM notification WHERE {_TURNS_OF}"
    " AND email_state = 'sent')"
    f" AND NOT EXISTS (SELECT 1 FROM notification WHERE {_TURNS_OF}"
    " AND (state = 'pending' OR state = 'sending' OR email_state = 'digest')"
    f" AND id < {_NEWEST_TURN})"
)
"""The settled turn notices of a player's match but the newest, and the last one mailed (the
talk a mail carries is what came since the last mail about the match: ``talk_notes_before``).
Those still to deliver (``pending``, ``sending``) or waiting for the digest stay, and while an
older one of them waits (a mail being retried) nothing goes: its mail's talk starts from the
last mail below it, which must still be there. Run after the
newest is stored, so the largest id is never deleted: SQLite would give it to the next row, and
a Watch that saw it would miss that one. (``state <> ...``, not ``NOT IN``: nearly every row is
settled, so the state index must not be used for it.)"""


_COVER = text("UPDATE seat SET covered = :cover WHERE match_id = :id AND seat = :seat")


_COVER_AND_BANK = text(
    "UPDATE seat SET covered = :cover, bank_ms = :bank WHERE match_id = :id AND seat = :seat"
)


_ADD_HAND = text(
    "INSERT INTO hand (match_id, hand_number, commitment, secret, revealed, deal_seq,"
    " created_ms) VALUES (:id, :number, :commitment, :secret, :revealed, :deal_seq, :now)"
)


_HAND_DEALT = text(
    "UPDATE hand SET deal_seq = :deal_seq WHERE match_id = :id AND hand_number = :number"
)


_HAND_REVEALED = text(
    "UPDATE hand SET revealed = :revealed WHERE match_id = :id AND hand_number = :number"
)


_SEEN = text(
    "UPDATE seat SET seen_revision = :revision"
    " WHERE match_id = :id AND seat = :seat AND seen_revision < :revision"
)


def token_owner(db: Database, token_hash: bytes) -> tuple[Player, int] | None:
    """The player of a token and its expiry; None if no such token. Every signed-in call
    asks this, so it is one prepared statement outside any session (``Database.read_row``)."""
    row = db.read_row(_TOKEN, {"hash": token_hash})
    if row is None:
        return None
    player = Player(
        id=row[0],
        public_key=bytes(row[1]),
        display_name=row[2],
        email=row[3],
        blocked=bool(row[4]),
        created_ms=row[5],
    )
    return player, int(row[6])


def current_head(db: Database, match_id: str, seat: int) -> MatchHead | None:
    """``Repository.match_head`` outside any session (``Database.read_row``): every look at
    a match asks it first, to learn whether this process's copy is current."""
    row = db.read_row(HEAD, {"id": match_id, "seat": seat})
    return match_head_record(row) if row is not None else None


def match_head_record(row: Sequence[Any]) -> MatchHead:
    return MatchHead(MatchStatus(row[0]), row[1], row[2], bytes(row[3]), bool(row[4]))


class PreparedRepository:
    """The repository's writes that are prepared SQL alone, so that they run in any
    transaction of ``Statements``: a session's (as part of ``Repository``) or the store's
    session-free one (``Database.write_statements``), which is how a move is stored."""

    def __init__(self, statements: Statements) -> None:
        self.statements = statements

    def _run(self, statement: TextClause, params: dict[str, object]) -> int:
        """Execute one of the move path's prepared statements; returns the rows changed."""
        return self.statements.run(statement, params)[1]

    def save_move(self, move: StoredMove) -> bool:
        """Store a move: the match's new head and snapshot (only if nobody changed it since
        ``move.expected_revision`` and the mover is not blocked) and its log entry; else False.
        """
        match = move.match
        statement = _save_move(
            snapshot=move.state_json is not None,
            status=move.status_changed,
            due=move.due_changed,
        )
        changed = self._run(
            statement,
            {
                "id": match.id,
                "expected": move.expected_revision,
                "status": match.status.value,
                "version": match.version,
                "revision": match.revision,
                "head_hash": match.head_hash,
                "now": match.updated_ms,
                "state": move.state_json,
                "seat": move.entry["seat"],
                "blocked": True,
                **clock_params(match.clock),
            },
        )
        if not changed:
            return False
        self._run(_ADD_ENTRY, move.entry)
        for seat in move.banks:
            self._run(_SEAT_BANK, {"id": match.id, "seat": seat, "bank": match.seats[seat].bank_ms})
        return True

    def set_seen(self, match_id: str, seat: int, revision: int) -> None:
        """Note that ``seat`` has seen the match at ``revision`` (never moves it back)."""
        self._run(_SEEN, {"id": match_id, "seat": seat, "revision": revision})

    def set_covered(self, match_id: str, seat: int, cover: str, bank_ms: int | None = None) -> None:
        """Note why a bot plays ``seat`` for now (``""``: it does not); and its bank, if given."""
        params = {"id": match_id, "seat": seat, "cover": cover, "bank": bank_ms}
        self._run(_COVER if bank_ms is None else _COVER_AND_BANK, params)

    def add_notices(self, notices: Sequence[Notice], now: int) -> None:
        """Store notices to deliver, in the caller's transaction (the change that causes them).

        A turn notice (``TURN_KINDS``) replaces the player's delivered ones of the same match
        (``_SUPERSEDE_TURNS``): their storage is bounded per player and match, not per move.
        Nothing delivered is delivered again and nothing undelivered is lost; the player's log
        (Watch) keeps the latest turn notice of a match, not each one before it."""
        turns = dict.fromkeys((n.player_id, n.match_id) for n in notices if n.kind in TURN_KINDS)
        for notice in notices:
            self._run(
                _ADD_NOTICE,
                {
                    "player": notice.player_id,
                    "match": notice.match_id,
                    "kind": notice.kind,
                    "detail": json.dumps(notice.facts, sort_keys=True, separators=(",", ":")),
                    "now": now,
                    "state": "pending" if notice.deliver else "done",
                    "done": 0 if notice.deliver else now,  # news for the log alone: settled
                },
            )
        for player_id, match_id in turns:
            self._run(_SUPERSEDE_TURNS, {"player": player_id, "match": match_id})

    def add_hand(self, match_id: str, hand: Hand, now: int) -> None:
        self._run(
            _ADD_HAND,
            {
                "id": match_id,
                "number": hand.hand_number,
                "commitment": hand.commitment,
                "secret": hand.secret,
                "revealed": hand.revealed,
                "deal_seq": hand.deal_seq,
                "now": now,
            },
        )

    def set_hand_dealt(self, match_id: str, hand_number: int, deal_seq: int) -> None:
        self._run(_HAND_DEALT, {"id": match_id, "number": hand_number, "deal_seq": deal_seq})

    def set_hand_revealed(self, match_id: str, hand_number: int) -> None:
        self._run(_HAND_REVEALED, {"id": match_id, "number": hand_number, "revealed": True})


@dataclass(frozen=True, slots=True)
class StoredMove:
    """A move ready to write, serialized beforehand (so a shared commit does no JSON work)."""

    match: Match
    expected_revision: int
    state_json: str | None
    """The new snapshot, or None to leave the last one (later moves are replayed on load)."""
    entry: dict[str, object]
    banks: tuple[int, ...] = ()
    """Seats whose reserve bank the move changed (stored from ``match.seats``)."""
    status_changed: bool = True
    due_changed: bool = True
    """Whether the move changes the match's status, its turn's due time (else those columns,
    indexed, are not written)."""

    @classmethod
    def of(
        cls,
        match: Match,
        before: Match,
        snapshot: GameState | None,
        entry: Entry,
        banks: tuple[int, ...] = (),
    ) -> StoredMove:
        """The move that turns ``before`` (as stored: the update checks its revision) into
        ``match``."""
        state_json = None
        if snapshot is not None:
            state_json = json.dumps(snapshot.to_json(), separators=(",", ":"))
        due_ms = clock_params(match.clock)["clock_due"]
        return cls(
            match,
            before.revision,
            state_json,
            entry_params(match.id, entry),
            banks,
            status_changed=match.status is not before.status,
            due_changed=due_ms != clock_params(before.clock)["clock_due"],
        )
