"""docs/transcript.md and docs/fair-deal.md against the code: the table of rule options is
the one generated here from ``shared/rules/config.py`` (a new option, range or default fails
this test until the table is regenerated: ``python -m tests.shared.test_transcript_docs``),
and the figures the pages state are the code's."""

from __future__ import annotations

import json
import re
from pathlib import Path

from shared.rules.config import (
    _BOOLS,
    _INT_RANGES,
    _OPTIONAL,
    CLASSIC,
    HAND_MINIMUM_ROWS,
    LATER_OPTIONS,
    MIN_MELD_ROWS,
    MIN_MELD_SCORES,
    MIN_MELD_VALUES,
    OPTION_CHOICES,
    OPTION_NAMES,
    PLAYER_COUNTS,
    PRESETS,
    RED3_COUNTS,
    RED3_TOTAL_ROWS,
    RED3_TOTALS,
    TAKE_METHODS,
    _to_json,
)
from shared.rules.notation import MAX_ACTION_TEXT
from shared.transcript import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_HEADER_BYTES,
    MAX_OUTCOME_BYTES,
    MAX_SEQ,
)
from shared.wire import MAX_ACTIONS_PER_MOVE, MAX_PAYLOAD_BYTES

DOCS = Path(__file__).resolve().parents[2] / "docs"
BEGIN, END = "<!-- options: generated -->", "<!-- options: end -->"

_STRUCTURED = {
    "preset": f"text: one of {', '.join(f'`{p}`' for p in PRESETS)}",
    "players": f"integer: one of {', '.join(map(str, PLAYER_COUNTS))}",
    "partnerships": "list of sides, each a list of seats: every seat once",
    "min_meld_table": (
        f"list of 1 to {MIN_MELD_ROWS} rows `[lowest score, minimum]`: the first row's lowest "
        f"score `null`, the others ascending integers {MIN_MELD_SCORES[0]} to "
        f"{MIN_MELD_SCORES[1]}; minimums {MIN_MELD_VALUES[0]} to {MIN_MELD_VALUES[1]}"
    ),
    "red3_special_totals": (
        f"list of 0 to {RED3_TOTAL_ROWS} rows `[count, total]`, counts {RED3_COUNTS[0]} to "
        f"{RED3_COUNTS[1]} each once, totals {RED3_TOTALS[0]} to {RED3_TOTALS[1]}"
    ),
    "unfrozen_take_methods": (
        f"list of 1 to 3 of {', '.join(f'`{m}`' for m in TAKE_METHODS)}, each once"
    ),
    "min_meld_by_hand": (
        f"list of 0 to {HAND_MINIMUM_ROWS} integers {MIN_MELD_VALUES[0]} to {MIN_MELD_VALUES[1]}"
    ),
}


def _allowed(name: str) -> str:
    if name in _STRUCTURED:
        return _STRUCTURED[name]
    if name in OPTION_CHOICES:
        return "text: one of " + ", ".join(f"`{c}`" for c in OPTION_CHOICES[name])
    if name in _INT_RANGES:
        low, high = _INT_RANGES[name]
        return f"integer {low} to {high}" + (", or `null`" if name in _OPTIONAL else "")
    if name in _BOOLS:
        return "`true` or `false`"
    raise AssertionError(f"option {name} has no description: add it to _STRUCTURED")


def options_table() -> str:
    """The table of every field of a header's ``rules``, from the engine's own definitions."""
    rows = [
        "| option | allowed values | default | may be absent |",
        "|---|---|---|---|",
    ]
    for name in OPTION_NAMES:
        default = json.dumps(_to_json(getattr(CLASSIC, name)), separators=(",", ":"))
        absent = "yes" if name in LATER_OPTIONS else "no"
        rows.append(f"| `{name}` | {_allowed(name)} | `{default}` | {absent} |")
    return "\n".join(rows)


def _generated(page: str) -> str:
    text = (DOCS / page).read_text()
    return text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip()


def test_the_options_table_is_generated_from_the_engine() -> None:
    assert _generated("transcript.md") == options_table(), (
        "docs/transcript.md's option table is stale: "
        "run python -m tests.shared.test_transcript_docs"
    )


def test_the_bounds_the_page_states_are_the_codes() -> None:
    text = (DOCS / "transcript.md").read_text()
    for figure, value in [
        ("MAX_FILE_BYTES", MAX_FILE_BYTES),
        ("MAX_HEADER_BYTES", MAX_HEADER_BYTES),
        ("MAX_OUTCOME_BYTES", MAX_OUTCOME_BYTES),
        ("MAX_DEPTH", MAX_DEPTH),
        ("MAX_PAYLOAD_BYTES", MAX_PAYLOAD_BYTES),
        ("MAX_ACTIONS_PER_MOVE", MAX_ACTIONS_PER_MOVE),
        ("MAX_ACTION_TEXT", MAX_ACTION_TEXT),
        ("MAX_SEQ", MAX_SEQ),
    ]:
        stated = re.search(rf"`{figure}` = ([0-9,^ -]+)`?", text)
        assert stated is not None, figure
        written = stated.group(1).strip().replace(",", "").replace(" ", "")
        number = 2**63 - 1 if written == "2^63-1" else int(written)
        assert number == value, figure


def test_the_pages_name_the_vectors_as_they_are() -> None:
    """The entry counts the page gives for each vector are the files'."""
    from shared.transcript import Transcript

    text = (DOCS / "transcript.md").read_text()
    vectors = DOCS.parent / "tests" / "vectors"
    for name, count in re.findall(r"`(transcript-v1[a-z-]*\.json)`[^|\n]*?\| (\d+) \|", text):
        assert len(Transcript.from_bytes((vectors / name).read_bytes()).entries) == int(count)
    assert len(re.findall(r"`(transcript-v1[a-z-]*\.json)`", text)) >= 4


if __name__ == "__main__":
    print(options_table())


def test_the_deck_sizes_fair_deal_md_states_are_the_presets() -> None:
    from shared.rules import make_config

    text = (DOCS / "fair-deal.md").read_text()
    assert "108 in the four-player\nclassic game" in text
    assert make_config("classic").deck_size == 108
    for preset in ("six_2x3", "samba", "bolivia"):
        assert make_config(preset).deck_size == 162
    assert make_config("hand_and_foot").deck_size == 270
    assert "162 for six players, Samba and Bolivia (3 packs), 270 in\nHand and Foot" in text
