"""Running the server and preparing it: ``serve``, ``migrate``, ``show-key``, ``invite``."""

from __future__ import annotations

import gc
import secrets
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated

import typer

from server import logs
from server.cli.common import app, fail, open_db, server_config
from server.keys import load_keys
from server.service.context import wall_clock_ms
from server.service.people.admin import record
from server.service.play.lobby import new_invite_code
from server.store.db import Database
from server.store.migrations import MigrationError, head_revision, migrate
from server.store.repository import Repository
from shared.crypto.keytext import fingerprint, public_key_to_text
from shared.tabletext import test_clock_warning


@app.command("migrate")
def migrate_command() -> None:
    """Bring the database's schema to this server's (``serve`` does it on start, too)."""
    config = server_config()
    db = Database(config.db_url)
    try:
        applied = migrate(db)
    except MigrationError as exc:
        fail(exc)
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

    config = server_config(listen=listen)
    logs.configure(config.log_level, config.log_format)
    try:
        running = open_app(config)
    except (OSError, MigrationError) as exc:
        fail(exc)
    # Handle stop signals before the banner says it serves: whoever reads it may stop it at once.
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        running.start()
    except OSError as exc:
        running.stop(grace=None)
        fail(exc)
    # What start-up made (modules, classes, functions: nine tenths of the objects the
    # collector tracks) lives as long as the process. Frozen, it is left out of the full
    # collections, each of which stops every call while it runs: after a thousand moves, 65-97
    # ms of CPU each unfrozen, 2-5 ms frozen (bench/README.md: "Full collections").
    gc.freeze()
    host = config.listen.rpartition(":")[0]
    key = running.service.ctx.keys.server_public
    metrics = ""
    if running.metrics_port:
        metrics = f"; metrics on {config.metrics_listen.rpartition(':')[0]}:{running.metrics_port}"
    mail = f"; mail in on {config.smtp_listen}" if config.smtp_listen else ""
    if config.test_clock_speed > 1:  # in the one banner line, which scripts read whole
        mail += f"; {test_clock_warning(config.test_clock_speed)}"
    typer.echo(
        f"canasta-server {package_version()} listening on {host}:{running.port} "
        f"({'TLS' if config.tls else 'plaintext'}); "
        f"server key {public_key_to_text(key)} ({fingerprint(key)}); "
        f"data in {running.db.describe()}{metrics}{mail}"
    )
    sys.stdout.flush()
    # Wake up now and then rather than wait for good: a signal that the kernel hands to one of
    # gRPC's threads sets Python's flag but does not interrupt the main thread's wait, and the
    # handler (which runs only in the main thread) would never run.
    while not stop.wait(0.5):
        pass
    running.stop(grace=5.0)
    typer.echo("canasta-server stopped")


@app.command("health")
def health(
    address: Annotated[
        str | None, typer.Option(help="host:port of the server (default: where it listens).")
    ] = None,
    timeout: Annotated[float, typer.Option(min=0.1, max=60, help="Seconds to wait.")] = 5.0,
    ca: Annotated[
        Path | None, typer.Option(help="CA certificate to trust (TLS; default: tls_cert).")
    ] = None,
) -> None:
    """Ask a running server whether it is serving (the gRPC health service): exit 0 if it
    is, 1 if not. (Container health checks run the lighter `python -m server.health`.)"""
    from server.health import check

    serving, message = check(server_config(), address, timeout, ca)
    if not serving:
        fail(message)
    typer.echo(message)


@app.command("show-key")
def show_key() -> None:
    """Print the server's public key (players pin it), the bot key and the attest key (moves
    by mail reply)."""
    keys = load_keys(server_config().data_dir)
    shown = (("server", keys.server_public), ("bots", keys.bot_public))
    for label, raw in (*shown, ("attest", keys.attest_public)):
        typer.echo(f"{label}: {public_key_to_text(raw)}  fingerprint {fingerprint(raw)}")


@app.command()
def invite(
    count: Annotated[int, typer.Option(min=1, max=1000, help="How many codes.")] = 1,
    days: Annotated[int, typer.Option(min=1, max=3650, help="Days until they expire.")] = 14,
) -> None:
    """Issue registration invitation codes (one per line)."""
    db = open_db(server_config())
    now = wall_clock_ms()
    codes = [f"{new_invite_code()}-{secrets.token_hex(3)}" for _ in range(count)]
    with db.write() as session:
        repo = Repository(session, b"")
        for code in codes:
            repo.add_invitation(code, now, now + days * 86_400_000)
        record(repo, now, "invite", f"{count} code(s)", days=days)
    db.dispose()
    for code in codes:
        typer.echo(code)
