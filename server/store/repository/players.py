"""Players and what they own: accounts, invitations, sign-in challenges and tokens,
settings and vacations."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import delete, func, text, update
from sqlmodel import col, select

from server.domain import (
    EmailMode,
    Player,
    Settings,
    StandingOrders,
)
from server.store.db import run
from server.store.models import (
    ChallengeRow,
    InvitationRow,
    NotificationRow,
    PlayerRow,
    TokenRow,
)
from server.store.repository.base import Room
from server.store.repository.records import (
    player_record,
)

_VACATION_SPENT = text(
    "SELECT id FROM player WHERE vacation_started_ms > 0 AND vacation_started_ms"
    " + :allowance - CASE WHEN vacation_year = :year THEN vacation_used_ms ELSE 0 END <= :now"
    " ORDER BY vacation_started_ms LIMIT :limit"
)


class PlayersRoom(Room):
    """Players and what they own: accounts, invitations, sign-in challenges and tokens,
    settings and vacations."""

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
        return player_record(row)

    def player_by_key(self, public_key: bytes) -> Player | None:
        row = self.session.exec(
            select(PlayerRow).where(PlayerRow.public_key == public_key)
        ).one_or_none()
        return player_record(row) if row else None

    def player_by_id(self, player_id: int) -> Player | None:
        row = self.session.get(PlayerRow, player_id)
        return player_record(row) if row else None

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

    def players(self) -> list[Player]:
        rows = self.session.exec(select(PlayerRow).order_by(col(PlayerRow.id))).all()
        return [player_record(r) for r in rows]

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
