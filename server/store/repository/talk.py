"""Table talk: each match's talk entries (``shared.talk``), in their own chain beside its log."""

from __future__ import annotations

from sqlalchemy import func
from sqlmodel import col, select

from server.domain import TalkEntry
from server.store.models import NotificationRow, TalkRow
from server.store.repository.base import Room


def _record(row: TalkRow) -> TalkEntry:
    return TalkEntry(
        seq=row.seq,
        kind=row.kind,
        seat=row.seat,
        player_id=row.player_id,
        at_seq=row.at_seq,
        at_hash=row.at_hash,
        client_ms=row.client_ms,
        text=row.text,
        signature=row.signature,
        talk_hash=row.talk_hash,
        receipt_signature=row.receipt_signature,
        created_ms=row.created_ms,
    )


class TalkRoom(Room):
    """The talk of matches, and what mails say of it."""

    def add_talk(self, match_id: str, entry: TalkEntry) -> None:
        """Store one talk entry (a seq stored already: ``DuplicateKeyError`` at commit)."""
        self.session.add(
            TalkRow(
                match_id=match_id, seq=entry.seq, kind=entry.kind, seat=entry.seat,
                player_id=entry.player_id, at_seq=entry.at_seq, at_hash=entry.at_hash,
                client_ms=entry.client_ms, text=entry.text, signature=entry.signature,
                talk_hash=entry.talk_hash, receipt_signature=entry.receipt_signature,
                created_ms=entry.created_ms,
            )
        )  # fmt: skip

    def talk_head(self, match_id: str) -> TalkEntry | None:
        """The match's last talk entry (None: nothing was said)."""
        row = self.session.exec(
            select(TalkRow).where(TalkRow.match_id == match_id).order_by(col(TalkRow.seq).desc())
        ).first()
        return _record(row) if row is not None else None

    def talk(self, match_id: str, after_seq: int, limit: int) -> list[TalkEntry]:
        rows = self.session.exec(
            select(TalkRow)
            .where(TalkRow.match_id == match_id, col(TalkRow.seq) > after_seq)
            .order_by(col(TalkRow.seq))
            .limit(limit)
        ).all()
        return [_record(r) for r in rows]

    def talk_said(self, match_id: str, player_id: int, since_ms: int) -> int:
        """How many talk entries ``player_id`` stored in the match since ``since_ms``."""
        found = self.session.exec(
            select(func.count())
            .select_from(TalkRow)
            .where(
                TalkRow.match_id == match_id,
                TalkRow.player_id == player_id,
                col(TalkRow.created_ms) > since_ms,
            )
        ).one()
        return int(found)

    def conventions_of(self, match_id: str) -> list[TalkEntry]:
        """The match's declared conventions (at most one per side)."""
        rows = self.session.exec(
            select(TalkRow)
            .where(TalkRow.match_id == match_id, TalkRow.kind == "conventions")
            .order_by(col(TalkRow.seq))
        ).all()
        return [_record(r) for r in rows]

    def talk_notes_before(self, player_id: int, match_id: str, before_id: int) -> list[int]:
        """The ids of the player's talk notifications of the match that came after the last
        mail sent them about it and before notification ``before_id`` (what a mail about
        the match adds: the talk since the player's last mail)."""
        last_mail = (
            select(func.coalesce(func.max(NotificationRow.id), 0))
            .where(
                NotificationRow.player_id == player_id,
                NotificationRow.match_id == match_id,
                NotificationRow.kind != "talk",
                NotificationRow.email_state == "sent",
                col(NotificationRow.id) < before_id,
            )
            .scalar_subquery()
        )
        rows = self.session.exec(
            select(NotificationRow.id)
            .where(
                NotificationRow.player_id == player_id,
                NotificationRow.match_id == match_id,
                NotificationRow.kind == "talk",
                NotificationRow.email_state == "held",
                col(NotificationRow.id) > last_mail,
                col(NotificationRow.id) < before_id,
            )
            .order_by(col(NotificationRow.id))
        ).all()
        return [int(r) for r in rows if r is not None]
