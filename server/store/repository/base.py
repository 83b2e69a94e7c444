"""What every room of the repository stands on: one session (one transaction), the bot key
its seats are read with, and the reading of matches and seats that several rooms share."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy import event
from sqlmodel import Session, col, select

from server.domain import (
    Match,
    MatchStatus,
    Seat,
    SeatKind,
    Spectators,
    TurnClock,
)
from server.store.db import SessionStatements
from server.store.models import (
    MatchRow,
    PlayerRow,
    SeatRow,
    StandingRow,
)
from server.store.repository.prepared import (
    PreparedRepository,
)
from server.store.repository.records import (
    orders_of,
    standing_record,
    stored_config,
    time_control_from_json,
)


class Room(PreparedRepository):
    """A room of the repository: one concern's queries over the session it wraps."""

    def __init__(self, session: Session, bot_public_key: bytes) -> None:
        super().__init__(SessionStatements(session))
        self.session = session
        self.bot_public_key = bot_public_key

    def after_commit(self, action: Callable[[], None]) -> None:
        """Run ``action`` once this transaction has committed (never if it rolls back)."""
        event.listen(self.session, "after_commit", lambda _session: action(), once=True)

    def _match(self, row: MatchRow) -> Match:
        return self._matches([row])[0]

    def _matches(self, rows: Sequence[MatchRow]) -> list[Match]:
        """Matches from their rows, with every seat (and its player) read in one query."""
        if not rows:
            return []
        seat_rows = self.session.exec(
            select(SeatRow, PlayerRow, StandingRow)
            .join(PlayerRow, col(PlayerRow.id) == col(SeatRow.player_id), isouter=True)
            .join(StandingRow, col(StandingRow.player_id) == col(SeatRow.player_id), isouter=True)
            .where(col(SeatRow.match_id).in_([r.id for r in rows]))
            .order_by(col(SeatRow.match_id), col(SeatRow.seat))
        ).all()
        seats: dict[str, list[Seat]] = {}
        for seat, player, standing in seat_rows:
            seats.setdefault(seat.match_id, []).append(self._seat(seat, player, standing))
        return [self._match_of(row, tuple(seats.get(row.id, ()))) for row in rows]

    def _match_of(self, row: MatchRow, seats: tuple[Seat, ...]) -> Match:
        return Match(
            id=row.id,
            preset=row.preset,
            config=stored_config(row.config_json),
            status=MatchStatus(row.status),
            version=row.version,
            revision=row.revision,
            head_hash=row.head_hash,
            invite_code=row.invite_code,
            created_by=row.created_by,
            created_ms=row.created_ms,
            updated_ms=row.updated_ms,
            seats=seats,
            time_control=time_control_from_json(row.time_control_json),
            clock=(
                TurnClock(
                    row.clock_seat, row.clock_started_ms, row.clock_due_ms, row.clock_paused_left_ms
                )
                if row.clock_seat >= 0
                else None
            ),
            aborted=row.aborted,
            header=row.header or b"",
            recovered=(row.recovered_from, row.recovered_until),
            spectators=Spectators(row.spectators),
            rated=row.rated,
        )

    def _seat(
        self, row: SeatRow, player: PlayerRow | None, standing: StandingRow | None = None
    ) -> Seat:
        kind = SeatKind(row.kind)
        if kind is SeatKind.BOT:
            return Seat(
                row.seat,
                kind,
                None,
                f"bot {row.seat}",
                self.bot_public_key,
                0,
                bot_level=row.bot_level,
            )
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
            orders=orders_of(row, player),
            orders_per_match=row.order_draw is not None,
            spectators_vote=row.spectators_vote,
            rating=0 if standing is None else round(standing_record(standing, "").current.rating),
            timeouts=row.timeouts,
        )
