"""The only place that converts rows to domain records and back.

A ``Repository`` wraps one session (one transaction, from ``Database.read()`` or ``write()``);
it never commits. Methods named ``add_*``/``set_*``/``save_*`` write, everything else reads.
Its writes that are prepared SQL alone are a ``PreparedRepository`` of their own, which runs
without a session too (``Database.write_statements``: how a move is stored).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from sqlalchemy import TextClause, case, delete, event, func, text, tuple_, update
from sqlmodel import Session, col, select

from server.domain import (
    AdminAction,
    EmailMode,
    Entry,
    Hand,
    Match,
    MatchHead,
    MatchStatus,
    Notice,
    Notification,
    Player,
    Seat,
    SeatKind,
    Settings,
    StandingOrders,
    TimeControl,
    TimeoutPolicy,
    TurnClock,
)
from server.store.db import Database, SessionStatements, Statements, run
from server.store.models import (
    AdminActionRow,
    ChallengeRow,
    HandRow,
    InvitationRow,
    LogEntryRow,
    MatchRow,
    NotificationRow,
    PlayerRow,
    ReplyCodeRow,
    SeatRow,
    TokenRow,
)
from shared.rules import Event, GameState, RuleConfig

# The move path's statements, written once in plain SQL (portable) and reused; the ORM's
# per-call statement building costs more than the rest of a move.
_HEAD = text(
    "SELECT m.status, m.version, m.revision, m.head_hash, p.blocked FROM match m"
    " LEFT JOIN seat s ON s.match_id = m.id AND s.seat = :seat"
    " LEFT JOIN player p ON p.id = s.player_id WHERE m.id = :id"
)
_MOVE_GUARD = (
    " WHERE id = :id AND revision = :expected AND NOT EXISTS (SELECT 1 FROM seat s"
    " JOIN player p ON p.id = s.player_id"
    " WHERE s.match_id = :id AND s.seat = :seat AND p.blocked = :blocked)"
)
_SAVE_HEAD = (
    "UPDATE match SET status = :status, version = :version, revision = :revision,"
    " head_hash = :head_hash, updated_ms = :now, clock_seat = :clock_seat,"
    " clock_reminded = CASE WHEN clock_started_ms = :clock_started AND clock_seat = :clock_seat"
    " THEN clock_reminded ELSE 0 END,"
    " clock_started_ms = :clock_started, clock_due_ms = :clock_due,"
    " clock_paused_left_ms = :clock_paused"
)
_SAVE_MOVE = text(_SAVE_HEAD + _MOVE_GUARD)
_SAVE_MOVE_SNAPSHOT = text(
    _SAVE_HEAD + ", state_json = :state, snapshot_version = :version" + _MOVE_GUARD
)
_SEAT_BANK = text("UPDATE seat SET bank_ms = :bank WHERE match_id = :id AND seat = :seat")
Snapshot = tuple[int, GameState]
"""A match's state snapshot and the seq it was taken at."""
StoredSnapshot = tuple[int, str]
"""A snapshot as stored: its seq and its JSON text (empty: none yet)."""

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
_TO_REMIND = text(
    "SELECT id, clock_due_ms, clock_reminded FROM match WHERE clock_due_ms > 0"
    " AND clock_due_ms <= :before AND clock_reminded < :reminders AND status = 'playing'"
    " ORDER BY clock_due_ms LIMIT :limit"
)
_REMINDED = text(
    "UPDATE match SET clock_reminded = :count WHERE id = :id AND clock_started_ms = :started"
    " AND clock_reminded = :was"
)
_WAITING_BEFORE = text(
    "SELECT id FROM match WHERE status = 'waiting' AND created_ms < :before"
    " ORDER BY created_ms LIMIT :limit"
)
_VACATION_SPENT = text(
    "SELECT id FROM player WHERE vacation_started_ms > 0 AND vacation_started_ms"
    " + :allowance - CASE WHEN vacation_year = :year THEN vacation_used_ms ELSE 0 END <= :now"
    " ORDER BY vacation_started_ms LIMIT :limit"
)
_DIGEST_PLAYERS = text(
    "SELECT p.id FROM player p WHERE p.id IN (SELECT n.player_id FROM notification n"
    " WHERE n.email_state = 'digest') ORDER BY p.digest_sent_ms, p.id LIMIT :limit"
)
_ADD_NOTICE = text(
    "INSERT INTO notification (player_id, match_id, kind, detail_json, created_ms, state,"
    " attempts, next_attempt_ms, lease_until_ms, email_state, webhook_state, done_ms)"
    " VALUES (:player, :match, :kind, :detail, :now, :state, 0, :now, 0, '', '', :done)"
)
_STALE_SENDING = text(
    "SELECT id FROM notification WHERE state = 'sending' AND lease_until_ms < :now LIMIT 1"
)
_SETTLE_QUIETLY = text(
    "UPDATE notification SET state = 'done', email_state = :email, webhook_state = :webhook,"
    " attempts = attempts + 1, done_ms = :now WHERE id = :id AND state = 'pending'"
)
_DUE_NOTIFICATIONS = text(
    "SELECT id FROM notification WHERE state = 'pending' AND next_attempt_ms <= :now"
    " ORDER BY id LIMIT :limit"
)
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
    row = db.read_row(_HEAD, {"id": match_id, "seat": seat})
    return _match_head(row) if row is not None else None


def _match_head(row: Sequence[Any]) -> MatchHead:
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
        changed = self._run(
            _SAVE_MOVE if move.state_json is None else _SAVE_MOVE_SNAPSHOT,
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
                **_clock_params(match.clock),
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
        """Store notices to deliver, in the caller's transaction (the change that causes them)."""
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


class Repository(PreparedRepository):
    def __init__(self, session: Session, bot_public_key: bytes) -> None:
        super().__init__(SessionStatements(session))
        self.session = session
        self.bot_public_key = bot_public_key

    def after_commit(self, action: Callable[[], None]) -> None:
        """Run ``action`` once this transaction has committed (never if it rolls back)."""
        event.listen(self.session, "after_commit", lambda _session: action(), once=True)

    # -- players --------------------------------------------------------------------------------

    def add_player(
        self, public_key: bytes, display_name: str, email: str, invitation_code: str, now: int
    ) -> Player:
        row = PlayerRow(
            public_key=public_key,
            display_name=display_name,
            email=email,
            invitation_code=invitation_code,
            created_ms=now,
        )
        self.session.add(row)
        self.session.flush()
        return _player(row)

    def player_by_key(self, public_key: bytes) -> Player | None:
        row = self.session.exec(
            select(PlayerRow).where(PlayerRow.public_key == public_key)
        ).one_or_none()
        return _player(row) if row else None

    def player_by_id(self, player_id: int) -> Player | None:
        row = self.session.get(PlayerRow, player_id)
        return _player(row) if row else None

    def players_by_email(self, address: str, limit: int = 2) -> list[int]:
        """Ids of up to ``limit`` players whose *verified* address is ``address`` (compared
        without regard to case): who a received mail may come from."""
        rows = self.session.exec(
            select(PlayerRow.id)
            .where(func.lower(PlayerRow.email) == address.lower())
            .where(col(PlayerRow.email_verified))
            .order_by(col(PlayerRow.id))
            .limit(limit)
        ).all()
        return [int(r) for r in rows if r is not None]

    def count_notices(self, player_id: int, kinds: Collection[str], since: int, limit: int) -> int:
        """How many notifications of ``kinds`` the player got since ``since`` (counting stops
        at ``limit``: the caller only asks whether a cap is reached)."""
        rows = self.session.exec(
            select(NotificationRow.id)
            .where(NotificationRow.player_id == player_id)
            .where(col(NotificationRow.kind).in_(list(kinds)))
            .where(col(NotificationRow.created_ms) >= since)
            .limit(limit)
        ).all()
        return len(rows)

    def notice_facts(
        self, player_id: int, kind: str, since: int, limit: int
    ) -> list[dict[str, object]]:
        """The facts of the player's latest ``limit`` notifications of ``kind`` since
        ``since``, newest first: what the answers to their mail said lately."""
        rows = self.session.exec(
            select(NotificationRow.detail_json)
            .where(NotificationRow.player_id == player_id)
            .where(NotificationRow.kind == kind)
            .where(col(NotificationRow.created_ms) >= since)
            .order_by(col(NotificationRow.id).desc())
            .limit(limit)
        ).all()
        found: list[dict[str, object]] = []
        for detail in rows:
            facts = json.loads(detail)
            found.append(facts if isinstance(facts, dict) else {})
        return found

    # -- reply codes (moves by mail reply) ------------------------------------------------------

    def add_reply_code(
        self, code_hash: str, player_id: int, match_id: str, version: int, now: int, expires: int
    ) -> None:
        """Store a new code's hash; codes expired before ``now`` are deleted meanwhile, so the
        table holds only live ones and those spent recently."""
        self.session.execute(delete(ReplyCodeRow).where(col(ReplyCodeRow.expires_ms) < now))
        self.session.add(
            ReplyCodeRow(
                code_hash=code_hash,
                player_id=player_id,
                match_id=match_id,
                version=version,
                created_ms=now,
                expires_ms=expires,
            )
        )

    def reply_code(self, code_hash: str) -> ReplyCode | None:
        row = self.session.get(ReplyCodeRow, code_hash)
        if row is None:
            return None
        return ReplyCode(row.player_id, row.match_id, row.version, row.expires_ms, row.used_ms)

    def spend_reply_code(self, code_hash: str, now: int) -> bool:
        """Mark a code used, if nobody did first (False: it was spent already)."""
        result = self.session.execute(
            update(ReplyCodeRow)
            .where(col(ReplyCodeRow.code_hash) == code_hash)
            .where(col(ReplyCodeRow.used_ms) == 0)
            .values(used_ms=now)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def players(self) -> list[Player]:
        rows = self.session.exec(select(PlayerRow).order_by(col(PlayerRow.id))).all()
        return [_player(r) for r in rows]

    def set_blocked(self, player_id: int, blocked: bool) -> None:
        self.session.execute(
            update(PlayerRow).where(col(PlayerRow.id) == player_id).values(blocked=blocked)
        )
        if blocked:
            self.session.execute(delete(TokenRow).where(col(TokenRow.player_id) == player_id))

    def erase_player(self, player_id: int, name: str, now: int) -> None:
        """Forget a player's name, contact details and notifications; keep the key (the moves
        it signed must still verify), blocked, so that it is refused everywhere."""
        self.set_blocked(player_id, True)
        self.session.execute(
            update(PlayerRow)
            .where(col(PlayerRow.id) == player_id)
            .values(
                display_name=name, email="", email_verified=False, email_pending="",
                email_code_hash="", email_mode="off", webhook_url="", webhook_secret="",
                time_zone="UTC", invitation_code="", deleted_ms=now,
            )
        )  # fmt: skip
        self.session.execute(
            delete(NotificationRow).where(col(NotificationRow.player_id) == player_id)
        )

    def add_admin_action(self, action: AdminAction) -> None:
        self.session.add(
            AdminActionRow(
                at_ms=action.at_ms, actor=action.actor, action=action.action,
                target=action.target, detail=action.detail,
            )
        )  # fmt: skip

    def forget_admin_details(self, target: str) -> None:
        """Blank what the admin log says about ``target`` beyond the action itself."""
        self.session.execute(
            update(AdminActionRow).where(col(AdminActionRow.target) == target).values(detail="{}")
        )

    def admin_actions(self, limit: int) -> list[AdminAction]:
        """The newest ``limit`` entries of the operator's log, oldest first."""
        rows = self.session.exec(
            select(AdminActionRow).order_by(col(AdminActionRow.id).desc()).limit(limit)
        ).all()
        return [AdminAction(r.at_ms, r.actor, r.action, r.target, r.detail) for r in rows][::-1]

    def row_counts(self) -> dict[str, int]:
        """How many players, matches by status, moves and notifications by state there are."""
        counts = {
            "players": _count(self.session, PlayerRow),
            "moves": _count(self.session, LogEntryRow),
        }
        for status, n in self.session.exec(
            select(MatchRow.status, func.count()).group_by(MatchRow.status)
        ).all():
            counts[f"matches {status}"] = int(n)
        for state, n in self.session.exec(
            select(NotificationRow.state, func.count()).group_by(NotificationRow.state)
        ).all():
            counts[f"notifications {state}"] = int(n)
        return counts

    def stored_counts(self) -> dict[str, dict[str, int]]:
        """Matches by status, and notifications not yet settled or given up, by state (the
        metrics endpoint reads these at each scrape: grouped scans of indexed columns)."""
        matches = self.session.exec(
            select(MatchRow.status, func.count()).group_by(MatchRow.status)
        ).all()
        notes = self.session.exec(
            select(NotificationRow.state, func.count())
            .where(col(NotificationRow.state).in_(("pending", "sending", "failed")))
            .group_by(NotificationRow.state)
        ).all()
        return {
            "matches": {status.value: 0 for status in MatchStatus}
            | {s: int(n) for s, n in matches},
            "notifications": dict.fromkeys(("pending", "sending", "failed"), 0)
            | {s: int(n) for s, n in notes},
        }

    # -- invitations ----------------------------------------------------------------------------

    def add_invitation(self, code: str, now: int, expires_ms: int) -> None:
        self.session.add(InvitationRow(code=code, created_ms=now, expires_ms=expires_ms))

    def use_invitation(self, code: str, player_id: int, now: int) -> bool:
        """Mark an unused, unexpired invitation used; False if there is none such."""
        result = self.session.execute(
            update(InvitationRow)
            .where(
                col(InvitationRow.code) == code,
                col(InvitationRow.used_by).is_(None),
                col(InvitationRow.expires_ms) > now,
            )
            .values(used_by=player_id, used_ms=now)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def invitation_usable(self, code: str, now: int) -> bool:
        row = self.session.get(InvitationRow, code)
        return row is not None and row.used_by is None and row.expires_ms > now

    # -- authentication -------------------------------------------------------------------------

    def add_challenge(self, challenge: bytes, public_key: bytes, expires_ms: int) -> None:
        self.session.add(
            ChallengeRow(challenge=challenge, public_key=public_key, expires_ms=expires_ms)
        )

    def keep_challenges(self, public_key: bytes, keep: int) -> None:
        """Delete all but the ``keep`` newest challenges of ``public_key``."""
        rows = self.session.exec(
            select(ChallengeRow.challenge)
            .where(col(ChallengeRow.public_key) == public_key)
            .order_by(col(ChallengeRow.expires_ms).desc())
            .offset(keep)
        ).all()
        if rows:
            self.session.execute(
                delete(ChallengeRow).where(col(ChallengeRow.challenge).in_(list(rows)))
            )

    def take_challenge(self, challenge: bytes) -> tuple[bytes, int] | None:
        """Remove a challenge and return ``(public_key, expires_ms)``; None if unknown or used.

        The row is locked first, so of two racing answers (PostgreSQL) the second waits and
        then finds it gone: a challenge yields one token.
        """
        row = self.session.get(ChallengeRow, challenge, with_for_update=True)
        if row is None:
            return None
        self.session.delete(row)
        return row.public_key, row.expires_ms

    def add_token(self, token_hash: bytes, player_id: int, expires_ms: int) -> None:
        self.session.add(
            TokenRow(token_hash=token_hash, player_id=player_id, expires_ms=expires_ms)
        )

    def match_head(self, match_id: str, seat: int) -> MatchHead | None:
        """What changes move by move, and whether ``seat``'s player is blocked (one query)."""
        rows, _ = run(self.session, _HEAD, {"id": match_id, "seat": seat})
        return _match_head(rows[0]) if rows else None

    def live_tokens(self, token_hashes: Collection[bytes], now: int) -> dict[bytes, bool]:
        """Of these tokens, the ones still valid at ``now``, each with whether its player is
        blocked (a block deletes the player's tokens, so True is only a race)."""
        found: dict[bytes, bool] = {}
        hashes = list(token_hashes)
        for start in range(0, len(hashes), 500):  # within every database's parameter limit
            rows = self.session.exec(
                select(TokenRow.token_hash, PlayerRow.blocked)
                .join(PlayerRow, col(PlayerRow.id) == col(TokenRow.player_id))
                .where(col(TokenRow.token_hash).in_(hashes[start : start + 500]))
                .where(col(TokenRow.expires_ms) > now)
            ).all()
            found.update((bytes(h), bool(b)) for h, b in rows)
        return found

    def purge_expired(self, now: int) -> None:
        self.session.execute(delete(ChallengeRow).where(col(ChallengeRow.expires_ms) <= now))
        self.session.execute(delete(TokenRow).where(col(TokenRow.expires_ms) <= now))

    # -- matches --------------------------------------------------------------------------------

    def add_match(self, match: Match) -> None:
        self.session.add(
            MatchRow(
                id=match.id,
                preset=match.preset,
                config_json=json.dumps(match.config.to_dict(), sort_keys=True),
                status=match.status.value,
                players=match.config.players,
                version=match.version,
                revision=match.revision,
                head_hash=match.head_hash,
                invite_code=match.invite_code,
                created_by=match.created_by,
                created_ms=match.created_ms,
                updated_ms=match.updated_ms,
                time_control_json=_time_control_json(match.time_control),
            )
        )
        self.session.flush()
        for seat in match.seats:
            self.session.add(
                SeatRow(
                    match_id=match.id,
                    seat=seat.seat,
                    kind=seat.kind.value,
                    player_id=seat.player_id,
                    seen_revision=seat.seen_revision,
                    bank_ms=seat.bank_ms,
                )
            )
        self.session.flush()

    def match(self, match_id: str, *, for_update: bool = False) -> Match | None:
        statement = select(MatchRow).where(MatchRow.id == match_id)
        if for_update:
            statement = statement.with_for_update()
        row = self.session.exec(statement).one_or_none()
        return self._match(row) if row else None

    def match_by_invite(self, invite_code: str, *, for_update: bool = False) -> Match | None:
        statement = select(MatchRow).where(MatchRow.invite_code == invite_code)
        if for_update:
            statement = statement.with_for_update()
        row = self.session.exec(statement).one_or_none()
        return self._match(row) if row else None

    def open_matches_of(self, player_id: int) -> int:
        """How many matches not yet finished ``player_id`` sits in."""
        return int(
            self.session.exec(
                select(func.count(func.distinct(col(SeatRow.match_id))))
                .join(MatchRow, col(SeatRow.match_id) == col(MatchRow.id))
                .where(SeatRow.player_id == player_id)
                .where(col(MatchRow.status) != MatchStatus.FINISHED.value)
            ).one()
        )

    def matches_page(
        self, player_id: int, *, finished: bool, after: tuple[int, str] | None, limit: int
    ) -> list[tuple[Match, StoredSnapshot]]:
        """Up to ``limit`` of the player's matches that are finished (newest first) or not
        (oldest first), after the one with ``(created_ms, id) == after`` in that order; each
        with its state snapshot as stored, read in the same query (``read_snapshot``)."""
        order = (col(MatchRow.created_ms), col(MatchRow.id))
        statement = (
            select(MatchRow)
            .where(
                col(MatchRow.id).in_(select(SeatRow.match_id).where(SeatRow.player_id == player_id))
            )
            .where(
                (col(MatchRow.status) == MatchStatus.FINISHED.value)
                if finished
                else (col(MatchRow.status) != MatchStatus.FINISHED.value)
            )
        )
        if after is not None:
            key = tuple_(*order)
            statement = statement.where(key < tuple_(*after) if finished else key > tuple_(*after))
        statement = statement.order_by(*(c.desc() if finished else c for c in order)).limit(limit)
        rows = self.session.exec(statement).all()
        stored = ((r.snapshot_version, r.state_json) for r in rows)
        return list(zip(self._matches(rows), stored, strict=True))

    def changed_since(self, since_ms: int) -> list[tuple[str, int]]:
        """``(id, revision)`` of every match changed at or after ``since_ms`` (by its
        ``updated_ms``, which is indexed)."""
        rows = self.session.exec(
            select(MatchRow.id, MatchRow.revision).where(col(MatchRow.updated_ms) >= since_ms)
        ).all()
        return [(match_id, revision) for match_id, revision in rows]

    def recent_matches(self, status: MatchStatus | None, limit: int) -> list[Match]:
        """Up to ``limit`` matches (of ``status``, else all), the most recently changed first."""
        statement = select(MatchRow)
        if status is not None:
            statement = statement.where(MatchRow.status == status.value)
        statement = statement.order_by(col(MatchRow.updated_ms).desc(), col(MatchRow.id))
        return [self._match(r) for r in self.session.exec(statement.limit(limit)).all()]

    def match_ids_starting(self, prefix: str, limit: int) -> list[str]:
        """Ids of matches that begin with ``prefix`` (at most ``limit``)."""
        statement = select(MatchRow.id).where(col(MatchRow.id).startswith(prefix, autoescape=True))
        return list(self.session.exec(statement.order_by(col(MatchRow.id)).limit(limit)))

    def match_ids(self, status: MatchStatus) -> list[str]:
        return list(self.session.exec(select(MatchRow.id).where(MatchRow.status == status.value)))

    def snapshot(self, match_id: str) -> Snapshot | None:
        """The latest state snapshot and the seq it was taken at (None before the start)."""
        row = self.session.exec(
            select(MatchRow.snapshot_version, MatchRow.state_json).where(MatchRow.id == match_id)
        ).one_or_none()
        return read_snapshot(row) if row is not None else None

    def set_seat(self, match_id: str, seat: int, kind: SeatKind, player_id: int | None) -> bool:
        """Fill an empty seat; False if it was taken meanwhile."""
        result = self.session.execute(
            update(SeatRow)
            .where(
                col(SeatRow.match_id) == match_id,
                col(SeatRow.seat) == seat,
                col(SeatRow.kind) == SeatKind.EMPTY.value,
            )
            .values(kind=kind.value, player_id=player_id)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def set_seat_orders(self, match_id: str, seat: int, orders: StandingOrders | None) -> None:
        """Give ``seat`` its own standing orders in this match (None: its player's default)."""
        self.session.execute(
            update(SeatRow)
            .where(col(SeatRow.match_id) == match_id, col(SeatRow.seat) == seat)
            .values(
                order_draw=None if orders is None else orders.draw,
                order_answer=None if orders is None else orders.answer,
            )
        )

    def set_abort_asked(self, match_id: str, seat: int) -> None:
        self.session.execute(
            update(SeatRow)
            .where(col(SeatRow.match_id) == match_id, col(SeatRow.seat) == seat)
            .values(abort_asked=True)
        )

    def clocks_to_remind(
        self, before_ms: int, reminders: int, limit: int
    ) -> list[tuple[str, int, int]]:
        """``(id, due, reminders had)`` of matches in play whose timed turn is due by
        ``before_ms`` and has had fewer than ``reminders`` (the sweep picks those that
        crossed a new threshold)."""
        rows, _ = run(
            self.session, _TO_REMIND, {"before": before_ms, "reminders": reminders, "limit": limit}
        )
        return [(str(r[0]), int(r[1]), int(r[2])) for r in rows]

    def set_reminded(self, match_id: str, started_ms: int, was: int, count: int) -> bool:
        """Note ``count`` reminders for the timed turn begun at ``started_ms`` (False: the
        turn ended, or another process sent these reminders)."""
        params = {"id": match_id, "started": started_ms, "was": was, "count": count}
        return bool(self._run(_REMINDED, params))

    def waiting_since_before(self, before_ms: int, limit: int) -> list[str]:
        """Ids of matches still waiting for players, created before ``before_ms``."""
        rows, _ = run(self.session, _WAITING_BEFORE, {"before": before_ms, "limit": limit})
        return [str(r[0]) for r in rows]

    def clocks_due(self, now: int, limit: int) -> list[str]:
        """Ids of up to ``limit`` matches in play whose timed turn is overdue at ``now``,
        the longest overdue first (``clock_due_ms`` is indexed)."""
        return list(
            self.session.exec(
                select(MatchRow.id)
                .where(col(MatchRow.clock_due_ms) > 0, col(MatchRow.clock_due_ms) <= now)
                .where(MatchRow.status == MatchStatus.PLAYING.value)
                .order_by(col(MatchRow.clock_due_ms))
                .limit(limit)
            )
        )

    # -- notifications (the outbox) and their settings ---------------------------------------

    def due_notifications(
        self, now: int, limit: int, skip_players: Collection[int] = ()
    ) -> list[int]:
        """Ids of up to ``limit`` notifications waiting for delivery at ``now``, oldest first,
        leaving out those of ``skip_players`` (whose delivery is under way: one player's
        backlog must not fill every round)."""
        if not skip_players:
            rows, _ = run(self.session, _DUE_NOTIFICATIONS, {"now": now, "limit": limit})
            return [int(row[0]) for row in rows]
        found = self.session.execute(
            select(NotificationRow.id)
            .where(NotificationRow.state == "pending")
            .where(col(NotificationRow.next_attempt_ms) <= now)
            .where(col(NotificationRow.player_id).not_in(list(skip_players)))
            .order_by(col(NotificationRow.id))
            .limit(limit)
        ).scalars()
        return [int(i) for i in found if i is not None]

    def claim_notification(self, notification_id: int, now: int, lease_until: int) -> bool:
        """Take a pending notification for delivery (False: another process took it)."""
        result = self.session.execute(
            update(NotificationRow)
            .where(col(NotificationRow.id) == notification_id)
            .where(col(NotificationRow.state) == "pending")
            .values(state="sending", lease_until_ms=lease_until)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def stale_sendings(self, now: int) -> bool:
        """Whether a delivery was interrupted (a ``sending`` row past its lease)."""
        rows, _ = run(self.session, _STALE_SENDING, {"now": now})
        return bool(rows)

    def settle_quietly(self, outcomes: Sequence[tuple[int, str, str]], now: int) -> None:
        """Settle notifications that go to no channel now: ``(id, email state, webhook
        state)`` each; only those still pending (another process may have taken one)."""
        for notification_id, email, webhook in outcomes:
            self._run(
                _SETTLE_QUIETLY,
                {"id": notification_id, "email": email, "webhook": webhook, "now": now},
            )

    def forget_notifications(self, settled_before_ms: int, limit: int) -> int:
        """Delete up to ``limit`` notifications settled (delivered, or given up) before
        ``settled_before_ms``; none that a digest still waits for. Returns how many."""
        old = (
            select(NotificationRow.id)
            .where(col(NotificationRow.state).in_(("done", "failed")))
            .where(  # rows stored settled before done_ms was set for them have 0: their age
                case(
                    (col(NotificationRow.done_ms) > 0, col(NotificationRow.done_ms)),
                    else_=col(NotificationRow.created_ms),
                )
                < settled_before_ms
            )
            .where(col(NotificationRow.email_state) != "digest")
            .limit(limit)
        )
        result = self.session.execute(
            delete(NotificationRow).where(col(NotificationRow.id).in_(old.scalar_subquery()))
        )
        return int(result.rowcount)  # type: ignore[attr-defined]

    def abandon_stale_sendings(self, now: int) -> int:
        """Notifications whose delivery was interrupted (their process died mid-way): they
        may have reached a channel, so they are not sent again; they are marked failed."""
        result = self.session.execute(
            update(NotificationRow)
            .where(col(NotificationRow.state) == "sending")
            .where(col(NotificationRow.lease_until_ms) < now)
            .values(state="failed", done_ms=now)
        )
        return int(result.rowcount)  # type: ignore[attr-defined]

    def notification(self, notification_id: int) -> Notification | None:
        row = self.session.get(NotificationRow, notification_id)
        return _notification(row) if row else None

    def scrub_notification(self, notification_id: int) -> None:
        """Forget a notification's secret facts (an e-mail code, once it went out or never
        will), keeping only the address a code mail went to: the per-address limit on code
        mails counts it (``codes_asked``), whatever the player's settings say later."""
        found = self.session.execute(
            select(NotificationRow.detail_json).where(col(NotificationRow.id) == notification_id)
        ).scalar_one_or_none()
        facts = json.loads(found) if found else {}
        kept = {"address": facts["address"]} if isinstance(facts.get("address"), str) else {}
        self.session.execute(
            update(NotificationRow)
            .where(col(NotificationRow.id) == notification_id)
            .values(detail_json=json.dumps(kept))
        )

    def settle_notification(
        self,
        notification_id: int,
        *,
        state: str,
        email_state: str,
        webhook_state: str,
        attempts: int,
        next_attempt_ms: int,
        now: int,
    ) -> None:
        """Record what a delivery attempt did: ``done``/``failed``, or ``pending`` again."""
        self.session.execute(
            update(NotificationRow)
            .where(col(NotificationRow.id) == notification_id)
            .values(
                state=state,
                email_state=email_state,
                webhook_state=webhook_state,
                attempts=attempts,
                next_attempt_ms=next_attempt_ms,
                done_ms=now if state != "pending" else 0,
            )
        )

    def digest_waiting(self, player_id: int, limit: int) -> list[Notification]:
        rows = self.session.exec(
            select(NotificationRow)
            .where(NotificationRow.player_id == player_id, NotificationRow.email_state == "digest")
            .order_by(col(NotificationRow.id))
            .limit(limit)
        ).all()
        return [_notification(r) for r in rows]

    def players_with_digests(self, limit: int) -> list[int]:
        """Players with notifications waiting for a digest, those whose last digest is the
        oldest first (so that players already served today do not crowd out the others)."""
        rows, _ = run(self.session, _DIGEST_PLAYERS, {"limit": limit})
        return [int(r[0]) for r in rows]

    def set_email_state(self, ids: Sequence[int], state: str) -> None:
        if ids:
            self.session.execute(
                update(NotificationRow)
                .where(col(NotificationRow.id).in_(list(ids)))
                .values(email_state=state)
            )

    def claim_digest(self, player_id: int, last_sent_ms: int, now: int) -> bool:
        """Take the player's digest for sending (False: another process sends it)."""
        result = self.session.execute(
            update(PlayerRow)
            .where(col(PlayerRow.id) == player_id)
            .where(col(PlayerRow.digest_sent_ms) == last_sent_ms)
            .values(digest_sent_ms=now)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def notifications_of(self, player_id: int, after_id: int, limit: int) -> list[Notification]:
        """The player's notifications after ``after_id``, oldest first (Watch resumes here)."""
        rows = self.session.exec(
            select(NotificationRow)
            .where(NotificationRow.player_id == player_id, col(NotificationRow.id) > after_id)
            .order_by(col(NotificationRow.id))
            .limit(limit)
        ).all()
        return [_notification(r) for r in rows]

    def settings(self, player_id: int) -> Settings | None:
        row = self.session.get(PlayerRow, player_id)
        if row is None or row.id is None:
            return None
        return Settings(
            player_id=row.id,
            display_name=row.display_name,
            time_zone=row.time_zone,
            email=row.email,
            email_verified=row.email_verified,
            email_pending=row.email_pending,
            email_mode=EmailMode(row.email_mode),
            webhook_url=row.webhook_url,
            webhook_secret=row.webhook_secret,
            digest_sent_ms=row.digest_sent_ms,
            vacation_started_ms=row.vacation_started_ms,
            vacation_used_ms=row.vacation_used_ms,
            vacation_year=row.vacation_year,
            email_code_hash=row.email_code_hash,
            allow_reply_moves=row.allow_reply_moves,
            orders=StandingOrders(row.order_draw, row.order_answer),
        )

    def email_code(self, player_id: int) -> tuple[str, str, int]:
        """The pending address, its code's hash (hex) and when the code expires."""
        row = self.session.get(PlayerRow, player_id)
        if row is None:
            return "", "", 0
        return row.email_pending, row.email_code_hash, row.email_code_expires_ms

    def codes_asked(self, address: str, since: int, code_ttl_ms: int) -> tuple[int, int]:
        """Verification codes asked for since ``since``: to ``address`` (any case), and to
        anyone. Each code mail's notification keeps the address it was for (even once its
        code is scrubbed), so a player who later clears or changes their address cannot take
        their mails out of the count. A player who asked since then holds a code that expires
        after ``since + code_ttl_ms``, so their requests are found by the notification's
        player index (no scan of every notification); there are at most the hourly limit of
        them."""
        asked = select(PlayerRow.id).where(
            col(PlayerRow.email_code_expires_ms) >= since + code_ttl_ms
        )
        details = self.session.execute(
            select(NotificationRow.detail_json)
            .where(col(NotificationRow.player_id).in_(asked))
            .where(NotificationRow.kind == "verify_email")
            .where(col(NotificationRow.created_ms) >= since)
        ).scalars()
        wanted, to_address, total = address.lower(), 0, 0
        for detail in details:
            total += 1
            facts = json.loads(detail) if detail else {}
            if str(facts.get("address", "")).lower() == wanted:
                to_address += 1
        return to_address, total

    def update_player(self, player_id: int, **values: object) -> None:
        """Change settings columns of a player (names as in ``PlayerRow``)."""
        self.session.execute(
            update(PlayerRow).where(col(PlayerRow.id) == player_id).values(**values)
        )

    def vacation(self, player_id: int) -> tuple[int, int, int]:
        """The player's vacation: (started, used in ``year``, ``year``)."""
        row = self.session.get(PlayerRow, player_id)
        if row is None:
            return 0, 0, 0
        return row.vacation_started_ms, row.vacation_used_ms, row.vacation_year

    def vacations_spent(self, now: int, allowance_ms: int, year: int, limit: int) -> list[int]:
        """Players on vacation whose allowance (``allowance_ms`` a year; ``year`` now) has
        run out by ``now``."""
        rows, _ = run(
            self.session,
            _VACATION_SPENT,
            {"now": now, "allowance": allowance_ms, "year": year, "limit": limit},
        )
        return [int(r[0]) for r in rows]

    def playing_match_ids_of(self, player_id: int) -> list[str]:
        return self._match_ids_of(player_id, (MatchStatus.PLAYING,))

    def unfinished_match_ids_of(self, player_id: int) -> list[str]:
        """The matches, waiting or playing, in which the player sits (oldest first)."""
        return self._match_ids_of(player_id, (MatchStatus.WAITING, MatchStatus.PLAYING))

    def _match_ids_of(self, player_id: int, statuses: Sequence[MatchStatus]) -> list[str]:
        seated = select(SeatRow.match_id).where(SeatRow.player_id == player_id)
        statement = (
            select(MatchRow.id)
            .where(col(MatchRow.id).in_(seated))
            .where(col(MatchRow.status).in_([s.value for s in statuses]))
            .order_by(col(MatchRow.created_ms), col(MatchRow.id))
        )
        return list(self.session.exec(statement))

    def touch_matches_of(self, player_id: int, now: int, *, finished_too: bool = False) -> None:
        """Mark the player's unfinished matches (and finished ones if asked) changed: every
        process reads their seats afresh."""
        statement = update(MatchRow).where(
            col(MatchRow.id).in_(select(SeatRow.match_id).where(SeatRow.player_id == player_id))
        )
        if not finished_too:
            statement = statement.where(col(MatchRow.status) != MatchStatus.FINISHED.value)
        self.session.execute(statement.values(revision=MatchRow.revision + 1, updated_ms=now))

    def save_match(
        self,
        match_id: str,
        *,
        expected_revision: int,
        status: MatchStatus,
        revision: int,
        now: int,
        version: int | None = None,
        head_hash: bytes | None = None,
        state: GameState | None = None,
        clock: TurnClock | Literal["keep"] | None = "keep",
        aborted: bool = False,
        header: bytes | None = None,
    ) -> bool:
        """Update a match only if nobody changed it since ``expected_revision`` (its turn clock
        too, unless ``clock`` is ``"keep"``)."""
        values: dict[str, object] = {
            "status": status.value,
            "revision": revision,
            "updated_ms": now,
        }
        if aborted:
            values["aborted"] = True
        if clock != "keep":
            params = _clock_params(clock)
            # A new turn (another start, or another seat's) has had no reminders; the same
            # turn keeps its count.
            values["clock_reminded"] = case(
                (
                    (col(MatchRow.clock_started_ms) == params["clock_started"])
                    & (col(MatchRow.clock_seat) == params["clock_seat"]),
                    MatchRow.clock_reminded,
                ),
                else_=0,
            )
            values["clock_seat"] = params["clock_seat"]
            values["clock_started_ms"] = params["clock_started"]
            values["clock_due_ms"] = params["clock_due"]
            values["clock_paused_left_ms"] = params["clock_paused"]
        if version is not None:
            values["version"] = version
        if head_hash is not None:
            values["head_hash"] = head_hash
        if header is not None:
            values["header"] = header
        if state is not None:
            values["state_json"] = json.dumps(state.to_json(), separators=(",", ":"))
            values["snapshot_version"] = version if version is not None else 0
        result = self.session.execute(
            update(MatchRow)
            .where(col(MatchRow.id) == match_id, col(MatchRow.revision) == expected_revision)
            .values(**values)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def _match(self, row: MatchRow) -> Match:
        return self._matches([row])[0]

    def _matches(self, rows: Sequence[MatchRow]) -> list[Match]:
        """Matches from their rows, with every seat (and its player) read in one query."""
        if not rows:
            return []
        seat_rows = self.session.exec(
            select(SeatRow, PlayerRow)
            .join(PlayerRow, col(PlayerRow.id) == col(SeatRow.player_id), isouter=True)
            .where(col(SeatRow.match_id).in_([r.id for r in rows]))
            .order_by(col(SeatRow.match_id), col(SeatRow.seat))
        ).all()
        seats: dict[str, list[Seat]] = {}
        for seat, player in seat_rows:
            seats.setdefault(seat.match_id, []).append(self._seat(seat, player))
        return [self._match_of(row, tuple(seats.get(row.id, ()))) for row in rows]

    def _match_of(self, row: MatchRow, seats: tuple[Seat, ...]) -> Match:
        return Match(
            id=row.id,
            preset=row.preset,
            config=_config(row.config_json),
            status=MatchStatus(row.status),
            version=row.version,
            revision=row.revision,
            head_hash=row.head_hash,
            invite_code=row.invite_code,
            created_by=row.created_by,
            created_ms=row.created_ms,
            updated_ms=row.updated_ms,
            seats=seats,
            time_control=_time_control(row.time_control_json),
            clock=(
                TurnClock(
                    row.clock_seat, row.clock_started_ms, row.clock_due_ms, row.clock_paused_left_ms
                )
                if row.clock_seat >= 0
                else None
            ),
            aborted=row.aborted,
            header=row.header or b"",
        )

    def _seat(self, row: SeatRow, player: PlayerRow | None) -> Seat:
        kind = SeatKind(row.kind)
        if kind is SeatKind.BOT:
            return Seat(row.seat, kind, None, f"bot {row.seat}", self.bot_public_key, 0)
        if player is None:
            return Seat(row.seat, kind)
        return Seat(
            row.seat,
            kind,
            player.id,
            player.display_name,
            player.public_key,
            row.seen_revision,
            time_zone=player.time_zone,
            bank_ms=row.bank_ms,
            covered=row.covered,
            on_vacation=player.vacation_started_ms > 0,
            abort_asked=row.abort_asked,
            reachable=(player.email_verified and player.email_mode != "off")
            or bool(player.webhook_url),
            reply_moves=player.allow_reply_moves,
            orders=_orders(row, player),
            orders_per_match=row.order_draw is not None,
        )

    # -- the log --------------------------------------------------------------------------------

    def entry(self, match_id: str, seq: int) -> Entry | None:
        row = self.session.exec(
            select(LogEntryRow).where(LogEntryRow.match_id == match_id, LogEntryRow.seq == seq)
        ).one_or_none()
        return _entry(row) if row else None

    def entries(self, match_id: str, after_seq: int, limit: int) -> list[Entry]:
        rows = self.session.exec(
            select(LogEntryRow)
            .where(LogEntryRow.match_id == match_id, LogEntryRow.seq > after_seq)
            .order_by(col(LogEntryRow.seq))
            .limit(limit)
        ).all()
        return [_entry(r) for r in rows]

    def entry_count(self, match_id: str) -> int:
        return int(
            self.session.exec(
                select(func.count())
                .select_from(LogEntryRow)
                .where(LogEntryRow.match_id == match_id)
            ).one()
        )

    # -- hands (commit-reveal) ------------------------------------------------------------------

    def hand(self, match_id: str, hand_number: int) -> Hand | None:
        row = self.session.get(HandRow, (match_id, hand_number))
        return _hand(row) if row else None

    def hands(self, match_id: str, numbers: Collection[int] | None = None) -> list[Hand]:
        """The match's commit-reveal records (only those of hands ``numbers`` if given)."""
        statement = select(HandRow).where(HandRow.match_id == match_id)
        if numbers is not None:
            statement = statement.where(col(HandRow.hand_number).in_(list(numbers)))
        rows = self.session.exec(statement.order_by(col(HandRow.hand_number))).all()
        return [_hand(r) for r in rows]


@dataclass(frozen=True, slots=True)
class ReplyCode:
    """A stored reply code (``server.service.replies``): whose, for which table, and whether
    it is still good."""

    player_id: int
    match_id: str
    version: int
    expires_ms: int
    used_ms: int


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

    @classmethod
    def of(
        cls,
        match: Match,
        expected_revision: int,
        snapshot: GameState | None,
        entry: Entry,
        banks: tuple[int, ...] = (),
    ) -> StoredMove:
        state_json = None
        if snapshot is not None:
            state_json = json.dumps(snapshot.to_json(), separators=(",", ":"))
        return cls(match, expected_revision, state_json, _entry_params(match.id, entry), banks)


def _clock_params(clock: TurnClock | None) -> dict[str, int]:
    if clock is None:
        return {"clock_seat": -1, "clock_started": 0, "clock_due": 0, "clock_paused": 0}
    return {
        "clock_seat": clock.seat,
        "clock_started": clock.started_ms,
        "clock_due": clock.due_ms,
        "clock_paused": clock.paused_left_ms,
    }


def _time_control_json(control: TimeControl | None) -> str:
    if control is None:
        return ""
    return json.dumps(
        {
            "hours_per_move": control.hours_per_move,
            "bank_hours": control.bank_hours,
            "weekends_off": control.weekends_off,
            "on_timeout": control.on_timeout.value,
        },
        sort_keys=True,
    )


def _time_control(text: str) -> TimeControl | None:
    if not text:
        return None
    data = json.loads(text)
    if "hours_per_move" not in data:  # stored before clocks in hours (issue 28): days
        data["hours_per_move"], data["bank_hours"] = (
            data["days_per_move"] * 24,
            data["bank_days"] * 24,
        )
    return TimeControl(
        int(data["hours_per_move"]),
        int(data["bank_hours"]),
        bool(data["weekends_off"]),
        TimeoutPolicy(data["on_timeout"]),
    )


def _entry_params(match_id: str, entry: Entry) -> dict[str, object]:
    return {
        "match_id": match_id,
        "seq": entry.seq,
        "seat": entry.seat,
        "hand_number": entry.hand_number,
        "payload": entry.payload,
        "signature": entry.signature,
        "actor_key": entry.actor_key,
        "entry_hash": entry.entry_hash,
        "receipt_signature": entry.receipt_signature,
        "events_json": json.dumps([e.to_json() for e in entry.events], separators=(",", ":")),
        "created_ms": entry.created_ms,
        "standing_order": entry.standing_order,
    }


def _notification(row: NotificationRow) -> Notification:
    assert row.id is not None
    return Notification(
        id=row.id,
        player_id=row.player_id,
        match_id=row.match_id,
        kind=row.kind,
        facts=json.loads(row.detail_json),
        created_ms=row.created_ms,
        attempts=row.attempts,
        email_state=row.email_state,
        webhook_state=row.webhook_state,
    )


def _count(session: Session, table: type[Any]) -> int:
    return int(session.exec(select(func.count()).select_from(table)).one())


def _player(row: PlayerRow) -> Player:
    assert row.id is not None
    return Player(
        id=row.id,
        public_key=row.public_key,
        display_name=row.display_name,
        email=row.email,
        blocked=row.blocked,
        created_ms=row.created_ms,
        deleted_ms=row.deleted_ms,
    )


def _entry(row: LogEntryRow) -> Entry:
    return Entry(
        seq=row.seq,
        seat=row.seat,
        hand_number=row.hand_number,
        payload=row.payload,
        signature=row.signature,
        actor_key=row.actor_key,
        entry_hash=row.entry_hash,
        receipt_signature=row.receipt_signature,
        events=tuple(Event.from_json(e) for e in json.loads(row.events_json)),
        created_ms=row.created_ms,
        standing_order=row.standing_order,
    )


def _hand(row: HandRow) -> Hand:
    return Hand(
        hand_number=row.hand_number,
        commitment=row.commitment,
        secret=row.secret,
        revealed=row.revealed,
        deal_seq=row.deal_seq,
    )


def _orders(row: SeatRow, player: PlayerRow) -> StandingOrders:
    """The orders in force for a seat: the match's own if it has them, else the player's."""
    if row.order_draw is not None:
        return StandingOrders(row.order_draw, row.order_answer or "")
    return StandingOrders(player.order_draw, player.order_answer)


@lru_cache(maxsize=256)
def _config(text: str) -> RuleConfig:
    """A stored configuration, parsed once per distinct text (a server sees a handful: the
    presets and the option sets its players chose), not once per match read."""
    return RuleConfig.from_dict(json.loads(text))


def read_snapshot(stored: StoredSnapshot) -> Snapshot | None:
    """A snapshot as stored (its seq, its JSON text), read (None: none taken yet)."""
    version, text = stored
    return (version, GameState.from_json(json.loads(text))) if text else None
