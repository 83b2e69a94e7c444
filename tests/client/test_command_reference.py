"""The command reference in docs/playing.md is the app's own (issue 26): it fails when a
command, argument, option, help text or example changes without ``make docs``."""

from __future__ import annotations

from client import reference
from tests.docs import parse_command_line, shell_commands


def test_the_committed_reference_is_what_the_app_says_now() -> None:
    page = reference.PAGE.read_text(encoding="utf-8")
    assert reference.committed(page) == reference.reference(), (
        "docs/playing.md's command reference differs from the app: run `make docs` "
        "(python -m client.reference) and commit docs/playing.md"
    )


def test_every_command_and_option_is_in_the_reference() -> None:
    text = reference.reference()
    for path, command in reference.commands():
        assert f"### `{path}`" in text
        for param in command.params:
            for name in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
                if param.param_type_name == "option" and not getattr(param, "hidden", False):
                    assert name in text.split(f"### `{path}`", 1)[1].split("\n### ", 1)[0]
    assert "### `canasta notify email`" in text
    assert "### `canasta server info`" in text


def test_every_example_in_the_reference_parses_with_the_app() -> None:
    examples = [
        line
        for block in reference.reference().split("```sh\n")[1:]
        for line in block.split("```", 1)[0].splitlines()
    ]
    assert len(examples) > 40
    for line in examples:
        for argv in shell_commands(line):
            parse_command_line(argv)


def test_rewriting_the_page_keeps_everything_outside_the_markers() -> None:
    page = "intro\n" + reference.BEGIN + "\nstale\n" + reference.END + "\nafter\n"
    new = reference.rewrite(page)
    assert new.startswith("intro\n" + reference.BEGIN + "\n")
    assert new.endswith(reference.END + "\nafter\n")
    assert reference.committed(new) == reference.reference()
