"""Server configuration: defaults < file < environment < command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.config import ConfigFileError, ServerConfig, load_config


def test_defaults_use_the_platform_data_dir() -> None:
    config = load_config(env={}, data_dir=None)
    assert config.db_url == f"sqlite:///{config.data_dir / 'canasta.db'}"
    assert config.registration == "open"
    assert not config.tls


def test_file_then_environment_then_options(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_text(
        'listen = "0.0.0.0:9000"\nregistration = "invite"\ntoken_ttl_seconds = 60\n'
        f'data_dir = "{tmp_path}"\n'
    )
    config = load_config(path, env={"CANASTA_SERVER_TOKEN_TTL_SECONDS": "90"})
    assert config.listen == "0.0.0.0:9000"
    assert config.registration == "invite"
    assert config.token_ttl_seconds == 90
    assert config.data_dir == tmp_path
    config = load_config(path, env={}, listen="127.0.0.1:1")
    assert config.listen == "127.0.0.1:1"
    via_env = load_config(env={"CANASTA_SERVER_CONFIG": str(path)})
    assert via_env.registration == "invite"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('registration = "closed"', "registration must be"),
        ('no_such = "x"', "unknown setting"),
        ("max_message_bytes = -1", "must be positive"),
        ("feed_poll_ms = 0", "feed_poll_ms must be positive"),
        ('tls_cert = "cert.pem"', "go together"),
        ('max_workers = "many"', "whole number"),
        ("listen = [", "not valid TOML"),
        ("max_connections = 0", "max_connections must be 1 to 1000000"),
        ("max_connections_per_peer = -1", "max_connections_per_peer must be 0 to"),
        ("idle_connection_seconds = 0", "idle_connection_seconds must be 1 to 86400"),
        ("handshake_seconds = 0.01", "handshake_seconds must be 0.1 to 300"),
        ('handshake_seconds = "soon"', "must be a number"),
        ("limit_reads_per_minute = -1", "limit_reads_per_minute must be 0"),
        ("limit_smtp_connections = 0", "limit_smtp_connections must be 1 to 10000"),
        ("limit_smtp_connections_per_peer = 1001", "must be 1 to 1000"),
        ("limit_smtp_mails_per_minute = -1", "limit_smtp_mails_per_minute must be 0 to 100000"),
        ("limit_smtp_mails_per_minute_per_peer = 100001", "must be 0 to 100000"),
        ("test_clock_speed = 60", "allow_test_clock = true"),
        ("test_clock_speed = 0\nallow_test_clock = true", "test_clock_speed must be 1 to"),
        ('allow_test_clock = "perhaps"', "true or false"),
    ],
)
def test_bad_settings_are_explained(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "server.toml"
    path.write_text(text)
    with pytest.raises(ConfigFileError, match=words):
        load_config(path, env={})


def test_a_test_clock_shortens_the_hours_of_every_time_control(tmp_path: Path) -> None:
    """Issue 28: on a test server at 1440x an hour lasts 2.5 s, and so do reminders' hours."""
    real = load_config(env={}, data_dir=tmp_path)
    assert (real.hour_ms, real.reminders_ms) == (3_600_000, (86_400_000, 7_200_000))
    env = {"CANASTA_SERVER_TEST_CLOCK_SPEED": "1440", "CANASTA_SERVER_ALLOW_TEST_CLOCK": "yes"}
    fast = load_config(env=env, data_dir=tmp_path)
    assert (fast.hour_ms, fast.reminders_ms) == (2_500, (60_000, 5_000))


def test_feed_poll_interval(tmp_path: Path) -> None:
    assert load_config(env={}, data_dir=tmp_path).feed_poll_ms == 250
    path = tmp_path / "server.toml"
    path.write_text("feed_poll_ms = 100\n")
    assert load_config(path, env={}).feed_poll_ms == 100
    env = {"CANASTA_SERVER_FEED_POLL_MS": "40"}
    assert load_config(path, env=env).feed_poll_ms == 40


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match="cannot read"):
        load_config(tmp_path / "nope.toml", env={})


def test_database_url_setting(tmp_path: Path) -> None:
    config = ServerConfig(data_dir=tmp_path, database_url="postgresql+psycopg://x@y/z")
    assert config.db_url == "postgresql+psycopg://x@y/z"


@pytest.mark.parametrize(
    "url",
    ["sqlite://", "sqlite:///:memory:", "sqlite:///file:/tmp/x.db?uri=true", "not a url"],
)
def test_a_sqlite_database_is_a_plain_file_path(url: str) -> None:
    """The use lock beside the file and `restore` need the one file a URL names."""
    with pytest.raises(ConfigFileError, match="database_url"):
        ServerConfig(database_url=url)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"smtp_listen": "nohost"}, "smtp_listen is host:port"),
        ({"smtp_listen": "127.0.0.1:2525"}, "smtp_listen needs mail_from"),
        ({"metrics_listen": "127.0.0.1:99999"}, "metrics_listen is host:port"),
    ],
)
def test_listening_addresses_are_checked_with_the_settings(
    settings: dict[str, str], message: str
) -> None:
    """A bad address is one clear line at start, not a traceback from the listener."""
    with pytest.raises(ConfigFileError, match=message):
        ServerConfig(**settings)  # type: ignore[arg-type]
