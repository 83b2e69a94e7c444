"""``backup`` and ``restore`` of the SQLite database (``server.store.backup``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from server.cli.common import app, fail, open_db, server_config
from server.service.context import wall_clock_ms
from server.service.people.admin import record
from server.store.backup import BackupError, backup, restore
from server.store.repository import Repository


@app.command("backup")
def backup_command(
    file: Annotated[Path, typer.Argument(help="Where to write the copy (a new file).")],
) -> None:
    """Write a consistent copy of the SQLite database, safe while the server runs (SQLite's
    online backup API), readable by its owner only. PostgreSQL: use pg_dump
    (docs/operating.md: Backups)."""
    try:
        summary = backup(server_config().db_url, file)
    except (BackupError, OSError) as exc:
        fail(exc)
    typer.echo(f"backed up {summary.line()}")


@app.command("restore")
def restore_command(
    file: Annotated[Path, typer.Argument(help="A copy written by canasta-server backup.")],
    new: Annotated[
        bool, typer.Option("--new", help="There is no database yet (a new machine).")
    ] = False,
) -> None:
    """Put a backup in place of the SQLite database. Only while the server is stopped; the
    database it replaces is renamed aside (canasta.db.before-restore-<time>). The restored
    database is brought to this server's schema at once."""
    config = server_config()
    try:
        summary, kept = restore(file, config.db_url, new=new)
    except (BackupError, OSError) as exc:
        fail(exc)
    db = open_db(config)  # a backup from an older server: migrated before anything is written
    try:
        with db.write() as session:
            now = wall_clock_ms()
            record(Repository(session, b""), now, "restore", str(file), kept=str(kept or ""))
    finally:
        db.dispose()
    typer.echo(f"restored {summary.line()}")
    if kept is not None:
        typer.echo(f"the database it replaced is kept as {kept}")
