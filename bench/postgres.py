"""A throwaway PostgreSQL 15 server for the tests and the benches (``bench_submit
--postgres``), started from Debian's postgresql-15 binaries.

The server's PostgreSQL path is only trustworthy if it runs against the real thing, so the
tests start their own cluster: ``initdb`` into a temporary directory, ``postgres`` listening on
a free port of 127.0.0.1 (its unix socket in that directory too, never in /run/postgresql),
and, at the end, a fast shutdown and the directory removed. ``tests/ensure-postgres`` (run
by ``make test``) installs the binaries; when they are missing anyway, starting fails loudly
rather than skipping, so a green run always means PostgreSQL was tested.

initdb and postgres refuse to run as root (as the tests do in CI), so under root they run as
the unprivileged ``postgres`` account that the Debian package creates (``nobody`` if absent),
and the directory is handed to that account. Durability settings are off (``fsync``): the
tests check behaviour, not crash safety, and a fresh database per test must be cheap.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

BIN_DIR = Path(os.environ.get("CANASTA_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
SUPERUSER = "postgres"
_START_TIMEOUT = 60.0


class PostgresUnavailableError(RuntimeError):
    """The binaries are missing or the server would not start; the message says what to do."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _unprivileged_account() -> pwd.struct_passwd | None:
    """Who runs the cluster: None (this user) unless we are root, which PostgreSQL refuses."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise PostgresUnavailableError(
        "running as root, and neither a 'postgres' nor a 'nobody' account exists to run "
        "PostgreSQL as (it refuses root): create one, e.g. `useradd --system postgres`"
    )


class PostgresServer:
    """One running cluster; ``database()`` hands out fresh databases."""

    def __init__(self, root: Path, port: int, process: subprocess.Popen[bytes]) -> None:
        self.root = root
        self.port = port
        self.process = process
        self._names = itertools.count(1)
        self._migrated = False

    def url(self, database: str, driver: str = "postgresql+psycopg") -> str:
        return f"{driver}://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def admin(self) -> psycopg.Connection[tuple[object, ...]]:
        """An autocommit connection to the maintenance database (CREATE/DROP DATABASE)."""
        return psycopg.connect(self.url("postgres", "postgresql"), autocommit=True)

    @contextmanager
    def database(self, *, migrated: bool = False) -> Iterator[str]:
        """A new database (its SQLAlchemy URL), dropped afterwards with any sessions: empty,
        or a copy of one at the newest schema revision (``migrated``: cloning a template
        costs a fraction of migrating a new database)."""
        name = f"test_{next(self._names)}"
        template = f" TEMPLATE {self._migrated_template()}" if migrated else ""
        with self.admin() as conn:
            conn.execute(f"CREATE DATABASE {name}{template}")
        try:
            yield self.url(name)
        finally:
            with self.admin() as conn:
                conn.execute(f"DROP DATABASE {name} WITH (FORCE)")

    def _migrated_template(self) -> str:
        """The template database at the newest revision, made on first use (no session stays
        open on it: PostgreSQL copies only a template nobody is connected to)."""
        name = "migrated_template"
        if not self._migrated:
            from server.store.db import Database
            from server.store.migrations import migrate

            with self.admin() as conn:
                conn.execute(f"CREATE DATABASE {name}")
            database = Database(self.url(name))
            migrate(database)
            database.dispose()
            self._migrated = True
        return name

    def stop(self) -> None:
        """Fast shutdown (SIGINT: abort sessions, then a clean stop) and remove everything."""
        if self.process.poll() is None:
            self.process.send_signal(2)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        shutil.rmtree(self.root, ignore_errors=True)


def _run(command: list[str], account: pwd.struct_passwd | None, log: Path) -> None:
    uid, gid, groups = _identity(account)
    with log.open("ab") as out:
        done = subprocess.run(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
            user=uid,
            group=gid,
            extra_groups=groups,
        )
    if done.returncode != 0:
        raise PostgresUnavailableError(
            f"{command[0]} failed ({done.returncode}):\n{log.read_text(errors='replace')}"
        )


def _identity(account: pwd.struct_passwd | None) -> tuple[int | None, int | None, list[int] | None]:
    """subprocess's ``user``, ``group``, ``extra_groups`` that drop root for ``account``."""
    if account is None:
        return None, None, None
    return account.pw_uid, account.pw_gid, []


def start_postgres() -> PostgresServer:
    """initdb, start and wait until the server accepts connections; raises if it cannot."""
    postgres = BIN_DIR / "postgres"
    if not postgres.exists():
        raise PostgresUnavailableError(
            f"{postgres} is missing: the PostgreSQL tests need Debian's postgresql-15 "
            "package; run tests/ensure-postgres (make test does) or "
            "`apt-get install postgresql-15`"
        )
    account = _unprivileged_account()
    uid, gid, groups = _identity(account)
    root = Path(tempfile.mkdtemp(prefix="canasta-pg-"))
    data, log = root / "data", root / "postgres.log"
    if account is not None:
        os.chown(root, account.pw_uid, account.pw_gid)
    try:
        _run(
            [str(BIN_DIR / "initdb"), "--pgdata", str(data), "--username", SUPERUSER,
             "--auth", "trust", "--encoding", "UTF8", "--locale", "C", "--no-sync",
             "--no-instructions"],
            account,
            log,
        )  # fmt: skip
        port = _free_port()
        with log.open("ab") as out:
            process = subprocess.Popen(
                [str(postgres), "-D", str(data), "-k", str(root), "-h", "127.0.0.1",
                 "-p", str(port), "-c", "fsync=off", "-c", "synchronous_commit=off",
                 "-c", "full_page_writes=off", "-c", "max_connections=300"],
                stdout=out,
                stderr=subprocess.STDOUT,
                user=uid,
                group=gid,
                extra_groups=groups,
            )  # fmt: skip
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    server = PostgresServer(root, port, process)
    try:
        _wait_until_ready(server, log)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_until_ready(server: PostgresServer, log: Path) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while True:
        if server.process.poll() is not None:
            raise PostgresUnavailableError(
                f"postgres exited with {server.process.returncode}:\n"
                + log.read_text(errors="replace")
            )
        try:
            with server.admin() as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise PostgresUnavailableError(
                    f"postgres did not accept connections within {_START_TIMEOUT:.0f}s:\n"
                    + log.read_text(errors="replace")
                ) from None
            time.sleep(0.05)
