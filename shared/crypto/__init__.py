"""Cryptographic building blocks for trust: identities, the signed hash chain, and fair deals.

Everything the client, server and offline verifier must agree on byte for byte lives here, so
there is exactly one definition of each encoding. Import from the module that does the job:

* ``shared.crypto.keytext``: public keys as bytes and text, fingerprints, the weak-key check
  (pure Python: no ``cryptography``, so the client's everyday commands start faster);
* ``shared.crypto.keys``: generating, storing, signing and verifying with Ed25519 keys;
* ``shared.crypto.chain``: the hash chain of a match's log and the server's receipts;
* ``shared.crypto.fairdeal``: commitments and the shuffle of a fair deal;
* ``shared.crypto.errors``: ``CryptoError`` and ``KeyFileError``, written for people.

This package's own module imports nothing, so loading one of them loads only what it needs.
"""
