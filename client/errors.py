"""The one exception a command raises to stop: a single line for the player and an exit code.

``client.main`` catches it (and everything else) at the top, prints ``canasta: <message>`` on
stderr and exits with ``code``, so no traceback ever reaches a player.
"""

from __future__ import annotations

EXIT_ERROR = 1
"""Anything refused or failed: unreachable server, unknown match, illegal or stale move..."""
EXIT_USAGE = 2
"""The command line itself was wrong (Click uses 2 too)."""
EXIT_TIMEOUT = 3
"""``canasta wait`` gave up: the timeout passed before it was the player's turn."""
EXIT_MATCH_OVER = 4
"""``canasta wait``: the match is over, so it will never be the player's turn again."""


class CliError(Exception):
    """A failure the player should read as one line; ``code`` becomes the exit status."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
