"""``canasta verify`` on hostile files (issue 25, point 6), with the real executable: a device
is refused unread, and a crafted file costs memory in proportion to its size, not ~120 bytes
per character of a string (a 33 MB file once took 4 GB) or ~60 bytes per ``[]``.

Each run's peak memory is measured by a small parent process of its own
(``resource.getrusage(RUSAGE_CHILDREN)`` after waiting for ``canasta``), so no earlier child of
the test process counts. Every child runs under an address-space limit, so a regression fails
with an error here instead of eating the machine's memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.harness import CANASTA, RUN_TIMEOUT, clean_env

pytestmark = pytest.mark.slow  # real executables, crafted files of 8 MB

VECTOR = Path(__file__).resolve().parents[1] / "vectors" / "transcript-v1.json"
ADDRESS_SPACE = 3 << 30
"""The children's address-space limit (bytes): far above what verify needs, far below the box."""

_MEASURE = """
import resource, subprocess, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
done = subprocess.run(sys.argv[2:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
print(done.returncode, peak * 1024)
print(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "")
"""


def _verify(path: Path, home: Path) -> tuple[int, int, str]:
    """Run ``canasta verify PATH``: its exit status, its peak resident memory in bytes, and the
    last line it wrote to stderr."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(ADDRESS_SPACE), CANASTA, "verify", str(path)],
        capture_output=True, text=True, timeout=RUN_TIMEOUT, check=True,
        env={**clean_env(), "CANASTA_HOME": str(home)},
    )  # fmt: skip
    status, peak = done.stdout.splitlines()[0].split()
    return int(status), int(peak), done.stdout.splitlines()[1]


def test_a_device_is_refused_unread(tmp_path: Path) -> None:
    status, _, error = _verify(Path("/dev/zero"), tmp_path)
    assert status == 1
    assert error == "canasta: /dev/zero is not a regular file: a transcript is a file"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it would wait for a writer
    status, _, error = _verify(fifo, tmp_path)
    assert (status, error) == (1, f"canasta: {fifo} is not a regular file: a transcript is a file")


SIZE = 8_000_000
"""Bytes of each crafted file: big enough that the memory a parse costs per byte dominates
the interpreter's own (about 30 MB)."""


def _long_string() -> bytes:
    """One entry whose payload is a single string of 8 MB: too long for any payload."""
    return (
        b'{"entries":[[1,"' + b"a" * SIZE + b'","",""]],"format":"canasta-transcript/1",'
        b'"hands":[],"header":""}\n'
    )


def _many_rows() -> bytes:
    """A header that parses, then millions of the smallest rows a JSON parser would build."""
    header = str(json.loads(VECTOR.read_bytes())["header"]).encode()
    return (
        b'{"entries":[' + b"[]," * (SIZE // 3) + b'[]],"format":"canasta-transcript/1",'
        b'"hands":[],"header":"' + header + b'"}\n'
    )


@pytest.mark.parametrize("craft", [_long_string, _many_rows], ids=["long-string", "many-rows"])
def test_a_crafted_file_costs_memory_in_proportion_to_its_size(
    tmp_path: Path, craft: object
) -> None:
    """Measured: 3,866 MiB for a 33 MB file with one long string before, 58 MiB after (of
    which the file itself is 33 MB and the interpreter about 27 MiB). The bound here is
    generous (the file twice, plus a baseline measured on a tiny file); before the fix these
    files took 117 and 28 times their size."""
    assert callable(craft)
    tiny = tmp_path / "tiny.json"
    tiny.write_bytes(b"{}\n")
    status, baseline, error = _verify(tiny, tmp_path)
    assert status == 1
    assert "does NOT verify" in error
    crafted = tmp_path / "crafted.json"
    crafted.write_bytes(craft())
    status, peak, error = _verify(crafted, tmp_path)
    assert peak - baseline < 2 * crafted.stat().st_size, (peak, baseline)
    assert status == 1
    assert error.startswith(f"canasta: {crafted} does NOT verify: entry 1: not [seq,"), error
