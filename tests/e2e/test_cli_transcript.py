"""``canasta export`` and ``canasta verify`` (issue 13), with the real executables: a match
played out by bots is exported, verifies offline with nothing but the file, and a file with
one byte changed is refused, naming the entry."""

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


def test_a_match_exports_and_verifies_offline(server: Server, tmp_path: Path) -> None:
    ann = Player(tmp_path / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    created = ann.json("create", "--target", "100", "--bot", "1", "--bot", "2", "--bot", "3")
    match_id = created["match"]["match_id"]
    early = ann.run("export", "-o", str(tmp_path / "early.json")).stdout
    assert "0 entries, 0 hands over, match in progress" in early
    ann.run("cover", "on")  # the bots play Ann's seat too, to the end
    for _ in range(120):
        if ann.json("show", match_id)["match"]["status"] == "MATCH_STATUS_FINISHED":
            break
        time.sleep(0.5)
    else:
        raise AssertionError("the bots did not finish the match")
    history = ann.run("history", match_id).stdout
    assert "Verified: entries 1-" in history
    assert "\nHand 1 " in history  # the first hand's result, from the client's own replay
    file = tmp_path / "match.json"
    wrote = ann.run("export", match_id[:6], "-o", str(file)).stdout
    assert f"wrote {file}: " in wrote
    assert "match finished" in wrote

    server.stop()  # verify needs nothing but the file
    mine = ann.run("verify", str(file)).stdout
    assert "the server key is the one your profile pinned" in mine
    assert "your key sits at seat 0" in mine
    report = Player(tmp_path / "stranger").run("verify", str(file)).stdout
    assert f"match {match_id} (classic, to 100)" in report
    assert "seat 0: Ann (side 0), key " in report
    assert "seat 1: a bot (side 1), key " in report
    assert "  server key " in report
    assert "was cut by the server's bot for an absent player" in report  # Ann was covered
    assert "no profile here: compare the key fingerprints" in report
    page = tmp_path / "match.html"  # and its replay page (tests/e2e/test_replay_browser.py)
    replayed = Player(tmp_path / "stranger").run("replay", str(file), "-o", str(page)).stdout
    assert f"wrote {page}: " in replayed
    assert "match finished; verified" in replayed
    assert match_id in page.read_text(encoding="utf-8")
    assert "final scores " in report
    assert "won by " in report
    assert "entries verified (" in report  # and how many a bot played for Ann
    assert "the server signed the match's end at entry " in report

    # Cut short: its end names the entry dropped; without the end, it reads as in progress.
    whole = Transcript.from_bytes(file.read_bytes())
    cut = tmp_path / "cut.json"
    cut.write_bytes(dataclasses.replace(whole, entries=whole.entries[:-1]).to_bytes())
    refused = Player(tmp_path / "stranger").run("verify", str(cut), ok=False)
    assert f"does NOT verify: end: it names entry {len(whole.entries)} as" in one_line_error(
        refused
    )
    cut.write_bytes(dataclasses.replace(whole, entries=whole.entries[:-1], end=None).to_bytes())
    report = Player(tmp_path / "stranger").run("verify", str(cut)).stdout
    assert "in progress, or cut short: " in report
    assert "not that the match stopped here" in report

    data = bytearray(file.read_bytes())
    at = data.index(b'"entries":[[') + 200  # inside the first entry's signed payload
    data[at] = ord("0") if data[at] != ord("0") else ord("1")
    tampered = tmp_path / "tampered.json"
    tampered.write_bytes(bytes(data))
    refused = Player(tmp_path / "stranger").run("verify", str(tampered), ok=False)
    assert refused.returncode == 1
    assert "does NOT verify: entry 1:" in one_line_error(refused)
    missing = Player(tmp_path / "stranger").run("verify", str(tmp_path / "nope.json"), ok=False)
    assert missing.returncode == 1
    assert "cannot read" in one_line_error(missing)
