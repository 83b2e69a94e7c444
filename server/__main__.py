"""Command line of the server: ``canasta-server`` and ``python -m server``.

``serve`` runs the gRPC server; the other commands are the operator's tasks and work on the
same configuration (file, environment, options) while the server runs or not.
"""

from __future__ import annotations

import logging
import secrets
import signal
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from server.config import ConfigFileError, ServerConfig, load_config
from server.keys import load_keys
from server.mailcli import register as register_mail_commands
from server.service.context import wall_clock_ms
from server.service.lobby import new_invite_code
from server.store.db import Database
from server.store.migrations import MigrationError, head_revision, migrate
from server.store.repository import Repository
from shared.crypto.errors import CryptoError
from shared.crypto.keytext import fingerprint, public_key_from_text, public_key_to_text

# Plain help, as ``canasta --help``: no rich boxes, one style for both programs.
app = typer.Typer(
    help="The Canasta correspondence server.",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
players_app = typer.Typer(
    help="List, block and unblock players.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(players_app, name="players")

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


class _State:
    config_path: Path | None = None
    database_url: str | None = None
    data_dir: Path | None = None


_state = _State()


@app.callback()
def _root(
    config: ConfigOption = None,
    database_url: DatabaseOption = None,
    data_dir: DataDirOption = None,
) -> None:
    """The Canasta correspondence server."""
    _state.config_path = config
    _state.database_url = database_url
    _state.data_dir = data_dir


def _config(**overrides: Any) -> ServerConfig:
    try:
        return load_config(
            _state.config_path,
            database_url=_state.database_url,
            data_dir=_state.data_dir,
            **overrides,
        )
    except ConfigFileError as exc:
        typer.echo(f"canasta-server: {exc}", err=True)
        raise typer.Exit(code=2) from None


def _open_db(config: ServerConfig) -> Database:
    db = Database(config.db_url)
    try:
        migrate(db)
    except MigrationError as exc:
        typer.echo(f"canasta-server: {exc}", err=True)
        raise typer.Exit(code=1) from None
    return db


@app.command("migrate")
def migrate_command() -> None:
    """Bring the database's schema to this server's (``serve`` does it on start, too)."""
    config = _config()
    db = Database(config.db_url)
    try:
        applied = migrate(db)
    except MigrationError as exc:
        typer.echo(f"canasta-server: {exc}", err=True)
        raise typer.Exit(code=1) from None
    finally:
        db.dispose()
    revision = head_revision()
    if applied:
        typer.echo(f"applied {', '.join(applied)}; the schema is at revision {revision}")
    else:
        typer.echo(f"the schema is up to date (revision {revision})")


@app.command()
def serve(
    listen: Annotated[str | None, typer.Option(help="host:port to listen on.")] = None,
) -> None:
    """Run the server until interrupted (Ctrl-C or SIGTERM)."""
    from server.app import open_app, package_version

    config = _config(listen=listen)
    logging.basicConfig(
        level=config.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        running = open_app(config)
    except (OSError, MigrationError) as exc:
        typer.echo(f"canasta-server: {exc}", err=True)
        raise typer.Exit(code=1) from None
    running.start()
    host = config.listen.rpartition(":")[0]
    key = running.service.ctx.keys.server_public
    typer.echo(
        f"canasta-server {package_version()} listening on {host}:{running.port} "
        f"({'TLS' if config.tls else 'plaintext'}); "
        f"server key {public_key_to_text(key)} ({fingerprint(key)})"
    )
    sys.stdout.flush()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    # Wake up now and then rather than wait for good: a signal that the kernel hands to one of
    # gRPC's threads sets Python's flag but does not interrupt the main thread's wait, and the
    # handler (which runs only in the main thread) would never run.
    while not stop.wait(0.5):
        pass
    running.stop(grace=5.0)
    typer.echo("canasta-server stopped")


@app.command("show-key")
def show_key() -> None:
    """Print the server's public key (players pin it), the bot key and the attest key (moves
    by mail reply)."""
    keys = load_keys(_config().data_dir)
    shown = (("server", keys.server_public), ("bots", keys.bot_public))
    for label, raw in (*shown, ("attest", keys.attest_public)):
        typer.echo(f"{label}: {public_key_to_text(raw)}  fingerprint {fingerprint(raw)}")


@app.command()
def invite(
    count: Annotated[int, typer.Option(min=1, max=1000, help="How many codes.")] = 1,
    days: Annotated[int, typer.Option(min=1, help="Days until the codes expire.")] = 14,
) -> None:
    """Issue registration invitation codes (one per line)."""
    db = _open_db(_config())
    now = wall_clock_ms()
    codes = [f"{new_invite_code()}-{secrets.token_hex(3)}" for _ in range(count)]
    with db.write() as session:
        repo = Repository(session, b"")
        for code in codes:
            repo.add_invitation(code, now, now + days * 86_400_000)
    for code in codes:
        typer.echo(code)


@players_app.command("list")
def players_list() -> None:
    """List registered players."""
    db = _open_db(_config())
    with db.read() as session:
        found = Repository(session, b"").players()
    if not found:
        typer.echo("no players yet")
    for p in found:
        joined = datetime.fromtimestamp(p.created_ms / 1000, UTC).strftime("%Y-%m-%d")
        state = "BLOCKED" if p.blocked else "active"
        typer.echo(
            f"{p.id:>5}  {state:<7}  {joined}  {fingerprint(p.public_key)}  "
            f"{public_key_to_text(p.public_key)}  {p.display_name}"
            + (f" <{p.email}>" if p.email else "")
        )


def _set_blocked(who: str, blocked: bool) -> None:
    db = _open_db(_config())
    with db.write() as session:
        repo = Repository(session, b"")
        if who.isdigit():
            player = repo.player_by_id(int(who))
        else:
            try:
                player = repo.player_by_key(public_key_from_text(who))
            except CryptoError as exc:
                typer.echo(f"canasta-server: {exc}", err=True)
                raise typer.Exit(code=2) from None
        if player is None:
            typer.echo(f"canasta-server: no player {who}", err=True)
            raise typer.Exit(code=1)
        repo.set_blocked(player.id, blocked)
    typer.echo(f"{'blocked' if blocked else 'unblocked'} {player.display_name} (#{player.id})")


@players_app.command("block")
def players_block(
    who: Annotated[str, typer.Argument(help="Player number or public key (ed25519:...).")],
) -> None:
    """Block a player: its key is refused everywhere, its tokens are revoked."""
    _set_blocked(who, True)


@players_app.command("unblock")
def players_unblock(
    who: Annotated[str, typer.Argument(help="Player number or public key (ed25519:...).")],
) -> None:
    """Unblock a player."""
    _set_blocked(who, False)


register_mail_commands(app, _config)  # submit-armored, mail-in


def main() -> None:
    """Entry point of the ``canasta-server`` console script."""
    app()


if __name__ == "__main__":
    main()
