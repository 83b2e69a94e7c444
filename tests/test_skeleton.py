"""The project's skeleton: installed entry points, and the rules engine's import boundary."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
RULES_DIR = REPO_ROOT / "shared" / "rules"
SCRIPTS_DIR = Path(sys.executable).parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)


def _script(name: str) -> str:
    path = shutil.which(name, path=str(SCRIPTS_DIR))
    assert path is not None, f"{name} is not installed beside {sys.executable}"
    return path


@pytest.mark.parametrize(
    ("script", "command"),
    [
        ("canasta", "version"),
        # the server's whole command line loads in a second: make test only
        pytest.param("canasta-server", "serve", marks=pytest.mark.slow),
    ],
)
def test_console_script_help(script: str, command: str) -> None:
    result = _run(_script(script), "--help")
    assert result.returncode == 0, result.stderr
    assert f"Usage: {script}" in result.stdout
    assert command in result.stdout


@pytest.mark.slow  # the server's whole command line loads in a second: make test only
def test_python_dash_m_server_help() -> None:
    result = _run(sys.executable, "-m", "server", "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout
    assert "serve" in result.stdout


def test_client_version_prints_package_version() -> None:
    from importlib.metadata import version

    result = _run(_script("canasta"), "version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"canasta {version('canasta')}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported_modules(path: Path) -> list[str]:
    """Absolute dotted names that the file imports (relative imports resolved)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = [node.module] if node.module else []
            if node.level > 0:
                base = package.split(".")
                parts = base[: len(base) - (node.level - 1)] + parts
            names.extend(".".join([*parts, alias.name]) for alias in node.names)
    return names


@pytest.mark.skipif(not RULES_DIR.is_dir(), reason="shared/rules does not exist yet")
def test_rules_engine_imports_only_the_standard_library() -> None:
    offenders: list[str] = []
    for path in sorted(RULES_DIR.rglob("*.py")):
        for name in _imported_modules(path):
            top = name.partition(".")[0]
            own = name == "shared.rules" or name.startswith("shared.rules.")
            if not own and top not in sys.stdlib_module_names:
                offenders.append(f"{path.relative_to(REPO_ROOT)}: {name}")
    assert not offenders, "shared/rules must import only the standard library:\n" + "\n".join(
        offenders
    )


SERVER_DIR = REPO_ROOT / "server"
WIRE_ONLY = ("grpc", "grpc_health", "grpc_reflection", "google.protobuf", "shared.pb",
             "shared.protocol")  # fmt: skip
"""What only the edge may import: gRPC, protobuf and its message classes (``shared.wire``,
which converts engine values to and from messages, is the one door)."""
NETWORK_ONLY = ("socket", "ssl", "smtplib", "http", "urllib.request", "aiosmtpd")
"""What only the edge may import besides gRPC: sockets and the network protocols (SMTP in and
out, webhooks over HTTP). The service decides what to send; the edge carries it (issue 29)."""
DATABASE_ONLY = ("sqlalchemy", "sqlmodel", "alembic", "psycopg", "sqlite3")
"""What only the store may import: the database libraries (the store raises its own errors,
``server.store.errors``, and hands the rooms above records, never rows; issue 29)."""


def _starts(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _server_files(*parts: str) -> list[Path]:
    return sorted((SERVER_DIR.joinpath(*parts)).rglob("*.py"))


@pytest.mark.parametrize(
    ("room", "forbidden"),
    [
        (
            "service",
            (
                *WIRE_ONLY,
                *NETWORK_ONLY,
                *DATABASE_ONLY,
                "server.edge",
                "server.app",
                "server.__main__",
            ),
        ),
        ("edge", DATABASE_ONLY),
        ("store", (*WIRE_ONLY, "server.edge", "server.service", "server.app", "server.__main__")),
    ],
)
def test_the_server_rooms_import_inward_only(room: str, forbidden: tuple[str, ...]) -> None:
    """The edge may use the service and the store, the service the store; never the other
    way, nothing below the edge knows gRPC or protobuf (issue 11) or opens a socket, and nothing
    above the store knows the database libraries (issue 29)."""
    offenders = [
        f"{path.relative_to(REPO_ROOT)}: {name}"
        for path in _server_files(room)
        for name in _imported_modules(path)
        if _starts(name, forbidden)
    ]
    assert _server_files(room), f"server/{room} has no modules"
    assert not offenders, f"server/{room} imports what it must not:\n" + "\n".join(offenders)


def test_the_domain_records_and_settings_import_no_room() -> None:
    rooms = (*WIRE_ONLY, "server.edge", "server.service", "server.store", "server.app")
    offenders = [
        f"{path.name}: {name}"
        for path in (SERVER_DIR / "domain.py", SERVER_DIR / "config.py", SERVER_DIR / "keys.py")
        for name in _imported_modules(path)
        if _starts(name, rooms)
    ]
    assert not offenders, "\n".join(offenders)


SERVICE_GROUND = ("context", "errors", "matches", "spectators", "clocks", "periodic")
"""The service's ground: the modules every wing stands on (``server/service/__init__.py``)."""
SERVICE_WINGS: dict[str, tuple[str, ...]] = {
    "news": (),
    "live": (),
    "play": ("news",),
    "mail": ("play", "news"),
    "people": ("play", "news"),
}
"""Each wing of the service and the wings below it that it may use (besides the ground and
itself). ``wings`` (the object holding them all, which the edge calls) may use every one."""
SERVICE_TOP = "wings"


def _service_place(module: str) -> str | None:
    """Where a ``server.service`` module stands: ``ground``, a wing's name, ``wings`` (the
    top), or None for a module of no known place (a new one must be given a place)."""
    parts = module.split(".")
    if parts[:2] != ["server", "service"]:
        return None
    if len(parts) == 2:
        return SERVICE_TOP  # the package's face: only a docstring
    if parts[2] in SERVICE_GROUND:
        return "ground"
    if parts[2] in SERVICE_WINGS or parts[2] == SERVICE_TOP:
        return parts[2]
    return None


def service_arrows_up(imports: dict[str, list[str]]) -> list[str]:
    """Every import of a ``server.service`` module (``imports``: module -> the names it
    imports) that runs up or sideways: from the ground to a wing, from a wing to one not
    below it; and every service module of no known place."""
    offenders = []
    for module, names in sorted(imports.items()):
        place = _service_place(module)
        if place is None:
            offenders.append(f"{module}: stands in no wing nor on the ground")
            continue
        if place == SERVICE_TOP:
            continue
        allowed = {"ground"} if place == "ground" else {"ground", place, *SERVICE_WINGS[place]}
        for name in names:
            target = _service_place(name)
            if _starts(name, ("server.service",)) and target not in allowed:
                offenders.append(f"{module}: {name} ({place} -> {target})")
    return offenders


def test_the_service_wings_stand_on_the_ground_and_point_down() -> None:
    """The wings of ``server/service`` (issue 29): the ground (context, errors, match facts,
    clocks) imports no wing, a wing imports only the wings below it, and only ``wings``
    holds them all. (No service module imports the edge: the rooms test above.)"""
    imports = {_module_name(p): _imported_modules(p) for p in _server_files("service")}
    assert {_service_place(m) for m in imports} >= {"ground", *SERVICE_WINGS}
    assert service_arrows_up(imports) == []


def test_the_wings_check_finds_each_kind_of_arrow_up() -> None:
    imports = {
        "server.service.matches": ["server.service.play.lobby.abandon"],
        "server.service.news.causes": ["server.service.matches", "server.service.play.play"],
        "server.service.live.feed": ["server.service.news.outbox.Outbox"],
        "server.service.people.admin": ["server.service.play.lobby", "server.service.wings.X"],
        "server.service.stray": [],
    }
    assert service_arrows_up(imports) == [
        "server.service.live.feed: server.service.news.outbox.Outbox (live -> news)",
        "server.service.matches: server.service.play.lobby.abandon (ground -> play)",
        "server.service.news.causes: server.service.play.play (news -> play)",
        "server.service.people.admin: server.service.wings.X (people -> wings)",
        "server.service.stray: stands in no wing nor on the ground",
    ]


def test_the_benches_import_no_test_kit() -> None:
    """``bench/`` runs without the test suite (issue 29): what the benches share with the
    tests (the programmatic client, starting a server) is ``bench.kit``, which
    ``tests/testkit.py`` re-exports, never the other way round."""
    offenders = [
        f"{path.relative_to(REPO_ROOT)}: {name}"
        for path in sorted((REPO_ROOT / "bench").rglob("*.py"))
        for name in _imported_modules(path)
        if _starts(name, ("tests",))
    ]
    assert offenders == []
