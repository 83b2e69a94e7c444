"""The club ladder (issue 33): players' ratings and statistics, and which finished matches
it has taken in."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import update
from sqlmodel import col, select

from server.domain import MatchStatus, Standing
from server.store.models import MatchRow, PlayerRow, SeatRow, StandingRow
from server.store.repository.base import Room
from server.store.repository.records import standing_record, standing_row


class LadderRoom(Room):
    """Standings, and the matches the ladder still has to take in."""

    def matches_to_rate(self, limit: int) -> list[str]:
        """Finished matches the ladder has not taken in yet, the earliest first."""
        return list(
            self.session.exec(
                select(MatchRow.id)
                .where(
                    col(MatchRow.rated_ms) == 0,
                    col(MatchRow.status) == MatchStatus.FINISHED.value,
                )
                .order_by(col(MatchRow.updated_ms))
                .limit(limit)
            ).all()
        )

    def set_rated(self, match_id: str, now: int) -> bool:
        """Note that the ladder took the match in (False: it had already)."""
        result = self.session.execute(
            update(MatchRow)
            .where(col(MatchRow.id) == match_id, col(MatchRow.rated_ms) == 0)
            .values(rated_ms=now)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def standings_of(
        self, player_ids: Collection[int], *, for_update: bool = False
    ) -> dict[int, Standing]:
        """The standings of these players that exist (a player with none is new); without
        their names (what rating them needs)."""
        statement = select(StandingRow).where(col(StandingRow.player_id).in_(list(player_ids)))
        if for_update:
            statement = statement.with_for_update()
        rows = self.session.exec(statement).all()
        return {row.player_id: standing_record(row, "") for row in rows}

    def save_standing(self, standing: Standing) -> None:
        self.session.merge(standing_row(standing))

    def standings(self, limit: int) -> list[Standing]:
        """Every rated player (at most ``limit``), the most rated matches first."""
        rows = self.session.exec(
            select(StandingRow, PlayerRow.display_name)
            .join(PlayerRow, col(PlayerRow.id) == col(StandingRow.player_id))
            .where(col(StandingRow.matches) > 0, col(PlayerRow.deleted_ms) == 0)
            .order_by(col(StandingRow.matches).desc(), col(StandingRow.player_id))
            .limit(limit)
        ).all()
        return [standing_record(row, name) for row, name in rows]

    def add_timeout(self, match_id: str, seat: int) -> None:
        """Count one more of ``seat``'s turns that ran out."""
        self.session.execute(
            update(SeatRow)
            .where(col(SeatRow.match_id) == match_id, col(SeatRow.seat) == seat)
            .values(timeouts=col(SeatRow.timeouts) + 1)
        )
