"""Registration and read authentication.

Reads use a challenge-response that yields a short-lived bearer token, rather than a signed
timestamp and nonce on every call: a token costs one indexed lookup per read instead of a
signature check plus a nonce written to the database, it works unchanged for a long-lived
Watch stream, and the only replay window is the single-use challenge, which is deleted when
answered and expires after ``challenge_ttl_seconds``. The signature binds the challenge to the
player's key *and* this server's key, so a challenge answered for another server (or relayed
by one) is useless here. Tokens are stored as SHA-256 hashes; blocking a key deletes its tokens.
Moves need no token: each envelope is signed by the seat's key.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from server.domain import Player
from server.service.context import ServiceContext
from server.service.errors import (
    AlreadyExistsError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    UnauthenticatedError,
)
from server.store.errors import DuplicateKeyError
from server.store.repository import token_owner
from shared.crypto.errors import CryptoError
from shared.crypto.keys import public_key_from_raw, verify
from shared.crypto.keytext import PUBLIC_KEY_SIZE
from shared.wire import auth_message, register_message, registration_from_bytes

MAX_NAME = 40
MAX_EMAIL = 254
CHALLENGE_SIZE = 32


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated reader: the player and when its token expires."""

    player: Player
    expires_ms: int


@dataclass(frozen=True, slots=True)
class Token:
    token: str
    expires_ms: int
    player: Player


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def display_name(text: str) -> str:
    """A player's name as given (trimmed), if it is 1 to ``MAX_NAME`` printable characters."""
    name = text.strip()
    if not name or len(name) > MAX_NAME or not name.isprintable():
        raise InvalidRequestError(f"a display name is 1 to {MAX_NAME} printable characters")
    return name


def _check_key(public_key: bytes) -> None:
    """A sound Ed25519 public key: 32 bytes, canonical, not of small order."""
    if len(public_key) != PUBLIC_KEY_SIZE:
        raise InvalidRequestError(f"a public key is {PUBLIC_KEY_SIZE} bytes, not {len(public_key)}")
    try:
        public_key_from_raw(public_key)
    except CryptoError as exc:
        raise InvalidRequestError(f"that is not a usable Ed25519 public key: {exc}") from None


class Accounts:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    def register(self, payload: bytes, signature: bytes) -> Player:
        ctx = self.ctx
        reg = registration_from_bytes(payload)
        _check_key(reg.public_key)
        if reg.server_public_key != ctx.keys.server_public:
            raise UnauthenticatedError(
                "this registration was signed for another server (check the server key)"
            )
        if not verify(reg.public_key, register_message(payload), signature):
            raise UnauthenticatedError("the registration's signature does not verify with its key")
        name = display_name(reg.display_name)
        if len(reg.email) > MAX_EMAIL or (
            reg.email and ("@" not in reg.email or not reg.email.isprintable())
        ):
            raise InvalidRequestError("that does not look like an e-mail address")
        now = ctx.clock()
        refused = PermissionDeniedError(
            "registration on this server needs a valid, unused invitation code"
        )
        try:
            with ctx.db.write() as session:
                repo = ctx.repo(session)
                existing = repo.player_by_key(reg.public_key)
                if existing is not None:
                    if existing.blocked:
                        raise PermissionDeniedError("this key is blocked on this server")
                    raise AlreadyExistsError("this key is already registered")
                code = reg.invitation_code.strip()
                if ctx.config.registration == "invite" and not repo.invitation_usable(code, now):
                    raise refused
                player = repo.add_player(reg.public_key, name, reg.email.strip(), code, now)
                # The conditional update, not the check above, decides a race for one code
                # (PostgreSQL runs registrations at once); the loser's player is rolled back.
                if ctx.config.registration == "invite" and not repo.use_invitation(
                    code, player.id, now
                ):
                    raise refused
        except DuplicateKeyError:  # the same key registered at the same moment
            raise AlreadyExistsError("this key is already registered") from None
        return player

    def challenge(self, public_key: bytes) -> tuple[bytes, int]:
        ctx = self.ctx
        _check_key(public_key)
        now = ctx.clock()
        challenge = secrets.token_bytes(CHALLENGE_SIZE)
        expires = now + ctx.config.challenge_ttl_seconds * 1000
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            player = repo.player_by_key(public_key)
            if player is None:
                raise NotFoundError("this key is not registered here: register first")
            if player.blocked:
                raise PermissionDeniedError("this key is blocked on this server")
            repo.purge_expired(now)
            # Never refuse: public keys are public, and a refusal here would let anyone lock
            # a player out by asking for challenges in their name. The oldest goes instead.
            repo.keep_challenges(public_key, ctx.config.limit_live_challenges - 1)
            repo.add_challenge(challenge, public_key, expires)
        return challenge, expires

    def authenticate(self, public_key: bytes, challenge: bytes, signature: bytes) -> Token:
        """A token for a signed challenge. The challenge is used up by any answer, right or
        wrong, in a transaction of its own: a wrong guess cannot be followed by another."""
        ctx = self.ctx
        now = ctx.clock()
        message = auth_message(ctx.keys.server_public, public_key, challenge)
        token = secrets.token_urlsafe(32)
        expires = now + ctx.config.token_ttl_seconds * 1000
        if len(challenge) != CHALLENGE_SIZE:
            raise UnauthenticatedError("unknown or already used challenge: ask for a new one")
        with ctx.db.write() as session:
            taken = ctx.repo(session).take_challenge(challenge)
        if taken is None:
            raise UnauthenticatedError("unknown or already used challenge: ask for a new one")
        key, challenge_expires = taken
        if key != public_key:
            raise UnauthenticatedError("this challenge was issued to another key")
        if challenge_expires <= now:
            raise UnauthenticatedError("the challenge expired: ask for a new one")
        if not verify(public_key, message, signature):
            raise UnauthenticatedError(
                "the challenge's signature does not verify (wrong key or another server)"
            )
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            player = repo.player_by_key(public_key)
            if player is None:
                raise UnauthenticatedError("this key is not registered here")
            if player.blocked:
                raise PermissionDeniedError("this key is blocked on this server")
            repo.add_token(token_hash(token), player.id, expires)
        return Token(token, expires, player)

    def authorize(self, token: str) -> Caller:
        """The caller behind a bearer token; raises for a missing, unknown or expired one."""
        if not token:
            raise UnauthenticatedError("sign in first: this call needs a bearer token")
        ctx = self.ctx
        found = token_owner(ctx.db, token_hash(token))
        if found is None:
            raise UnauthenticatedError("unknown token (expired, revoked, or from another server)")
        player, expires = found
        if expires <= ctx.clock():
            raise UnauthenticatedError("the token expired: authenticate again")
        if player.blocked:
            raise PermissionDeniedError("this key is blocked on this server")
        return Caller(player, expires)
