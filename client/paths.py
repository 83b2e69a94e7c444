"""Where the client keeps its files: the platform's user config directory, or ``CANASTA_HOME``.

Layout (one directory per profile, so several identities or servers sit side by side)::

    <home>/config.json              {"default_profile": "NAME"}
    <home>/profiles/NAME/profile.json   server, pinned key, name, token, versions seen
    <home>/profiles/NAME/key            the player's private key (mode 0600)
    <home>/profiles/NAME/receipts.jsonl the server's receipts for this player's moves

Tests and scripts give each player its own ``CANASTA_HOME``.
"""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "CANASTA_HOME"
PROFILE_ENV = "CANASTA_PROFILE"
PASSPHRASE_ENV = "CANASTA_PASSPHRASE"
DEFAULT_PROFILE = "default"


def home() -> Path:
    """The client's root directory (not created here: read commands must not litter)."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("canasta", appauthor=False))


def config_file() -> Path:
    return home() / "config.json"


def profiles_dir() -> Path:
    return home() / "profiles"


def profile_dir(name: str) -> Path:
    return profiles_dir() / name
