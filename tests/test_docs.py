"""The README and docs/ stay true (issue 26): every command they show parses with the real
apps, every link and anchor leads somewhere, every test they name exists, and the README stays
a front door. The pages' own examples are run or loaded by the tests beside their code:
tests/e2e/test_readme_walkthrough.py, tests/e2e/test_readme_tls.py,
tests/client/test_command_reference.py, tests/server/test_operating_docs.py and
tests/server/test_mail_docs.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs import (
    PAGES,
    PROGRAMS,
    REPO,
    CommandLineError,
    code_blocks,
    parse_command_line,
    section,
    shell_commands,
)


def _shown_commands(text: str) -> list[tuple[list[str], bool]]:
    """The ``canasta`` and ``canasta-server`` command lines of a page, each with whether it
    is only mentioned: the lines of its sh and text blocks (whole command lines), and inline
    code that begins with a program's name and holds no placeholder syntax (``[MATCH]``,
    ``a|b``, ``...``, ``canasta COMMAND``): prose names commands without their required
    arguments."""
    lines = [
        (line, False) for body in code_blocks(text, "sh", "text") for line in body.splitlines()
    ]
    for span in re.findall(r"`([^`\n]+)`", _without_blocks(text)):
        placeholder = re.search(r"[\[|]|\.\.\.|^\S+ [A-Z]+\b", span)
        if span.split(" ", 1)[0] in PROGRAMS and not placeholder:
            lines.append((span, True))
    found = []
    for line, mention in lines:
        for words in shell_commands(line):
            if words[:1] == ["sudo"]:  # sudo [-u USER] PROGRAM ...
                words = words[3:] if words[1:2] == ["-u"] else words[1:]
            if words and Path(words[0]).name in PROGRAMS:
                found.append(([Path(words[0]).name, *words[1:]], mention))
    return found


def _without_blocks(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_a_page_shows_parses_with_the_real_app(page: Path) -> None:
    for argv, mention in _shown_commands(page.read_text(encoding="utf-8")):
        try:
            parse_command_line(argv, mention=mention)
        except CommandLineError as error:
            raise AssertionError(f"{page.name}: {error}") from None


def test_the_pages_show_commands() -> None:
    """The extraction above finds what it should (a test that cannot find anything would
    pass whatever the pages say)."""
    shown = {
        page.name: [argv for argv, _ in _shown_commands(page.read_text(encoding="utf-8"))]
        for page in PAGES
    }
    assert ["canasta", "draw"] in shown["README.md"]
    assert ["canasta", "timezone", "Europe/Berlin"] in shown["playing.md"]
    assert ["canasta", "notify", "email", "each", "--allow-reply-moves"] in shown["mail.md"]
    assert any(argv[-2:] == ["players", "list"] for argv in shown["operating.md"])
    wrong = (
        ["canasta", "draw", "--no-such-option"],
        ["canasta", "notify", "email"],
        ["canasta", "create", "--days", "99"],
        ["canasta", "no-such-command"],
        ["canasta-server", "players", "frob"],
    )
    for argv in wrong:
        with pytest.raises(CommandLineError):
            parse_command_line(argv)
    with pytest.raises(CommandLineError, match="no option --no-such-option"):
        parse_command_line(["canasta", "create", "--no-such-option"], mention=True)
    parse_command_line(["canasta", "notify", "email"], mention=True)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = _without_blocks(page.read_text(encoding="utf-8"))
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_and_anchor_leads_somewhere(page: Path) -> None:
    text = _without_blocks(page.read_text(encoding="utf-8"))
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f"{page.name}: the link {target} leads to no file"
        if anchor and file.suffix == ".md":
            assert anchor in _anchors(file), f"{page.name}: no heading for #{anchor} in {path}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_test_a_page_names_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for path, name in re.findall(r"(tests/[\w/]+\.py)(?:::(\w+))?", text):
        file = REPO / path
        assert file.is_file(), f"{page.name} names {path}, which does not exist"
        if name:
            assert re.search(rf"^(async )?def {name}\(", file.read_text(), re.MULTILINE), (
                f"{page.name} names {path}::{name}, which does not exist"
            )


def test_the_trust_model_names_its_tests() -> None:
    trust = (REPO / "docs" / "trust.md").read_text(encoding="utf-8")
    assert len(re.findall(r"tests/[\w/]+\.py::\w+", trust)) >= 40


def test_the_readme_is_a_front_door() -> None:
    """At most about 200 lines, and a link to every page of docs/."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f"(docs/{page.name})" in text, f"the README does not link docs/{page.name}"
    assert "(bench/README.md)" in text


def test_every_setting_or_field_a_page_names_exists() -> None:
    """A name such as `smtp_host` or `played_by_bot` in a page is a server setting, a metric,
    a field of the wire contract or of a webhook's body: a misspelt or removed one fails."""
    import dataclasses

    from server.config import ServerConfig

    known = {f.name for f in dataclasses.fields(ServerConfig)}
    contract = (REPO / "proto" / "shared" / "pb" / "canasta.proto").read_text(encoding="utf-8")
    metrics = (REPO / "server" / "metrics.py").read_text(encoding="utf-8")
    webhook = {"id", "kind", "match_id", "text", "created_ms", "facts", "due_ms"}
    for name in ("README.md", "docs/playing.md", "docs/mail.md", "docs/operating.md"):
        text = _without_blocks((REPO / name).read_text(encoding="utf-8"))
        for word in set(re.findall(r"`([a-z0-9]+(?:_[a-z0-9]+)+)`", text)):
            assert (
                word in known
                or word in webhook
                or re.search(rf"\b{word} = \d+;", contract)
                or f'"{word.removesuffix("_total")}"' in metrics
                or word == "grpc_health_probe"  # a tool of gRPC's, named as such
            ), f"{name} names `{word}`: no setting, metric or field has that name"


def test_every_move_and_card_the_notation_shows_is_read_by_the_engine() -> None:
    """docs/playing.md "Cards and moves": every move written there (`meld 7h 7c 2s`, `lay 9#2
    9h`...) is read by the engine's own parser, every card (`10d`, `7♥`, `jk`) too, and every
    meld's name (`9#2`, `4h-6h`, `wild`) names a meld in a lay-off."""
    from shared import rules

    text = section((REPO / "docs" / "playing.md").read_text(encoding="utf-8"), "## Cards and moves")
    verbs = ("draw", "pickup", "meld", "lay", "discard", "ask", "answer", "pass", "combine")
    read = 0
    for span in set(re.findall(r"`([^`\n]+)`", text)):
        if span.startswith("canasta") or span.startswith("docs/"):
            continue  # commands: parsed with the app above
        if span.split(" ", 1)[0] in verbs:
            (rules.parse_turn if ";" in span else rules.parse_action)(span)
        else:  # a card, or a meld's name
            assert " " not in span, f"`{span}`: neither a move nor a card"
            try:
                rules.parse_action(f"discard {span}")
            except rules.NotationError:
                rules.parse_action(f"lay {span} 2c")
        read += 1
    assert read >= 30
