"""Where a webhook may point, judged without I/O (docs/domain.md §19)."""

from __future__ import annotations

import ipaddress

import pytest

from campaigns.domain.webhook_targets import (
    WebhookRefused,
    WebhookTarget,
    check_address,
    parse_networks,
)
from campaigns.domain.webhook_targets import parse_target as parse_parts
from campaigns.outbound import split


def parse_target(url: str, *, allow_http: bool) -> WebhookTarget:
    return parse_parts(split(url), allow_http=allow_http)


REFUSED_ADDRESSES = [
    "127.0.0.1",
    "127.1.2.3",
    "0.0.0.0",
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "100.64.0.1",  # shared address space (CGNAT)
    "169.254.169.254",  # cloud metadata
    "224.0.0.1",  # multicast: ipaddress calls it global
    "255.255.255.255",
    "192.0.2.1",  # documentation
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
]


@pytest.mark.parametrize("address", REFUSED_ADDRESSES)
def test_every_non_public_address_is_refused(address: str) -> None:
    with pytest.raises(WebhookRefused):
        check_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"])
def test_public_addresses_pass(address: str) -> None:
    check_address(ipaddress.ip_address(address))


def test_the_operator_may_allow_a_network() -> None:
    allowed = parse_networks(["10.1.2.0/24"])
    check_address(ipaddress.ip_address("10.1.2.3"), allowed)
    with pytest.raises(WebhookRefused):
        check_address(ipaddress.ip_address("10.1.3.3"), allowed)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hooks.example.org/",
        "http://hooks.example.org/",  # http only where allowed
        "file:///etc/passwd",
        "gopher://hooks.example.org/",
        "https://localhost/",
        "https://LOCALHOST./",
        "https://metadata.google.internal/computeMetadata/v1/",
        "https://printer.local/",
        "https://user:pw@hooks.example.org/",
        "https://[::1]/",
        "https://[::ffff:169.254.169.254]/",
        "https://169.254.169.254/latest/meta-data/",
        "https:///no-host",
        "https://hooks.example.org:99999/",
    ],
)
def test_urls_that_could_turn_inward_are_refused(url: str) -> None:
    with pytest.raises(WebhookRefused):
        parse_target(url, allow_http=False)


def test_a_public_https_url_parses_to_what_the_worker_connects_with() -> None:
    target = parse_target("https://Hooks.Example.org/desk?x=1", allow_http=False)
    assert (target.scheme, target.host, target.port, target.path) == (
        "https",
        "hooks.example.org",
        443,
        "/desk?x=1",
    )
    assert parse_target("http://hooks.example.org:8080", allow_http=True).port == 8080
