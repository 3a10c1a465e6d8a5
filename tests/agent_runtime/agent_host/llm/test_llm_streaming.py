"""Both dialects end to end against the real scripted gateway on loopback: text, tool calls, stop
reasons and usage, normalised to one response (seed 000 §6.3)."""

from __future__ import annotations

import asyncio

import pytest

from agent_runtime.agent_host.llm import Dialect, LlmGuardrailBlocked, LlmUsage
from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.enums import StopReason
from contracts.errors import ErrorCode

from .support import DIALECTS, POLICY, READ_FILE, Recorder, ask, client, user


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_text_chunks_reach_the_callback_in_order_before_the_response_completes(
    dialect: Dialect,
) -> None:
    script = [{"text": "one two three four", "chunkSize": 4, "holdAfterChunks": 2}]
    async with ScriptedGateway(script) as gateway:
        seen: list[str] = []
        two_arrived = asyncio.Event()

        def on_text(chunk: str) -> None:
            seen.append(chunk)
            if len(seen) == 2:
                two_arrived.set()

        call = asyncio.create_task(
            client(gateway.url, dialect).stream(
                policy=POLICY, system_prompt="s", messages=[user("hi")], tools=[], on_text=on_text
            )
        )
        async with asyncio.timeout(5):
            await two_arrived.wait()
        # The gateway is holding the rest of the stream: the text got here before the response ended.
        assert not call.done()
        assert gateway.requests[0].outcome == "pending"
        gateway.release()
        async with asyncio.timeout(5):
            response = await call
    assert seen == ["one ", "two ", "thre", "e fo", "ur"]
    assert response.text == "one two three four"
    assert response.stop_reason is StopReason.END_TURN


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_an_async_text_callback_is_awaited_for_every_chunk(dialect: Dialect) -> None:
    seen: list[str] = []

    async def on_text(chunk: str) -> None:
        await asyncio.sleep(0)
        seen.append(chunk)

    async with ScriptedGateway([{"chunks": ["a", "b", "c"]}]) as gateway:
        await client(gateway.url, dialect).stream(
            policy=POLICY, system_prompt="s", messages=[user("hi")], tools=[], on_text=on_text
        )
    assert seen == ["a", "b", "c"]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_several_tool_calls_with_fragmented_arguments_arrive_whole_after_the_response(
    dialect: Dialect,
) -> None:
    arguments = {
        "command": 'grep -r "TODO" src/ | head -n 5',
        "nested": {"list": [1, 2.5, None, True]},
        "é": "✓",
    }
    script = [
        {
            "text": "Let me look.",
            "toolCalls": [
                {
                    "id": "call_a",
                    "name": "ReadFile",
                    "arguments": {"path": "/tmp/a b.txt"},
                    "argumentChunks": 5,
                },
                {"id": "call_b", "name": "RunCommand", "arguments": arguments, "argumentChunks": 17},
                {"id": "call_c", "name": "ReadFile", "arguments": {}, "argumentChunks": 1},
            ],
        }
    ]
    recorder = Recorder()
    async with ScriptedGateway(script) as gateway:
        response = await ask(client(gateway.url, dialect), recorder)
    assert response.text == "Let me look."
    assert recorder.texts == ["Let me look."]
    assert [(c.tool_call_id, c.tool_name, c.arguments) for c in response.tool_calls] == [
        ("call_a", "ReadFile", {"path": "/tmp/a b.txt"}),
        ("call_b", "RunCommand", arguments),
        ("call_c", "ReadFile", {}),
    ]
    assert response.stop_reason is StopReason.TOOL_USE


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    ("scripted", "expected"),
    [
        ("end_turn", StopReason.END_TURN),
        ("stop_sequence", StopReason.END_TURN),
        ("max_tokens", StopReason.MAX_TOKENS),
        ("tool_use", StopReason.TOOL_USE),
    ],
)
async def test_each_stop_reason_is_normalised(dialect: Dialect, scripted: str, expected: StopReason) -> None:
    async with ScriptedGateway([{"text": "x", "stopReason": scripted}]) as gateway:
        response = await ask(client(gateway.url, dialect))
    assert response.stop_reason is expected


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_tool_calls_are_reported_alongside_an_end_turn_stop_reason(dialect: Dialect) -> None:
    script = [{"toolCalls": [{"name": "ReadFile", "arguments": {"path": "a"}}], "stopReason": "end_turn"}]
    async with ScriptedGateway(script) as gateway:
        response = await ask(client(gateway.url, dialect))
    assert response.stop_reason is StopReason.END_TURN
    assert [c.tool_name for c in response.tool_calls] == ["ReadFile"]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_content_filter_stop_is_a_guardrail_block(dialect: Dialect) -> None:
    recorder = Recorder()
    async with ScriptedGateway([{"text": "I will not", "stopReason": "content_filter"}]) as gateway:
        with pytest.raises(LlmGuardrailBlocked) as caught:
            await ask(client(gateway.url, dialect, recorder), recorder)
        assert len(gateway.requests) == 1
    assert caught.value.code is ErrorCode.LLM_GUARDRAIL_BLOCKED
    assert recorder.discards == 1  # the text shown so far must go


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_usage_reported_by_the_gateway_is_returned(dialect: Dialect) -> None:
    async with ScriptedGateway(
        [{"text": "hi", "usage": {"inputTokens": 321, "outputTokens": 45}}]
    ) as gateway:
        response = await ask(client(gateway.url, dialect))
    assert response.usage == LlmUsage(input_tokens=321, output_tokens=45, reported=True)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_gateway_that_sends_no_usage_is_reported_as_such(dialect: Dialect) -> None:
    async with ScriptedGateway([{"text": "hi", "omitUsage": True}]) as gateway:
        response = await ask(client(gateway.url, dialect))
    assert response.usage == LlmUsage(0, 0, reported=False)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_the_model_the_gateway_names_and_the_latency_are_returned(dialect: Dialect) -> None:
    async with ScriptedGateway([{"text": "hi", "model": "served-model-7"}]) as gateway:
        response = await ask(client(gateway.url, dialect))
    assert response.model == "served-model-7"
    assert response.latency_ms > 0
    assert response.attempts == 1


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_concurrent_calls_each_get_their_own_turn(dialect: Dialect) -> None:
    script = [{"text": f"answer {n}", "chunkSize": 3} for n in range(6)]
    async with ScriptedGateway(script) as gateway:
        llm = client(gateway.url, dialect)
        responses = await asyncio.gather(*(ask(llm, tools=[READ_FILE]) for _ in range(6)))
        gateway.assert_done()
    assert sorted(r.text for r in responses) == [f"answer {n}" for n in range(6)]
