"""docs/rules.md follows the engine, and every rules citation in the repository resolves.

The page is written by hand, so these tests hold it to the engine through its public API
(``shared.rules``: ``RuleConfig``, ``CLASSIC``, ``PRESETS``, ``OPTION_NAMES``,
``OPTION_CHOICES``, ``make_config``), never through its private tables, so that they survive
the engine's modules moving:

* §2.1's tables list every option once, with its default, and its range or choices as
  ``make_config`` enforces them (found by trying values just inside and just outside);
* each preset's settings table in §3 lists exactly what ``PRESETS`` changes from classic;
* every ``name = value`` the page shows is a value ``make_config`` takes;
* every citation of a section ("RULES.md §1.8.2", "docs/rules.md §3.6", a bare "§3.8a",
  "D14", "SC27", an engine refusal's rule, a scenario's expected rule) and every link into
  the page names a section that the page has.
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from shared.rules import CLASSIC, OPTION_CHOICES, OPTION_NAMES, PRESETS, ConfigError, make_config

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rules.md"

# -- reading the page ---------------------------------------------------------------------


@cache
def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def section(number: str) -> str:
    """The text of ``§number`` up to the next heading of the same or a higher level."""
    lines = doc_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"#+ §{re.escape(number)} ", line))
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    end = next(
        (i for i in range(start + 1, len(lines)) if re.match(rf"#{{1,{level}}} ", lines[i])),
        len(lines),
    )
    return "\n".join(lines[start:end])


def table_rows(text: str) -> Iterator[list[str]]:
    """The cells of each table row of ``text`` whose first cell is a backticked name."""
    for line in text.splitlines():
        if re.match(r"\| `", line):
            yield [cell.strip() for cell in line.strip().strip("|").split(" | ")]


def slug(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


@cache
def anchors() -> frozenset[str]:
    return frozenset(slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", doc_text(), re.MULTILINE))


@cache
def section_ids() -> frozenset[str]:
    """Everything a citation may name: "1.8.2", "3.8a", "1.5 H3", "1.6 T1", "2", "D14",
    "SC27", "Appendix A", "Appendix A.3"."""
    ids: set[str] = set()
    current = ""
    appendix = False
    for line in doc_text().splitlines():
        heading = re.match(r"#+ (.+)$", line)
        if heading:
            title = heading.group(1)
            number = re.match(r"§(\d+(?:\.\d+)*[a-z]?) ", title)
            label = re.match(r"([HT]\d) ", title)
            appendix = title.startswith("Appendix A")
            if number:
                current = number.group(1)
                ids.add(current)
            elif label:
                ids.add(f"{current} {label.group(1)}")
            elif appendix:
                ids.add("Appendix A")
            continue
        row = re.match(r"\| (D\d+|SC\d\d) \|", line)
        if row:
            ids.add(row.group(1))
        item = re.match(r"(\d+)\. ", line)
        if appendix and item:
            ids.add(f"Appendix A.{item.group(1)}")
    return frozenset(ids)


# -- §2.1: every option, its default and its range ------------------------------------------


def option_rows() -> dict[str, tuple[str, str]]:
    """Option name -> (values cell, default cell) from §2.1's tables."""
    rows: dict[str, tuple[str, str]] = {}
    for cells in table_rows(section("2.1")):
        name = cells[0].strip("`")
        assert name not in rows, f"§2.1 lists {name} twice"
        rows[name] = (cells[1], cells[2].strip("`"))
    return rows


def accepted(name: str, value: Any, extra: Mapping[str, Any] | None = None) -> bool:
    """Whether some preset takes ``name = value`` (a bound may need a roomy preset)."""
    for preset in PRESETS:
        try:
            make_config(preset, {**(extra or {}), name: value})
        except ConfigError:
            continue
        return True
    return False


def refused(name: str, value: Any, extra: Mapping[str, Any] | None = None) -> bool:
    """Whether every preset refuses ``name = value``."""
    return not accepted(name, value, extra)


def test_every_option_is_listed_once_with_its_default() -> None:
    rows = option_rows()
    options = set(OPTION_NAMES) - {"preset"}
    assert set(rows) - options == set(), "§2.1 lists options the engine does not have"
    assert options - set(rows) == set(), "options missing from docs/rules.md §2.1"
    defaults = CLASSIC.to_dict(every=True)
    wrong = {
        name: (default, defaults[name])
        for name, (_, default) in rows.items()
        if json.loads(default) != defaults[name]
    }
    assert wrong == {}, "docs/rules.md §2.1 default (doc, engine)"


def _choices(cell: str) -> set[str]:
    return set(re.findall(r"`(\w+)`", cell))


INT_RANGE = re.compile(r"(-?\d+) to (-?\d+)(, or `null`)?")


def _kind(name: str, default: Any) -> str:
    if name in OPTION_CHOICES:
        return "choice"
    if isinstance(default, bool):
        return "bool"
    if name == "players":
        return "players"
    if default is None or isinstance(default, int):
        return "int"
    return "structured"


@pytest.mark.parametrize("name", sorted(set(OPTION_NAMES) - {"preset"}))
def test_an_options_values_are_what_make_config_allows(name: str) -> None:
    values, _ = option_rows()[name]
    default = CLASSIC.to_dict(every=True)[name]
    kind = _kind(name, default)
    if kind == "choice":
        assert _choices(values) == set(OPTION_CHOICES[name])
    elif kind == "bool":
        assert values == "`true` or `false`"
        assert refused(name, 1)
        assert refused(name, "true")
    elif kind == "players":
        listed = {int(n) for n in re.findall(r"`(\d+)`", values)}
        for count in range(1, 9):
            seats = {"partnerships": [[seat] for seat in range(count)]}
            assert accepted("players", count, seats) == (count in listed), count
    elif kind == "int":
        match = INT_RANGE.fullmatch(values)
        assert match, f"§2.1 {name}: write its range as 'LOW to HIGH[, or `null`]'"
        low, high = int(match.group(1)), int(match.group(2))
        assert accepted(name, low), f"{name}: {low} to {high}"
        assert accepted(name, high), f"{name}: {low} to {high}"
        assert refused(name, low - 1), f"{name}: {low} to {high}"
        assert refused(name, high + 1), f"{name}: {low} to {high}"
        assert accepted(name, None) == bool(match.group(3)), f"{name}: null"
    else:
        STRUCTURED[name](values)


def _numbers(pattern: str, cell: str) -> list[int]:
    match = re.search(pattern, cell)
    assert match, f"§2.1 should say {pattern!r}, it says {cell!r}"
    return [int(n) for n in match.groups()]


def _min_meld_table(cell: str) -> None:
    rows, score_low, score_high, low, high = _numbers(
        r"1 to (\d+) rows .*scores (-?\d+) to (-?\d+), minimums (\d+) to (\d+)", cell
    )

    def table(count: int, top_score: int = 0, minimum: int = 50) -> list[list[Any]]:
        return [[None, 15], *([top_score - rows + i, minimum] for i in range(1, count))]

    assert accepted("min_meld_table", table(rows))
    assert refused("min_meld_table", table(rows + 1))
    assert accepted("min_meld_table", [[None, low]])
    assert accepted("min_meld_table", [[None, high]])
    assert refused("min_meld_table", [[None, low - 1]])
    assert refused("min_meld_table", [[None, high + 1]])
    assert accepted("min_meld_table", [[None, 15], [score_low, 50]])
    assert accepted("min_meld_table", [[None, 15], [score_high, 50]])
    assert refused("min_meld_table", [[None, 15], [score_low - 1, 50]])
    assert refused("min_meld_table", [[None, 15], [score_high + 1, 50]])
    assert refused("min_meld_table", [[0, 15]]), "the first row is for negative scores"
    assert refused("min_meld_table", [[None, 15], [1500, 90], [0, 50]]), "rows ascend"


def _min_meld_by_hand(cell: str) -> None:
    count, low, high = _numbers(r"at most (\d+) minimums, each (\d+) to (\d+)", cell)
    assert accepted("min_meld_by_hand", [50] * count)
    assert refused("min_meld_by_hand", [50] * (count + 1))
    assert accepted("min_meld_by_hand", [low, high])
    assert refused("min_meld_by_hand", [low - 1])
    assert refused("min_meld_by_hand", [high + 1])


def _red3_special_totals(cell: str) -> None:
    rows, low, high, total_low, total_high = _numbers(
        r"up to (\d+) rows .*count (\d+) to (\d+) .*total (\d+) to (\d+)", cell
    )
    assert accepted("red3_special_totals", [[n, 100] for n in range(1, rows + 1)])
    assert refused("red3_special_totals", [[n, 100] for n in range(1, rows + 2)])
    assert accepted("red3_special_totals", [[low, total_low], [high, total_high]])
    assert refused("red3_special_totals", [[low - 1, 100]])
    assert refused("red3_special_totals", [[high + 1, 100]])
    assert refused("red3_special_totals", [[4, total_low - 1]])
    assert refused("red3_special_totals", [[4, total_high + 1]])
    assert refused("red3_special_totals", [[4, 800], [4, 900]]), "each count once"


def _unfrozen_take_methods(cell: str) -> None:
    methods = _choices(cell)
    assert accepted("unfrozen_take_methods", sorted(methods))
    for method in methods:
        assert accepted("unfrozen_take_methods", [method])
        assert refused("unfrozen_take_methods", [method, method]), "each once"
    assert refused("unfrozen_take_methods", [])
    assert refused("unfrozen_take_methods", ["run"])


def _partnerships(cell: str) -> None:
    assert "each seat in exactly one" in cell
    assert accepted("partnerships", [[0, 1], [2, 3]])
    assert refused("partnerships", [[0, 1], [1, 2, 3]]), "a seat twice"
    with pytest.raises(ConfigError):
        make_config("classic", {"partnerships": [[0, 2], [1]]})  # seat 3 in no side


STRUCTURED = {
    "min_meld_table": _min_meld_table,
    "min_meld_by_hand": _min_meld_by_hand,
    "red3_special_totals": _red3_special_totals,
    "unfrozen_take_methods": _unfrozen_take_methods,
    "partnerships": _partnerships,
}
"""How §2.1's words for each option that is a list are checked. A new list option fails
``test_an_options_values_are_what_make_config_allows`` until it has an entry here."""


# -- §3: each preset's settings -------------------------------------------------------------


def preset_tables() -> dict[str, dict[str, Any]]:
    """Preset -> the settings table under its ``<!-- preset-settings: NAME -->`` marker."""
    tables: dict[str, dict[str, Any]] = {}
    parts = re.split(r"<!-- preset-settings: (\w+) -->\n", doc_text())
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        table = body.split("\n\n")[0]
        assert name not in tables, f"two settings tables for {name}"
        tables[name] = {
            cells[0].strip("`"): json.loads(cells[1].strip("`")) for cells in table_rows(table)
        }
    return tables


def test_every_presets_settings_are_what_presets_changes() -> None:
    classic = CLASSIC.to_dict(every=True)
    changes = {
        preset: {k: v for k, v in config.items() if k != "preset" and v != classic[k]}
        for preset in PRESETS
        for config in [make_config(preset).to_dict(every=True)]
    }
    tables = preset_tables()
    assert set(tables) == {p for p, changed in changes.items() if changed}, (
        "one settings table in docs/rules.md §3 for each preset that changes an option"
    )
    for preset, table in tables.items():
        assert table == changes[preset], f"docs/rules.md settings of {preset}"


def test_every_setting_the_page_shows_is_one_make_config_takes() -> None:
    """`name = value` anywhere on the page: the name is an option and some preset takes the
    value (so an example cannot name an option or a choice that does not exist)."""
    shown = re.findall(r"`(\w+) = ([^`]+)`", doc_text())
    assert len(shown) > 30
    for name, value in shown:
        assert name in OPTION_NAMES, f"docs/rules.md shows `{name} = ...`: no such option"
        assert accepted(name, json.loads(value)), f"docs/rules.md: `{name} = {value}`"


def test_the_disagreements_and_the_scenarios_are_numbered_in_full() -> None:
    ids = section_ids()
    assert {f"D{n}" for n in range(1, 30)} <= ids
    assert {f"SC{n:02}" for n in range(1, 40)} <= ids
    listed = set(re.findall(r"`(sc\d\d_\w+\.json)`", section("4.2")))
    on_disk = {p.name for p in (ROOT / "tests" / "scenarios").glob("sc[0-9][0-9]_*.json")}
    assert listed == on_disk, "§4.2 names each numbered scenario file"


# -- citations ------------------------------------------------------------------------------

TEXT_SUFFIXES = {".py", ".pyi", ".md", ".json", ".proto", ".toml", ".txt", ".cfg", ".sh", ".yml"}
SKIP_DIRS = {"node_modules", "__pycache__", "build", "dist"}
SECTION = r"(\d+(?:\.\d+)*[a-z]?)"
CITED = re.compile(rf"§ ?{SECTION}(?: ([HT]\d)\b)?")
OTHER_DOCUMENT = re.compile(r"([\w./-]+\.md)\s*$")
"""A "§" right after another document's name ("DESIGN.md §4") cites that document."""
CITED_ELSEWHERE = re.compile(
    r"(?:RULES|rules)\.md (?:Part ([1-4])|(Appendix A(?:\.\d+)?)|(SC\d\d))"
)
NUMBERED = re.compile(r"\b(D\d{1,2}|SC\d\d)\b")


@cache
def repository_texts() -> tuple[tuple[Path, str], ...]:
    """Every text file of the checkout (caches, virtualenvs and hidden folders left out)."""
    found: list[tuple[Path, str]] = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(files):
            path = Path(folder) / name
            if path == Path(__file__).resolve():  # its examples of missing sections
                continue
            if path.suffix in TEXT_SUFFIXES or name in ("Makefile", "Dockerfile"):
                found.append((path, path.read_text(encoding="utf-8", errors="replace")))
    return tuple(found)


def citations(text: str) -> Iterator[str]:
    """Every section ``text`` cites, as ``section_ids`` spells them."""
    for m in CITED.finditer(text):
        before = OTHER_DOCUMENT.search(text[max(0, m.start() - 60) : m.start()])
        if before and not before.group(1).lower().endswith("rules.md"):
            continue
        yield m.group(1)
        if m.group(2):
            yield f"{m.group(1)} {m.group(2)}"
    for m in CITED_ELSEWHERE.finditer(text):
        yield m.group(1) or m.group(2) or m.group(3)
    for m in NUMBERED.finditer(text):
        yield m.group(1)


def test_citations_find_their_section() -> None:
    """ "RULES.md §1.8.2", "docs/rules.md §3.6", a bare "§3.8a" or "§1.5 H3", "Part 4",
    "Appendix A.3", "D14", "SC27": anywhere in the repository, each names a section."""
    ids = section_ids()
    missing = [
        f"{path.relative_to(ROOT)}: {cited}"
        for path, text in repository_texts()
        for cited in citations(text)
        if cited not in ids
    ]
    assert missing == [], "citations of sections docs/rules.md does not have"


def _engine_rules() -> Iterator[tuple[str, str]]:
    """The rule every refusal of the engine (``shared/rules`` and its subfolders) cites:
    ``SomethingError(message, "1.8.2")`` or ``rule="1.8.2"``."""
    for path in sorted((ROOT / "shared" / "rules").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if not name.endswith("Error"):
                continue
            args = [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "rule")]
            for arg in args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield f"{path.relative_to(ROOT)}:{node.lineno}", arg.value


def _expected_rules() -> Iterator[tuple[str, str]]:
    """The rule each scenario file expects an error to cite (``"illegal 1.11.3"``)."""
    for path in sorted((ROOT / "tests" / "scenarios").glob("*.json")):
        found = re.findall(r'"(?:illegal|phase|turn|notation) ([^" ]+)"', path.read_text())
        yield from ((path.name, rule) for rule in found)


def test_every_refusal_cites_a_section() -> None:
    engine = list(_engine_rules())
    assert len(engine) > 50
    expected = list(_expected_rules())
    assert len(expected) > 50
    ids = section_ids()
    assert [(where, rule) for where, rule in engine + expected if rule not in ids] == []


def test_links_into_the_page_find_their_heading() -> None:
    """``rules.md#anchor`` in any document, and the page's own contents (``#anchor``)."""
    links = [
        (str(path.relative_to(ROOT)), anchor)
        for path, text in repository_texts()
        if path.suffix == ".md"
        for anchor in re.findall(r"rules\.md#([\w-]+)", text)
    ]
    links += [("docs/rules.md", a) for a in re.findall(r"\]\(#([\w-]+)\)", doc_text())]
    assert len(links) > 20
    assert [link for link in links if link[1] not in anchors()] == []


def test_the_citation_checks_can_fail() -> None:
    """A citation of a section the page lacks is found, and another document's is not."""
    assert list(citations("see RULES.md §9.9 and §1.6 T7")) == ["9.9", "1.6", "1.6 T7"]
    assert list(citations("DESIGN.md §4; rules.md Part 3, SC40, D30")) == [
        "3",
        "SC40",
        "D30",
    ]
    ids = section_ids()
    assert {"9.9", "1.6 T7", "SC40", "D30"}.isdisjoint(ids)
    assert {"1.8.2", "3.8a", "1.5 H3", "1.6 T1", "2", "4", "Appendix A.3"} <= ids


def test_the_engine_example_runs_as_written() -> None:
    """The page's Python example (its first ``python`` block, "Using the rules engine") runs
    against the engine as printed: every call it shows exists and takes what it is given."""
    blocks = re.findall(r"^```python\n(.*?)^```$", doc_text(), re.MULTILINE | re.DOTALL)
    assert blocks, "docs/rules.md shows no Python example"
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], str(DOC), "exec"), namespace)
    assert namespace["hand"].split()
    assert namespace["view"].seat == namespace["seat"]
