"""The opt-in compiled engine (``make engine-compiled``, tools/engine_compiled.py) plays by the
same rules as the pure-Python one.

One slow test copies the checkout's engine, its tests and the tools to a temporary directory,
compiles the hot modules there with mypyc, and runs there, against the compiled modules: the
engine's tests (scenarios, properties, playouts of the inner loop), and the listing digest
of seeded random and bot play of every preset (bench/listing_digest.py), which must equal the
pure-Python engine's here, action for action. The checkout itself stays pure Python.

A fast test checks the pure-Python stand-ins the build relies on: ``GameState._clone`` as
written (what the compiled class runs) copies every field, as the generated one does,
and a stale build is refused.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shared.rules import compiled_stale, deal_hand, make_config, new_match, shuffled_deck
from shared.rules.state import WRITTEN_CLONE, GameState

REPO = Path(__file__).resolve().parents[3]
COPIED = ("shared", "tests", "tools", "bench", "docs", "pyproject.toml")
DIGEST_HANDS = "3"


def _copy_checkout(target: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "compiled.json", ".hypothesis")
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
        else:
            shutil.copy2(source, target / name)


def _run(args: list[str], cwd: Path) -> str:
    env = {**os.environ, "CANASTA_INNER_LOOP": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout


@pytest.mark.slow  # a mypyc build (about a minute of CPU) and the engine's tests again
def test_compiled_engine_passes_the_engine_tests(tmp_path: Path) -> None:
    _copy_checkout(tmp_path)
    _run([sys.executable, "-m", "tools.engine_compiled", "build"], tmp_path)
    probe = "import shared.rules.state as s, shared.rules.legal as l; print(s.COMPILED, l.__file__)"
    out = _run([sys.executable, "-c", probe], tmp_path)
    assert out.startswith("True "), out
    assert out.strip().endswith(".so"), out
    _run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/shared/rules",
            "-m",
            "not slow and not postgres",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
        ],
        tmp_path,
    )
    digest = [sys.executable, "bench/listing_digest.py"]
    compiled = _run([*digest, str(tmp_path), DIGEST_HANDS], tmp_path)
    pure = _run([*digest, str(REPO), DIGEST_HANDS], REPO)
    assert compiled == pure


def test_the_clone_a_compiled_build_runs_copies_every_field() -> None:
    config = make_config("samba")
    state = deal_hand(new_match(config, seed=3), shuffled_deck(config, 3))
    values = {f.name: getattr(state, f.name) for f in dataclasses.fields(GameState)}
    # every field a value of its own, so a field the constructor form missed would show
    marked = dataclasses.replace(state, lone_seat=2, turn_new_ranks=5, permission="no")
    for clone in (GameState._clone, WRITTEN_CLONE):
        assert clone(marked) == marked
        assert clone(state) == state
        assert clone(state) is not state
    assert values == {f.name: getattr(state, f.name) for f in dataclasses.fields(GameState)}


def test_a_build_older_than_its_sources_is_refused(tmp_path: Path) -> None:
    rules = tmp_path / "shared" / "rules"
    rules.mkdir(parents=True)
    assert compiled_stale(rules) is None  # no build: pure Python
    (rules / "native__mypyc.so").write_bytes(b"")
    assert "no record" in (compiled_stale(rules) or "")
    (rules / "engine.py").write_text("x = 1\n")
    (rules / "compiled.json").write_text('{"shared/rules/engine.py": "0000000000000000"}')
    assert "shared/rules/engine.py changed" in (compiled_stale(rules) or "")
