"""The ``canasta-server`` command line: ``serve`` and the operator's tasks.

One module per kind of task: ``serving`` (serve, migrate, keys, invitations), ``admin``
(players, matches, status, the admin log), ``backups`` (backup, restore) and ``mail``
(submit-armored, mail-in: moves that come as text). They register
their commands on the one Typer app of ``common``.
"""

from __future__ import annotations

from server.cli import admin, backups, mail, serving
from server.cli.common import app

__all__ = ["admin", "app", "backups", "mail", "main", "serving"]


def main() -> None:
    """Entry point of the ``canasta-server`` console script."""
    app()
