"""Benchmark: bytes of SQLite storage per stored move, after VACUUM, per table and index.

    .venv/bin/python -m bench.bench_storage [--moves 2000]

Starts ``canasta-server serve`` on a fresh SQLite file, registers four players who sit at one
classic match, and plays ``--moves`` signed moves through the real service (the plainest
moves: draw, then discard the last card in hand; the cut between hands; ``bench_submit``'s
client). Then it stops the server, copies the database, VACUUMs the copy and reads each
table's and index's pages from SQLite's ``dbstat`` table: bytes per move, for each and in
all, less those of the set-up alone (four players, the match and its warm-up moves, in a
database of its own). It also prints the mean size of the columns of a log entry and of a
notification, and the notifications by kind (delivered ones are deleted after
``notification_retention_days``; the bench runs well within them).
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
from pathlib import Path

from bench.bench_submit import _start


def _database(data_dir: Path) -> Path:
    found = sorted(data_dir.glob("*.db")) + sorted(data_dir.glob("*.sqlite*"))
    if not found:
        raise SystemExit(f"no SQLite file in {data_dir}")
    return found[0]


def _pages(path: Path, into: Path) -> dict[str, int]:
    """Bytes per table and index of a VACUUMed copy of ``path``."""
    shutil.copy(path, into)
    with sqlite3.connect(into) as db:
        db.execute("VACUUM")
        rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    return dict(rows)


def _played(tmp: Path, label: str, moves: int) -> tuple[dict[str, int], Path]:
    server = _start(label, tmp / label, None, since=True)
    try:
        for _ in range(moves):
            server.submit()
    finally:
        server.close()
    path = _database(tmp / label)
    return _pages(path, tmp / f"{label}-vacuumed.db"), tmp / f"{label}-vacuumed.db"


def _column_sizes(db: sqlite3.Connection, table: str) -> dict[str, float | None]:
    columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
    return {c: db.execute(f"SELECT AVG(LENGTH({c})) FROM {table}").fetchone()[0] for c in columns}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=2000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="canasta-bench-storage-") as name:
        tmp = Path(name)
        empty, base = _played(tmp, "empty", 0)
        full, copy = _played(tmp, "played", args.moves)
        with sqlite3.connect(base) as db:
            before = db.execute("SELECT COUNT(*) FROM log_entry").fetchone()[0]
        with sqlite3.connect(copy) as db:
            moves = db.execute("SELECT COUNT(*) FROM log_entry").fetchone()[0] - before
            sizes = _column_sizes(db, "log_entry")
            notes = _column_sizes(db, "notification")
            kinds = db.execute(
                "SELECT kind, COUNT(*) FROM notification GROUP BY kind ORDER BY 2 DESC"
            ).fetchall()
    print(f"{moves} moves stored beyond the set-up's (its warm-up moves are left out)")
    rows = sorted(
        ((name, full.get(name, 0) - empty.get(name, 0)) for name in full),
        key=lambda row: -row[1],
    )
    total = sum(size for _, size in rows)
    for name, size in rows:
        if size:
            print(f"  {name:<40} {size / moves:7.1f} bytes a move")
    print(f"  {'all':<40} {total / moves:7.1f} bytes a move")
    for table, columns in (("a log entry", sizes), ("a notification", notes)):
        print(f"{table}'s columns, mean bytes (of their text for numbers): " + ", ".join(
            f"{c} {s:.0f}" for c, s in columns.items() if s is not None
        ))  # fmt: skip
    print("notifications by kind: " + ", ".join(f"{kind} {count}" for kind, count in kinds))


if __name__ == "__main__":
    main()
