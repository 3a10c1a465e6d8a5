"""Cancellation (seed 000 §4.5): the stream is aborted, the connection closed, nothing returned."""

from __future__ import annotations

import asyncio

import pytest

from agent_runtime.agent_host.llm import Dialect, GatewayConfig, LlmClient
from agent_runtime.scripted_gateway import ScriptedGateway

from .support import DIALECTS, POLICY, Recorder, user


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_cancelling_mid_stream_closes_the_connection_and_returns_nothing(dialect: Dialect) -> None:
    recorder = Recorder()
    arrived = asyncio.Event()

    def on_text(chunk: str) -> None:
        recorder.on_text(chunk)
        arrived.set()

    script = [{"text": "partial words here", "chunkSize": 5, "holdAfterChunks": 1}]
    async with ScriptedGateway(script) as gateway:
        llm = LlmClient(GatewayConfig(gateway.url, None, dialect), sleep=recorder.sleep)
        call = asyncio.create_task(
            llm.stream(
                policy=POLICY,
                system_prompt="s",
                messages=[user("hi")],
                tools=[],
                on_text=on_text,
                on_discard=recorder.on_discard,
                on_retry=recorder.on_retry,
            )
        )
        async with asyncio.timeout(5):
            await arrived.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # The gateway, still holding the rest, sees the client go away.
        await gateway.wait_for(lambda: gateway.requests[0].outcome == "disconnected")
    assert recorder.events == ["text parti"]  # no discard, no retry after cancellation
    assert gateway.requests[0].chunks_sent == 1


async def test_cancelling_during_a_backoff_wait_stops_without_another_request() -> None:
    waiting = asyncio.Event()

    async def sleep_forever(_seconds: float) -> None:
        waiting.set()
        await asyncio.Event().wait()

    async with ScriptedGateway([{"kind": "error", "status": 503}, {"text": "never"}]) as gateway:
        llm = LlmClient(GatewayConfig(gateway.url, None, "anthropic"), sleep=sleep_forever)
        call = asyncio.create_task(
            llm.stream(policy=POLICY, system_prompt="s", messages=[user("hi")], tools=[])
        )
        async with asyncio.timeout(5):
            await waiting.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert len(gateway.requests) == 1


async def test_cancelling_before_the_gateway_answers_leaves_nothing_open() -> None:
    async with ScriptedGateway([{"text": "late", "delayMs": 60_000}]) as gateway:
        llm = LlmClient(GatewayConfig(gateway.url, None, "openai"))
        call = asyncio.create_task(
            llm.stream(policy=POLICY, system_prompt="s", messages=[user("hi")], tools=[])
        )
        await gateway.wait_for(lambda: len(gateway.requests) == 1)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await gateway.wait_for(lambda: gateway.requests[0].outcome == "disconnected")
