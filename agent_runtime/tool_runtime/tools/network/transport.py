"""The SSRF guard where it cannot be bypassed: in the connection itself (seed 003 §8.3).

``GuardedNetworkBackend`` is an httpcore network backend. Asked to connect to a host, it resolves the
name once with the injected resolver, refuses if *any* answer is not allowed, and then connects to a
vetted address itself — so a second, rebinding DNS answer is never used, and every redirect hop is
checked because every hop connects through here. TLS still verifies the original host name (httpcore
passes it for SNI and certificate checks). ``GuardedTransport`` puts that backend under an httpx
client: httpx's own transport offers no way to choose the network backend.
"""

from __future__ import annotations

import typing
from collections.abc import AsyncIterable, AsyncIterator, Iterable

import httpcore
import httpx

from agent_runtime.tool_runtime.errors import DestinationRefused, ToolFailure
from agent_runtime.tool_runtime.tools.network.addresses import (
    AddressPolicy,
    IPAddress,
    as_address,
    parse_host_ip,
)
from agent_runtime.tool_runtime.tools.network.resolver import Resolver
from contracts.errors import ErrorCode

__all__ = ["GuardedNetworkBackend", "GuardedTransport"]


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    def __init__(
        self,
        resolver: Resolver,
        policy: AddressPolicy,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._resolver = resolver
        self._policy = policy
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()

    async def vet(self, host: str, port: int) -> list[IPAddress]:
        """The addresses ``host`` may be reached at; raises ``DestinationRefused`` if any is not allowed."""
        problem = self._policy.host_problem(host)
        if problem is not None:
            raise DestinationRefused(f"Refused to connect to {host}: {problem}; {_WHY}")
        literal = parse_host_ip(host)
        if literal is not None:
            return [literal]
        try:
            answers = await self._resolver.resolve(host, port)
        except OSError as exc:
            raise ToolFailure(ErrorCode.TOOL_EXECUTION_FAILED, f"Could not resolve host {host}") from exc
        addresses: list[IPAddress] = []
        for answer in answers:
            address = as_address(answer)
            if address is None:
                raise DestinationRefused(f"Refused to connect to {host}: the resolver gave no IP address")
            problem = self._policy.problem(address)
            if problem is not None:
                raise DestinationRefused(
                    f"Refused to connect to {host}: it resolves to {address}, a {problem} address; {_WHY}"
                )
            addresses.append(address)
        if not addresses:
            raise ToolFailure(ErrorCode.TOOL_EXECUTION_FAILED, f"Could not resolve host {host}")
        return addresses

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self.vet(host, port)
        failure: httpcore.ConnectError | None = None
        for address in addresses:
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
        raise DestinationRefused("Refused to connect to a local socket")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


_WHY = "requests to loopback, private and link-local networks are refused"


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over an httpcore pool that connects only through ``GuardedNetworkBackend``.

    httpcore's errors pass through untranslated; the HttpRequest tool maps them once, to the seed's
    codes, where they leave the network code.
    """

    def __init__(self, backend: GuardedNetworkBackend, *, max_connections: int = 20) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=max_connections,
            max_keepalive_connections=max_connections // 2,
            keepalive_expiry=30.0,
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
