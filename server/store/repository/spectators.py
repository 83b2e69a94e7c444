"""Spectators (issue 32): a match's policy and its players' asks to change it, and who
follows a match they do not sit in."""

from __future__ import annotations

from sqlalchemy import func, update
from sqlmodel import col, select

from server.domain import Spectators
from server.store.models import MatchRow, PlayerRow, SeatRow, SpectatorRow
from server.store.repository.base import Room


class SpectatorsRoom(Room):
    """Who may follow a match besides its players, and who does."""

    def set_spectators(self, match_id: str, policy: Spectators) -> None:
        """Change the match's policy and forget every seat's ask (they all asked for it)."""
        self.session.execute(
            update(MatchRow).where(col(MatchRow.id) == match_id).values(spectators=policy.value)
        )
        self.session.execute(
            update(SeatRow).where(col(SeatRow.match_id) == match_id).values(spectators_vote="")
        )

    def set_spectators_vote(self, match_id: str, seat: int, policy: Spectators | None) -> None:
        """Note the policy ``seat``'s player asks for (None: withdraw the ask)."""
        self.session.execute(
            update(SeatRow)
            .where(col(SeatRow.match_id) == match_id, col(SeatRow.seat) == seat)
            .values(spectators_vote="" if policy is None else policy.value)
        )

    def spectator_seen(self, match_id: str, player_id: int) -> int | None:
        """When ``player_id`` last looked at the match as a spectator (None: never)."""
        return self.session.exec(
            select(SpectatorRow.last_ms).where(
                col(SpectatorRow.match_id) == match_id, col(SpectatorRow.player_id) == player_id
            )
        ).one_or_none()

    def note_spectator(self, match_id: str, player_id: int, now: int) -> None:
        """Count ``player_id`` among the match's spectators as of ``now``."""
        row = self.session.get(SpectatorRow, (match_id, player_id))
        if row is None:
            self.session.add(
                SpectatorRow(match_id=match_id, player_id=player_id, first_ms=now, last_ms=now)
            )
        else:
            row.last_ms = now
            self.session.add(row)

    def spectator_count(self, match_id: str, since_ms: int) -> int:
        """How many players looked at the match as spectators since ``since_ms``."""
        found = self.session.exec(
            select(func.count())
            .select_from(SpectatorRow)
            .where(col(SpectatorRow.match_id) == match_id, col(SpectatorRow.last_ms) >= since_ms)
        ).one()
        return int(found)

    def spectator_names(self, match_id: str, since_ms: int, limit: int) -> list[str]:
        """The names of at most ``limit`` of those, the most recent first."""
        return list(
            self.session.exec(
                select(PlayerRow.display_name)
                .join(SpectatorRow, col(SpectatorRow.player_id) == col(PlayerRow.id))
                .where(
                    col(SpectatorRow.match_id) == match_id, col(SpectatorRow.last_ms) >= since_ms
                )
                .order_by(col(SpectatorRow.last_ms).desc(), col(PlayerRow.id))
                .limit(limit)
            ).all()
        )
