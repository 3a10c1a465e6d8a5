"""Hostile or foreign streams from the gateway: a clear LlmProtocolError, never a crash, no retry."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_runtime.agent_host.llm import (
    Dialect,
    LlmClient,
    LlmProtocolError,
    LlmRetriesExhausted,
    LlmServerError,
)
from agent_runtime.agent_host.llm.anthropic import AnthropicStream
from agent_runtime.agent_host.llm.openai import OpenAiStream
from agent_runtime.agent_host.llm.sse import SseEvent
from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.errors import ErrorCode

from .support import Recorder, ask, client


def sse(*events: tuple[str | None, Any]) -> str:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out)


MESSAGE_START = ("message_start", {"type": "message_start", "message": {"id": "msg_1", "model": "m"}})
TEXT_BLOCK = (
    "content_block_start",
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
)


def text_delta(index: int, text: str) -> tuple[str, Any]:
    return (
        "content_block_delta",
        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}},
    )


END = [
    (
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
    ),
    ("message_stop", {"type": "message_stop"}),
]


async def play(dialect: Dialect, body: str, recorder: Recorder | None = None) -> Any:
    """Send one request to a gateway answering ``body`` raw; the client must fail without retrying."""
    async with ScriptedGateway([{"kind": "raw", "body": body}, {"text": "never played"}]) as gateway:
        try:
            return await ask(client(gateway.url, dialect, recorder), recorder)
        finally:
            assert len(gateway.requests) == 1


@pytest.mark.parametrize(
    ("dialect", "body"),
    [
        ("anthropic", sse(MESSAGE_START, (None, "{not json"))),
        ("openai", sse((None, "{not json"))),
        ("anthropic", sse(MESSAGE_START, (None, "[1, 2]"))),
        ("openai", sse((None, '"a string"'))),
    ],
    ids=["anthropic-bad-json", "openai-bad-json", "anthropic-array", "openai-string"],
)
async def test_event_data_that_is_not_a_json_object_is_a_protocol_error(dialect: Dialect, body: str) -> None:
    with pytest.raises(LlmProtocolError) as caught:
        await play(dialect, body)
    assert caught.value.code is ErrorCode.INTERNAL_ERROR
    assert caught.value.shape.details["dialect"] == dialect
    assert not caught.value.shape.retryable


@pytest.mark.parametrize(
    "events",
    [
        [(None, {"no_type": True})],
        [TEXT_BLOCK],  # before message_start
        [MESSAGE_START, text_delta(3, "x")],  # a block that never started
        [
            MESSAGE_START,
            TEXT_BLOCK,
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": "{"},
                },
            ),
        ],
        [MESSAGE_START, TEXT_BLOCK, TEXT_BLOCK],
        [("message_stop", {"type": "message_stop"})],
    ],
    ids=["no-type", "block-before-message", "unknown-block", "json-into-text", "index-twice", "stop-first"],
)
async def test_anthropic_events_that_break_the_streams_structure_are_protocol_errors(
    events: list[tuple[str | None, Any]],
) -> None:
    with pytest.raises(LlmProtocolError):
        await play("anthropic", sse(*events))


async def test_anthropic_event_types_it_does_not_know_are_skipped_as_its_versioning_policy_asks() -> None:
    body = sse(
        MESSAGE_START,
        ("future_event", {"type": "future_event", "whatever": [1]}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "hmm"},
            },
        ),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        ),
        text_delta(1, "visible"),
        *END,
    )
    response = await play("anthropic", body)
    assert response.text == "visible"


async def test_an_openai_object_that_is_not_a_chunk_is_a_protocol_error() -> None:
    with pytest.raises(LlmProtocolError):
        await play("openai", sse((None, {"object": "list", "data": []})))


async def test_an_openai_chunk_with_a_broken_tool_call_delta_is_a_protocol_error() -> None:
    chunk = {
        "choices": [{"index": 0, "delta": {"tool_calls": [{"index": "zero", "function": {"name": "x"}}]}}]
    }
    with pytest.raises(LlmProtocolError):
        await play("openai", sse((None, chunk)))


async def test_an_event_past_the_size_limit_fails_clearly() -> None:
    body = sse(MESSAGE_START, TEXT_BLOCK, text_delta(0, "x" * 5000), *END)
    async with ScriptedGateway([{"kind": "raw", "body": body}]) as gateway:
        llm = LlmClient(client(gateway.url, "anthropic").config, max_event_chars=4096)
        with pytest.raises(LlmProtocolError) as caught:
            await ask(llm)
    assert caught.value.shape.details["limitChars"] == 4096


async def test_text_shown_before_a_protocol_error_is_discarded() -> None:
    recorder = Recorder()
    with pytest.raises(LlmProtocolError):
        await play(
            "anthropic", sse(MESSAGE_START, TEXT_BLOCK, text_delta(0, "shown"), (None, "garbage")), recorder
        )
    assert recorder.events == ["text shown", "discard"]


async def test_an_openai_style_error_object_mid_stream_is_classified_by_its_code() -> None:
    body = sse(
        (None, {"choices": [{"index": 0, "delta": {"content": "a"}}]}),
        (None, {"error": {"message": "upstream died", "code": 502}}),
    )
    async with ScriptedGateway([{"kind": "raw", "body": body}] * 4) as gateway:
        with pytest.raises(LlmRetriesExhausted) as caught:
            await ask(client(gateway.url, "openai"))
        assert len(gateway.requests) == 4
    assert isinstance(caught.value.cause, LlmServerError)
    assert caught.value.cause.shape.details["status"] == 502


def test_the_parsers_accept_whole_tool_calls_without_index_or_id_as_some_servers_send_them() -> None:
    parser = OpenAiStream(now=lambda: 0.0)
    whole = {"function": {"name": "ReadFile", "arguments": {"path": "a"}}}
    parser.event(
        SseEvent(
            "message",
            json.dumps({"choices": [{"delta": {"tool_calls": [whole]}, "finish_reason": "tool_calls"}]}),
        )
    )
    parser.event(SseEvent("message", "[DONE]"))
    outcome = parser.outcome()
    assert outcome.tool_calls[0].tool_name == "ReadFile"
    assert outcome.tool_calls[0].arguments == {"path": "a"}
    assert outcome.tool_calls[0].tool_call_id.startswith("call_")


def test_anthropic_input_given_whole_at_block_start_is_used_when_no_fragments_follow() -> None:
    parser = AnthropicStream(now=lambda: 0.0)
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {"id": "m", "usage": {"input_tokens": 5, "cache_read_input_tokens": 7}},
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "ReadFile", "input": {"path": "z"}},
        },
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    for data in events:
        parser.event(SseEvent(data["type"], json.dumps(data)))
    outcome = parser.outcome()
    assert outcome.tool_calls[0].arguments == {"path": "z"}
    # Cache reads are a kind of their own, not input: the budget's total still counts them.
    assert (outcome.usage.input_tokens, outcome.usage.output_tokens) == (5, 9)
    assert (outcome.usage.cache_read_tokens, outcome.usage.prompt_tokens) == (7, 12)
