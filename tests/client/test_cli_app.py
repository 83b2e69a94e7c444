"""The app's shape: the commands render's hints name exist; help stays free of heavy imports."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.main import get_command

from client.main import app
from client.render import COMMANDS


def test_every_hint_of_the_table_names_a_command() -> None:
    names = set(get_command(app).commands)  # type: ignore[attr-defined]
    for _words, hint in COMMANDS.values():
        assert hint.split()[1] in names, hint
    assert {"setup", "create", "join", "show", "play", "wait", "watch", "history"} <= names


def test_help_imports_neither_grpc_nor_crypto_nor_pydantic() -> None:
    """``canasta --help`` must start fast: the heavy modules load only inside commands."""
    code = (
        "import json, sys\n"
        "from typer.main import get_command\n"
        "from client.main import app\n"
        "for argv in (['--help'], ['show', '--help'], ['create', '--help']):\n"
        "    try:\n"
        "        get_command(app).main(argv, prog_name='canasta')\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('grpc', 'pydantic', 'cryptography', 'shared.pb', 'shared.rules', 'rich')\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []


def test_both_programs_print_plain_help_in_one_style() -> None:
    """Issue 14.11: ``canasta-server --help`` looks like ``canasta --help``: no rich boxes, no
    ``--help <bool>``."""
    from typer.testing import CliRunner

    from server.__main__ import app as server_app

    runner = CliRunner()
    for program, argv in (
        (app, ["--help"]),
        (server_app, ["--help"]),
        (server_app, ["serve", "--help"]),
        (server_app, ["players", "--help"]),
    ):
        shown = runner.invoke(program, argv, terminal_width=80)
        assert shown.exit_code == 0, shown.output
        assert shown.output.startswith("Usage: "), shown.output
        assert "\u256d" not in shown.output  # the rich box corner
        assert "<bool>" not in shown.output


def test_the_join_example_looks_like_a_real_invite_code() -> None:
    """Issue 14.11: the example in ``canasta join --help`` is a code the server could issue."""
    import re

    from server.service.lobby import new_invite_code

    join = get_command(app).commands["join"]  # type: ignore[attr-defined]
    examples = re.findall(r"canasta join (\S+)", join.epilog)
    assert examples
    real = new_invite_code()
    alphabet = set("abcdefghjkmnpqrstuvwxyz23456789")
    assert set(real) <= alphabet
    for code in examples:
        assert len(code) == len(real)
        assert set(code) <= alphabet
