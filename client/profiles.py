"""Profiles: who I am on which server, kept on disk between commands.

A profile is a server address (and TLS settings), the server's pinned public key, the player's
key file, display name, the cached bearer token, and per match what the player last saw (the
version and head hash a move must follow, the seat, the cut's commitment). Several profiles sit
side by side; ``--profile NAME`` or ``CANASTA_PROFILE`` picks one, else the default.

The private key file is created with mode 0600 and refused when group or others can read it:
anyone who reads it can play as the player. A passphrase is optional; with one the key is
stored in the OpenSSH format with the bcrypt KDF (see ``shared.crypto.keys``).

This module imports nothing heavy at load time (no grpc, no cryptography) because every
command, including the fast table view, reads a profile.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from client import paths
from client.errors import EXIT_USAGE, CliError

if TYPE_CHECKING:
    from shared.crypto.keys import PrivateKey
    from shared.pb import canasta_pb2 as pb

TOKEN_MARGIN_MS = 30_000
"""A cached token this close to expiry is renewed before use rather than refused mid-call."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass
class Seen:
    """What the player last saw of one match: enough to sign the next move without a fetch."""

    version: int
    head_hash: str
    seat: int
    deal_commitment: str = ""
    finished: bool = False
    header_hash: str = ""
    """The hash the match's chain starts from, once checked (``client.forks``); empty until
    the player first looks at the started match."""
    kept_until: int = 0
    """The last entry kept in the profile's copy of the match (``client.entries``); 0: none."""


@dataclass
class Profile:
    name: str
    server: str = ""
    tls: bool = False
    ca_file: str = ""
    server_key: str = ""
    """The pinned server key, in its ``ed25519:...`` text form."""
    display_name: str = ""
    email: str = ""
    public_key: str = ""
    token: str = ""
    token_expires_ms: int = 0
    matches: dict[str, Seen] = field(default_factory=dict)
    notifications_seen: dict[str, int] = field(default_factory=dict)
    """Per server address, the id of the last notification ``canasta watch`` printed: a new
    watch resumes after it, so nothing is printed twice."""
    conventions: dict[str, str] = field(default_factory=dict)
    """Per match created with ``--conventions`` that had not started: the text to publish
    once it has (``client.cmd_talk.publish_pending``)."""

    # -- files ----------------------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        return paths.profile_dir(self.name)

    @property
    def file(self) -> Path:
        return self.directory / "profile.json"

    @property
    def key_path(self) -> Path:
        return self.directory / "key"

    @property
    def receipts_path(self) -> Path:
        return self.directory / "receipts.jsonl"

    @classmethod
    def load(cls, name: str) -> Profile:
        """Read a profile; a missing one is the "run canasta setup" error."""
        file = paths.profile_dir(name) / "profile.json"
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            hint = "" if name == paths.DEFAULT_PROFILE else f" --profile {name}"
            raise CliError(
                f"no profile {name!r} yet: run `canasta{hint} setup --server HOST:PORT "
                "--name YOUR_NAME` first"
            ) from None
        except (OSError, ValueError) as exc:
            raise CliError(f"cannot read the profile {file}: {exc}") from None
        try:
            return cls.from_dict(name, data)
        except (TypeError, AttributeError, ValueError):
            raise CliError(
                f"the profile file {file} is damaged; fix it, or move it away and run "
                "`canasta setup` again"
            ) from None

    @classmethod
    def from_dict(cls, name: str, data: dict[str, Any]) -> Profile:
        matches = {k: Seen(**v) for k, v in dict(data.pop("matches", {})).items()}
        known = {f for f in cls.__dataclass_fields__ if f not in ("name", "matches")}
        return cls(name=name, matches=matches, **{k: v for k, v in data.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["name"]
        return data

    def save(self) -> None:
        """Write atomically (mode 0600: it holds a bearer token), keeping newer match facts.

        Two commands of one profile may run at once (``watch`` in one terminal, a move in
        another): what the file already knows about a match survives unless ours is newer.
        """
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            on_disk = Profile.from_dict(
                self.name, json.loads(self.file.read_text(encoding="utf-8"))
            )
            for match_id, seen in on_disk.matches.items():
                mine = self.matches.get(match_id)
                if mine is None or mine.version < seen.version:
                    self.matches[match_id] = seen
            for server, last in dict(on_disk.notifications_seen).items():
                if isinstance(last, int) and last > self.notifications_seen.get(server, 0):
                    self.notifications_seen[server] = last
        except (OSError, ValueError, TypeError):
            pass
        _write_private(self.file, json.dumps(self.to_dict(), indent=2).encode("utf-8") + b"\n")

    # -- tokens and matches -----------------------------------------------------------------------

    def token_valid(self, now_ms: int) -> bool:
        return bool(self.token) and self.token_expires_ms - TOKEN_MARGIN_MS > now_ms

    def remember(self, view: pb.MatchView, header_hash: str | None = None) -> Seen:
        """Keep what a move needs from a view the player was shown (never an older one), and
        the checked header hash (kept from before when not given)."""
        current = self.matches.get(view.match.match_id)
        if header_hash is None:
            header_hash = current.header_hash if current is not None else ""
        seen = Seen(
            version=view.version,
            head_hash=view.head_hash.hex(),
            seat=view.view.seat,
            deal_commitment=view.deal_commitment.hex() if view.HasField("dealing_seat") else "",
            finished=view.match.status == 3,  # MATCH_STATUS_FINISHED
            header_hash=header_hash,
            kept_until=current.kept_until if current is not None else 0,
        )
        if current is None or current.version <= seen.version:
            self.matches[view.match.match_id] = seen
        return self.matches[view.match.match_id]

    # -- the private key --------------------------------------------------------------------------

    def load_key(self) -> PrivateKey:
        """The player's key, after checking the file's mode; asks for the passphrase if needed,
        once per command: a command that signs a move and then signs in again, or ``setup``
        that made the key, does not ask again (``use_key``)."""
        from shared.crypto.errors import KeyFileError
        from shared.crypto.keys import is_encrypted_key, private_key_from_pem

        path = self.key_path
        unlocked = _UNLOCKED.get(path)
        if unlocked is not None:
            return unlocked
        check_key_mode(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise CliError(
                f"the key file {path} is missing; restore it from a backup (without it nobody "
                "can play as this player)"
            ) from None
        passphrase = read_passphrase(path) if is_encrypted_key(data) else None
        try:
            key = private_key_from_pem(data, passphrase)
        except KeyFileError as exc:
            raise CliError(f"{path}: {exc}") from None
        self.use_key(key)
        return key

    def use_key(self, key: PrivateKey) -> None:
        """Keep ``key`` (read, or just made) for the rest of this command: never on disk."""
        _UNLOCKED[self.key_path] = key


_UNLOCKED: dict[Path, PrivateKey] = {}
"""The keys this process has read (a passphrase is asked once per command), by file."""


def _write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` atomically by a file only its owner can read."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)


def write_key(path: Path, pem: bytes) -> None:
    """Create the key file with mode 0600 from the start (never briefly readable by others)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, pem)
        os.fsync(fd)
    finally:
        os.close(fd)


def check_key_mode(path: Path) -> None:
    """Refuse a key file that group or others may read or write: it is the player's identity."""
    if os.name != "posix":
        return
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return
    if mode & 0o077:
        raise CliError(
            f"the key file {path} is open to other users (mode {mode:04o}); "
            f"protect it with `chmod 600 {path}` and try again"
        )


def read_passphrase(path: Path) -> str:
    """``CANASTA_PASSPHRASE`` for scripts, else a hidden prompt when a person is at a terminal."""
    value = os.environ.get(paths.PASSPHRASE_ENV)
    if value:
        return value
    if not sys.stdin.isatty():
        raise CliError(
            f"the key {path} is protected by a passphrase: set {paths.PASSPHRASE_ENV} "
            "or run the command in a terminal"
        )
    import getpass

    return getpass.getpass(f"Passphrase for {path}: ")


# -- the server's address -----------------------------------------------------------------------


def check_server_address(text: str, code: int = EXIT_USAGE) -> str:
    """``HOST:PORT`` as gRPC needs it, or the one line that says what is wrong with ``text``.

    Checked before any connection: gRPC would otherwise report a scheme as a host that does
    not resolve, and a missing or impossible port as a refused connection.
    """
    address = text.strip()
    example = "for example `--server localhost:7437`"
    if "://" in address:
        scheme = address.split("://", 1)[0].lower()
        tls = " (and add --tls for a TLS server)" if scheme in ("https", "grpcs") else ""
        raise CliError(
            f"the server address {text!r} has a scheme ({scheme}://): give only HOST:PORT, "
            f"{example}{tls}",
            code,
        )
    if address.startswith("["):  # an IPv6 address: [::1]:7437
        host, bracket, rest = address[1:].partition("]")
        port = rest[1:] if bracket and rest.startswith(":") else ""
        host = f"[{host}]" if host else ""
    else:
        host, colon, port = address.rpartition(":")
        if not colon:
            host, port = address, ""
        elif ":" in host:
            raise CliError(
                f"the server address {text!r} looks like an IPv6 address: write it in "
                "brackets with its port, for example [::1]:7437",
                code,
            )
    if not host:
        raise CliError(f"the server address {text!r} names no host: {example}", code)
    if not port:
        raise CliError(
            f"the server address {text!r} has no port: give HOST:PORT, {example} "
            "(canasta-server listens on 7437 unless told otherwise)",
            code,
        )
    if not port.isdigit() or not port.isascii():
        raise CliError(
            f"the port {port!r} of the server address {text!r} is not a number: {example}", code
        )
    if not 1 <= int(port) <= 65535:
        raise CliError(
            f"the port {port} of the server address {text!r} is out of range (1-65535)", code
        )
    return f"{host}:{int(port)}"


# -- which profile ------------------------------------------------------------------------------


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise CliError(
            f"{name!r} is not a profile name: use letters, digits, '.', '_' or '-' (max 64)"
        )
    return name


def default_profile() -> str:
    try:
        data = json.loads(paths.config_file().read_text(encoding="utf-8"))
        return str(data.get("default_profile") or paths.DEFAULT_PROFILE)
    except (OSError, ValueError, AttributeError):
        return paths.DEFAULT_PROFILE


def set_default_profile(name: str) -> None:
    paths.home().mkdir(parents=True, exist_ok=True, mode=0o700)
    _write_private(paths.config_file(), json.dumps({"default_profile": name}).encode() + b"\n")


def chosen_profile(option: str | None) -> str:
    """``--profile``, else ``CANASTA_PROFILE``, else the configured default."""
    name = option or os.environ.get(paths.PROFILE_ENV) or default_profile()
    return check_name(name)


def list_profiles() -> list[str]:
    directory = paths.profiles_dir()
    if not directory.is_dir():
        return []
    return sorted(p.name for p in directory.iterdir() if (p / "profile.json").is_file())
