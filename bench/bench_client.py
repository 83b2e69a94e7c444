"""Benchmark: how fast the ``canasta`` executable starts, against ``python -c pass``.

    .venv/bin/python -m bench.bench_client [--runs 20]

Each command runs ``--runs`` times as a fresh subprocess (hyperfine-style: wall time from
spawn to exit, one warm-up run first), interleaved so that background load hits every command
alike; the median and the fastest run are printed. ``canasta show`` runs against a real
``canasta-server`` started here on a fresh SQLite file, for a player with a cached token in a
match against three bots (the command a player types most: one ListMyMatches and one GetView).
Targets: ``canasta --help`` under 150 ms median, ``canasta show`` at most 5x ``python -c pass``
(issue 11). The runs may write ``.pyc`` files, as an installed client has them.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.kit import start_server_process

BIN = Path(sys.executable).parent


def _run(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode().strip()}")
    return elapsed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    canasta = str(BIN / "canasta")
    with tempfile.TemporaryDirectory(prefix="canasta-bench-client-") as tmp:
        directory = Path(tmp)
        env = {**os.environ, "CANASTA_SERVER_LOG_LEVEL": "WARNING"}
        server, port = start_server_process(
            directory / "server", env=env, command=[str(BIN / "canasta-server")]
        )
        address = f"127.0.0.1:{port}"
        try:
            env = {**os.environ, "CANASTA_HOME": str(directory / "home"), "NO_COLOR": "1"}
            env.pop("CANASTA_PROFILE", None)
            # An installed client has its modules compiled (pip writes .pyc files); a
            # PYTHONDONTWRITEBYTECODE inherited from a sandbox would make every run recompile
            # the project's own modules (about 40 ms), measuring a start nobody has.
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            for setup in (
                ["setup", "--server", address, "--name", "Bench"],
                ["create", "--bot", "1", "--bot", "2", "--bot", "3"],
                ["deal"],
            ):
                _run([canasta, *setup], env)
            commands = {
                "python -c pass": [sys.executable, "-c", "pass"],
                "canasta --help": [canasta, "--help"],
                "canasta show": [canasta, "show"],
            }
            for command in commands.values():
                _run(command, env)  # warm-up: file caches, .pyc files
            times: dict[str, list[float]] = {name: [] for name in commands}
            for _ in range(args.runs):
                for name, command in commands.items():
                    times[name].append(_run(command, env))
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(30)
    runs = f"({args.runs} runs each, {os.cpu_count()} CPUs)"
    print(f"{'command':<18}{'median':>10}{'fastest':>10}   {runs}")
    for name, samples in times.items():
        median = statistics.median(samples) * 1000
        print(f"{name:<18}{median:>8.0f} ms{min(samples) * 1000:>7.0f} ms")


if __name__ == "__main__":
    main()
