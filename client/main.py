"""The ``canasta`` command-line app.

Keep this module light: commands import grpc, the generated code and cryptography inside their
bodies, so ``canasta --help`` stays fast. Every failure ends here as one line on stderr and a
non-zero exit code (``client.errors``); no traceback reaches a player.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer

from client import (
    cmd_lobby,
    cmd_move,
    cmd_settings,
    cmd_setup,
    cmd_table,
    cmd_transcript,
    common,
)
from client.errors import CliError


class _App(typer.Typer):
    """A Typer app whose every uncaught error becomes one line and an exit code."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        code: int
        try:
            super().__call__(*args, **kwargs)
            code = 0
        except SystemExit as done:  # Click's normal way out, --help included
            if done.code is None or isinstance(done.code, int):
                code = done.code or 0
            else:
                typer.echo(str(done.code), err=True)
                code = 1
        except CliError as error:
            typer.echo(f"canasta: {error.message}", err=True)
            code = error.code
        except KeyboardInterrupt:
            typer.echo("canasta: interrupted", err=True)
            code = 130
        except Exception as error:  # a bug of ours: still one line, never a traceback
            typer.echo(
                f"canasta: unexpected error ({type(error).__name__}: {error}); please report it",
                err=True,
            )
            code = 1
        _leave(code)


def _leave(code: int) -> None:
    """Exit with ``code``; after a gRPC call, skip the interpreter's teardown.

    Shutting grpc's threads down at exit costs about 50 ms of every command that talked to
    the server, a fifth of the start-up budget. Every file the client writes is closed before
    this point (profiles are replaced atomically), so only the output streams need flushing.
    """
    if "grpc" not in sys.modules:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # the reader went away (`canasta show | head`): nothing left to say
        pass
    os._exit(code)


app = _App(
    name="canasta",
    help="Play Canasta by correspondence on a canasta-server.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    epilog="Start with `canasta setup --server HOST:PORT --name NAME`; then `canasta create` "
    "or `canasta join CODE`, `canasta show`, `canasta draw`...",
)


@app.callback()
def _root(
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            "-p",
            envvar="CANASTA_PROFILE",
            help="Use this profile (server and identity) instead of the default.",
        ),
    ] = None,
    no_color: Annotated[
        bool, typer.Option("--no-color", help="Plain text even in a terminal (also NO_COLOR).")
    ] = False,
) -> None:
    """Play Canasta by correspondence on a canasta-server."""
    common.OPTIONS.profile = profile
    common.OPTIONS.no_color = no_color


app.add_typer(cmd_setup.app)
app.add_typer(cmd_lobby.app)
app.add_typer(cmd_table.app)
app.add_typer(cmd_move.app)
app.add_typer(cmd_settings.app)
app.add_typer(cmd_transcript.app)
app.add_typer(cmd_settings.notify_app, name="notify", rich_help_panel=cmd_settings.PANEL)
app.add_typer(cmd_setup.server_app, name="server", rich_help_panel=cmd_setup.PANEL)


@app.command(rich_help_panel=cmd_setup.PANEL)
def version() -> None:
    """Print the client's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    try:
        text = package_version("canasta")
    except PackageNotFoundError:  # running from a checkout that was never installed
        text = "0+unknown"
    typer.echo(f"canasta {text}")
