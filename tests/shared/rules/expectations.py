"""Checking a played scenario against its ``expect`` block: the scenario tests' oracle.

``check_expectations`` compares what ``shared.rules.scenario.play`` produced (the report and
the position after every action) with what the file says docs/rules.md requires, and lists every
difference. The ``expect`` keys are documented with the file format in
``shared/rules/scenario.py``; only the test suite reads them (the command-line runner ignores
them), so the checker lives beside the tests that use it, not in the engine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from shared.rules.cards import SORT_KEY, card_text, parse_card
from shared.rules.scenario import (
    Replay,
    Scenario,
    describe,
    read_cards,
    read_int,
    read_list,
    read_mapping,
)

_EXPECT_KEYS = frozenset({"results", "message_contains", "end", "match", "state", "states"})
_STATE_KEYS = frozenset(
    {
        "phase", "turn", "actor", "stock_size", "stock_top", "stock_bottom", "pile",
        "pile_frozen", "hands", "hand_contains", "hand_sizes", "melds", "red3", "canastas",
        "opened", "permission", "must_go_out", "scores", "target", "winners", "hand_number",
        "dealer", "side_of", "talon_sizes", "foot_sizes",
    }
)  # fmt: skip


def check_expectations(scenario: Scenario, replay: Replay) -> list[str]:
    """Every way the replay differs from ``scenario.expect`` (empty: all as expected)."""
    expect = scenario.expect
    problems = [f"unknown expect key {k!r}" for k in sorted(set(expect) - _EXPECT_KEYS)]
    report = replay.report
    actions = report["actions"]
    if "results" in expect:
        wanted = read_list(expect["results"], "expect.results")
        if len(wanted) != len(actions):
            problems.append(f"expect.results has {len(wanted)} entries for {len(actions)} actions")
        for number, (want, got) in enumerate(zip(wanted, actions, strict=False), 1):
            problems.extend(_check_result(number, want, got))
    if "message_contains" in expect:
        for number, (want, got) in enumerate(
            zip(
                read_list(expect["message_contains"], "expect.message_contains"),
                actions,
                strict=False,
            ),
            1,
        ):
            if want is not None and want.lower() not in got.get("message", "").lower():
                problems.append(
                    f"action {number} ({got['action']}): message {got.get('message')!r} "
                    f"does not contain {want!r}"
                )
    if "end" in expect:
        problems.extend(_check_end(expect["end"], report["hand"]))
    if "match" in expect:
        for key, want in read_mapping(expect["match"], "expect.match").items():
            if report["match"].get(key) != want:
                problems.append(f"match {key}: expected {want!r}, got {report['match'].get(key)!r}")
    checks = [dict(c) for c in read_list(expect.get("states", []), "expect.states")]
    if "state" in expect:
        checks.append({**read_mapping(expect["state"], "expect.state"), "after": len(actions)})
    for check in checks:
        after = read_int(check.pop("after", None), "expect.states[].after")
        if not 0 <= after < len(replay.states):
            problems.append(f"expect.states: no position after action {after}")
            continue
        summary = describe(replay.states[after])
        for key, want in check.items():
            problems.extend(f"after action {after}: {p}" for p in _check_state(key, want, summary))
    return problems


def _check_result(number: int, want: Any, got: Mapping[str, Any]) -> list[str]:
    kind, _, rule = str(want).partition(" ")
    where = f"action {number} [{got['seat']}, {got['action']!r}]"
    if kind == "ok":
        if got["result"] != "ok":
            return [f"{where}: expected ok, got {got['kind']}: {got['message']}"]
        return []
    if got["result"] == "ok":
        return [f"{where}: expected {want}, but it was accepted"]
    if got["kind"] != kind or (rule and got["rule"] != rule):
        return [f"{where}: expected {want}, got {got['kind']} {got['rule']}: {got['message']}"]
    return []


def _check_end(want: Any, hand: Mapping[str, Any] | None) -> list[str]:
    if want is None:
        return (
            [] if hand is None else [f"the hand was expected to go on but ended: {hand['reason']}"]
        )
    if hand is None:
        return ["the hand was expected to end but is still going on"]
    problems = []
    for key, value in read_mapping(want, "expect.end").items():
        if key == "columns":
            columns = read_list(value, "expect.end.columns")
            if len(columns) != len(hand["columns"]):
                problems.append(f"expect.end.columns has {len(columns)} entries")
            for col_want, col_got in zip(columns, hand["columns"], strict=False):
                for k, v in read_mapping(col_want, "expect.end.columns[]").items():
                    got = col_got.get(k)
                    if got != v:
                        column = col_got["column"]
                        problems.append(f"column {column} {k}: expected {v!r}, got {got!r}")
        elif hand.get(key) != value:
            problems.append(f"hand {key}: expected {value!r}, got {hand.get(key)!r}")
    return problems


def _norm(cards: Any, key: str) -> list[str]:
    return [card_text(c) for c in read_cards(cards, f"expect {key}")]


def _bag(cards: Any, key: str) -> list[str]:
    return sorted(_norm(cards, key), key=lambda t: SORT_KEY[parse_card(t)])


def _check_state(key: str, want: Any, summary: Mapping[str, Any]) -> list[str]:
    if key not in _STATE_KEYS:
        return [f"unknown state key {key!r}"]
    if key == "stock_top":
        expected = _norm(want, key)
        got: Any = summary["stock"][: len(expected)]
    elif key == "stock_bottom":
        expected = _norm(want, key)
        got = summary["stock"][len(summary["stock"]) - len(expected) :]
    elif key == "pile":
        expected, got = _norm(want, key), summary["pile"]
    elif key in ("hands", "red3"):
        return _per_item(key, want, summary[key], lambda w, g: _bag(w, key) == _bag(g, key))
    elif key == "hand_contains":
        return _per_item(key, want, summary["hands"], lambda w, g: _contains(g, _norm(w, key)))
    elif key == "melds":
        return _per_item(key, want, summary["melds"], lambda w, g: _meld_set(w) == _meld_set(g))
    elif isinstance(want, list):
        return _per_item(key, want, summary[key], lambda w, g: bool(w == g))
    else:
        expected, got = want, summary[key]
    return [] if expected == got else [f"{key}: expected {expected!r}, got {got!r}"]


def _per_item(key: str, want: Any, got: list[Any], same: Any) -> list[str]:
    items = read_list(want, f"expect {key}")
    if len(items) != len(got):
        return [f"{key}: expected {len(items)} entries, the position has {len(got)}"]
    return [
        f"{key}[{i}]: expected {w!r}, got {g!r}"
        for i, (w, g) in enumerate(zip(items, got, strict=True))
        if w is not None and not same(w, g)
    ]


def _contains(hand: list[str], cards: list[str]) -> bool:
    return not Counter(cards) - Counter(hand)


def _meld_set(melds: Any) -> list[list[str]]:
    return sorted(_bag(m, "melds") for m in read_list(melds, "expect melds"))
