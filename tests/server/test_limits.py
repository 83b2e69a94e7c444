"""The token buckets of ``server.edge.limits``, with a clock the test moves."""

from __future__ import annotations

import pytest

from server.edge.limits import ConnectionCaps, RateLimit, address_key, peer_host
from server.service.errors import LimitExceededError


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_of_n_then_n_a_minute() -> None:
    clock = Clock()
    limit = RateLimit(6, "you", clock=clock)
    for _ in range(6):
        limit.spend("a")
    with pytest.raises(LimitExceededError, match="at most 6 a minute; try again in 10 s"):
        limit.spend("a")
    limit.spend("b")  # another key has its own bucket
    clock.now += 10  # one call's worth refilled
    limit.spend("a")
    with pytest.raises(LimitExceededError):
        limit.spend("a")


def test_zero_is_no_limit_and_the_map_is_bounded() -> None:
    unlimited = RateLimit(0, "you")
    for _ in range(1000):
        unlimited.spend("a")
    bounded = RateLimit(1, "you", max_tracked=10)
    for n in range(100):
        bounded.spend(str(n))
    assert bounded.tracked == 10
    bounded.spend("0")  # forgotten, so full again


@pytest.mark.parametrize(
    ("peer", "host"),
    [
        ("ipv4:192.0.2.7:51234", "ipv4:192.0.2.7"),
        ("ipv6:[2001:db8:1:2:3:4:5:6]:443", "ipv6:2001:db8:1:2::/64"),
        ("ipv6:[2001:db8:1:2::99]:443", "ipv6:2001:db8:1:2::/64"),
        ("ipv6:[::ffff:192.0.2.7]:443", "ipv4:192.0.2.7"),
        ("ipv6:[::1]:7437", "ipv6:::/64"),
        ("unix:/run/canasta.sock", "unix:/run/canasta.sock"),
    ],
)
def test_peer_host(peer: str, host: str) -> None:
    assert peer_host(peer) == host


def test_connection_caps_per_address_and_in_all() -> None:
    caps = ConnectionCaps("gRPC", total=3, per_peer=2)
    assert caps.admit("a")
    assert caps.admit("a")
    assert not caps.admit("a")  # its own cap
    assert caps.admit("b")
    assert not caps.admit("c")  # the total
    caps.release("a")
    assert caps.admit("c")
    assert caps.open == 3
    for name in ("a", "b", "c"):
        caps.release(name)
    assert caps.open == 0
    assert [caps.admit("a") for _ in range(3)] == [True, True, False]


def test_connection_refusals_are_logged_once_a_minute_per_address(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    caps = ConnectionCaps("metrics", total=100, per_peer=1, clock=clock)
    caps.admit("a")
    caps.admit("b")
    for _ in range(50):
        caps.admit("a")
        caps.admit("b")
        clock.now += 1
    lines = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(lines) == 2  # one for each address in the first minute
    clock.now += 20  # past the minute
    caps.admit("a")
    lines = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(lines) == 3
    assert "metrics: refused 50 connection(s) from a" in lines[2]  # 49 not logged, and this


def test_address_key() -> None:
    assert address_key("192.0.2.7") == "ipv4:192.0.2.7"
    assert address_key("2001:db8:1:2::99") == "ipv6:2001:db8:1:2::/64"
    assert address_key("::ffff:192.0.2.7") == "ipv4:192.0.2.7"
    assert address_key("fe80::1%eth0") == "ipv6:fe80::/64"
