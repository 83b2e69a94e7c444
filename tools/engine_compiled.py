"""The opt-in compiled rules engine: ``make engine-compiled`` and ``make engine-pure``.

``python -m tools.engine_compiled build`` compiles the engine's hot modules (``MODULES``)
with mypyc (shipped with mypy, a dev dependency) and gcc, in place: each module gets an
extension next to its source (``shared/rules/engine.cpython-311-...so``), which Python
imports instead of the ``.py``, and one shared library holds their code
(``shared/rules/native__mypyc...so``). The C sources and objects go to ``.venv/engine-build``.
``pure`` removes the extensions, so the checkout runs the pure-Python engine again;
``status`` says which one runs. The sources stay the engine's one definition: the build
records a hash of each (``shared/rules/compiled.json``) and ``shared.rules`` refuses to
import a build older than its sources (``shared.rules.compiled_stale``).

The modules left out are the ones mypyc's semantics would change (``errors``: a compiled
exception class loses its class attribute ``kind``) or that are not on the hot path (the
package face, scenarios, notation, views).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RULES = REPO / "shared" / "rules"
STAMP = RULES / "compiled.json"
BUILD = REPO / ".venv" / "engine-build"
LEFT_OUT = {"__init__.py", "errors.py", "scenario.py", "notation.py", "view.py"}


def modules(root: Path = REPO) -> list[Path]:
    """The compiled modules' sources, relative to ``root``."""
    rules = root / "shared" / "rules"
    found = [p for p in sorted(rules.glob("*.py")) if p.name not in LEFT_OUT]
    found += sorted((rules / "variants").rglob("*.py"))
    return [p.relative_to(root) for p in found]


def source_hashes(root: Path = REPO) -> dict[str, str]:
    return {str(p): hashlib.sha256((root / p).read_bytes()).hexdigest()[:16] for p in modules(root)}


def extensions(root: Path = REPO) -> list[Path]:
    return sorted((root / "shared" / "rules").rglob("*.so"))


def pure(root: Path = REPO) -> None:
    for path in extensions(root):
        path.unlink()
    (root / "shared" / "rules" / "compiled.json").unlink(missing_ok=True)


def build(root: Path = REPO) -> None:
    """Compile ``modules()`` in place under ``root`` (a checkout of this project)."""
    from mypyc.build import mypycify  # (mypy's compiler: a dev dependency)
    from setuptools import setup  # type: ignore[import-untyped]

    pure(root)
    here = Path.cwd()
    os.chdir(root)  # mypyc names modules by their paths from here
    build_dir = root / ".venv" / "engine-build"
    try:
        sources = [str(p) for p in modules(root)]
        built = mypycify(
            ["--strict", *sources],
            opt_level="3",
            multi_file=True,  # several C files, built in parallel below
            group_name="shared.rules.native",
            target_dir=str(build_dir / "c"),
        )
        for extension in built:  # (mypyc writes the group's headers under the group's path)
            extension.include_dirs.append(str(build_dir / "c" / "shared" / "rules"))
        setup(
            name="canasta-engine-compiled",
            ext_modules=built,
            script_args=[
                "--quiet",
                "build_ext",
                "--inplace",
                "--parallel",
                str(os.cpu_count() or 1),
                "--build-temp",
                str(build_dir / "tmp"),
            ],
        )
    finally:
        os.chdir(here)
    (root / "shared" / "rules" / "compiled.json").write_text(
        json.dumps(source_hashes(root), indent=1, sort_keys=True) + "\n"
    )


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "status"
    if command == "build":
        build()
        print(f"compiled {len(modules())} engine modules: {len(extensions())} extensions")
    elif command == "pure":
        pure()
        print("the pure-Python engine runs (compiled extensions removed)")
    elif command == "status":
        print("compiled" if extensions() else "pure Python")
    else:
        raise SystemExit(f"unknown command {command!r}: build, pure or status")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
