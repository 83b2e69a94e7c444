"""Cryptographic building blocks for trust: identities, the signed hash chain, and fair deals.

Everything the client, server and offline verifier must agree on byte for byte lives here, so
there is exactly one definition of each encoding.
"""

from shared.crypto.chain import (
    HASH_SIZE,
    chain_hashes,
    entry_hash,
    genesis_hash,
    receipt_message,
    sign_receipt,
    verify_receipt,
)
from shared.crypto.errors import CryptoError, KeyFileError
from shared.crypto.fairdeal import (
    SECRET_SIZE,
    commitment,
    deal_seed,
    new_secret,
    shuffle,
    verify_commitment,
)
from shared.crypto.keys import (
    PUBLIC_KEY_SIZE,
    PUBLIC_KEY_TEXT_PREFIX,
    SIGNATURE_SIZE,
    PrivateKey,
    PublicKey,
    check_public_key,
    fingerprint,
    generate_private_key,
    is_encrypted_key,
    private_key_from_pem,
    private_key_to_openssh,
    private_key_to_pem,
    public_key_from_raw,
    public_key_from_text,
    public_key_raw,
    public_key_to_text,
    sign,
    verify,
)

__all__ = [
    "HASH_SIZE",
    "PUBLIC_KEY_SIZE",
    "PUBLIC_KEY_TEXT_PREFIX",
    "SECRET_SIZE",
    "SIGNATURE_SIZE",
    "CryptoError",
    "KeyFileError",
    "PrivateKey",
    "PublicKey",
    "chain_hashes",
    "check_public_key",
    "commitment",
    "deal_seed",
    "entry_hash",
    "fingerprint",
    "generate_private_key",
    "genesis_hash",
    "is_encrypted_key",
    "new_secret",
    "private_key_from_pem",
    "private_key_to_openssh",
    "private_key_to_pem",
    "public_key_from_raw",
    "public_key_from_text",
    "public_key_raw",
    "public_key_to_text",
    "receipt_message",
    "shuffle",
    "sign",
    "sign_receipt",
    "verify",
    "verify_commitment",
    "verify_receipt",
]
