"""Command line of the server: ``canasta-server`` and ``python -m server``.

``serve`` runs the gRPC server; the other commands are the operator's tasks and work on the
same configuration (file, environment, options) while the server runs or not.
"""

from __future__ import annotations

import gc
import logging
import secrets
import signal
import sys
import threading
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from server import supervisor
from server.config import ConfigFileError, ServerConfig, load_config
from server.context import wall_clock_ms
from server.db import Database
from server.keys import load_keys
from server.lobby import new_invite_code
from server.migrations import migrate
from server.repository import Repository
from shared.crypto import CryptoError, fingerprint, public_key_from_text, public_key_to_text

app = typer.Typer(help="The Canasta correspondence server.", no_args_is_help=True)
players_app = typer.Typer(help="List, block and unblock players.", no_args_is_help=True)
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
    migrate(db)
    return db


@app.command()
def serve(
    listen: Annotated[str | None, typer.Option(help="host:port to listen on.")] = None,
    workers: Annotated[
        int | None,
        typer.Option(help="Server processes sharing the port (Linux); about one core each."),
    ] = None,
    as_worker: Annotated[bool, typer.Option("--as-worker", hidden=True)] = False,
) -> None:
    """Run the server until interrupted (Ctrl-C or SIGTERM)."""
    from server.app import open_app, package_version

    config = _config(listen=listen, workers=workers)
    worker_tag = " [%(process)d]" if config.workers > 1 else ""
    logging.basicConfig(
        level=config.log_level.upper(),
        format=f"%(asctime)s %(levelname)s %(name)s{worker_tag}: %(message)s",
        stream=sys.stderr,
    )

    def banner(address: str, key: bytes) -> str:
        processes = f", {config.workers} worker processes" if config.workers > 1 else ""
        return (
            f"canasta-server {package_version()} {supervisor.BANNER_MARK}{address} "
            f"({'TLS' if config.tls else 'plaintext'}{processes}); "
            f"server key {public_key_to_text(key)} ({fingerprint(key)})"
        )

    if config.workers > 1 and not as_worker:
        _open_db(config).dispose()  # migrate and create the keys once, before any worker
        key = load_keys(config.data_dir).server_public
        status = supervisor.supervise(
            _worker_command(config), config.workers, config.listen, partial(banner, key=key)
        )
        if status == 0:
            typer.echo("canasta-server stopped")
        raise typer.Exit(status)
    try:
        running = open_app(config)
    except OSError as exc:
        typer.echo(f"canasta-server: {exc}", err=True)
        raise typer.Exit(code=1) from None
    running.start()
    _freeze_startup_objects()
    host = config.listen.rpartition(":")[0]
    typer.echo(banner(f"{host}:{running.port}", running.service.ctx.keys.server_public))
    sys.stdout.flush()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    if as_worker:
        supervisor.stop_when_stdin_closes(stop)
    stop.wait()
    running.stop(grace=5.0)
    if not as_worker:
        typer.echo("canasta-server stopped")


def _freeze_startup_objects() -> None:
    """Leave what startup built (modules, the schema, gRPC's and SQLAlchemy's machinery:
    about 85,000 objects) out of Python's full garbage collections from now on.

    Each full collection walks every tracked object and stops the event loop meanwhile:
    under load that was a pause of 35-45 ms every ten seconds or so, which every request
    in flight waited out. Without the startup objects it takes about 4 ms.
    """
    gc.collect()
    gc.freeze()


def _worker_command(config: ServerConfig) -> list[str]:
    """How the supervisor starts a worker: this program with the same settings."""
    command = [sys.executable, "-m", "server"]
    if _state.config_path is not None:
        command += ["--config", str(_state.config_path)]
    if _state.database_url is not None:
        command += ["--database-url", _state.database_url]
    command += ["--data-dir", str(config.data_dir)]
    return [*command, "serve", "--workers", str(config.workers), "--as-worker"]


@app.command("show-key")
def show_key() -> None:
    """Print the server's public key (players pin it) and the bot key."""
    keys = load_keys(_config().data_dir)
    for label, raw in (("server", keys.server_public), ("bots", keys.bot_public)):
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


def main() -> None:
    """Entry point of the ``canasta-server`` console script."""
    app()


if __name__ == "__main__":
    main()
