"""The SSRF guard where it cannot be bypassed: in the connection itself (seed 003 §8.3).

One transport for both places that fetch URLs on the agent's behalf — the tool runtime's
``HttpRequest`` (the user's machine) and the Backend Tool Service's ``WebFetch`` (the organisation's
egress) — over one address rule (:class:`contracts.addresses.AddressPolicy`).

:class:`GuardedNetworkBackend` is an httpcore network backend. Asked to connect to a host, it resolves
the name once with the injected resolver, refuses if *any* answer is not allowed, and then connects to a
vetted address itself — so a second, rebinding DNS answer is never used, and every redirect hop is
checked because every hop connects through here. TLS still verifies the original host name (httpcore
passes it for SNI and certificate checks). :class:`GuardedTransport` puts that backend under an httpx
client: httpx's own transport offers no way to choose the network backend. Loopback is reachable only
with ``AddressPolicy(allow_loopback=True)``, a test/development setting.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import typing
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Sequence
from typing import Protocol, runtime_checkable

import httpcore
import httpx

from contracts.addresses import AddressPolicy, IPAddress, as_address, parse_host_ip

__all__ = [
    "EgressRefused",
    "GuardedNetworkBackend",
    "GuardedTransport",
    "HostNotFound",
    "Resolver",
    "SystemResolver",
]

_WHY = "requests to loopback, private and link-local networks are refused"


class EgressRefused(Exception):
    """A destination the guard refuses; the message says which and why."""


class HostNotFound(Exception):
    """A host name that does not resolve."""


@runtime_checkable
class Resolver(Protocol):
    """Name resolution, injectable so that tests can play DNS (rebinding, private answers)."""

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        """Every address ``host`` resolves to, as IP strings; raise ``OSError`` when it does not."""
        ...


class SystemResolver:
    """The OS resolver (``getaddrinfo``), run by the event loop off its thread."""

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        loop = asyncio.get_running_loop()
        answers = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
        return list(dict.fromkeys(str(sockaddr[0]) for *_, sockaddr in answers))


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    """Connects only to addresses the policy allows.

    A refusal raises what :meth:`refused` makes and an unresolvable host what :meth:`not_found`
    makes: :class:`EgressRefused` and :class:`HostNotFound` here; a caller with an error vocabulary of
    its own (the tool runtime's seed error codes) overrides the two.
    """

    def __init__(
        self,
        resolver: Resolver,
        policy: AddressPolicy,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._resolver = resolver
        self._policy = policy
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()

    def refused(self, message: str) -> Exception:
        return EgressRefused(message)

    def not_found(self, message: str) -> Exception:
        return HostNotFound(message)

    async def vet(self, host: str, port: int) -> list[IPAddress]:
        """The addresses ``host`` may be reached at; raises :meth:`refused` if any answer is not allowed."""
        problem = self._policy.host_problem(host)
        if problem is not None:
            raise self.refused(f"Refused to connect to {host}: {problem}; {_WHY}")
        literal = parse_host_ip(host)
        if literal is not None:
            return [literal]
        try:
            answers = await self._resolver.resolve(host, port)
        except OSError as exc:
            raise self.not_found(f"Could not resolve host {host}") from exc
        addresses: list[IPAddress] = []
        for answer in answers:
            address = as_address(answer)
            if address is None:
                raise self.refused(f"Refused to connect to {host}: the resolver gave no IP address")
            problem = self._policy.problem(address)
            if problem is not None:
                raise self.refused(
                    f"Refused to connect to {host}: it resolves to {address}, a {problem} address; {_WHY}"
                )
            addresses.append(address)
        if not addresses:
            raise self.not_found(f"Could not resolve host {host}")
        return addresses

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        failure: httpcore.ConnectError | None = None
        for address in await self.vet(host, port):
            try:
                return await self._inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:
                failure = exc  # try the next vetted address, as a resolver-driven connect would
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise self.refused("Refused to connect to a local socket")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over an httpcore pool that connects only through ``GuardedNetworkBackend``.

    httpcore's errors pass through untranslated; each caller maps them once, to its own codes, where
    they leave its network code. Without ``ssl_context`` it makes one that ignores the environment
    (``SSL_CERT_FILE`` and the like); a caller that builds many transports passes one made once, as
    loading the certificates takes tens of milliseconds.
    """

    def __init__(
        self,
        backend: GuardedNetworkBackend,
        ssl_context: ssl.SSLContext | None = None,
        *,
        max_connections: int = 20,
        max_keepalive_connections: int = 10,
        keepalive_expiry: float = 30.0,
    ) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context if ssl_context is not None else httpx.create_ssl_context(trust_env=False),
            max_connections=max_connections,
            max_keepalive_connections=max_keepalive_connections,
            keepalive_expiry=keepalive_expiry,
            http1=True,
            http2=False,
            retries=0,
            network_backend=backend,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=typing.cast(AsyncIterable[bytes], request.stream),
            extensions=request.extensions,
        )
        response = await self._pool.handle_async_request(core_request)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(typing.cast(AsyncIterable[bytes], response.stream)),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._stream:
            yield part

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()
