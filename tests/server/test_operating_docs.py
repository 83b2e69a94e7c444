"""docs/operating.md's example server.toml is the server's own settings (issue 26): every
setting of ``ServerConfig`` has an entry, with a comment, at its default, and the file loads.

When this fails after a setting was added, the message says the exact line to add."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from server.config import ServerConfig, default_data_dir, load_config
from tests.docs import REPO, code_blocks, parse_command_line, section, shell_commands

PAGE = REPO / "docs" / "operating.md"
HEADING = "## Every setting: an example server.toml"


def _example() -> str:
    (block,) = code_blocks(section(PAGE.read_text(encoding="utf-8"), HEADING), "toml")
    return block


def _toml(value: Any) -> str:
    """A default as a TOML value (a path that is not set: the empty string)."""
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))


def _entries(example: str) -> dict[str, str]:
    return dict(re.findall(r"^(\w+) = (.*)$", example, re.MULTILINE))


def test_every_setting_has_an_entry_with_a_comment() -> None:
    example = _entries(_example())
    defaults = ServerConfig()
    for field in dataclasses.fields(ServerConfig):
        line = f"{field.name} = {_toml(getattr(defaults, field.name))}"
        assert field.name in example, (
            f"docs/operating.md, section {HEADING!r}: the example server.toml has no entry for "
            f"the setting {field.name!r}. Add it to the ```toml block, in the group it belongs "
            f"to, as a comment saying what it does (its range, what empty or 0 means) and the "
            f"line:  {line}"
        )
    paragraphs = _example().split("\n\n")
    for paragraph in paragraphs:
        if re.search(r"^\w+ = ", paragraph, re.MULTILINE):
            assert paragraph.startswith("#"), f"an entry without its comment:\n{paragraph}"


def test_the_example_loads_with_every_default(tmp_path: Path) -> None:
    file = tmp_path / "server.toml"
    file.write_text(_example(), encoding="utf-8")
    loaded = load_config(file, env={})  # an unknown setting, or a bad value, raises here
    defaults = ServerConfig()
    for field in dataclasses.fields(ServerConfig):
        if field.name == "data_dir":
            continue  # platform-dependent: below
        shown, default = getattr(loaded, field.name), getattr(defaults, field.name)
        assert shown == default, (
            f"docs/operating.md's example server.toml gives {field.name} = {_toml(shown)}, "
            f"but its default is {_toml(default)}: write  {field.name} = {_toml(default)}"
        )
    if sys.platform == "linux" and "XDG_DATA_HOME" not in os.environ:
        assert loaded.data_dir == default_data_dir()


def test_every_other_example_file_of_the_page_loads(tmp_path: Path) -> None:
    examples = code_blocks(PAGE.read_text(encoding="utf-8"), "toml")
    assert len(examples) >= 2
    for example in examples:
        file = tmp_path / "server.toml"
        file.write_text(example, encoding="utf-8")
        load_config(file, env={})


def test_the_example_mail_settings_are_the_four_steps(tmp_path: Path) -> None:
    """The mail section's file sets mail out, the From address and mail in."""
    text = section(PAGE.read_text(encoding="utf-8"), "## Mail set-up end to end")
    (example,) = code_blocks(text, "toml")
    file = tmp_path / "server.toml"
    file.write_text(example, encoding="utf-8")
    config = load_config(file, env={})
    assert config.smtp_host
    assert "@" in config.mail_from
    assert config.smtp_listen


@pytest.mark.parametrize("page", [PAGE, REPO / "README.md"], ids=lambda p: p.name)
def test_every_environment_variable_shown_is_a_setting(page: Path) -> None:
    names = set(re.findall(r"CANASTA_SERVER_([A-Z_]+)", page.read_text(encoding="utf-8")))
    fields = {f.name.upper() for f in dataclasses.fields(ServerConfig)}
    assert names - {"CONFIG"} <= fields, f"not settings: {names - fields - {'CONFIG'}}"


def test_the_pipe_delivery_alias_runs_a_real_command() -> None:
    text = section(PAGE.read_text(encoding="utf-8"), "### Mail in: a pipe")
    (alias,) = re.findall(r'"\|([^"]+)"', text)
    (argv,) = shell_commands(alias)
    parse_command_line([Path(argv[0]).name, *argv[1:]])
    assert argv[-1] == "mail-in"


def test_every_metric_the_page_names_is_exported() -> None:
    text = section(PAGE.read_text(encoding="utf-8"), "## Metrics")
    source = (REPO / "server" / "metrics.py").read_text(encoding="utf-8")
    names = set(re.findall(r"`(canasta_\w+)", text))
    assert len(names) == 8
    for name in names:
        assert f'"{name.removesuffix("_total")}"' in source, name
