"""Profiles on disk: private files, the key's mode and passphrase, choosing, pinning."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from client import paths
from client.errors import EXIT_USAGE, CliError
from client.profiles import (
    Profile,
    Seen,
    check_key_mode,
    check_server_address,
    chosen_profile,
    list_profiles,
    set_default_profile,
    write_key,
)
from client.rpc import Connection
from shared.crypto.keys import (
    generate_private_key,
    private_key_to_openssh,
    private_key_to_pem,
    public_key_raw,
)
from shared.crypto.keytext import public_key_to_text
from shared.pb import canasta_pb2 as pb


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path))
    monkeypatch.delenv(paths.PROFILE_ENV, raising=False)
    monkeypatch.delenv(paths.PASSPHRASE_ENV, raising=False)
    return tmp_path


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_key_and_profile_files_are_private(home: Path) -> None:
    player = Profile(name="default", server="localhost:1", token="secret")
    write_key(player.key_path, private_key_to_pem(generate_private_key()))
    player.save()
    assert _mode(player.key_path) == 0o600
    assert _mode(player.file) == 0o600
    assert _mode(player.directory) == 0o700
    with pytest.raises(FileExistsError):  # never overwrites an identity
        write_key(player.key_path, b"other")


def test_a_key_open_to_others_is_refused(home: Path) -> None:
    player = Profile(name="default")
    write_key(player.key_path, private_key_to_pem(generate_private_key()))
    player.key_path.chmod(0o640)
    with pytest.raises(CliError, match=r"open to other users \(mode 0640\).*chmod 600"):
        player.load_key()
    player.key_path.chmod(0o600)
    check_key_mode(player.key_path)
    player.load_key()


def test_passphrase_round_trip(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = generate_private_key()
    player = Profile(name="default")
    pem = private_key_to_openssh(key, "correct horse", rounds=4)
    assert b"OPENSSH PRIVATE KEY" in pem
    write_key(player.key_path, pem)
    with pytest.raises(CliError, match="protected by a passphrase: set CANASTA_PASSPHRASE"):
        player.load_key()  # no terminal under pytest, no variable
    monkeypatch.setenv(paths.PASSPHRASE_ENV, "wrong")
    with pytest.raises(CliError, match="passphrase is wrong"):
        player.load_key()
    monkeypatch.setenv(paths.PASSPHRASE_ENV, "correct horse")
    assert public_key_raw(player.load_key()) == public_key_raw(key)


def test_profile_round_trip_keeps_the_newer_match_facts(home: Path) -> None:
    player = Profile(name="work", server="h:1", display_name="Ann", token="t", token_expires_ms=9)
    player.matches["m1"] = Seen(version=5, head_hash="aa", seat=2)
    player.save()
    again = Profile.load("work")
    assert again == player
    # Another process saw version 7 meanwhile; saving an older copy keeps 7.
    newer = Profile.load("work")
    newer.matches["m1"] = Seen(version=7, head_hash="bb", seat=2)
    newer.save()
    player.matches["m2"] = Seen(version=1, head_hash="cc", seat=0)
    player.save()
    final = Profile.load("work")
    assert final.matches["m1"].version == 7
    assert final.matches["m2"].version == 1
    assert json.loads(final.file.read_text())["display_name"] == "Ann"


def test_missing_profile_says_how_to_set_up(home: Path) -> None:
    with pytest.raises(CliError, match=r"no profile 'x' yet: run `canasta --profile x setup"):
        Profile.load("x")


def test_choosing_a_profile(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert chosen_profile(None) == "default"
    set_default_profile("home")
    assert chosen_profile(None) == "home"
    monkeypatch.setenv(paths.PROFILE_ENV, "env")
    assert chosen_profile(None) == "env"
    assert chosen_profile("option") == "option"
    with pytest.raises(CliError, match="not a profile name"):
        chosen_profile("../escape")
    Profile(name="b").save()
    Profile(name="a").save()
    assert list_profiles() == ["a", "b"]


def test_the_server_key_is_pinned_once_and_a_change_is_loud(home: Path) -> None:
    first, second = (public_key_raw(generate_private_key()) for _ in range(2))
    player = Profile(name="default", server="127.0.0.1:9")
    with Connection(player) as conn:  # no call is made: the channel connects lazily
        assert conn.check_pin(pb.GetServerInfoResponse(server_public_key=first)) == first
        assert Profile.load("default").server_key == public_key_to_text(first)
        assert conn.check_pin(pb.GetServerInfoResponse(server_public_key=first)) == first
        with pytest.raises(CliError, match=r"DANGER: the server's key changed!.*server forget"):
            conn.check_pin(pb.GetServerInfoResponse(server_public_key=second))
    assert Profile.load("default").server_key == public_key_to_text(first)


def test_a_server_presenting_a_small_order_key_is_never_pinned(home: Path) -> None:
    """Issue 10, part 4: with the identity point as its key, anyone could forge receipts."""
    player = Profile(name="default", server="127.0.0.1:9")
    player.save()
    identity = bytes([1]) + bytes(31)
    with Connection(player) as conn, pytest.raises(CliError, match=r"unusable key.*small order"):
        conn.check_pin(pb.GetServerInfoResponse(server_public_key=identity))
    assert not Profile.load("default").server_key


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("http://localhost:7437", "has a scheme (http://): give only HOST:PORT"),
        ("https://games.example.org:7437", "and add --tls for a TLS server"),
        ("localhost", "has no port: give HOST:PORT"),
        ("localhost:", "has no port"),
        ("localhost:99999", "the port 99999 of the server address 'localhost:99999' is out of "),
        ("localhost:0", "is out of range (1-65535)"),
        ("localhost:abc", "the port 'abc' of the server address 'localhost:abc' is not a number"),
        ("localhost:7437/x", "is not a number"),
        (":7437", "names no host"),
        ("::1:7437", "write it in brackets"),
    ],
)
def test_a_wrong_server_address_says_what_is_wrong_with_it(given: str, says: str) -> None:
    """Issue 14.4: the address is checked before any connection, so a scheme or a bad port is
    not reported as an unresolvable host or a refused connection; it is a command-line error."""
    with pytest.raises(CliError) as refused:
        check_server_address(given)
    assert says in refused.value.message
    assert refused.value.code == EXIT_USAGE


@pytest.mark.parametrize(
    ("given", "address"),
    [
        ("localhost:7437", "localhost:7437"),
        (" 10.0.0.2:80 ", "10.0.0.2:80"),
        ("[::1]:7437", "[::1]:7437"),
    ],
)
def test_a_good_server_address_is_kept(given: str, address: str) -> None:
    assert check_server_address(given) == address
