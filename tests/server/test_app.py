"""The server as operators and generic gRPC tools see it: health, reflection, TLS, request
logs, the ``canasta-server`` process and its operator commands."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from typer.testing import CliRunner

from server.__main__ import app as cli
from server.app import App
from server.store.migrations import head_revision, known_revisions
from shared.crypto.keytext import public_key_to_text
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient

from .conftest import AppFactory, DatabaseUrl
from .tlskit import self_signed


def test_health_checking(channel: grpc.Channel) -> None:
    stub = health_pb2_grpc.HealthStub(channel)
    for service in ("", "canasta.v1.Canasta"):
        response = stub.Check(health_pb2.HealthCheckRequest(service=service))
        assert response.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_services(channel: grpc.Channel) -> None:
    database = ProtoReflectionDescriptorDatabase(channel)
    services = set(database.get_services())
    assert {"canasta.v1.Canasta", "grpc.health.v1.Health"} <= services
    described = database.FindFileContainingSymbol("canasta.v1.Canasta")
    assert described.package == "canasta.v1"


def test_one_log_line_per_request(channel: grpc.Channel, caplog: pytest.LogCaptureFixture) -> None:
    client = PlayerClient(channel)
    with caplog.at_level(logging.INFO, logger="canasta.server"):
        client.stub.GetServerInfo(pb.GetServerInfoRequest())
        with pytest.raises(grpc.RpcError):
            client.stub.Challenge(pb.ChallengeRequest(public_key=client.public_key))
        # A refused call's status reaches the client before the server logs its line.
        deadline = time.monotonic() + 5
        while len(_server_lines(caplog)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    lines = _server_lines(caplog)
    # PlayerClient's own GetServerInfo at construction came before the capture started.
    assert len(lines) == 2
    assert lines[0].startswith("/canasta.v1.Canasta/GetServerInfo OK")
    assert lines[0].endswith("ms")  # no peer on a successful call
    assert lines[1].startswith("/canasta.v1.Canasta/Challenge NOT_FOUND")
    assert "127.0.0.1" in lines[1].split()[-1]  # a refused call names who asked


def _server_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "canasta.server"]


def test_tls_by_configuration(make_app: AppFactory, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path, ec.generate_private_key(ec.SECP256R1()))
    app = make_app(tls_cert=cert, tls_key=key)
    credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
    with grpc.secure_channel(f"localhost:{app.port}", credentials) as channel:
        alice = PlayerClient(channel).join_server("alice")
        assert alice.my_matches().matches == []
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as plain:
        stub = health_pb2_grpc.HealthStub(plain)
        with pytest.raises(grpc.RpcError) as info:
            stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE


@pytest.mark.slow  # server processes of their own: out of the inner loop
def test_start_up_is_quiet(tmp_path: Path) -> None:
    """Issue 28: a start logs one line per schema revision it applies (none once the schema
    is current), nothing of Alembic's own, and nothing from the mail listener (aiosmtpd's
    "connection lost" of its start-up probe)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        smtp_port = sock.getsockname()[1]
    env = {
        **os.environ,
        "CANASTA_SERVER_LOG_LEVEL": "INFO",
        "CANASTA_SERVER_SMTP_LISTEN": f"127.0.0.1:{smtp_port}",
        "CANASTA_SERVER_MAIL_FROM": "canasta@example.org",
    }
    command = [sys.executable, "-m", "server", "--data-dir", str(tmp_path), "serve"]
    logs = []
    for _ in range(2):
        process = subprocess.Popen(
            [*command, "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert f"mail in on 127.0.0.1:{smtp_port}" in banner, banner
        time.sleep(0.5)  # anything logged just after the banner
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        logs.append(err.splitlines())
    first, second = logs
    applied = sorted(known_revisions())
    said = " INFO canasta.server: database schema: applied revision "
    assert len(first) == len(applied), first  # one line each, and nothing else
    assert all(said in line for line in first), first
    assert [line.split(said)[1][:4] for line in first] == applied
    assert "database schema: applied revision 0001 (The initial schema (players, " in first[0]
    assert second == [], second


@pytest.mark.slow  # a server process of its own: out of the inner loop
def test_the_server_process(tmp_path: Path) -> None:
    env = {**os.environ, "CANASTA_SERVER_REGISTRATION": "invite"}
    command = [sys.executable, "-m", "server", "--data-dir", str(tmp_path), "serve"]
    process = subprocess.Popen(
        [*command, "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert "listening on 127.0.0.1:" in banner, banner
        assert f"data in SQLite {tmp_path.resolve()}" in banner  # which file it serves from
        port = int(banner.split("listening on 127.0.0.1:")[1].split()[0])
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            info = PlayerClient(channel).stub.GetServerInfo(pb.GetServerInfoRequest())
            assert info.registration == pb.REGISTRATION_MODE_INVITATION
            assert public_key_to_text(info.server_public_key) in banner
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "canasta-server stopped" in out
    assert err.count("/canasta.v1.Canasta/GetServerInfo OK") == 2


def test_operator_commands(tmp_path: Path, make_app: AppFactory, database_url: DatabaseUrl) -> None:
    runner = CliRunner()
    # The operator's commands and the server share the storage; migrate starts from nothing.
    url = database_url("ops", empty=True)
    base = ["--data-dir", str(tmp_path / "ops"), *(["--database-url", url] if url else [])]
    migrated = runner.invoke(cli, [*base, "migrate"])
    assert migrated.exit_code == 0, migrated.output
    every = ", ".join(sorted(known_revisions()))
    head = head_revision()
    assert migrated.output == f"applied {every}; the schema is at revision {head}\n"
    again = runner.invoke(cli, [*base, "migrate"])
    assert again.output == f"the schema is up to date (revision {head})\n"
    shown = runner.invoke(cli, [*base, "show-key"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith("server: ed25519:")
    assert [line.split(":")[0] for line in shown.output.splitlines()] == [
        "server",
        "bots",
        "attest",
    ]
    issued = runner.invoke(cli, [*base, "invite", "--count", "2"])
    assert issued.exit_code == 0, issued.output
    codes = issued.stdout.split()
    assert len(codes) == 2
    assert runner.invoke(cli, [*base, "players", "list"]).output.strip() == "no players yet"

    app: App = make_app("ops", registration="invite")
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        alice = PlayerClient(channel).join_server("alice", invitation=codes[0])
        listed = runner.invoke(cli, [*base, "players", "list"])
        assert "alice" in listed.output
        assert public_key_to_text(alice.public_key) in listed.output
        blocked = runner.invoke(
            cli, [*base, "players", "block", public_key_to_text(alice.public_key)]
        )
        assert blocked.exit_code == 0, blocked.output
        with pytest.raises(grpc.RpcError) as info:
            alice.my_matches()
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED  # its tokens are revoked
        with pytest.raises(grpc.RpcError) as info:
            alice.login()
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert runner.invoke(cli, [*base, "players", "unblock", "1"]).exit_code == 0
        alice.login()
        assert alice.my_matches().matches == []
    missing = runner.invoke(cli, [*base, "players", "block", "99"])
    assert missing.exit_code == 1
    bad = runner.invoke(cli, [*base, "players", "block", "ed25519:nope"])
    assert bad.exit_code == 2


@pytest.mark.slow  # a server process of its own: out of the inner loop
def test_a_busy_port_is_one_clear_line(tmp_path: Path) -> None:
    """Someone else has the port: exit 1 with a sentence, not a traceback."""
    (tmp_path / "none.toml").write_text("")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "server", "--data-dir", str(tmp_path), "serve",
             "--listen", f"127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "CANASTA_SERVER_CONFIG": str(tmp_path / "none.toml")},
        )  # fmt: skip
    assert done.returncode == 1
    assert f"canasta-server: cannot listen on 127.0.0.1:{port}: the port is in use" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
