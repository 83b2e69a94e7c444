"""What the documentation tests share: reading a page's code blocks, and parsing a command
line with the real Typer apps (``canasta`` and ``canasta-server``) without running it."""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path
from typing import Any

import typer
from typer.main import get_command

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
PROGRAMS = ("canasta", "canasta-server")


def code_blocks(text: str, *languages: str) -> list[str]:
    """The bodies of the fenced blocks in ``text`` whose language is one of ``languages``."""
    found = re.findall(r"^```(\w*)\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    return [body for language, body in found if language in languages]


def section(text: str, heading: str) -> str:
    """The text under ``heading`` (a whole heading line, such as ``## TLS``) up to the next
    heading of the same level or higher (lines in code blocks are no headings)."""
    level = len(heading.split(" ", 1)[0])
    lines = text.split(f"\n{heading}\n", 1)[1].split("\n")
    fenced = False
    for at, line in enumerate(lines):
        fenced ^= line.startswith("```")
        marks = len(line) - len(line.lstrip("#"))
        if not fenced and 0 < marks <= level and line[marks : marks + 1] == " ":
            return "\n".join(lines[:at])
    return "\n".join(lines)


def shell_commands(line: str) -> list[list[str]]:
    """The simple commands of a shell line (split at ``&&``, ``||``, ``|`` and ``;``, without
    redirections and comments), each as its words."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    words = iter(lexer)
    for word in words:
        if word in ("&&", "||", "|", ";"):
            commands.append([])
        elif word in (">", ">>", "<", "2>"):
            next(words, None)
        else:
            commands[-1].append(word)
    return [c for c in commands if c]


class CommandLineError(ValueError):
    """A command line the program would refuse; the message says why."""


def parse_command_line(argv: list[str], *, mention: bool = False) -> None:
    """Parse ``argv`` (``["canasta", "show", ...]``, after any ``NAME=value`` settings of the
    environment) as the program would, down to its command, and raise the app's usage error
    if it does not parse. Nothing runs; ``--help`` parses.

    ``mention``: the words name a command in prose (`canasta verify`, `canasta create
    --days`), so required arguments may be left out, but the command and every option named
    must exist."""
    while argv and re.fullmatch(r"[A-Z_]+=\S*", argv[0]):
        argv = argv[1:]
    program, *args = argv
    if program not in PROGRAMS:
        raise CommandLineError(f"not a command of this project: {argv}")
    try:
        _parse(_click_command(program), program, args, None, mention, set())
    except Exception as error:  # the app's usage error, or an unknown command or option
        if getattr(error, "exit_code", None) != 0:  # --help ends parsing, with exit code 0
            raise CommandLineError(f"`{' '.join(argv)}`: {error}") from None


@functools.cache
def _click_command(program: str) -> Any:
    """The click command Typer builds for ``program``, built once per test process: building
    it reads every command's signature and type hints (about 30 ms for ``canasta``), and the
    docs tests parse hundreds of command lines. Parsing never changes it."""
    from client.main import app as client_app
    from server.cli import app as server_app

    apps: dict[str, typer.Typer] = {"canasta": client_app, "canasta-server": server_app}
    return get_command(apps[program])


def _parse(
    command: Any, name: str, args: list[str], parent: Any, mention: bool, known: set[str]
) -> None:
    known = known | {"--help"} | {o for p in command.params for o in [*p.opts, *p.secondary_opts]}
    if not hasattr(command, "commands"):  # a command: its arguments and options
        command.make_context(name, list(args), parent=parent, resilient_parsing=mention)
        for word in args if mention else []:
            option = word.split("=", 1)[0]
            assert not option.startswith("-") or option in known, f"no option {option}"
        return
    # A group: its own options (the root's --profile...), then the name of a command.
    taking_value = {o for p in command.params if not p.is_flag for o in p.opts}
    at = 0
    while at < len(args) and args[at].startswith("-"):
        at += 2 if args[at] in taking_value else 1
    context = command.make_context(name, args[:at], parent=parent, resilient_parsing=True)
    for word in args[:at]:
        option = word.split("=", 1)[0]
        assert not option.startswith("-") or option in known, f"no option {option}"
    if "--help" in args[:at]:
        return
    if at >= len(args):
        assert mention, f"{name} needs a command"
        return
    sub = command.get_command(context, args[at])
    assert sub is not None, f"no command {args[at]!r} in {name}"
    _parse(sub, args[at], args[at + 1 :], context, mention, known)
