"""``canasta replay`` without a browser (issue 33; tests/e2e/test_replay_browser.py opens the
pages in one): a transcript becomes one page whose data are the engine's positions; a file that
does not verify is refused and nothing is written; nothing from the file reaches the page as
markup, and the page may fetch nothing."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

from client.replay import page, replay
from client.replaypage import CSP, SCRIPT, STYLE
from shared.rules import card_text
from shared.transcript import Transcript
from tests.replaykit import finished, played, positions

CANASTA = str(Path(sys.executable).parent / "canasta")
VECTORS = Path(__file__).resolve().parents[1] / "vectors"
HOSTILE = "</script><svg onload=alert(1)>&amp;"


def _canasta(*args: str) -> tuple[int, str]:
    """Run the installed ``canasta`` executable: its exit code, and what it wrote (out, err)."""
    done = subprocess.run(
        [CANASTA, *args], capture_output=True, text=True, timeout=120, check=False
    )
    return done.returncode, done.stdout + done.stderr


def _data(html: str) -> dict[str, object]:
    found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html)
    assert found is not None
    data: dict[str, object] = json.loads(found[1])
    return data


def test_the_command_writes_one_page_of_a_verified_transcript(
    tmp_path: Path,
) -> None:
    file = tmp_path / "match.json"
    file.write_bytes(finished("classic").to_bytes())
    code, said = _canasta("replay", str(file))
    assert code == 0, said
    written = tmp_path / "match.html"
    assert f"wrote {written}: " in said
    assert "match finished; verified" in said
    html = written.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    out = tmp_path / "elsewhere.html"
    assert _canasta("replay", str(file), "-o", str(out))[0] == 0
    assert out.read_text(encoding="utf-8") == html  # the same file makes the same page
    named = tmp_path / "match.html"  # a transcript named .html is never overwritten
    named.write_bytes(file.read_bytes())
    assert _canasta("replay", str(named)) == (
        1,
        f"canasta: {named} is the transcript itself: name another page with -o\n",
    )


def test_a_transcript_that_does_not_verify_is_refused_and_nothing_written(
    tmp_path: Path,
) -> None:
    transcript = finished("classic")
    entries = list(transcript.entries)
    tenth = entries[9]
    entries[9] = dataclasses.replace(tenth, signature=bytes(64))  # a forged signature
    file = tmp_path / "tampered.json"
    file.write_bytes(dataclasses.replace(transcript, entries=tuple(entries)).to_bytes())
    code, said = _canasta("replay", str(file), "-o", str(tmp_path / "out.html"))
    assert code == 1
    assert "does NOT verify, so it is not replayed: entry 10: the signature" in said
    assert not (tmp_path / "out.html").exists()
    file.write_bytes(b"{}\n")  # not a transcript at all
    code, said = _canasta("replay", str(file), "-o", str(tmp_path / "out.html"))
    assert code == 1
    assert "does NOT verify" in said
    assert not (tmp_path / "out.html").exists()


def test_each_position_is_the_engines_with_every_hand_face_up() -> None:
    transcript = finished("classic", hands=2)
    built = replay(transcript)
    shown = built.data["positions"]
    states = positions(transcript)
    assert len(shown) == len(states) == len(transcript.entries) + 1
    for position, state in zip(shown, states, strict=True):
        assert position["hand"] == state.hand_number
        assert position["scores"] == list(state.scores)
        if state.hand_number:
            assert position["face_up"]
            for seat, row in enumerate(position["seats"]):
                assert sorted(row["cards"].split()) == sorted(
                    card_text(c) for c in state.hands[seat]
                )
    last = shown[-1]
    assert last["status"].startswith("Match over")
    assert [h["number"] for h in built.data["hands"]] == [1, 2]
    assert sum(1 for p in shown if "result" in p) == 2  # each hand's scores where it ended
    assert shown[1]["mover"]["actions"] == ["cut and deal hand 1"]


def test_a_hand_still_in_play_shows_no_hidden_card() -> None:
    """A file whose last hand is not over (even one holding that hand's secret, which a
    server reveals only when the hand ends) draws that hand as nobody's eyes see it."""
    transcript = played("classic", hands=2, then=9).transcript()
    built = replay(transcript)
    assert built.report.result == ""
    states = positions(transcript)
    running = [
        (p, s) for p, s in zip(built.data["positions"], states, strict=True) if p["hand"] == 2
    ]
    assert len(running) == 10  # the cut and nine moves
    for position, state in running:
        assert not position["face_up"]
        assert all("cards" not in row for row in position["seats"])
        assert [row["count"] for row in position["seats"]] == [len(h) for h in state.hands]
        # Nobody's stock draw is named: "ann drew" (or "ann drew, laid out 3h": public).
        assert not any(re.search(r"drew (?!,)", text) for text in position["events"])
    before = [p for p in built.data["positions"] if p["hand"] == 1]
    assert all(p["face_up"] for p in before)  # the hand that is over: face up


def test_nothing_from_the_file_reaches_the_page_as_markup() -> None:
    transcript = finished("classic", people={0: HOSTILE, 2: "Bob"})
    html = page(replay(transcript))
    assert HOSTILE not in html
    assert "<svg onload" not in html
    assert html.count("<script") == 2
    assert html.count("</script>") == 2
    data = _data(html)
    assert data["seats"][0]["name"] == HOSTILE  # type: ignore[index]  # as text, intact
    assert "<!--" not in html.split("</style>", 1)[1]
    assert f"<title>Canasta match {transcript_id(transcript)}</title>" in html


def transcript_id(transcript: Transcript) -> str:
    return str(json.loads(transcript.header)["match_id"])


def test_the_page_may_fetch_nothing_and_runs_only_its_own_script() -> None:
    assert "default-src 'none'" in CSP
    assert "unsafe" not in CSP
    html = page(replay(finished("two_player")))
    assert f'content="{CSP}"' in html
    assert f"<script>{SCRIPT}</script>" in html
    assert f"<style>{STYLE}</style>" in html
    assert "innerHTML" not in SCRIPT
    assert "eval(" not in SCRIPT
    # No address but the SVG namespace (a name, never fetched): no link, script or font source.
    assert re.findall(r"(?:https?:)?//[\w.-]+", html) == ["http://www.w3.org"]


def test_real_exports_replay_and_say_who_signed_each_move() -> None:
    """The committed vectors: a real server's export, and the features vector, whose moves
    are signed by a player's key, a bot seat, a bot covering a player and the attest key."""
    kinds = set()
    for name in ("transcript-v1.json", "transcript-v1-features.json"):
        built = replay(Transcript.from_bytes((VECTORS / name).read_bytes()))
        movers = [p["mover"] for p in built.data["positions"][1:]]
        kinds |= {m["kind"] for m in movers}
        assert all(re.search(r"key [0-9a-f]{4}(-[0-9a-f]{4}){3}", m["by"]) for m in movers)
    assert kinds == {"player", "bot", "covered", "attested"}
    features = replay(Transcript.from_bytes((VECTORS / "transcript-v1-features.json").read_bytes()))
    attested = [
        p["mover"] for p in features.data["positions"][1:] if p["mover"]["kind"] == "attested"
    ]
    assert attested
    assert "server-attested" in attested[0]["by"]
    assert features.data["positions"][-1]["status"].startswith("Match over")  # a resignation
    assert features.data["positions"][-1]["face_up"]


def test_table_talk_is_shown_at_its_move_as_text_never_markup() -> None:
    """Talk (any printable text, markup included) reaches the page as data the script puts in
    as text, under the move it was said after."""
    from shared.rules import make_config
    from tests.vectors.generate import MatchBuilder

    config = make_config("classic", {"hands_per_match": 1})
    match = MatchBuilder("5eed0000replay0talk", config, {0: "Ann", 2: "Bob"}, 0)
    match.say(0, "we meld early", "conventions")
    match.cut()
    match.play(3)
    match.say(2, HOSTILE)
    match.play(100_000)
    transcript = match.transcript()
    assert transcript.end is not None  # over, and the end names the talk
    html = page(replay(transcript))
    assert HOSTILE not in html
    assert html.count("</script>") == 2
    steps = _data(html)["positions"]
    assert isinstance(steps, list)
    assert steps[0]["talk"] == ["Ann (seat 0) declares their side's conventions: we meld early"]
    assert steps[4]["talk"] == [f"Bob (seat 2) says: {HOSTILE}"]
    assert all(not step["talk"] for number, step in enumerate(steps) if number not in (0, 4))
