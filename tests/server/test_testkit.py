"""``tests.testkit.start_server_process``: what benches and end-to-end tests start servers with."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import grpc
import pytest

from tests.testkit import PlayerClient, start_server_process


@pytest.mark.slow  # a server process of its own: out of the inner loop
def test_serve_args_go_to_serve(tmp_path: Path) -> None:
    """``serve_args`` reach ``serve`` (here ``--listen`` again, which wins), so a bench can
    pass any ``serve`` option without the helper knowing it."""
    (tmp_path / "none.toml").write_text("")
    env = {
        **os.environ,
        "CANASTA_SERVER_CONFIG": str(tmp_path / "none.toml"),
        "CANASTA_SERVER_LOG_LEVEL": "WARNING",
    }
    serve_args = ["--listen", "127.0.0.2:0"]
    process, port = start_server_process(tmp_path / "data", env=env, serve_args=serve_args)
    try:
        assert list(process.args)[-2:] == serve_args  # type: ignore[arg-type]
        with grpc.insecure_channel(f"127.0.0.2:{port}") as channel:
            assert PlayerClient(channel).server_key
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
