"""The SSRF guard (seed 003 §8.3): every spelling of a local or private address is refused.

A real server listens on 127.0.0.1; each URL below names it (or another non-public address) in a
different spelling. The router here does NOT admit loopback. Zero bypasses means: every call fails
with INVALID_REQUEST and the server never sees a request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from ipaddress import ip_address
from pathlib import Path

import httpcore
import pytest

from agent_runtime.tool_runtime import LocalToolRouter
from agent_runtime.tool_runtime.errors import DestinationRefused
from agent_runtime.tool_runtime.tools.network.transport import GuardedNetworkBackend
from contracts.addresses import AddressPolicy, parse_host_ip, parse_ipv4_loose
from contracts.errors import ErrorCode
from tests.agent_runtime.tool_runtime.support import FakeResolver, LocalHTTPServer, call, failed_with

# {port} is the local server's port.
SPELLINGS = [
    # loopback, IPv4 in every inet_aton form
    "http://127.0.0.1:{port}/",
    "http://127.1:{port}/",
    "http://127.0.1:{port}/",
    "http://0x7f.1:{port}/",
    "http://0x7f000001:{port}/",
    "http://0X7F.0X0.0X0.0X1:{port}/",
    "http://2130706433:{port}/",
    "http://0177.0.0.1:{port}/",
    "http://0177.1:{port}/",
    "http://017700000001:{port}/",
    "http://127.000.000.001:{port}/",
    "http://127.0.0.1.:{port}/",
    "http://127.255.255.254:{port}/",
    "https://127.0.0.1:{port}/",
    "http://user:pass@127.0.0.1:{port}/",
    "http://public.test@127.0.0.1:{port}/",
    "http://127.0.0.1:{port}#@public.test/",
    # local names
    "http://localhost:{port}/",
    "http://localhost.:{port}/",
    "http://LOCALHOST:{port}/",
    "http://LocalHost.:{port}/",
    "http://api.localhost:{port}/",
    # loopback and unspecified, IPv6 and mapped forms
    "http://[::1]:{port}/",
    "http://[0:0:0:0:0:0:0:1]:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",
    "http://[::ffff:7f00:1]:{port}/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]:{port}/",
    "http://[::127.0.0.1]:{port}/",
    "http://[::ffff:0:127.0.0.1]:{port}/",
    "http://[64:ff9b::127.0.0.1]:{port}/",
    "http://[64:ff9b::7f00:1]:{port}/",
    "http://[2002:7f00:1::1]:{port}/",
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:{port}/",
    "http://0.0.0.0:{port}/",
    "http://0:{port}/",
    "http://[::]:{port}/",
    # private, link-local (cloud metadata), unique-local, multicast, reserved, shared
    "http://10.0.0.1/",
    "http://10.255.255.255/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0xa9fea9fe/",
    "http://2852039166/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:10.0.0.1]/",
    "http://[fe80::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[fc00::1]/",
    "http://[fd12:3456:789a::1]/",
    "http://[fec0::1]/",
    "http://224.0.0.1/",
    "http://239.255.255.250/",
    "http://[ff02::1]/",
    "http://100.64.0.1/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://192.0.2.1/",
    "http://198.18.0.1/",
    # names whose DNS answers are not public
    "http://private.test:{port}/",
    "http://loopback.test:{port}/",
    "http://v6-loopback.test:{port}/",
    "http://mapped.test:{port}/",
    "http://metadata.test/",
    "http://mixed.test:{port}/",
    "http://public.test:{port}@private.test:{port}/",
]

RESOLVER_ANSWERS = {
    "private.test": [["10.1.2.3"]],
    "loopback.test": [["127.0.0.1"]],
    "v6-loopback.test": [["::1"]],
    "mapped.test": [["::ffff:127.0.0.1"]],
    "metadata.test": [["169.254.169.254"]],
    # One public answer does not make the others safe.
    "mixed.test": [["93.184.216.34", "127.0.0.1"]],
}


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as local:
        yield local


@pytest.fixture
async def guarded(workspace: Path) -> AsyncIterator[LocalToolRouter]:
    tools = LocalToolRouter(workspace_root=workspace, resolver=FakeResolver(RESOLVER_ANSWERS))
    yield tools
    await tools.aclose()


def test_the_table_has_at_least_forty_spellings() -> None:
    assert len(set(SPELLINGS)) == len(SPELLINGS) >= 40


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_no_spelling_of_a_non_public_address_gets_through(
    guarded: LocalToolRouter, server: LocalHTTPServer, spelling: str
) -> None:
    before = len(server.requests)
    result = await guarded.execute(call("HttpRequest", url=spelling.format(port=server.port)))
    assert failed_with(result, ErrorCode.INVALID_REQUEST), result
    assert len(server.requests) == before


async def test_allowing_loopback_admits_only_loopback(workspace: Path, server: LocalHTTPServer) -> None:
    tools = LocalToolRouter(
        workspace_root=workspace, allow_loopback_http=True, resolver=FakeResolver(RESOLVER_ANSWERS)
    )
    try:
        assert (await tools.execute(call("HttpRequest", url=server.url("/hello")))).error is None
        for url in (
            f"http://[::ffff:127.0.0.1]:{server.port}/",
            f"http://private.test:{server.port}/",
            f"http://mapped.test:{server.port}/",
            "http://169.254.169.254/",
            "http://0.0.0.0/",
        ):
            result = await tools.execute(call("HttpRequest", url=url))
            assert failed_with(result, ErrorCode.INVALID_REQUEST), url
    finally:
        await tools.aclose()


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.216.34",
        "2606:4700:4700::1111",
        "2a00:1450:4001::200e",
        "2002:808:808::1",
    ],
)
def test_public_addresses_are_allowed(address: str) -> None:
    assert AddressPolicy().problem(ip_address(address)) is None


@pytest.mark.parametrize(
    ("spelling", "address"),
    [
        ("127.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("192.168.257", "192.168.1.1"),
        ("0", "0.0.0.0"),
    ],
)
def test_inet_aton_spellings_parse_to_the_address_the_os_would_use(spelling: str, address: str) -> None:
    assert parse_ipv4_loose(spelling) == ip_address(address)


@pytest.mark.parametrize("name", ["example.com", "1.2.3.4.5", "08.0.0.1", "256.0.0.1", "1.2.3.999999999", ""])
def test_names_that_are_not_ipv4_literals_are_left_to_the_resolver(name: str) -> None:
    assert parse_host_ip(name) is None


class RecordingBackend(httpcore.AsyncNetworkBackend):
    """Stands in for the socket layer: records where the guard asked it to connect."""

    def __init__(self) -> None:
        self.connected: list[tuple[str, int]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.connected.append((host, port))
        raise httpcore.ConnectError("recorded")

    async def sleep(self, seconds: float) -> None:
        return


async def test_the_guard_connects_to_the_address_it_vetted_not_a_new_lookup() -> None:
    resolver = FakeResolver({"site.test": [["127.0.0.1"], ["10.0.0.9"]]})
    inner = RecordingBackend()
    backend = GuardedNetworkBackend(resolver, AddressPolicy(allow_loopback=True), inner)
    with pytest.raises(httpcore.ConnectError):
        await backend.connect_tcp("site.test", 8080)
    assert inner.connected == [("127.0.0.1", 8080)]
    assert resolver.asked == ["site.test"]


async def test_the_guard_itself_refuses_literals_whatever_the_url_check_did() -> None:
    inner = RecordingBackend()
    backend = GuardedNetworkBackend(FakeResolver({}), AddressPolicy(), inner)
    for host in ("127.1", "0x7f000001", "::ffff:127.0.0.1", "169.254.169.254", "localhost"):
        with pytest.raises(DestinationRefused):
            await backend.connect_tcp(host, 80)
    with pytest.raises(DestinationRefused):
        await backend.connect_unix_socket("/var/run/docker.sock")
    assert inner.connected == []


async def test_every_resolved_address_must_be_allowed() -> None:
    inner = RecordingBackend()
    resolver = FakeResolver({"two.test": [["93.184.216.34", "10.0.0.1"]]})
    backend = GuardedNetworkBackend(resolver, AddressPolicy(), inner)
    with pytest.raises(DestinationRefused):
        await backend.connect_tcp("two.test", 80)
    assert inner.connected == []
