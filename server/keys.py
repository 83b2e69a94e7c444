"""The server's three Ed25519 keys, kept as PEM files (mode 0600) in the data directory.

``server_key.pem`` signs receipts and is the server's identity (clients pin its public key);
``bot_key.pem`` signs the moves of bot seats, so bot moves are told apart from the server's
own acknowledgements; ``attest_key.pem`` signs the moves players make by replying to a mail
(``server.service.mail.mailin``), on their behalf, so that a verifier tells those apart from both
the players' own signatures and the bots'. All are created on first use.

``deal_key.bin`` (32 random bytes, mode 0600) is no signing key: each hand's secret is derived
from it (``shared.crypto.fairdeal.derived_secret``), so a server restored from a backup deals
and reveals the same hands again. It must stay secret like the others, and be copied with them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from shared.crypto.keys import (
    PrivateKey,
    generate_private_key,
    private_key_from_pem,
    private_key_to_pem,
    public_key_raw,
)

SERVER_KEY_FILE = "server_key.pem"
BOT_KEY_FILE = "bot_key.pem"
ATTEST_KEY_FILE = "attest_key.pem"
DEAL_KEY_FILE = "deal_key.bin"
DEAL_KEY_SIZE = 32


@dataclass(frozen=True, slots=True)
class ServerKeys:
    server: PrivateKey
    bot: PrivateKey
    attest: PrivateKey
    deal: bytes
    """The key each hand's secret is derived from (``deal_key.bin``)."""
    # Derived once: every move reads the bot's public key, and deriving it costs a
    # serialization call each time.
    server_public: bytes = field(init=False)
    bot_public: bytes = field(init=False)
    attest_public: bytes = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "server_public", public_key_raw(self.server))
        object.__setattr__(self, "bot_public", public_key_raw(self.bot))
        object.__setattr__(self, "attest_public", public_key_raw(self.attest))


def load_or_create_key(path: Path) -> PrivateKey:
    """Read a key file, or create it (readable by the owner only) if it does not exist."""
    if path.exists():
        return private_key_from_pem(path.read_bytes())
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the data directory
    key = generate_private_key()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(private_key_to_pem(key))
    return key


def load_or_create_secret(path: Path) -> bytes:
    """Read a secret file, or create it with fresh random bytes (owner only)."""
    if path.exists():
        secret = path.read_bytes()
        if len(secret) != DEAL_KEY_SIZE:
            raise OSError(f"{path} is not a deal key ({DEAL_KEY_SIZE} bytes)")
        return secret
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    secret = os.urandom(DEAL_KEY_SIZE)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(secret)
    return secret


def load_keys(data_dir: Path) -> ServerKeys:
    return ServerKeys(
        server=load_or_create_key(data_dir / SERVER_KEY_FILE),
        bot=load_or_create_key(data_dir / BOT_KEY_FILE),
        attest=load_or_create_key(data_dir / ATTEST_KEY_FILE),
        deal=load_or_create_secret(data_dir / DEAL_KEY_FILE),
    )
