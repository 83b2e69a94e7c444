"""What every ``canasta-server`` command shares: the Typer app, the global options
(configuration file, database URL, data directory) and opening the configured database."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from server import logs
from server.config import ConfigFileError, ServerConfig, load_config
from server.keys import load_keys
from server.service.context import ServiceContext
from server.service.errors import ServiceError
from server.service.live.streams import Notifier
from server.store.db import Database
from server.store.migrations import MigrationError, migrate

# Plain help, as ``canasta --help``: no rich boxes, one style for both programs.
app = typer.Typer(
    help="The Canasta correspondence server.",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def sub_app(name: str, help_text: str) -> typer.Typer:
    """A group of commands (``canasta-server NAME ...``)."""
    group = typer.Typer(help=help_text, no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(group, name=name)
    return group


ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="TOML settings file (default: $CANASTA_SERVER_CONFIG)."),
]
DatabaseOption = Annotated[
    str | None,
    typer.Option("--database-url", help="SQLAlchemy URL (default: SQLite in the data dir)."),
]
DataDirOption = Annotated[
    Path | None, typer.Option("--data-dir", help="Where the server keeps its keys and database.")
]


class _Globals:
    config_path: Path | None = None
    database_url: str | None = None
    data_dir: Path | None = None


_globals = _Globals()


@app.callback()
def _root(
    config: ConfigOption = None,
    database_url: DatabaseOption = None,
    data_dir: DataDirOption = None,
) -> None:
    """The Canasta correspondence server."""
    logs.admin_lines_to_stderr()
    _globals.config_path = config
    _globals.database_url = database_url
    _globals.data_dir = data_dir


def fail(message: object, code: int = 1) -> NoReturn:
    """Print ``canasta-server: message`` to standard error and exit with ``code``."""
    typer.echo(f"canasta-server: {message}", err=True)
    raise typer.Exit(code=code)


def server_config(**overrides: Any) -> ServerConfig:
    """The settings in force: defaults, file, environment, then the global options."""
    try:
        return load_config(
            _globals.config_path,
            database_url=_globals.database_url,
            data_dir=_globals.data_dir,
            **overrides,
        )
    except ConfigFileError as exc:
        fail(exc, code=2)


def open_db(config: ServerConfig) -> Database:
    """The configured database, migrated to this server's schema."""
    db = Database(config.db_url)
    try:
        migrate(db)
    except MigrationError as exc:
        db.dispose()
        fail(exc)
    return db


def service_context() -> ServiceContext:
    """The service's shared parts over the configured database, for the admin commands."""
    config = server_config()
    return ServiceContext(
        db=open_db(config), keys=load_keys(config.data_dir), config=config, notifier=Notifier()
    )


def refused(exc: ServiceError) -> NoReturn:
    """Exit for a refused admin request: 2 for a bad argument, 1 for everything else."""
    fail(exc.message, code=2 if exc.kind == "invalid" else 1)
