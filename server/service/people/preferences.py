"""A player's own settings: time zone, e-mail address (proved by a code sent to it) and how
mail comes (each notification, a daily digest, or none), and a webhook.

An address is used only once its owner has given back the code mailed to it. Code mails are
limited to one every ``EMAIL_CODE_INTERVAL_MS`` per player, to ``limit_code_mails_per_address``
an hour to one address whoever asks, and to ``limit_code_mails_per_hour`` in all, and only the
latest code is mailed (an older one still waiting is dropped), so the server is no way to
flood an inbox. A code mail holds nothing the asking player chose but the address: not their
display name (``server.service.news.words``). The code
is random (50 bits), stored only as its SHA-256 (its mail's copy is blanked once sent), and
expires after ``EMAIL_CODE_TTL_MS``. A webhook gets a fresh random secret when set, shown in
that one answer: the player checks each delivery's ``X-Canasta-Signature`` with it.

A new time zone moves the weekends of the player's clocks from the next turn on; their
unfinished matches are marked changed so that every server process reloads their seats.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets

from server.domain import EmailMode, Notice, Player, Settings
from server.service.clocks import zone
from server.service.context import ServiceContext
from server.service.errors import (
    InvalidRequestError,
    LimitExceededError,
    NotFoundError,
    PermissionDeniedError,
)
from server.service.news.outbox import DeliveryError, check_webhook_url
from server.service.play.orders import announce, answer_order
from server.store.repository import Repository

EMAIL_CODE_TTL_MS = 3_600_000
HOUR_MS = 3_600_000
EMAIL_CODE_INTERVAL_MS = 600_000
"""A player may have a code mailed at most once in this long (to any address): the server
must not become a way to flood someone else's inbox."""
MAX_EMAIL = 254
_CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
_CODE_LENGTH = 10


@dataclasses.dataclass(frozen=True, slots=True)
class SettingsChange:
    """What a player asks to change; None leaves a setting as it is."""

    time_zone: str | None = None
    email: str | None = None
    """A new address (a code is mailed to it), or ``""`` to forget the address."""
    email_code: str | None = None
    email_mode: str | None = None
    webhook_url: str | None = None
    """A URL (a new secret comes back), or ``""`` for no webhook."""
    vacation: bool | None = None
    """Start (True) or end (False) a vacation (``server.service.play.absence``)."""
    allow_reply_moves: bool | None = None
    """Accept moves made by replying to a mail (``server.service.mail.mailin``)."""
    order_draw: bool | None = None
    """Default standing order: draw when the pile cannot be taken
    (``server.service.play.orders``)."""
    order_answer: str | None = None
    """Default standing order for partner's "may I go out?": ``yes``, ``no`` or ``ask``."""


class Preferences:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    def get(self, player: Player) -> Settings:
        with self.ctx.db.read() as session:
            found = self.ctx.repo(session).settings(player.id)
        if found is None:
            raise NotFoundError("no such player")
        return dataclasses.replace(found, webhook_secret="")

    def update(self, player: Player, change: SettingsChange) -> Settings:
        """Apply ``change`` (checked whole first: a bad field changes nothing)."""
        ctx = self.ctx
        values: dict[str, object] = {}
        notices: list[Notice] = []
        now = ctx.clock()
        if change.time_zone is not None:
            zone(change.time_zone)
            values["time_zone"] = change.time_zone
        if change.allow_reply_moves is not None:
            values["allow_reply_moves"] = change.allow_reply_moves
        if change.order_draw is not None:
            values["order_draw"] = change.order_draw
        if change.order_answer is not None:
            values["order_answer"] = answer_order(change.order_answer)
        if change.email_mode is not None:
            modes = {m.value for m in EmailMode}
            if change.email_mode not in modes:
                raise InvalidRequestError(
                    f"mail comes {', '.join(sorted(modes))}; not {change.email_mode[:20]!r}"
                )
            values["email_mode"] = change.email_mode
        secret = ""
        if change.webhook_url is not None:
            if change.webhook_url:
                try:
                    check_webhook_url(change.webhook_url)  # its form; the address at delivery
                except DeliveryError as exc:
                    raise InvalidRequestError(str(exc)) from None
                secret = secrets.token_hex(32)
            values["webhook_url"] = change.webhook_url
            values["webhook_secret"] = secret
        if change.email is not None:
            address = change.email.strip()
            if address:
                _check_address(address)
                code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH))
                values.update(
                    email_pending=address,
                    email_code_hash=_hash(code),
                    email_code_expires_ms=now + EMAIL_CODE_TTL_MS,
                )
                notices.append(
                    Notice(player.id, "", "verify_email", {"address": address, "code": code})
                )
            else:
                values.update(email="", email_verified=False, email_pending="", email_code_hash="")
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            if values.get("email_code_hash"):
                _, _, expires = repo.email_code(player.id)
                if expires and now < expires - EMAIL_CODE_TTL_MS + EMAIL_CODE_INTERVAL_MS:
                    wait = (expires - EMAIL_CODE_TTL_MS + EMAIL_CODE_INTERVAL_MS - now) // 60_000
                    raise LimitExceededError(
                        f"a code was mailed a moment ago: wait {wait + 1} minutes before "
                        "asking for another"
                    )
                _check_code_mails(ctx, repo, str(values["email_pending"]), now)
            if change.email_code is not None:
                pending, digest, expires = repo.email_code(player.id)
                _check_code(change.email_code, pending, digest, expires, now)
                values.update(
                    email=pending, email_verified=True, email_pending="", email_code_hash=""
                )
            if values:
                repo.update_player(player.id, **values)
            repo.add_notices(notices, now)
            if {
                "time_zone",
                "email",
                "email_mode",
                "webhook_url",
                "allow_reply_moves",
                "order_draw",
                "order_answer",
            } & values.keys():
                # seats carry the zone, reachability, whether moves by reply are on, orders
                repo.touch_matches_of(player.id, now)
            found = repo.settings(player.id)
            ordered = {"order_draw", "order_answer"} & values.keys()
            playing = repo.playing_match_ids_of(player.id) if ordered else []
        if found is None:
            raise NotFoundError("no such player")
        announce(ctx, playing)  # an order that applies now is carried out now
        return dataclasses.replace(found, webhook_secret=secret)


def _check_code(given: str, pending: str, digest: str, expires: int, now: int) -> None:
    """Refuse a code that is not the one last mailed, saying what to do: a wrong code leaves
    the right one working (try again) until it expires; an expired one needs a new mail."""
    if not pending or not digest:
        raise PermissionDeniedError(
            "no address of yours waits for a code: `canasta notify email ADDRESS` mails one"
        )
    if expires < now:
        raise PermissionDeniedError(
            f"the code mailed to {pending} expired (a code works for "
            f"{EMAIL_CODE_TTL_MS // 60_000} minutes): set the address again for a new one"
        )
    if not secrets.compare_digest(_hash(given.strip().lower()[:64]), digest):
        left = max(1, -(-(expires - now) // 60_000))
        raise PermissionDeniedError(
            f"that is not the code last mailed to {pending} (only the latest one works): check "
            f"it and try again; the code works for {left} more minute{'s' if left != 1 else ''}"
        )


def _check_code_mails(ctx: ServiceContext, repo: Repository, address: str, now: int) -> None:
    """Refuse a code mail past the hourly limits: to one address (whoever asks: new
    accounts cost nothing, so a limit per player alone let anyone mail a stranger again and
    again) and in all (the server's mail reputation is everyone's)."""
    config = ctx.config
    to_address, total = repo.codes_asked(address, now - HOUR_MS, EMAIL_CODE_TTL_MS)
    if to_address >= config.limit_code_mails_per_address:
        raise LimitExceededError(
            "as many codes have been asked for this address this hour as the server allows: "
            "try again in an hour"
        )
    if total >= config.limit_code_mails_per_hour:
        raise LimitExceededError(
            "the server has mailed as many e-mail codes this hour as it may: try again later"
        )


def _check_address(address: str) -> None:
    local, at, domain = address.rpartition("@")
    if (
        len(address) > MAX_EMAIL
        or not at
        or not local
        or "." not in domain
        or not address.isprintable()
        or any(c.isspace() or c in "<>,;\"'()[]\\" for c in address)
    ):
        raise InvalidRequestError("that does not look like an e-mail address")


def _hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()
