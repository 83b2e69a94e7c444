"""The operator's log and the figures of what is stored."""

from __future__ import annotations

from sqlalchemy import func, update
from sqlmodel import col, select

from server.domain import (
    AdminAction,
    MatchStatus,
)
from server.store.models import (
    AdminActionRow,
    LogEntryRow,
    MatchRow,
    NotificationRow,
    PlayerRow,
)
from server.store.repository.base import Room
from server.store.repository.records import (
    count_rows,
)


class AdminRoom(Room):
    """The operator's log and the figures of what is stored."""

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
            "players": count_rows(self.session, PlayerRow),
            "moves": count_rows(self.session, LogEntryRow),
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
