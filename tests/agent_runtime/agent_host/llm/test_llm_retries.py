"""Errors and retries (seed 000 §6.4, §11): what is retried, how long it waits, what the loop gets."""

from __future__ import annotations

import socket

import pytest

from agent_runtime.agent_host.llm import (
    Dialect,
    LlmGuardrailBlocked,
    LlmMalformedToolCall,
    LlmProtocolError,
    LlmRateLimited,
    LlmRejected,
    LlmRetriesExhausted,
    LlmServerError,
    LlmStreamBroken,
    LlmTimeout,
    LlmUnreachable,
    RetrySettings,
    Timeouts,
)
from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.errors import ErrorCode

from .support import DIALECTS, Recorder, ask, client


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_429_waits_as_long_as_retry_after_says_then_succeeds(dialect: Dialect) -> None:
    recorder = Recorder()
    script = [{"kind": "error", "status": 429, "retryAfter": 7}, {"text": "fine now"}]
    async with ScriptedGateway(script) as gateway:
        response = await ask(client(gateway.url, dialect, recorder), recorder)
        assert len(gateway.requests) == 2
    assert response.text == "fine now"
    assert response.attempts == 2
    assert recorder.sleeps == [7.0]
    assert [(retry, delay) for retry, delay, _ in recorder.retries] == [(1, 7.0)]
    assert recorder.discards == 0


async def test_a_429_with_an_http_date_retry_after_is_honoured() -> None:
    recorder = Recorder()
    script = [{"kind": "error", "status": 429, "retryAfter": "Sun, 01 Mar 2026 12:00:30 GMT"}, {"text": "ok"}]
    async with ScriptedGateway(script) as gateway:
        llm = client(gateway.url, "anthropic", recorder)
        llm._clock = lambda: 1772366400.0  # 2026-03-01 12:00:00 UTC
        await ask(llm, recorder)
    assert recorder.sleeps == [pytest.approx(30.0)]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_four_server_errors_exhaust_the_retries_with_jittered_exponential_waits(
    dialect: Dialect,
) -> None:
    recorder = Recorder()
    script = [{"kind": "error", "status": 500}] * 3 + [
        {"kind": "error", "status": 503, "message": "down for repair"}
    ]
    async with ScriptedGateway(script) as gateway:
        with pytest.raises(LlmRetriesExhausted) as caught:
            await ask(client(gateway.url, dialect, recorder, random=0.5), recorder)
        assert len(gateway.requests) == 4
        gateway.assert_done()
    exhausted = caught.value
    assert exhausted.attempts == 4
    assert isinstance(exhausted.cause, LlmServerError)
    assert exhausted.cause.shape.details["status"] == 503
    assert exhausted.shape.retryable
    assert exhausted.code is ErrorCode.INTERNAL_ERROR
    assert recorder.sleeps == [0.5, 1.0, 2.0]  # random 0.5 × 1, 2, 4 s
    assert [retry for retry, _, _ in recorder.retries] == [1, 2, 3]


async def test_rate_limits_that_never_end_exhaust_with_the_rate_limited_code() -> None:
    async with ScriptedGateway([{"kind": "error", "status": 429}] * 4) as gateway:
        with pytest.raises(LlmRetriesExhausted) as caught:
            await ask(client(gateway.url, "openai"))
    assert isinstance(caught.value.cause, LlmRateLimited)
    assert caught.value.code is ErrorCode.RATE_LIMITED


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_plain_400_is_a_rejection_with_the_gateways_message_sent_exactly_once(
    dialect: Dialect,
) -> None:
    recorder = Recorder()
    said = "Unsupported parameter: 'max_tokens' is not supported with this model."
    script = [{"kind": "error", "status": 400, "message": said}, {"text": "never"}]
    async with ScriptedGateway(script) as gateway:
        with pytest.raises(LlmRejected) as caught:
            await ask(client(gateway.url, dialect, recorder), recorder)
        assert len(gateway.requests) == 1
    assert not isinstance(caught.value, LlmGuardrailBlocked)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert not caught.value.shape.retryable
    assert caught.value.message == f"The LLM gateway rejected the request (HTTP 400): {said}"
    assert caught.value.shape.details["status"] == 400
    assert recorder.sleeps == []


OPENAI_FLAGGED = "Invalid prompt: your prompt was flagged as potentially violating our usage policy."

AZURE_FILTERED = (
    "The response was filtered due to the prompt triggering Azure OpenAI's content management policy."
)

LITELLM_AS_TEXT = "{'error': 'Violated content safety policy', 'lakera_ai_response': {'flagged': True}}"

OPENROUTER_FLAGGED = (
    'openai/gpt-4o requires moderation on OpenRouter. Your input was flagged for "harassment"'
)


# What real gateways answer with a 400 that is not about content; none of it is a guardrail block.
PLAIN_400_BODIES = [
    pytest.param(
        {
            "error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                "'max_completion_tokens' instead.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "unsupported_parameter",
            }
        },
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
        "'max_completion_tokens' instead.",
        id="openai-unsupported-parameter",
    ),
    pytest.param(
        {
            "error": {
                "message": "Invalid type for 'safety_identifier': expected a string, but got an integer.",
                "type": "invalid_request_error",
                "param": "safety_identifier",
                "code": "invalid_type",
            }
        },
        "Invalid type for 'safety_identifier': expected a string, but got an integer.",
        id="openai-invalid-type",
    ),
    pytest.param(
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 210000 tokens > 200000 maximum",
            },
        },
        "prompt is too long: 210000 tokens > 200000 maximum",
        id="anthropic-too-long",
    ),
    pytest.param(
        {
            "object": "error",
            "message": "This model's maximum context length is 8192 tokens.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
        "This model's maximum context length is 8192 tokens.",
        id="vllm",
    ),
    pytest.param(
        {
            "error": {
                "message": "model 'llama9' not found",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
        "model 'llama9' not found",
        id="ollama",
    ),
]


@pytest.mark.parametrize(("body", "said"), PLAIN_400_BODIES)
async def test_a_400_that_is_not_about_content_is_a_rejection_in_the_gateways_words(
    body: dict[str, object], said: str
) -> None:
    async with ScriptedGateway([{"kind": "error", "status": 400, "body": body}]) as gateway:
        with pytest.raises(LlmRejected) as caught:
            await ask(client(gateway.url, "openai"))
        assert len(gateway.requests) == 1
    assert not isinstance(caught.value, LlmGuardrailBlocked)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert not caught.value.shape.retryable
    assert caught.value.message == f"The LLM gateway rejected the request (HTTP 400): {said}"


# What gateways and providers answer when they block content: OpenAI (moderation, reasoning models'
# prompt check), Azure OpenAI's content filter, LiteLLM's guardrails (the message an object, or that
# object as text), Anthropic's output filter, and a gateway that just says "guardrail".
BLOCKED_BODIES = [
    pytest.param(
        400,
        {
            "error": {
                "message": "Your request was rejected as a result of our safety system.",
                "type": "invalid_request_error",
                "param": None,
                "code": "content_policy_violation",
            }
        },
        "Your request was rejected as a result of our safety system.",
        id="openai-content-policy",
    ),
    pytest.param(
        400,
        {
            "error": {
                "message": OPENAI_FLAGGED,
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_prompt",
            }
        },
        OPENAI_FLAGGED,
        id="openai-reasoning-flagged",
    ),
    pytest.param(
        400,
        {
            "error": {
                "message": AZURE_FILTERED,
                "type": None,
                "param": "prompt",
                "code": "content_filter",
                "status": 400,
                "innererror": {
                    "code": "ResponsibleAIPolicyViolation",
                    "content_filter_result": {"hate": {"filtered": True, "severity": "high"}},
                },
            }
        },
        AZURE_FILTERED,
        id="azure-content-filter",
    ),
    pytest.param(
        400,
        {
            "error": {
                "message": {"error": "Violated guardrail policy", "aporia_ai_response": {"action": "block"}},
                "type": "None",
                "param": "None",
                "code": "400",
            }
        },
        "Violated guardrail policy",
        id="litellm-guardrail",
    ),
    pytest.param(
        400,
        {
            "error": {
                "message": LITELLM_AS_TEXT,
                "type": "None",
                "param": "None",
                "code": "400",
            }
        },
        LITELLM_AS_TEXT,
        id="litellm-guardrail-as-text",
    ),
    pytest.param(
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "Output blocked by content filtering policy",
            },
        },
        "Output blocked by content filtering policy",
        id="anthropic-output-filter",
    ),
    pytest.param(
        400,
        {
            "error": {
                "message": "Request blocked by the organisation's guardrail G-7",
                "type": "guardrail_blocked",
            }
        },
        "Request blocked by the organisation's guardrail G-7",
        id="gateway-guardrail",
    ),
    pytest.param(
        403,
        {
            "error": {
                "code": 403,
                "message": OPENROUTER_FLAGGED,
                "metadata": {"reasons": ["harassment"]},
            }
        },
        OPENROUTER_FLAGGED,
        id="openrouter-moderation",
    ),
]


@pytest.mark.parametrize(("status", "body", "said"), BLOCKED_BODIES)
async def test_a_400_that_says_the_content_was_blocked_is_a_guardrail_block_sent_once(
    status: int, body: dict[str, object], said: str
) -> None:
    recorder = Recorder()
    script = [{"kind": "error", "status": status, "body": body}, {"text": "never"}]
    async with ScriptedGateway(script) as gateway:
        with pytest.raises(LlmGuardrailBlocked) as caught:
            await ask(client(gateway.url, "openai", recorder), recorder)
        assert len(gateway.requests) == 1
    assert caught.value.code is ErrorCode.LLM_GUARDRAIL_BLOCKED
    assert not caught.value.shape.retryable
    assert caught.value.message == f"The LLM gateway blocked the request: {said}"
    assert recorder.sleeps == []


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_400_saying_guardrail_is_a_block_in_both_dialects(dialect: Dialect) -> None:
    script = [{"kind": "error", "status": 400, "message": "Blocked by guardrail: prompt injection"}]
    async with ScriptedGateway(script) as gateway:
        with pytest.raises(LlmGuardrailBlocked) as caught:
            await ask(client(gateway.url, dialect))
    assert (
        caught.value.message == "The LLM gateway blocked the request: Blocked by guardrail: prompt injection"
    )


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (401, ErrorCode.UNAUTHORIZED),
        (403, ErrorCode.UNAUTHORIZED),
        (404, ErrorCode.INVALID_REQUEST),
        (413, ErrorCode.INVALID_REQUEST),
        (422, ErrorCode.INVALID_REQUEST),
    ],
)
async def test_other_client_errors_are_rejections_without_retry(status: int, code: ErrorCode) -> None:
    async with ScriptedGateway(
        [{"kind": "error", "status": status, "message": "gateway says no"}]
    ) as gateway:
        with pytest.raises(LlmRejected) as caught:
            await ask(client(gateway.url, "anthropic"))
        assert len(gateway.requests) == 1
    assert caught.value.code is code
    assert caught.value.shape.details["status"] == status
    assert "gateway says no" in caught.value.message


async def test_a_wrong_token_is_unauthorized_and_the_token_appears_nowhere_in_the_error() -> None:
    async with ScriptedGateway([{"text": "x"}], token="right-token") as gateway:
        with pytest.raises(LlmRejected) as caught:
            await ask(client(gateway.url, "anthropic", token="wrong-token-123"))
        assert gateway.requests[0].outcome == "unauthorized"
    assert caught.value.code is ErrorCode.UNAUTHORIZED
    assert "wrong-token-123" not in str(caught.value.shape.to_wire()) + repr(caught.value)


async def test_a_gateway_traceback_or_html_page_never_reaches_the_message() -> None:
    body = {"error": {"message": 'Traceback (most recent call last):\n  File "/srv/app.py", line 3'}}
    script = [
        {"kind": "error", "status": 404, "body": body},
        {"kind": "error", "status": 422, "body": "<html>x</html>"},
    ]
    async with ScriptedGateway(script) as gateway:
        llm = client(gateway.url, "openai")
        with pytest.raises(LlmRejected) as first:
            await ask(llm)
        with pytest.raises(LlmRejected) as second:
            await ask(llm)
    assert "Traceback" not in first.value.message
    assert "/srv/app.py" not in first.value.message
    assert "<html>" not in second.value.message


async def test_a_long_gateway_message_is_trimmed_to_one_line() -> None:
    script = [{"kind": "error", "status": 422, "message": "bad\r\nfield " + "x" * 2000}]
    async with ScriptedGateway(script) as gateway:
        with pytest.raises(LlmRejected) as caught:
            await ask(client(gateway.url, "anthropic"))
    assert "\n" not in caught.value.message
    assert len(caught.value.message) < 500


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_cut_stream_is_discarded_and_the_whole_request_retried(dialect: Dialect) -> None:
    recorder = Recorder()
    script = [
        {"text": "first attempt text", "chunkSize": 6, "cutAfterChunks": 2},
        {"text": "second attempt", "chunkSize": 7},
    ]
    async with ScriptedGateway(script) as gateway:
        response = await ask(client(gateway.url, dialect, recorder), recorder)
        requests = gateway.requests
    assert [r.outcome for r in requests] == ["cut", "completed"]
    assert requests[0].body == requests[1].body
    assert response.text == "second attempt"
    assert response.attempts == 2
    assert recorder.events == [
        "text first ",
        "text attemp",
        "discard",
        "retry 1",
        "sleep 0.5",
        "text second ",
        "text attempt",
    ]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_cut_in_the_middle_of_tool_arguments_is_retried_too(dialect: Dialect) -> None:
    call = {"name": "ReadFile", "arguments": {"path": "a.txt"}, "argumentChunks": 4}
    script = [{"toolCalls": [call], "cutAfterChunks": 2}, {"toolCalls": [call]}]
    recorder = Recorder()
    async with ScriptedGateway(script) as gateway:
        response = await ask(client(gateway.url, dialect, recorder), recorder)
    assert [c.arguments for c in response.tool_calls] == [{"path": "a.txt"}]
    assert recorder.discards == 0  # no text had been shown
    assert len(recorder.retries) == 1


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_an_overloaded_error_event_mid_stream_is_retried(dialect: Dialect) -> None:
    recorder = Recorder()
    script = [
        {"text": "partial answer", "chunkSize": 4, "streamError": {"afterChunks": 1, "status": 529}},
        {"text": "complete answer"},
    ]
    async with ScriptedGateway(script) as gateway:
        response = await ask(client(gateway.url, dialect, recorder), recorder)
    assert response.text == "complete answer"
    assert recorder.discards == 1
    assert recorder.retries[0][2]  # a reason the user can read


@pytest.mark.parametrize(
    ("said", "blocked"),
    [
        ("Output blocked by content filtering policy", True),
        ("messages: text content blocks must be non-empty", False),
    ],
)
async def test_an_invalid_request_error_event_mid_stream_is_not_retried(said: str, blocked: bool) -> None:
    script = [
        {"text": "abc", "streamError": {"afterChunks": 0, "status": 400, "message": said}},
        {"text": "x"},
    ]
    async with ScriptedGateway(script) as gateway:
        with pytest.raises(LlmRejected if not blocked else LlmGuardrailBlocked) as caught:
            await ask(client(gateway.url, "anthropic"))
        assert len(gateway.requests) == 1
    assert isinstance(caught.value, LlmGuardrailBlocked) is blocked
    assert said in caught.value.message
    assert caught.value.shape.details["inStream"] is True


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_malformed_tool_arguments_are_retried_then_exhaust(dialect: Dialect) -> None:
    bad = {"toolCalls": [{"name": "ReadFile", "rawArguments": '{"path": "a.txt"', "argumentChunks": 2}]}
    good = {"toolCalls": [{"name": "ReadFile", "arguments": {"path": "a.txt"}}]}
    async with ScriptedGateway([bad, good]) as gateway:
        response = await ask(client(gateway.url, dialect))
    assert response.tool_calls[0].arguments == {"path": "a.txt"}

    async with ScriptedGateway([bad] * 4) as gateway:
        with pytest.raises(LlmRetriesExhausted) as caught:
            await ask(client(gateway.url, dialect))
    assert isinstance(caught.value.cause, LlmMalformedToolCall)


async def test_tool_arguments_that_are_json_but_not_an_object_are_malformed() -> None:
    bad = {"toolCalls": [{"name": "ReadFile", "rawArguments": '["a.txt"]'}]}
    async with ScriptedGateway(
        [bad],
    ) as gateway:
        with pytest.raises(LlmRetriesExhausted) as caught:
            await ask(client(gateway.url, "openai", retry=RetrySettings(max_retries=0)))
    assert isinstance(caught.value.cause, LlmMalformedToolCall)


async def test_a_stalled_stream_times_out_and_counts_like_a_server_error() -> None:
    recorder = Recorder()
    script = [{"text": "slow text", "chunkSize": 2, "chunkDelayMs": 5000}, {"text": "fast"}]
    async with ScriptedGateway(script) as gateway:
        llm = client(gateway.url, "openai", recorder, timeouts=Timeouts(connect_s=5, read_s=0.2))
        response = await ask(llm, recorder)
        await gateway.wait_for(lambda: gateway.requests[0].outcome == "disconnected")
    assert response.text == "fast"
    assert recorder.discards == 1
    assert "stalled" in recorder.retries[0][2]


async def test_a_gateway_that_never_answers_times_out_and_exhausts() -> None:
    script = {"turns": [{"text": "late", "delayMs": 5000}], "repeatLastTurn": True}
    async with ScriptedGateway(script) as gateway:
        llm = client(
            gateway.url,
            "anthropic",
            timeouts=Timeouts(connect_s=5, read_s=0.1),
            retry=RetrySettings(max_retries=1),
        )
        with pytest.raises(LlmRetriesExhausted) as caught:
            await ask(llm)
    assert isinstance(caught.value.cause, LlmTimeout)
    assert caught.value.attempts == 2


async def test_an_unreachable_gateway_is_retried_then_exhausted() -> None:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    recorder = Recorder()
    with pytest.raises(LlmRetriesExhausted) as caught:
        await ask(client(f"http://127.0.0.1:{port}", "anthropic", recorder), recorder)
    assert isinstance(caught.value.cause, LlmUnreachable)
    assert len(recorder.sleeps) == 3


async def test_a_redirect_is_not_followed_so_the_token_stays_home() -> None:
    script = [
        {
            "kind": "raw",
            "status": 307,
            "headers": {"location": "http://127.0.0.1:9/steal"},
            "contentType": "text/plain",
        }
    ]
    async with ScriptedGateway(script) as gateway:
        with pytest.raises(LlmRejected) as caught:
            await ask(client(gateway.url, "anthropic", token="secret"))
        assert len(gateway.requests) == 1
    assert caught.value.shape.details["status"] == 307


async def test_a_web_page_instead_of_an_event_stream_is_a_protocol_error_not_retried() -> None:
    script = [{"kind": "raw", "contentType": "text/html", "body": "<html>login</html>"}, {"text": "x"}]
    async with ScriptedGateway(script) as gateway:
        with pytest.raises(LlmProtocolError) as caught:
            await ask(client(gateway.url, "openai"))
        assert len(gateway.requests) == 1
    assert caught.value.shape.details["contentType"] == "text/html"


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_stream_that_ends_cleanly_without_its_terminal_event_is_broken(dialect: Dialect) -> None:
    # The raw body is a valid start of a response that simply stops: the HTTP response ends cleanly.
    starts = {
        "anthropic": 'event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}\n\n',
        "openai": 'data: {"choices":[{"index":0,"delta":{"content":"hel"}}]}\n\n',
    }
    raw = {"kind": "raw", "body": starts[dialect] + "data: {"}
    async with ScriptedGateway([raw] * 4) as gateway:
        with pytest.raises(LlmRetriesExhausted) as caught:
            await ask(client(gateway.url, dialect))
    assert isinstance(caught.value.cause, LlmStreamBroken)
    assert caught.value.cause.shape.details["incompleteEvent"] is True
