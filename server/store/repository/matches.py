"""Matches, their seats and clocks, the log of moves and the hands' commit-reveal records."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Literal

from sqlalchemy import case, func, text, tuple_, update
from sqlmodel import col, select

from server.domain import (
    Entry,
    Hand,
    Match,
    MatchHead,
    MatchStatus,
    SeatKind,
    StandingOrders,
    TurnClock,
)
from server.store.db import run
from server.store.models import (
    HandRow,
    LogEntryRow,
    MatchRow,
    SeatRow,
)
from server.store.repository.base import Room
from server.store.repository.prepared import (
    HEAD,
    match_head_record,
)
from server.store.repository.records import (
    Snapshot,
    StoredSnapshot,
    clock_params,
    entry_record,
    hand_record,
    read_snapshot,
    time_control_json,
)
from shared.rules import GameState

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


class MatchesRoom(Room):
    """Matches, their seats and clocks, the log of moves and the hands' commit-reveal records."""

    def match_head(self, match_id: str, seat: int) -> MatchHead | None:
        """What changes move by move, and whether ``seat``'s player is blocked (one query)."""
        rows, _ = run(self.session, HEAD, {"id": match_id, "seat": seat})
        return match_head_record(rows[0]) if rows else None

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
                time_control_json=time_control_json(match.time_control),
                spectators=match.spectators.value,
                rated=match.rated,
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
                    bot_level=seat.bot_level,
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

    def set_seat(
        self, match_id: str, seat: int, kind: SeatKind, player_id: int | None, bot_level: str = ""
    ) -> bool:
        """Fill an empty seat (a bot seat at ``bot_level``); False if it was taken meanwhile."""
        result = self.session.execute(
            update(SeatRow)
            .where(
                col(SeatRow.match_id) == match_id,
                col(SeatRow.seat) == seat,
                col(SeatRow.kind) == SeatKind.EMPTY.value,
            )
            .values(kind=kind.value, player_id=player_id, bot_level=bot_level)
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

    def set_recovered(self, match_id: str, first: int, last: int) -> None:
        """Note which entries a restore lost and players' copies brought back."""
        self.session.execute(
            update(MatchRow)
            .where(col(MatchRow.id) == match_id)
            .values(recovered_from=first, recovered_until=last)
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
            params = clock_params(clock)
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

    def entry(self, match_id: str, seq: int) -> Entry | None:
        row = self.session.exec(
            select(LogEntryRow).where(LogEntryRow.match_id == match_id, LogEntryRow.seq == seq)
        ).one_or_none()
        return entry_record(row) if row else None

    def entries(self, match_id: str, after_seq: int, limit: int) -> list[Entry]:
        rows = self.session.exec(
            select(LogEntryRow)
            .where(LogEntryRow.match_id == match_id, LogEntryRow.seq > after_seq)
            .order_by(col(LogEntryRow.seq))
            .limit(limit)
        ).all()
        return [entry_record(r) for r in rows]

    def entry_count(self, match_id: str) -> int:
        return int(
            self.session.exec(
                select(func.count())
                .select_from(LogEntryRow)
                .where(LogEntryRow.match_id == match_id)
            ).one()
        )

    def hand(self, match_id: str, hand_number: int) -> Hand | None:
        row = self.session.get(HandRow, (match_id, hand_number))
        return hand_record(row) if row else None

    def hands(self, match_id: str, numbers: Collection[int] | None = None) -> list[Hand]:
        """The match's commit-reveal records (only those of hands ``numbers`` if given)."""
        statement = select(HandRow).where(HandRow.match_id == match_id)
        if numbers is not None:
            statement = statement.where(col(HandRow.hand_number).in_(list(numbers)))
        rows = self.session.exec(statement.order_by(col(HandRow.hand_number))).all()
        return [hand_record(r) for r in rows]
