"""The ``canasta`` command-line app.

Keep this module light: commands import grpc, the generated code and cryptography inside their
bodies, so ``canasta --help`` stays fast. Every failure ends here as one line on stderr and a
non-zero exit code (``client.errors``); no traceback reaches a player.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from typing import Annotated, Any

import typer
from typer.main import get_command_name
from typer.models import CommandInfo

from client import (
    cmd_lobby,
    cmd_move,
    cmd_settings,
    cmd_setup,
    cmd_table,
    cmd_talk,
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


def _new_app() -> _App:
    """The root of the command tree: its help and its options, no commands yet."""
    root = _App(
        name="canasta",
        help="Play Canasta by correspondence on a canasta-server.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        epilog="Start with `canasta setup --server HOST:PORT --name NAME`; then `canasta "
        "create` or `canasta join CODE`, `canasta show`, `canasta draw`...",
    )
    root.callback()(_root)
    return root


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


_GROUPS: tuple[tuple[typer.Typer, str | None, str | None], ...] = (
    (cmd_setup.app, None, None),
    (cmd_lobby.app, None, None),
    (cmd_table.app, None, None),
    (cmd_move.app, None, None),
    (cmd_talk.app, None, None),
    (cmd_settings.app, None, None),
    (cmd_transcript.app, None, None),
    (cmd_settings.notify_app, "notify", cmd_settings.PANEL),
    (cmd_setup.server_app, "server", cmd_setup.PANEL),
)
"""The command groups: ``(group, name, help panel)``; a group without a name adds its commands
at the top (``canasta show``), a named one is a command with commands of its own
(``canasta notify email``)."""

app = _new_app()
"""Every command: what ``--help`` lists and what tests drive."""
for _group, _name, _panel in _GROUPS:
    app.add_typer(_group, name=_name, rich_help_panel=_panel)


def main() -> None:
    """The ``canasta`` executable: the app, with only the command asked for.

    Typer builds every command's options from its function's signature before it runs any,
    about 50 ms for all of them: a fifth of ``canasta show``. A command line that names a
    command gets an app holding that command alone (the same command, the same options and
    help; a named group such as ``notify`` entire); anything else (``--help``, no command, a
    typo, ``version``, completion) gets the whole app, which is also what every test of the
    app's shape drives.
    """
    quiet_grpc(os.environ)
    narrowed = _narrowed(sys.argv[1:])
    (narrowed or app)()


def quiet_grpc(environ: MutableMapping[str, str]) -> None:
    """Keep gRPC's own C-core log lines (a TLS handshake's failure, for one) off the player's
    terminal: every failure is said once, in our words (``client.rpc``). Set before grpc is
    first imported, which reads them; a user who set either variable keeps their choice."""
    environ.setdefault("GRPC_VERBOSITY", "NONE")
    environ.setdefault("GRPC_TRACE", "")


_ROOT_OPTIONS_WITH_VALUE = frozenset({"-p", "--profile"})


def _narrowed(argv: list[str]) -> _App | None:
    """A root app with only the command ``argv`` names, or None."""
    if any(key.startswith("_CANASTA_COMPLETE") for key in os.environ):
        return None  # shell completion lists every command
    words = iter(argv)
    for word in words:
        if word in _ROOT_OPTIONS_WITH_VALUE:
            next(words, None)
        elif word == "--no-color" or word.startswith("--profile="):
            continue
        elif word.startswith("-"):  # --help, the completion options, a typo: the whole app
            return None
        else:
            return _app_with(word)
    return None


def _app_with(command: str) -> _App | None:
    for group, name, panel in _GROUPS:
        if name is not None:  # a command with commands of its own: the group entire
            if command == name:
                narrowed = _new_app()
                narrowed.add_typer(group, name=name, rich_help_panel=panel)
                return narrowed
            continue
        for info in group.registered_commands:
            if _command_name(info) == command:
                narrowed = _new_app()
                narrowed.registered_commands.append(info)  # as registered: help, panel, all
                return narrowed
    return None


def _command_name(info: CommandInfo) -> str:
    """A command's name as Typer derives it (tested against the whole app's)."""
    if info.name:
        return info.name
    assert info.callback is not None  # every command here is a decorated function
    return get_command_name(info.callback.__name__)


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
