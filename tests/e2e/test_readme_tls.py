"""The self-signed TLS example of docs/operating.md ("TLS"), run line by line: make the
certificate with openssl, serve with it, and set up a player whose client trusts it.

Only the host name is the test's own (``localhost`` for ``canasta.example.org``), and the
listening address (a free port on 127.0.0.1 instead of ``0.0.0.0:7437``, so tests can run side
by side). If the page changes, this test runs the new lines.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.harness import BIN, Player, clean_env

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl here"),
]
OPERATING = Path(__file__).resolve().parents[2] / "docs" / "operating.md"


def tls_lines() -> list[str]:
    """The ``sh`` block of the page's TLS section (its own certificate): openssl, serve, setup."""
    section = OPERATING.read_text(encoding="utf-8").split("\n## TLS\n", 1)[1].split("\n## ", 1)[0]
    paragraph = section.split("**Your own certificate.**", 1)[1]
    block = re.search(r"```sh\n(.*?)```", paragraph, re.DOTALL)
    assert block is not None, "the TLS section's ```sh block is missing"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_a_self_signed_certificate_as_the_docs_make_it_serves_canasta(tmp_path: Path) -> None:
    make, serve, setup = tls_lines()
    assert make.startswith("openssl req")
    assert "canasta-server serve" in serve
    assert setup.startswith("canasta setup")
    assert "--ca cert.pem" in setup
    env = {**clean_env(), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    work = tmp_path / "club"
    work.mkdir()
    made = subprocess.run(
        make.replace("canasta.example.org", "localhost"),
        shell=True, cwd=work, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    server = subprocess.Popen(  # a session of its own: the stop reaches the server too
        serve.replace("0.0.0.0:7437", "127.0.0.1:0"),
        shell=True, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**env, "CANASTA_SERVER_DATA_DIR": str(tmp_path / "data")}, start_new_session=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        banner = server.stdout.readline()
        assert "(TLS)" in banner, banner
        port = int(banner.split("listening on 127.0.0.1:")[1].split()[0])
        alice = Player(tmp_path / "alice")
        done = subprocess.run(
            setup.replace("canasta.example.org:7437", f"localhost:{port}"),
            shell=True, cwd=work, env={**alice.env(), "PATH": env["PATH"]},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert alice.run("whoami").stdout.startswith("Alice")
        # The profile keeps the certificate's absolute path: a command run from elsewhere
        # (here the tests' own directory, not the club's) still reaches the server.
        assert Path.cwd() != work
        assert "no matches" in alice.run("matches").stdout.lower()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)


def test_tls_mistakes_get_one_line_with_a_hint(tmp_path: Path) -> None:
    """Issue 28: a plaintext client at a TLS server, a host name the certificate does not
    name, and a self-signed certificate without --ca each get one line saying what to change,
    and gRPC's own handshake log line stays off the terminal."""
    from tests.e2e.harness import one_line_error, start_server

    make = tls_lines()[0].replace("canasta.example.org", "localhost")
    made = subprocess.run(
        make, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert made.returncode == 0, made.stderr
    server = start_server(
        tmp_path / "data",
        settings={"tls_cert": str(tmp_path / "cert.pem"), "tls_key": str(tmp_path / "key.pem")},
    )
    try:
        port = server.port
        cases = [
            (["--server", f"localhost:{port}"], "the server closed the connection at once: if "
             "it talks TLS, set up with --tls (and --ca FILE for a self-signed certificate)"),
            (["--server", f"127.0.0.1:{port}", "--tls", "--ca", str(tmp_path / "cert.pem")],
             "its TLS certificate is not made out to this host name: use the name it was made "
             "for in --server NAME:PORT"),
            (["--server", f"localhost:{port}", "--tls"], "the server's TLS certificate is not "
             "trusted: for a self-signed one, give its certificate with --ca FILE"),
        ]  # fmt: skip
        for number, (args, hint) in enumerate(cases):
            player = Player(tmp_path / f"p{number}")
            done = player.run("setup", *args, "--name", "Alice", ok=False)
            assert done.returncode == 1
            assert hint in one_line_error(done), done.stderr  # one line: no gRPC log line
        trusted = Player(tmp_path / "trusted")
        args = ["--server", f"localhost:{port}", "--tls", "--ca", str(tmp_path / "cert.pem")]
        trusted.run("setup", *args, "--name", "Alice")
    finally:
        server.stop()
