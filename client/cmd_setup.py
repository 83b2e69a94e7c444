"""Setting up: a key and a profile, the server pinned, the player registered; who am I."""

from __future__ import annotations

from typing import Annotated

import typer

from client import common
from client.errors import CliError
from client.paths import config_file
from client.profiles import (
    Profile,
    check_server_address,
    chosen_profile,
    list_profiles,
    set_default_profile,
    write_key,
)

app = typer.Typer()
server_app = typer.Typer(
    help="The server this profile talks to: its pinned key.", no_args_is_help=True
)

PANEL = "Setting up"


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta setup --server localhost:7437 --name Alice\n\n"
    "  canasta --profile work setup --server games.example.org:7437 --name Alice --tls "
    "--passphrase",
)
def setup(
    server: Annotated[str, typer.Option(help="The server's HOST:PORT.")],
    name: Annotated[str, typer.Option(help="Your display name at the table.")],
    email: Annotated[str, typer.Option(help="Optional e-mail for reminders.")] = "",
    invite: Annotated[
        str, typer.Option(help="Invitation code, if the server needs one to register.")
    ] = "",
    tls: Annotated[bool, typer.Option(help="Talk TLS to the server.")] = False,
    ca: Annotated[
        str, typer.Option(help="PEM file of the CA that signed the server's certificate.")
    ] = "",
    passphrase: Annotated[
        bool,
        typer.Option(help="Protect the new key with a passphrase (asked, or CANASTA_PASSPHRASE)."),
    ] = False,
) -> None:
    """Create your key and a profile, pin the server's key and register your name.

    Run once per server (or identity): the profile is the one --profile NAME or
    CANASTA_PROFILE names, else "default". Keys and settings live in your user config
    directory (CANASTA_HOME overrides it); the key file is readable only by you.
    """
    from shared import protocol
    from shared.crypto.keys import generate_private_key, public_key_raw
    from shared.crypto.keytext import public_key_to_text

    server = check_server_address(server)  # a wrong address is said before anything is made
    name_ = chosen_profile(common.OPTIONS.profile)
    try:
        existing = Profile.load(name_)
    except CliError:
        existing = None
    if existing is not None and existing.display_name:
        raise CliError(
            f"the profile {name_!r} is already set up ({existing.display_name} at "
            f"{existing.server}); use --profile NAME for another"
        )
    if ca:
        tls = True
        # Kept absolute: every later command, from whatever directory, reads the same file.
        import os

        ca = os.path.abspath(os.path.expanduser(ca))
    player = Profile(name=name_, server=server, tls=tls, ca_file=ca, email=email)
    if player.key_path.exists():
        key = player.load_key()
    else:
        secret = _new_passphrase() if passphrase else None
        key = generate_private_key()
        from shared.crypto.keys import private_key_to_openssh, private_key_to_pem

        pem = private_key_to_openssh(key, secret) if secret else private_key_to_pem(key)
        write_key(player.key_path, pem)
        player.use_key(key)  # signing in below must not ask for the new passphrase again
    player.public_key = public_key_to_text(public_key_raw(key))
    with common.connect(player) as conn:
        info = conn.server_info()
        server_key = conn.check_pin(info)
        request = protocol.register_request(key, server_key, name, email=email, invitation=invite)
        response = conn.call("Register", request, auth=False)
        player.display_name = response.player.display_name
        player.save()
        conn.login()
    if not config_file().exists():
        set_default_profile(name_)  # the first profile becomes the default
    typer.echo(f"registered {player.display_name} at {server} (profile {name_!r})")
    if info.test_clock_speed > 1:
        from shared.tabletext import test_clock_warning

        typer.echo(f"note: {test_clock_warning(info.test_clock_speed)}")
    typer.echo("next: `canasta create` to start a match, or `canasta join CODE` to join one")


def _new_passphrase() -> str:
    import os
    import sys

    from client.paths import PASSPHRASE_ENV

    value = os.environ.get(PASSPHRASE_ENV)
    if value:
        return value
    if not sys.stdin.isatty():
        raise CliError(f"--passphrase needs a terminal to ask it, or {PASSPHRASE_ENV}")
    import getpass

    first = getpass.getpass("New passphrase for your key: ")
    if not first or first != getpass.getpass("Again: "):
        raise CliError("the passphrases were empty or did not match; nothing was created")
    return first


@app.command(rich_help_panel=PANEL, epilog="Example:\n\n  canasta whoami --json")
def whoami(json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False) -> None:
    """Show this profile: your name and key, the server and its pinned key (no network)."""
    from shared.crypto.keytext import fingerprint, public_key_from_text

    player = common.profile()
    facts = {
        "profile": player.name,
        "name": player.display_name,
        "public_key": player.public_key,
        "fingerprint": fingerprint(public_key_from_text(player.public_key)),
        "server": player.server,
        "tls": player.tls,
        "server_key": player.server_key,
        "server_fingerprint": (
            fingerprint(public_key_from_text(player.server_key)) if player.server_key else ""
        ),
        "key_file": str(player.key_path),
    }
    if json:
        import json as json_module

        typer.echo(json_module.dumps(facts, indent=2))
        return
    typer.echo(f"{player.display_name} (profile {player.name!r}) at {player.server}")
    typer.echo(f"  your key     {facts['fingerprint']}  {player.public_key}")
    pinned = facts["server_fingerprint"] or "not pinned (pinned on next contact)"
    typer.echo(f"  server key   {pinned}")
    typer.echo(f"  key file     {player.key_path}")


@app.command(rich_help_panel=PANEL, epilog="Examples:\n\n  canasta profiles\n\n"
             "  canasta profiles --use work")  # fmt: skip
def profiles(
    use: Annotated[
        str | None, typer.Option(help="Make this profile the default one.", metavar="NAME")
    ] = None,
    json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
) -> None:
    """List your profiles (servers or identities side by side); * marks the one in use."""
    names = list_profiles()
    if use is not None:
        if use not in names:
            raise CliError(
                f"there is no profile {use!r}: `canasta --profile {use} setup` makes one"
            )
        set_default_profile(use)
    current = chosen_profile(common.OPTIONS.profile) if use is None else use
    loaded = [Profile.load(n) for n in names]
    if json:
        import json as json_module

        rows = [
            {"profile": p.name, "name": p.display_name, "server": p.server,
             "current": p.name == current}
            for p in loaded
        ]  # fmt: skip
        typer.echo(json_module.dumps(rows, indent=2))
        return
    if not loaded:
        typer.echo("no profiles yet: `canasta setup --server HOST:PORT --name NAME` makes one")
    for p in loaded:
        mark = "*" if p.name == current else " "
        typer.echo(f"{mark} {p.name:<12} {p.display_name:<16} {p.server}")


@server_app.command(epilog="Example:\n\n  canasta server forget")
def forget() -> None:
    """Forget the pinned server key; the key the server presents next is pinned instead.

    Only do this when you know why the key changed (the operator told you it was replaced):
    a changed key can also mean someone is impersonating the server.
    """
    player = common.profile()
    if not player.server_key:
        typer.echo("no server key is pinned for this profile")
        return
    player.server_key = ""
    player.token = ""
    player.save()
    typer.echo(f"forgot the pinned key of {player.server}; the next command pins the new one")


@server_app.command(epilog="Example:\n\n  canasta server info --json")
def info(json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False) -> None:
    """Ask the server who it is: its key (checked against the pin), version and presets."""
    from shared.crypto.keytext import fingerprint

    player = common.profile()
    with common.connect(player) as conn:
        response = conn.server_info()
        conn.check_pin(response)
    if json:
        common.print_json(response)
        return
    typer.echo(f"server   {player.server} (version {response.server_version})")
    typer.echo(f"key      {fingerprint(bytes(response.server_public_key))} (matches the pin)")
    typer.echo(f"presets  {', '.join(p.name for p in response.presets)}")
    if response.test_clock_speed > 1:
        from shared.tabletext import test_clock_warning

        typer.echo(f"clocks   {test_clock_warning(response.test_clock_speed)}")
