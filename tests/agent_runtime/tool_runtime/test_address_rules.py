"""The address check's rules one by one, each refusal asserted by its reason (seed 003 §8.3).

The expected classes come from the IANA IPv4 and IPv6 special-purpose address registries and from
``inet_aton``'s spelling rules (what the system resolver accepts as a number), not from the code:
a host the resolver would read as an address must be read as the same address here, and anything
it would not read as an address is a name, left to the resolver (whose answers are vetted again).
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import IPv4Address, IPv6Address, ip_address
from pathlib import Path

import httpcore
import httpx
import pytest

from agent_runtime.tool_runtime import LocalToolRouter
from agent_runtime.tool_runtime.errors import DestinationRefused, ToolFailure
from agent_runtime.tool_runtime.tools.network.transport import GuardedNetworkBackend, GuardedTransport
from contracts.addresses import (
    AddressPolicy,
    as_address,
    embedded_ipv4,
    parse_host_ip,
    parse_ipv4_loose,
)
from contracts.errors import ErrorCode
from tests.agent_runtime.tool_runtime.support import (
    FakeResolver,
    LocalHTTPServer,
    call,
    failed_with,
    self_signed_context,
)

# (address, the reason the guard gives). Boundaries of each range on both sides where it has them.
REFUSED = [
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "private"),  # 0.0.0.0/8 "this network"
    ("127.0.0.1", "loopback"),
    ("127.255.255.255", "loopback"),
    ("169.254.0.0", "link-local"),
    ("169.254.255.255", "link-local"),
    ("224.0.0.0", "multicast"),
    ("239.255.255.255", "multicast"),
    ("100.64.0.0", "shared (carrier-grade NAT)"),
    ("100.127.255.255", "shared (carrier-grade NAT)"),
    ("10.0.0.0", "private"),
    ("10.255.255.255", "private"),
    ("172.16.0.0", "private"),
    ("172.31.255.255", "private"),
    ("192.168.0.0", "private"),
    ("192.168.255.255", "private"),
    ("192.0.2.1", "private"),  # TEST-NET-1, documentation only
    ("198.18.0.1", "private"),  # benchmarking
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("fe80::1", "link-local"),
    ("febf:ffff::1", "link-local"),
    ("ff02::1", "multicast"),
    ("ff0e::1", "multicast"),
    ("fc00::1", "unique-local"),
    ("fdff:ffff::1", "unique-local"),
    ("fec0::1", "site-local"),
    ("2001:db8::1", "private"),  # documentation
    ("4000::1", "reserved"),
    ("::1:0:0", "reserved"),  # just above the IPv4-compatible range
    ("::1:ffff:ffff", "reserved"),  # IETF-reserved, never allocated: not public although not "private"
    ("::ffff:8.8.8.8", "IPv4-mapped or IPv4-compatible"),  # only a socket's view of IPv4
    ("::ffff:127.0.0.1", "IPv4-mapped or IPv4-compatible"),
    ("::8.8.8.8", "IPv4-mapped or IPv4-compatible"),
    ("::2", "IPv4-mapped or IPv4-compatible"),
    ("2002:a00:1::1", "private (embedded IPv4 10.0.0.1)"),  # 6to4
    ("2002:7f00:1::", "loopback (embedded IPv4 127.0.0.1)"),
    ("64:ff9b::a9fe:a9fe", "link-local (embedded IPv4 169.254.169.254)"),  # NAT64
    ("64:ff9b:1::a00:1", "private (embedded IPv4 10.0.0.1)"),  # local-use NAT64
    ("::ffff:0:7f00:1", "loopback (embedded IPv4 127.0.0.1)"),  # SIIT IPv4-translated
    # Teredo: server 65.54.227.120, client 127.0.0.1 (stored inverted).
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback (embedded IPv4 127.0.0.1)"),
]

ALLOWED = [
    "8.8.8.8",
    "1.0.0.1",
    "100.63.255.255",  # just below shared space
    "100.128.0.0",  # just above it
    "172.15.255.255",
    "172.32.0.0",
    "169.253.255.255",
    "223.255.255.255",
    "11.0.0.0",
    "2606:4700:4700::1111",
    "2002:808:808::1",  # 6to4 of a public address
    "2a00:1450:4001::200e",
    "2001:4860:4860::8888",
]


@pytest.mark.parametrize(("address", "reason"), REFUSED)
def test_each_refused_address_is_refused_for_its_reason(address: str, reason: str) -> None:
    assert AddressPolicy().problem(ip_address(address)) == reason
    assert AddressPolicy(allow_loopback=True).problem(ip_address(address)) == reason or address in (
        "127.0.0.1",
        "127.255.255.255",
        "::1",
    )


@pytest.mark.parametrize("address", ALLOWED)
def test_public_unicast_addresses_are_allowed(address: str) -> None:
    assert AddressPolicy().problem(ip_address(address)) is None


@pytest.mark.parametrize("address", ["127.0.0.1", "127.255.255.255", "::1"])
def test_allowing_loopback_admits_loopback_and_only_loopback(address: str) -> None:
    policy = AddressPolicy(allow_loopback=True)
    assert policy.problem(ip_address(address)) is None
    assert policy.host_problem(address) is None
    assert policy.host_problem("localhost") is None
    assert AddressPolicy().problem(ip_address(address)) == "loopback"


@pytest.mark.parametrize(
    "address", ["0.0.0.0", "::", "::ffff:127.0.0.1", "::127.0.0.1", "10.0.0.1", "fe80::1"]
)
def test_allowing_loopback_admits_nothing_that_only_leads_to_it(address: str) -> None:
    assert AddressPolicy(allow_loopback=True).problem(ip_address(address)) is not None


def test_a_scope_id_does_not_change_the_verdict() -> None:
    policy = AddressPolicy()
    assert policy.problem(IPv6Address("fe80::1%eth0")) == "link-local"
    assert policy.problem(IPv6Address("2606:4700:4700::1111%eth0")) is None
    assert AddressPolicy(allow_loopback=True).problem(IPv6Address("::1%lo")) is None


# ---------------------------------------------------------------- hosts as written in a URL


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("127.0.0.1", "a loopback address"),
        ("127.0.0.1.", "a loopback address"),
        ("[::1]", "a loopback address"),
        ("[::]", "a unspecified address"),
        ("[FE80::1]", "a link-local address"),
        ("[fe80::1%25eth0]", "fe80::1%eth0, a link-local address"),
        ("[fc00::1]", "a unique-local address"),
        ("[fec0::1]", "a site-local address"),
        ("[ff02::1]", "a multicast address"),
        ("[4000::1]", "a reserved address"),
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1, a IPv4-mapped or IPv4-compatible address"),
        ("[64:ff9b::127.0.0.1]", "64:ff9b::7f00:1, a loopback (embedded IPv4 127.0.0.1) address"),
        ("127.1", "127.0.0.1, a loopback address"),
        ("0x7f.1", "127.0.0.1, a loopback address"),
        ("2852039166", "169.254.169.254, a link-local address"),
        ("0300.0250.0.1", "192.168.0.1, a private address"),
        ("100.64.0.1", "a shared (carrier-grade NAT) address"),
        ("10.0.0.0X", "10.0.0.0, a private address"),  # "0X" alone is zero to inet_aton
        ("localhost", "a local host name"),
        ("LOCALHOST.", "a local host name"),
        ("db.localhost", "a local host name"),
    ],
)
def test_a_refused_host_is_named_with_the_address_it_denotes(host: str, reason: str) -> None:
    assert AddressPolicy().host_problem(host) == reason


@pytest.mark.parametrize(
    "host",
    [
        "example.com",
        "8.8.8.8",
        "[2606:4700:4700::1111]",
        "localhost.example.com",
        "notlocalhost",
        "LOCALHOSTX",
        "0x08.8.8.8",
    ],
)
def test_public_hosts_and_names_pass_the_host_check(host: str) -> None:
    assert AddressPolicy().host_problem(host) is None


# ---------------------------------------------------------------- IPv4 spellings (inet_aton's rules)


@pytest.mark.parametrize(
    ("spelling", "address"),
    [
        ("1.2.3.4", "1.2.3.4"),
        ("255.255.255.255", "255.255.255.255"),
        ("1.2.3.255", "1.2.3.255"),  # last part of four: one byte
        ("1.2.65535", "1.2.255.255"),  # last part of three: two bytes
        ("1.16777215", "1.255.255.255"),  # last part of two: three bytes
        ("4294967295", "255.255.255.255"),  # one part: all four bytes
        ("255.1", "255.0.0.1"),
        ("0xff.0xff.0xff.0xff", "255.255.255.255"),
        ("0377.0377.0377.0377", "255.255.255.255"),
        ("0x.0", "0.0.0.0"),  # "0x" alone is zero to inet_aton
        ("00", "0.0.0.0"),
        ("07", "0.0.0.7"),
        ("010.0.0.1", "8.0.0.1"),  # leading zero: octal, not decimal
        ("0xA.0XB.0xc.0Xd", "10.11.12.13"),
    ],
)
def test_every_inet_aton_spelling_denotes_the_same_address(spelling: str, address: str) -> None:
    assert parse_ipv4_loose(spelling) == IPv4Address(address)
    assert parse_host_ip(spelling) == IPv4Address(address)


@pytest.mark.parametrize(
    "spelling",
    [
        "256.1.1.1",  # a leading part above one byte
        "1.256.1.1",
        "1.1.256.1",
        "1.2.3.256",  # the last part above what is left
        "1.2.65536",
        "1.16777216",
        "4294967296",
        "0x100.1",
        "0400.1",
        "1.2.3.4.5",
        "1.2.3.4.0",
        "1..2.3",
        ".1.2.3",
        "1.2.3.4..",
        "08",
        "09.1",
        "0x1g",
        "1e3",
        "-1",
        "0-1.0.0.1",  # would be a negative number to int()
        "1.2.3.0-1",
        "0+7.1",
        "0x-1.1",
        "0x7f_00_00_01",  # int() reads underscores; inet_aton does not
        "1_0.1",
        "0 7.1",
        " 127.1",
        "１２７.0.0.1",  # fullwidth digits
        "٣.0.0.1",  # Arabic-Indic digits
        "0١٢٧.0.0.1",  # non-ASCII octal digits
        "0x١.0.0.1",  # non-ASCII hex digits
        "127.0.0.1²",
        "",
    ],
)
def test_what_inet_aton_would_not_read_is_a_name_not_an_address(spelling: str) -> None:
    assert parse_ipv4_loose(spelling) is None


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("[::1]", "::1"),
        ("::1", "::1"),
        ("[fe80::1%25eth0]", "fe80::1%eth0"),
        (" 10.0.0.1 ", "10.0.0.1"),
        ("10.0.0.1.", "10.0.0.1"),
    ],
)
def test_url_host_literals_are_read_as_their_address(host: str, address: str) -> None:
    assert parse_host_ip(host) == ip_address(address)


@pytest.mark.parametrize("host", ["[::1", "::1]", "[::g]", "[1.2.3.4]x", "[]", "[example.com]", "1.2.3.4.."])
def test_malformed_literals_are_not_addresses(host: str) -> None:
    assert parse_host_ip(host) is None


@pytest.mark.parametrize(
    ("url", "code", "words"),
    [
        # The URL rule the policy shares reads a leading number as an attempted IP literal.
        ("http://0-1.0.0.1/", ErrorCode.INVALID_REQUEST, "not a valid one"),
        ("http://0x-1.1/", ErrorCode.INVALID_REQUEST, "not a valid one"),
        # Not an address, so a name the (fake) resolver does not know.
        ("http://1.2.3.0-1/", ErrorCode.TOOL_EXECUTION_FAILED, "Could not resolve host 1.2.3.0-1"),
    ],
)
async def test_a_host_that_only_looks_numeric_is_a_clear_refusal_not_a_crash(
    workspace: Path, url: str, code: ErrorCode, words: str
) -> None:
    tools = LocalToolRouter(workspace_root=workspace, resolver=FakeResolver({}))
    try:
        result = await tools.execute(call("HttpRequest", url=url))
    finally:
        await tools.aclose()
    assert failed_with(result, code), result
    assert result.error is not None
    assert words in result.error.message


def test_embedded_ipv4_names_the_address_each_tunnelling_scheme_routes_to() -> None:
    assert embedded_ipv4(IPv6Address("2002:a00:1::1")) == [IPv4Address("10.0.0.1")]
    assert embedded_ipv4(IPv6Address("64:ff9b::a00:1")) == [IPv4Address("10.0.0.1")]
    assert embedded_ipv4(IPv6Address("64:ff9b:1::a00:1")) == [IPv4Address("10.0.0.1")]
    assert embedded_ipv4(IPv6Address("::ffff:0:a00:1")) == [IPv4Address("10.0.0.1")]
    assert embedded_ipv4(IPv6Address("2001:0:4136:e378:8000:63bf:80ff:fffe")) == [
        IPv4Address("65.54.227.120"),
        IPv4Address("127.0.0.1"),
    ]
    assert embedded_ipv4(IPv6Address("2606:4700:4700::1111")) == []
    assert embedded_ipv4(IPv6Address("64:ff9c::a00:1")) == []


@pytest.mark.parametrize(
    ("answer", "address"),
    [("10.0.0.1", "10.0.0.1"), ("fe80::1%eth0", "fe80::1"), ("::1", "::1"), ("name", None), ("", None)],
)
def test_a_resolver_answer_is_read_as_an_address_or_not_at_all(answer: str, address: str | None) -> None:
    assert as_address(answer) == (ip_address(address) if address else None)


# ---------------------------------------------------------------- the connection-time guard


class Recording(httpcore.AsyncNetworkBackend):
    """The socket layer, played by the test: records each connect and fails or succeeds as told."""

    def __init__(self, fail: Iterable[str] = ()) -> None:
        self.connected: list[tuple[str, int, float | None]] = []
        self.fail = set(fail)
        self.slept: list[float] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.connected.append((host, port, timeout))
        if host in self.fail:
            raise httpcore.ConnectError(f"refused by {host}")
        return Stream()

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


class Stream(httpcore.AsyncNetworkStream):
    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        return None

    async def aclose(self) -> None:
        return None


async def refusal(backend: GuardedNetworkBackend, host: str) -> str:
    with pytest.raises(DestinationRefused) as caught:
        await backend.connect_tcp(host, 443)
    return str(caught.value)


async def test_the_connect_guard_names_what_it_refused_and_why() -> None:
    inner = Recording()
    resolver = FakeResolver({"inside.test": [["93.184.216.34", "10.0.0.7"]], "weird.test": [["not-an-ip"]]})
    backend = GuardedNetworkBackend(resolver, AddressPolicy(), inner)
    assert await refusal(backend, "inside.test") == (
        "Refused to connect to inside.test: it resolves to 10.0.0.7, a private address; "
        "requests to loopback, private and link-local networks are refused"
    )
    assert await refusal(backend, "[::1]") == (
        "Refused to connect to [::1]: a loopback address; "
        "requests to loopback, private and link-local networks are refused"
    )
    assert (
        await refusal(backend, "weird.test")
        == "Refused to connect to weird.test: the resolver gave no IP address"
    )
    assert "local socket" in str(await _unix_refusal(backend))
    assert inner.connected == []


async def _unix_refusal(backend: GuardedNetworkBackend) -> DestinationRefused:
    with pytest.raises(DestinationRefused) as caught:
        await backend.connect_unix_socket("/run/docker.sock", timeout=1.0)
    return caught.value


async def test_a_name_without_an_answer_is_a_lookup_failure_not_a_refusal() -> None:
    backend = GuardedNetworkBackend(FakeResolver({"empty.test": [[]]}), AddressPolicy(), Recording())
    for host in ("empty.test", "unknown.test"):
        with pytest.raises(ToolFailure) as caught:
            await backend.connect_tcp(host, 80)
        assert caught.value.code is ErrorCode.TOOL_EXECUTION_FAILED
        assert str(caught.value) == f"Could not resolve host {host}" or host in caught.value.message


async def test_a_literal_connects_directly_without_a_lookup() -> None:
    inner = Recording()
    resolver = FakeResolver({})
    backend = GuardedNetworkBackend(resolver, AddressPolicy(), inner)
    await backend.connect_tcp("8.8.8.8", 53, timeout=2.5)
    await backend.connect_tcp("[2606:4700:4700::1111]", 443)
    assert inner.connected == [("8.8.8.8", 53, 2.5), ("2606:4700:4700::1111", 443, None)]
    assert resolver.asked == []


async def test_each_vetted_address_is_tried_in_turn_and_the_last_failure_is_raised() -> None:
    inner = Recording(fail={"93.184.216.34"})
    resolver = FakeResolver({"two.test": [["93.184.216.34", "93.184.216.35"]]})
    backend = GuardedNetworkBackend(resolver, AddressPolicy(), inner)
    assert isinstance(await backend.connect_tcp("two.test", 80), Stream)
    assert [host for host, _, _ in inner.connected] == ["93.184.216.34", "93.184.216.35"]

    inner = Recording(fail={"93.184.216.34", "93.184.216.35"})
    backend = GuardedNetworkBackend(
        FakeResolver({"two.test": [["93.184.216.34", "93.184.216.35"]]}), AddressPolicy(), inner
    )
    with pytest.raises(httpcore.ConnectError, match=r"refused by 93\.184\.216\.35"):
        await backend.connect_tcp("two.test", 80)
    assert len(inner.connected) == 2


async def test_sleeping_is_the_inner_backends() -> None:
    inner = Recording()
    await GuardedNetworkBackend(FakeResolver({}), AddressPolicy(), inner).sleep(0.25)
    assert inner.slept == [0.25]


# ---------------------------------------------------------------- the transport over a real local server


class Counting(httpcore.AsyncNetworkBackend):
    """The real socket layer, counting connects and closes (and failing the first ``fail`` connects)."""

    def __init__(self, fail: int = 0) -> None:
        self.real = httpcore.AnyIOBackend()
        self.connects = 0
        self.closed = 0
        self.fail = fail

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.connects += 1
        if self.connects <= self.fail:
            raise httpcore.ConnectError("the first connect fails")
        stream = await self.real.connect_tcp(host, port, timeout=timeout)
        return Closing(stream, self)

    async def sleep(self, seconds: float) -> None:
        await self.real.sleep(seconds)


class Closing(httpcore.AsyncNetworkStream):
    def __init__(self, stream: httpcore.AsyncNetworkStream, owner: Counting) -> None:
        self.stream = stream
        self.owner = owner

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self.stream.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self.stream.write(buffer, timeout)

    async def aclose(self) -> None:
        self.owner.closed += 1
        await self.stream.aclose()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        return Closing(await self.stream.start_tls(ssl_context, server_hostname, timeout), self.owner)

    def get_extra_info(self, info: str) -> object:
        return self.stream.get_extra_info(info)


@pytest.fixture
def local_server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as local:
        yield local


def _client(counting: Counting) -> httpx.AsyncClient:
    backend = GuardedNetworkBackend(FakeResolver({}), AddressPolicy(allow_loopback=True), counting)
    return httpx.AsyncClient(transport=GuardedTransport(backend))


async def test_closing_a_response_closes_its_connection(local_server: LocalHTTPServer) -> None:
    # The test server speaks HTTP/1.0: each response ends its connection once the body is closed.
    counting = Counting()
    async with _client(counting) as client:
        for _ in range(2):
            response = await client.get(local_server.url("/hello"))
            assert (response.status_code, response.text) == (200, "hello from the test server")
        assert (counting.connects, counting.closed) == (2, 2)
        async with client.stream("GET", local_server.url("/hello")) as streamed:
            assert streamed.status_code == 200
            assert counting.closed == 2  # open while the body may still be read
        assert counting.closed == 3


async def test_the_transport_never_retries_a_failed_connect_by_itself(local_server: LocalHTTPServer) -> None:
    counting = Counting(fail=1)
    async with _client(counting) as client:
        with pytest.raises(httpcore.ConnectError):  # untranslated: the tool maps it (see transport)
            await client.get(local_server.url("/hello"))
        assert counting.connects == 1
        assert (await client.get(local_server.url("/hello"))).status_code == 200


async def test_a_local_socket_is_refused_by_name() -> None:
    backend = GuardedNetworkBackend(FakeResolver({}), AddressPolicy(allow_loopback=True), Recording())
    with pytest.raises(DestinationRefused) as caught:
        await backend.connect_unix_socket("/run/docker.sock")
    assert str(caught.value) == "Refused to connect to a local socket"


async def test_closing_the_client_closes_a_connection_still_in_use(local_server: LocalHTTPServer) -> None:
    counting = Counting()
    client = _client(counting)
    response = await client.send(client.build_request("GET", local_server.url("/hello")), stream=True)
    assert response.status_code == 200
    assert counting.closed == 0
    await client.aclose()
    assert counting.closed == 1


async def test_certificates_are_trusted_from_the_system_store_only_not_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SSL_CERT_FILE pointing at an attacker's CA must not make the agent's requests trust it.
    with LocalHTTPServer(tls=self_signed_context(tmp_path)) as server:
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "cert.pem"))
        monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
        async with _client(Counting()) as client:
            with pytest.raises(httpcore.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.get(server.url("/hello").replace("http://", "https://"))
        # The control: the same file, trusted explicitly, does verify the server.
        trusting = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
        async with httpx.AsyncClient(verify=trusting) as direct:
            assert (await direct.get(server.url("/hello").replace("http://", "https://"))).status_code == 200


async def test_at_most_twenty_connections_are_open_at_once(local_server: LocalHTTPServer) -> None:
    counting = Counting()
    async with _client(counting) as client:
        held = [
            await client.send(client.build_request("GET", local_server.url("/hello")), stream=True)
            for _ in range(20)
        ]
        assert counting.connects == 20
        with pytest.raises(httpcore.PoolTimeout):  # untranslated, as the transport documents
            await client.get(local_server.url("/hello"), timeout=httpx.Timeout(5.0, pool=0.2))
        await held[0].aclose()
        assert (await client.get(local_server.url("/hello"))).status_code == 200
        for response in held[1:]:
            await response.aclose()


class _KeepAlive(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # connections stay open between requests

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        return

    def do_GET(self) -> None:
        body = b"kept alive"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


async def test_at_most_ten_idle_connections_are_kept_for_reuse() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _KeepAlive)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        counting = Counting()
        async with _client(counting) as client:
            held = [await client.send(client.build_request("GET", url), stream=True) for _ in range(20)]
            for response in held:
                await response.aread()
                await response.aclose()
            assert (counting.connects, counting.closed) == (20, 10)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
