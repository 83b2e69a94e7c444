"""The app's shape: the commands render's hints name exist; help stays free of heavy imports."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from typing import Any

from typer.main import get_command

from client.main import _narrowed, app
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

    from server.service.play.lobby import new_invite_code

    join = get_command(app).commands["join"]  # type: ignore[attr-defined]
    examples = re.findall(r"canasta join (\S+)", join.epilog)
    assert examples
    real = new_invite_code()
    alphabet = set("abcdefghjkmnpqrstuvwxyz23456789")
    assert set(real) <= alphabet
    for code in examples:
        assert len(code) == len(real)
        assert set(code) <= alphabet


def test_the_executable_builds_only_the_command_asked_for_and_it_is_the_same() -> None:
    """``canasta show`` builds an app holding ``show`` alone (``client.main.main``): for every
    command, that app shows the same help (every option, its default and text) as the whole
    app, and takes the root's options before it; whatever names no single command gets the
    whole app."""
    whole = get_command(app)
    names = sorted(whole.commands)  # type: ignore[attr-defined]
    assert len(names) > 30
    for name in names:
        narrowed = _narrowed(["--profile", "x", "--no-color", name, "--flag"])
        if name == "version":  # on the root itself: the whole app runs it
            assert narrowed is None
            continue
        assert narrowed is not None, name
        assert set(get_command(narrowed).commands) == {name}  # type: ignore[attr-defined]
        shown = _help_of(get_command(narrowed), name)
        assert shown.startswith(f"Usage: canasta {name} "), shown
        assert shown == _help_of(whole, name)
    for argv in (["--help", "show"], ["show2"], [], ["--install-completion"], ["-pX", "show"]):
        assert _narrowed(argv) is None, argv


def _help_of(command: Any, name: str) -> str:
    """What ``canasta NAME --help`` prints with this root command."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        command.main([name, "--help"], prog_name="canasta", standalone_mode=False)
    return out.getvalue()
