"""The outbox: notifications to deliver, digests, code mails and the reply codes of moves
by mail."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

from sqlalchemy import case, delete, text, update
from sqlmodel import col, select

from server.domain import (
    Notification,
)
from server.store.db import run
from server.store.models import (
    NotificationRow,
    PlayerRow,
    ReplyCodeRow,
)
from server.store.repository.base import Room
from server.store.repository.records import (
    ReplyCode,
    notification_record,
)

_DIGEST_PLAYERS = text(
    "SELECT p.id FROM player p WHERE p.id IN (SELECT n.player_id FROM notification n"
    " WHERE n.email_state = 'digest') ORDER BY p.digest_sent_ms, p.id LIMIT :limit"
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


class OutboxRoom(Room):
    """The outbox: notifications to deliver, digests, code mails and the reply codes of moves
    by mail."""

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
        return notification_record(row) if row else None

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
        return [notification_record(r) for r in rows]

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
        return [notification_record(r) for r in rows]

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
