"""Command line of the server: ``canasta-server`` and ``python -m server``."""

from importlib.metadata import PackageNotFoundError, version

import typer

app = typer.Typer(help="The Canasta correspondence server.", no_args_is_help=True)


@app.callback()
def _root() -> None:
    """The Canasta correspondence server."""


@app.command()
def serve() -> None:
    """Run the server."""
    typer.echo(f"canasta-server {_package_version()}")
    typer.echo("The gRPC service arrives with the service issue; there is nothing to serve yet.")


def _package_version() -> str:
    try:
        return version("canasta")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


def main() -> None:
    """Entry point of the ``canasta-server`` console script."""
    app()


if __name__ == "__main__":
    main()
