"""Domain errors for the crypto package.

Callers (CLI, client, server) catch `CryptoError` to show a player a readable message instead of
a stack trace from the underlying library, so every message here is written for a human.
"""


class CryptoError(Exception):
    """Base class for every error raised deliberately by `shared.crypto`."""


class KeyFileError(CryptoError):
    """A key file could not be read or written: wrong passphrase, wrong format, wrong key type."""
