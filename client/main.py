"""The ``canasta`` command-line app.

Keep this module light: commands import grpc and the generated code inside their bodies, so
``canasta --help`` stays fast.
"""

import typer

app = typer.Typer(
    name="canasta",
    help="Play Canasta by correspondence on a canasta-server.",
    no_args_is_help=True,
)


@app.callback()
def _root() -> None:
    """Play Canasta by correspondence on a canasta-server."""


@app.command()
def version() -> None:
    """Print the client's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    try:
        text = package_version("canasta")
    except PackageNotFoundError:  # running from a checkout that was never installed
        text = "0+unknown"
    typer.echo(f"canasta {text}")
