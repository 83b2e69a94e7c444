"""The ``canasta`` command-line app.

Keep this module light: commands import grpc, the generated code and cryptography inside their
bodies, so ``canasta --help`` stays fast. Every failure ends here as one line on stderr and a
non-zero exit code (``client.errors``); no traceback reaches a player.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from client import cmd_lobby, cmd_move, cmd_setup, cmd_table, common
from client.errors import CliError


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "y", "on"):
        return True
    if text in ("0", "false", "no", "n", "off", ""):
        return False
    raise ValueError(text)


def _plain_parameters_without_pydantic() -> None:
    """Coerce plain ``str``/``int``/``float`` parameters without importing pydantic.

    Typer 0.2x coerces every non-bool parameter through a pydantic ``TypeAdapter``; importing
    pydantic costs about 75 ms, a third of the 250 ms a command may take to start (issue 4).
    Our parameters are plain text, numbers and flags (optional, or lists of them), which need
    only ``int()``/``float()``. This hooks a private Typer method, so it is guarded: if Typer's
    internals change, nothing breaks, commands just start slower (``bench/bench_client.py``).
    """
    try:
        from typer import core
        from typer._coercion import RuntimeParam

        parameter_class: Any = core._TyperParameter
        original = parameter_class.get_runtime_param
    except (ImportError, AttributeError):  # pragma: no cover - a Typer without the hook
        return
    scalars: dict[Any, Callable[[Any], Any]] = {str: str, int: int, float: float, bool: _flag}
    plain: dict[Any, tuple[Callable[[Any], Any], bool]] = {}
    for kind, convert in scalars.items():
        plain[kind] = plain[kind | None] = (convert, False)
        many: Any = list[kind]  # type: ignore[valid-type]
        plain[many] = plain[many | None] = (convert, True)

    class _Plain(RuntimeParam):
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            convert, many = plain[self.annotation]
            try:
                if many:
                    return [convert(item) for item in value]
                return convert(value)
            except (TypeError, ValueError):
                raise typer.BadParameter(
                    f"{value!r} is not a valid {convert.__name__}", ctx=ctx, param=param
                ) from None

    def get_runtime_param(self: Any) -> Any:
        descriptor = getattr(self, "type_descriptor", None)
        annotation = getattr(descriptor, "annotation", None)
        if getattr(self, "_runtime_param", False) is None and annotation in plain:
            self._runtime_param = _Plain(
                parameter_info=self.type_descriptor.parameter_info,
                annotation=self.type_descriptor.annotation,
            )
        return original(self)

    parameter_class.get_runtime_param = get_runtime_param


_plain_parameters_without_pydantic()


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
