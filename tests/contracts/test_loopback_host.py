"""``is_loopback_host``: the one rule for "this URL's host is this machine", by spelling alone."""

from __future__ import annotations

import pytest

from contracts.addresses import is_loopback_host


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "LocalHost",
        "127.0.0.1",
        "127.8.9.10",
        "::1",
        "[::1]",
        "::ffff:127.0.0.1",
        "[::ffff:7f00:1]",
    ],
)
def test_this_machine_in_every_plain_spelling(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize(
    "host",
    [
        "",
        "example.com",
        "app.localhost",  # a name: resolved by whoever answers, not trusted to stay on this machine
        "localhost.example.com",
        "10.0.0.1",
        "::ffff:10.0.0.1",
        "0.0.0.0",
        "::",
        "128.0.0.1",
        "[127.0.0.1",
    ],
)
def test_other_hosts_and_names_are_not(host: str) -> None:
    assert not is_loopback_host(host)
