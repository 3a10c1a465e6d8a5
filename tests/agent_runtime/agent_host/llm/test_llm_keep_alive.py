"""The connection kept between calls (docs/decisions/0001-llm-connection-reuse.md): reused while the
gateway keeps it, replaced without a retry when the gateway closed it while idle, and a request lost
on a kept connection retried only as any failed attempt is (seed 000 §6.4)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from agent_runtime.agent_host.llm import Dialect, GatewayConfig, LlmClient, LlmRetriesExhausted, Timeouts
from agent_runtime.scripted_gateway import ScriptedGateway

from .support import DIALECTS, POLICY, READ_FILE, Recorder, ask, user

ANSWER = {"text": "ok"}


def kept(url: str, dialect: Dialect, recorder: Recorder, **options: object) -> LlmClient:
    return LlmClient(
        GatewayConfig(url, None, dialect),
        sleep=recorder.sleep,
        random=lambda: 0.5,
        timeouts=Timeouts(connect_s=5.0, read_s=10.0),
        keep_alive_s=30.0,
        **options,  # type: ignore[arg-type]
    )


async def until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    # Polled, bounded: the gateway announces requests but not the connections its timer closes.
    async with asyncio.timeout(timeout):
        while not check():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_calls_share_one_connection_while_the_gateway_keeps_it(dialect: Dialect) -> None:
    recorder = Recorder()
    async with ScriptedGateway([ANSWER] * 3) as gateway:
        llm = kept(gateway.url, dialect, recorder)
        try:
            for _ in range(3):
                assert (await ask(llm, recorder)).text == "ok"
        finally:
            await llm.aclose()
        ports = {request.client_port for request in gateway.requests}
        headers = [request.headers for request in gateway.requests]
    assert len(ports) == 1
    assert all(h.get("connection") != "close" for h in headers)
    assert recorder.retries == []


async def test_without_keep_alive_every_call_opens_and_closes_its_own_connection() -> None:
    async with ScriptedGateway([ANSWER] * 2) as gateway:
        llm = LlmClient(GatewayConfig(gateway.url, None, "anthropic"))
        for _ in range(2):
            await ask(llm)
        ports = {request.client_port for request in gateway.requests}
        headers = [request.headers for request in gateway.requests]
    assert len(ports) == 2
    assert all(h["connection"] == "close" for h in headers)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_connection_the_gateway_closed_while_idle_is_replaced_without_a_retry(
    dialect: Dialect,
) -> None:
    recorder = Recorder()
    async with ScriptedGateway([ANSWER] * 2, keep_alive_s=0.05) as gateway:
        llm = kept(gateway.url, dialect, recorder)
        try:
            await ask(llm, recorder)
            await until(lambda: gateway.open_connections == 0)  # the gateway let it go
            assert (await ask(llm, recorder)).text == "ok"
        finally:
            await llm.aclose()
        first, second = gateway.requests
    assert first.client_port != second.client_port
    assert recorder.retries == []
    assert recorder.sleeps == []
    assert second.outcome == "completed"


async def test_a_kept_tls_connection_is_verified_and_reused() -> None:
    async with ScriptedGateway([ANSWER] * 2, tls=True) as gateway:
        assert gateway.url.startswith("https://")
        assert gateway.certificate is not None
        recorder = Recorder()
        llm = kept(gateway.url, "anthropic", recorder, tls=gateway.certificate.client_context())
        try:
            for _ in range(2):
                assert (await ask(llm, recorder)).text == "ok"
        finally:
            await llm.aclose()
        assert len({request.client_port for request in gateway.requests}) == 1


async def test_a_gateway_with_another_certificate_is_not_trusted() -> None:
    async with (
        ScriptedGateway([ANSWER], tls=True) as gateway,
        ScriptedGateway([], tls=True) as stranger,
    ):
        assert stranger.certificate is not None
        llm = kept(gateway.url, "anthropic", Recorder(), tls=stranger.certificate.client_context())
        try:
            with pytest.raises(LlmRetriesExhausted):
                await llm.stream(policy=POLICY, system_prompt="", messages=[user("Hi")], tools=[READ_FILE])
        finally:
            await llm.aclose()
        assert gateway.requests == []  # nothing was sent to a server that could not prove who it is


# ------------------------------------------------------------------ a kept connection dies mid-request


@contextlib.asynccontextmanager
async def dropping_server(answer: bytes, drop: set[int]) -> AsyncIterator[tuple[str, list[int]]]:
    """A keep-alive HTTP server that answers every request with ``answer`` except those whose number
    (1-based, across connections) is in ``drop``: those it reads, then closes the connection without
    a word. Yields its URL and the connection number of each request."""
    seen: list[int] = []
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        number = connections
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                seen.append(number)
                if len(seen) in drop:
                    return
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    + f"content-length: {len(answer)}\r\n\r\n".encode()
                    + answer
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        server.close()
        await server.wait_closed()


async def scripted_stream() -> bytes:
    """The exact bytes the scripted gateway streams for one plain answer."""
    async with ScriptedGateway([ANSWER]) as gateway, httpx.AsyncClient() as http:
        body = {
            "model": "m",
            "max_tokens": 10,
            "stream": True,
            "messages": [{"role": "user", "content": "x"}],
        }
        return (await http.post(gateway.url + "/v1/messages", json=body)).content


async def test_a_request_lost_on_a_kept_connection_is_retried_once_as_a_failed_attempt() -> None:
    answer = await scripted_stream()
    recorder = Recorder()
    async with dropping_server(answer, drop={2}) as (url, seen):
        llm = kept(url, "anthropic", recorder)
        try:
            assert (await ask(llm, recorder)).text == "ok"
            response = await ask(llm, recorder)
        finally:
            await llm.aclose()
    assert response.text == "ok"
    assert response.attempts == 2
    # Sent on the kept connection (it reached the server and got no answer), then once more on a new
    # one — counted as a retry and waited for like any other, not slipped in for free.
    assert seen == [1, 1, 2]
    assert len(recorder.retries) == 1
    assert len(recorder.sleeps) == 1
