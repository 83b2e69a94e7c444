"""The service files in the repo (issue 17): the systemd unit and the container image's entry
point and health check run what docs/operating.md says, and `canasta-server health` answers."""

from __future__ import annotations

import configparser
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from server.config import ServerConfig
from server.edge.grpc_server import files_needed
from tests.testkit import start_server_process

from .tlskit import self_signed

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "deploy" / "canasta-server.service"
DOCKERFILE = REPO / "Dockerfile"
OPERATING = REPO / "docs" / "operating.md"
BIN = Path(sys.executable).parent


def _unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    parser.read(UNIT)
    return parser


def test_the_systemd_unit_is_hardened_and_restarts_on_failure() -> None:
    service = _unit()["Service"]
    assert service["User"] == "canasta"
    assert service["Restart"] == "on-failure"
    assert service["StateDirectory"] == "canasta"
    for setting, value in (("ProtectSystem", "strict"), ("ProtectHome", "yes"),
                           ("NoNewPrivileges", "yes"), ("PrivateTmp", "yes")):  # fmt: skip
        assert service[setting] == value
    assert service["CapabilityBoundingSet"] == ""
    page = OPERATING.read_text()
    assert "sudo cp deploy/canasta-server.service /etc/systemd/system/" in page
    assert "/opt/canasta/bin/pip install ." in page  # where ExecStart finds the program
    assert service["ExecStart"].startswith("/opt/canasta/bin/canasta-server ")


def test_the_units_file_limit_covers_the_connection_caps() -> None:
    """Issue 25: systemd's default of 1,024 open files ran out before any cap was reached, and
    then the server accepted nobody. The unit's limit covers what the default caps allow."""
    limit = int(_unit()["Service"]["LimitNOFILE"])
    assert limit >= files_needed(ServerConfig(data_dir=Path("/nonexistent"))) > 1024


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    """`systemd-analyze verify`, with ExecStart pointing at this checkout's program (verify
    checks that it exists)."""
    unit = tmp_path / "canasta-server.service"
    unit.write_text(
        UNIT.read_text().replace("/opt/canasta/bin/canasta-server", str(BIN / "canasta-server"))
    )
    done = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "canasta-server.service" not in done.stderr, done.stderr  # no warning about it


@pytest.mark.slow
def test_the_units_command_serves(tmp_path: Path) -> None:
    """ExecStart's arguments, with the state directory replaced by a temporary one."""
    command = shlex.split(_unit()["Service"]["ExecStart"])
    args = [a.replace("/var/lib/canasta", str(tmp_path / "state")) for a in command[1:]]
    assert args[-1] == "serve"
    (tmp_path / "server.toml").write_text(f'listen = "127.0.0.1:{_free_port()}"\n')
    process = subprocess.Popen(
        [str(BIN / "canasta-server"), *args],
        env={**os.environ, "CANASTA_SERVER_CONFIG": str(tmp_path / "server.toml")},
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert "listening on 127.0.0.1:" in process.stdout.readline()
        assert (tmp_path / "state" / "canasta.db").is_file()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0


def _dockerfile() -> tuple[list[str], dict[str, str], list[str]]:
    """The final stage's ENTRYPOINT + CMD, ENV, and HEALTHCHECK command."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    final = text.rsplit("\nFROM ", 1)[1]
    command: list[str] = []
    env: dict[str, str] = {}
    health: list[str] = []
    for line in final.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word == "ENTRYPOINT":
            command = json.loads(rest) + command
        elif word == "CMD":
            command += json.loads(rest)
        elif word == "ENV":
            env.update(dict(pair.split("=", 1) for pair in rest.split()))
        elif word == "HEALTHCHECK":
            health = json.loads(rest.split(" CMD ", 1)[1])
    return command, env, health


@pytest.mark.slow
def test_the_images_entry_point_serves_and_its_health_check_passes(tmp_path: Path) -> None:
    """The image's command and environment, run here (no Docker daemon in the tests): it
    serves on its data volume, and its HEALTHCHECK command says so; once stopped, it fails."""
    command, env, health = _dockerfile()
    assert command == ["canasta-server", "serve"]
    assert health == ["python", "-m", "server.health"]
    assert env["CANASTA_SERVER_DATA_DIR"] == "/data"
    page = OPERATING.read_text()
    assert "docker run -d --name canasta -p 7437:7437 -v canasta-data:/data canasta-server" in page
    port = _free_port()
    env = {
        **os.environ, **env, "CANASTA_SERVER_DATA_DIR": str(tmp_path / "data"),
        "CANASTA_SERVER_LISTEN": env["CANASTA_SERVER_LISTEN"].replace(":7437", f":{port}"),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }  # fmt: skip
    env.pop("CANASTA_SERVER_CONFIG", None)
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert process.stdout is not None
        assert f"listening on 0.0.0.0:{port}" in process.stdout.readline()
        checked = subprocess.run(health, env=env, capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, checked.stderr
        assert checked.stdout.strip() == f"127.0.0.1:{port}: serving"
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
    checked = subprocess.run(
        [*health, "--timeout", "1"], env=env, capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 1
    assert "not serving (UNAVAILABLE)" in checked.stderr


@pytest.mark.slow
def test_health_speaks_tls_to_a_tls_server(tmp_path: Path) -> None:
    """With tls_cert set (a self-signed certificate), the health check trusts that
    certificate and checks it for its own name."""
    cert, key = self_signed(tmp_path, ec.generate_private_key(ec.SECP256R1()))
    (tmp_path / "none.toml").write_text("")
    env = {**os.environ, "CANASTA_SERVER_CONFIG": str(tmp_path / "none.toml"),
           "CANASTA_SERVER_TLS_CERT": str(cert), "CANASTA_SERVER_TLS_KEY": str(key)}  # fmt: skip
    process, port = start_server_process(tmp_path / "data", env=env)
    try:
        checked = subprocess.run(
            [str(BIN / "canasta-server"), "health", "--address", f"127.0.0.1:{port}"],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    assert checked.returncode == 0, checked.stderr


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
