"""docs/rules.md §4 worked scenarios, played from the JSON files in tests/scenarios.

Each file (and each of its variants) is dealt and played by ``shared.rules.scenario``; its
``expect`` block says what docs/rules.md requires, and ``expectations.check_expectations`` (beside
this file) compares the two. A scenario on which the engine is known to disagree with docs/rules.md
is listed in ``ENGINE_BUGS`` and marked as a strict xfail, so that it starts failing (and must
be removed from the list) once the engine is fixed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shared.rules import CanastaError, check, parse_turn
from shared.rules.scenario import (
    ScenarioError,
    load_scenario,
    play,
    run_scenario,
    variant_names,
)
from tests.shared.rules.expectations import check_expectations

REPO_ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = REPO_ROOT / "tests" / "scenarios"
FILES = sorted(SCENARIOS.glob("*.json"))

ENGINE_BUGS: dict[str, str] = {}
"""Scenario id ("file stem" or "file stem[variant]") -> reason of its strict xfail."""


def _load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _cases(*, mark_bugs: bool = True) -> list[Any]:
    cases = []
    for path in FILES:
        data = _load(path)
        for variant in [None, *variant_names(data)]:
            case_id = path.stem if variant is None else f"{path.stem}[{variant}]"
            marks = []
            if mark_bugs and case_id in ENGINE_BUGS:
                marks.append(pytest.mark.xfail(strict=True, reason=ENGINE_BUGS[case_id]))
            cases.append(pytest.param(path, variant, id=case_id, marks=marks))
    return cases


@pytest.mark.parametrize(("path", "variant"), _cases())
def test_scenario(path: Path, variant: str | None) -> None:
    scenario = load_scenario(_load(path), variant)
    replay = play(scenario)
    problems = check_expectations(scenario, replay)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("path", "variant"), _cases(mark_bugs=False))
def test_check_agrees_with_apply(path: Path, variant: str | None) -> None:
    """``check`` (with its shortcut validation) refuses exactly what ``apply`` refuses."""
    scenario = load_scenario(_load(path), variant)
    replay = play(scenario)
    for number, ((seat, text), entry) in enumerate(
        zip(scenario.actions, replay.report["actions"], strict=True)
    ):
        try:
            actions = parse_turn(text)
        except CanastaError:
            continue
        if len(actions) != 1:
            continue
        before = replay.states[number]
        if entry["result"] == "ok":
            check(before, seat, actions[0])  # raises if check refuses what apply accepted
        else:
            with pytest.raises(CanastaError) as refused:
                check(before, seat, actions[0])
            assert (refused.value.kind, refused.value.rule) == (entry["kind"], entry["rule"]), text


def test_every_scenario_documents_its_rule_and_checks_something() -> None:
    assert len(FILES) >= 30
    for path in FILES:
        data = _load(path)
        # §4's numbered scenarios, and a variant's own rules (§3.4-§3.7) by its name
        prefixes = ("sc0", "sc1", "sc2", "sc3", "samba_", "bolivia_", "modern_american_",
                    "hand_and_foot_")  # fmt: skip
        assert path.name.startswith(prefixes), path.name
        assert "docs/rules.md" in data.get("rule", ""), (
            f"{path.name}: name the docs/rules.md section"
        )
        assert data.get("description"), f"{path.name}: describe what the scenario shows"
        expects = [data.get("expect", {})] + [v.get("expect", {}) for v in data.get("variants", [])]
        assert all(expects), f"{path.name}: every variant needs an expect block"


def test_refused_action_leaves_the_position_unchanged() -> None:
    data = _load(SCENARIOS / "sc22_no_canasta_no_empty_hand.json")
    replay = play(load_scenario(data))
    results = [a["result"] for a in replay.report["actions"]]
    refused = results.index("error")
    assert replay.states[refused + 1] == replay.states[refused]


def test_run_scenario_reports_the_hand_breakdown() -> None:
    report = run_scenario(_load(SCENARIOS / "sc23_wild_final_discard.json"))
    assert [a["result"] for a in report["actions"]] == ["ok"] * len(report["actions"])
    hand = report["hand"]
    assert hand["reason"] == "went_out"
    keys = {
        "column", "seats", "meld_points", "natural_canastas", "mixed_canastas", "canasta_bonus",
        "red_threes", "red_three_points", "going_out_bonus", "hand_penalty", "hand_total",
        "cumulative",
    }  # fmt: skip
    assert all(keys <= set(col) for col in hand["columns"])
    assert report["match"]["phase"] in ("deal", "match_over")


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shared.rules.scenario", *args],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=REPO_ROOT,
        timeout=60,
        check=False,
    )


def test_cli_prints_the_report_as_json() -> None:
    path = SCENARIOS / "sc22_no_canasta_no_empty_hand.json"
    result = _cli(str(path))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report == run_scenario(_load(path))
    errors = [a for a in report["actions"] if a["result"] == "error"]
    assert errors
    assert errors[0]["kind"] == "illegal"
    assert errors[0]["rule"] == "1.11.3"


def test_cli_plays_a_variant_and_reads_stdin() -> None:
    path = SCENARIOS / "sc24_partner_says_no.json"
    data = _load(path)
    name = variant_names(data)[0]
    result = _cli("--variant", name, "-", stdin=path.read_text(encoding="utf-8"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == run_scenario(data, name)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{not json", "not valid JSON"),
        ('{"preset": "canasta_royale", "deal": {"hands": []}}', "unknown preset"),
        ('{"options": {"no_such_option": 1}, "deal": {"hands": []}}', "unknown rule option"),
        ('{"deal": {"hands": ["4c", "4d", "4h", "4s"], "pile": ["zz"]}}', "could not read"),
        ('{"deal": {"hands": ["4c 5c", [], [], []]}}', "holds 2 cards"),
        ('{"deal": {"hands": ["jk jk jk jk jk", "4c", "4d", "4h"], "pile": ["5c"]}}', "copies"),
        ('{"deal": {"hands": ["4c", "4d", "4h"], "pile": ["5c"]}}', "one entry per seat"),
        (
            '{"deal": {"hands": ["4c", "4d", "4h", "4s"], "pile": ["5c"]}, "actions": [7]}',
            "action 1",
        ),
        ('{"colour": 1, "deal": {"hands": []}}', "unknown key"),
        ("[1, 2]", "one JSON object"),
    ],
)
def test_cli_refuses_a_bad_file_with_one_line(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    result = _cli(str(path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert needle in result.stderr


def test_cli_unreadable_file() -> None:
    result = _cli(str(SCENARIOS / "no_such_file.json"))
    assert result.returncode == 2
    assert "cannot read" in result.stderr
    assert "Traceback" not in result.stderr


def test_load_scenario_raises_scenario_error() -> None:
    with pytest.raises(ScenarioError, match="unknown preset"):
        load_scenario({"preset": "canasta_royale", "deal": {"hands": []}})


@pytest.mark.parametrize(
    ("preset", "deal", "message"),
    [
        ("classic", {"talon": [[], []]}, "has no talon"),
        ("classic", {"talon_owed": [0, 1, 0, 0]}, "has no talon"),
        ("modern_american", {"talon": [["4c", "5c"], []]}, "packets of 4 and 3"),
    ],
)
def test_a_talon_belongs_to_modern_american_in_its_packets(
    preset: str, deal: dict[str, object], message: str
) -> None:
    """§3.6: only Modern American sets bonus cards aside, four for the first opener and
    three for the second; a scenario naming others is refused, not half played."""
    hands = [["4d"], ["5d"], ["6d"], ["7d"]]  # mid-hand: a pile is given
    with pytest.raises(ScenarioError, match=message):
        load_scenario({"preset": preset, "deal": {"hands": hands, "pile": ["9c"], **deal}})


def test_module_docstring_example_plays_as_documented() -> None:
    import shared.rules.scenario as module

    doc = module.__doc__ or ""
    start = doc.index("::\n\n") + 4
    end = doc.index("\nThe report")
    data = json.loads(doc[start:end])
    scenario = load_scenario(data)
    assert check_expectations(scenario, play(scenario)) == []
