"""Table talk with the real executables (issue 32): ``canasta create --conventions``, ``canasta
say``, the table's last lines, ``canasta talk``, the history at the move where it was said, and
the exported transcript that ``canasta verify`` checks, refusing a dropped message."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.transcript import Transcript
from tests.e2e.harness import Player, Server, one_line_error, start_server

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "server")
    yield running
    running.stop()


def test_talk_at_the_table_in_the_history_and_in_the_verified_record(
    server: Server, tmp_path: Path
) -> None:
    ann, bob = Player(tmp_path / "ann"), Player(tmp_path / "bob")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    bob.run("setup", "--server", server.address, "--name", "Bob")
    created = ann.run(
        "create", "--target", "100", "--seat", "0", "--bot", "1", "--bot", "3",
        "--conventions", "we meld early; a discarded ace asks for aces",
    ).stdout  # fmt: skip
    assert "conventions kept: published when the match has started" in created
    code = created.split("canasta join ")[1].split(")")[0].strip()
    bob.run("join", code, "--seat", "2")
    match_id = bob.json("matches")["matches"][0]["match_id"]

    shown = ann.run("show", match_id)
    assert "published your side's conventions (talk 1)" in shown.stderr
    said = bob.run("say", "good luck, partner", match_id).stdout
    assert said.startswith("said (talk 2, after move ")
    bob.run("say", match_id[:8], "the match may come first, too")  # hex first: the match
    table = ann.run("show", match_id).stdout
    assert "Conventions: Ann (seat 0) declares their side's conventions: we meld early" in table
    assert "Table talk:" in table
    assert "  Bob (seat 2): good luck, partner" in table
    assert "  Bob (seat 2): the match may come first, too" in table

    refused = bob.run("say", "clear the screen \x1b[2J", match_id, ok=False)
    assert "U+001B" in one_line_error(refused)
    refused = bob.run("conventions", "we changed our minds", match_id, ok=False)
    assert "your side declared its conventions already" in one_line_error(refused)

    listed = bob.run("talk", match_id).stdout.splitlines()
    assert listed[0].startswith("Ann (seat 0) declares their side's conventions: we meld early")
    assert listed[-1].startswith("Bob (seat 2): the match may come first, too  (after move ")

    history = ann.run("history", match_id).stdout
    assert "      > Bob (seat 2) says: good luck, partner" in history
    assert "talk entries signed and chained" in history
    heads = {
        next(line for line in p.run("history", match_id).stdout.splitlines() if "Talk head" in line)
        for p in (ann, bob)
    }
    assert len(heads) == 1  # both are shown one talk
    assert next(iter(heads)).startswith("Talk head: talk entry 3, hash ")

    for player in (ann, bob):  # the bots play both seats to the end
        player.run("cover", "on", match_id)
    for _ in range(240):
        if ann.json("show", match_id)["match"]["status"] == "MATCH_STATUS_FINISHED":
            break
        time.sleep(0.5)
    else:
        raise AssertionError("the bots did not finish the match")
    refused = ann.run("say", "well played", match_id, ok=False)
    assert "the match is over" in one_line_error(refused)

    file = tmp_path / "match.json"
    wrote = ann.run("export", match_id, "-o", str(file)).stdout
    assert "match finished, 3 talk entries" in wrote
    server.stop()  # verify needs nothing but the file
    report = Player(tmp_path / "stranger").run("verify", str(file)).stdout
    assert "table talk: 3 entries verified" in report
    assert "the server's end names the last: none is missing" in report

    whole = Transcript.from_bytes(file.read_bytes())
    assert [t.text for t in whole.talk][1:] == [
        "good luck, partner",
        "the match may come first, too",
    ]
    cut = tmp_path / "cut.json"
    cut.write_bytes(dataclasses.replace(whole, talk=whole.talk[:-1]).to_bytes())
    refused = Player(tmp_path / "stranger").run("verify", str(cut), ok=False)
    assert "end: it names 3 talk entries" in one_line_error(refused)
    cut.write_bytes(dataclasses.replace(whole, talk=(whole.talk[0], whole.talk[2])).to_bytes())
    refused = Player(tmp_path / "stranger").run("verify", str(cut), ok=False)
    assert "talk 2: it is numbered 3" in one_line_error(refused)
