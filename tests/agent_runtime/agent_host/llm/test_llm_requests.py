"""What the client sends, per dialect, asserted on what the scripted gateway recorded (seed 000 §6.2)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_runtime.agent_host.llm import Dialect, GatewayConfig, LlmClient, LlmConfigError, LlmRejected
from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.enums import ToolStatus
from contracts.errors import ErrorCode
from contracts.gateway_http import auth_headers
from contracts.policy import LlmPolicy

from .support import (
    DIALECTS,
    POLICY,
    READ_FILE,
    RUN_COMMAND,
    assistant,
    call,
    client,
    result,
    system,
    unmarked,
    user,
)

OK = [{"text": "ok"}]


async def sent(dialect: Dialect, *, token: str | None = None, **ask_args: Any) -> dict[str, Any]:
    """The request the gateway received for one call (the response is a plain "ok")."""
    async with ScriptedGateway(OK) as gateway:
        llm = client(gateway.url, dialect, token=token)
        await llm.stream(
            policy=ask_args.get("policy", POLICY),
            system_prompt=ask_args.get("system_prompt", "You are a careful agent."),
            messages=ask_args.get("messages", [user("Hello")]),
            tools=ask_args.get("tools", [READ_FILE]),
        )
        (request,) = gateway.requests
        gateway.assert_done()
    return {"path": request.path, "headers": request.headers, "body": request.body}


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_model_and_max_tokens_come_from_the_llm_policy(dialect: Dialect) -> None:
    body = (await sent(dialect))["body"]
    assert body["model"] == "model-first"
    assert body["max_tokens"] == 1234
    assert body["stream"] is True


async def test_anthropic_requests_go_to_messages_with_system_and_tools_in_its_format() -> None:
    request = await sent("anthropic", tools=[READ_FILE, RUN_COMMAND])
    assert request["path"] == "/v1/messages"
    body = unmarked(request["body"])
    assert body["system"] == [{"type": "text", "text": "You are a careful agent."}]
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}]
    assert body["tools"] == [
        {"name": "ReadFile", "description": READ_FILE.description, "input_schema": READ_FILE.input_schema},
        {
            "name": "RunCommand",
            "description": RUN_COMMAND.description,
            "input_schema": RUN_COMMAND.input_schema,
        },
    ]


async def test_openai_requests_go_to_chat_completions_with_a_system_message_and_function_tools() -> None:
    request = await sent("openai")
    assert request["path"] == "/v1/chat/completions"
    body = request["body"]
    assert body["messages"] == [
        {"role": "system", "content": "You are a careful agent."},
        {"role": "user", "content": "Hello"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "ReadFile",
                "description": READ_FILE.description,
                "parameters": READ_FILE.input_schema,
            },
        }
    ]
    assert body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_no_tools_means_no_tools_field_and_an_empty_system_prompt_is_left_out(dialect: Dialect) -> None:
    body = (await sent(dialect, tools=[], system_prompt="  "))["body"]
    assert "tools" not in body
    assert "system" not in body
    assert all(message["role"] != "system" for message in body["messages"])


async def test_anthropic_pairs_tool_use_with_one_user_message_of_tool_results_flagging_errors() -> None:
    messages = [
        user("Look at two files and run ls"),
        assistant("Reading both.", call("toolu_1", path="a.txt"), call("toolu_2", path="b.txt")),
        assistant("", call("toolu_3", "RunCommand", command="ls")),
        result("toolu_1", "alpha"),
        result("toolu_2", "no such file", ToolStatus.FAILED),
        result("toolu_3", "Shell.Exec is not granted", ToolStatus.DENIED, name="RunCommand"),
        assistant("Done: alpha."),
        user("Thanks"),
    ]
    body = unmarked((await sent("anthropic", messages=messages))["body"])
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Look at two files and run ls"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading both."},
                {"type": "tool_use", "id": "toolu_1", "name": "ReadFile", "input": {"path": "a.txt"}},
                {"type": "tool_use", "id": "toolu_2", "name": "ReadFile", "input": {"path": "b.txt"}},
                {"type": "tool_use", "id": "toolu_3", "name": "RunCommand", "input": {"command": "ls"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "alpha"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "no such file",
                    "is_error": True,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_3",
                    "content": "Shell.Exec is not granted",
                    "is_error": True,
                },
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done: alpha."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
    ]


async def test_openai_sends_tool_calls_with_json_arguments_and_one_tool_message_per_result() -> None:
    messages = [
        user("Read a.txt"),
        assistant("", call("call_1", path="a.txt"), call("call_2", "RunCommand", command="ls")),
        result("call_1", "alpha"),
        result("call_2", "denied by policy", ToolStatus.DENIED, name="RunCommand"),
    ]
    body = (await sent("openai", messages=messages))["body"]
    assert body["messages"][1:] == [
        {"role": "user", "content": "Read a.txt"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "ReadFile", "arguments": '{"path": "a.txt"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "RunCommand", "arguments": '{"command": "ls"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "alpha"},
        {"role": "tool", "tool_call_id": "call_2", "content": "[tool call denied]\ndenied by policy"},
    ]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_system_notes_in_the_thread_become_user_text_at_their_place(dialect: Dialect) -> None:
    messages = [
        user("First question"),
        system("[Earlier conversation truncated — 4 messages removed]"),
        assistant("An answer"),
        user("Next question"),
        system("The gateway blocked the last request."),
    ]
    body = (await sent(dialect, messages=messages))["body"]
    conversation = [m for m in body["messages"] if m["role"] != "system"]
    assert [m["role"] for m in conversation] == ["user", "assistant", "user"]
    texts = [_texts(m) for m in conversation]
    assert texts[0] == [
        "First question",
        "[System note] [Earlier conversation truncated — 4 messages removed]",
    ]
    assert texts[2] == ["Next question", "[System note] The gateway blocked the last request."]


async def test_anthropic_gets_alternating_roles_and_tool_results_first_when_a_note_sits_between() -> None:
    messages = [
        user("Read it"),
        assistant("", call("toolu_1", path="a.txt")),
        system("[Earlier conversation truncated — 2 messages removed]"),
        result("toolu_1", "alpha"),
        user("and then?"),
    ]
    body = (await sent("anthropic", messages=messages))["body"]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert [block["type"] for block in body["messages"][2]["content"]] == ["tool_result", "text", "text"]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_call_without_result_gets_an_error_result_and_a_stray_result_becomes_text(
    dialect: Dialect,
) -> None:
    messages = [
        user("go"),
        result("lost_9", "orphaned output"),
        assistant("", call("c1", path="a"), call("c2", path="b")),
        result("c2", "beta"),
    ]
    body = (await sent(dialect, messages=messages))["body"]
    flat = str(body["messages"])
    assert "orphaned output" in flat
    if dialect == "anthropic":
        results = [b for b in body["messages"][2]["content"] if b["type"] == "tool_result"]
        assert [(r["tool_use_id"], r.get("is_error", False)) for r in results] == [
            ("c1", True),
            ("c2", False),
        ]
    else:
        tools = [m for m in body["messages"] if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tools] == ["c1", "c2"]
        assert tools[0]["content"].startswith("[tool call failed]")


async def test_anthropic_tool_ids_from_other_models_are_made_safe_consistently() -> None:
    messages = [user("go"), assistant("", call("call:abc.1", path="a")), result("call:abc.1", "out")]
    body = (await sent("anthropic", messages=messages))["body"]
    assert body["messages"][1]["content"][0]["id"] == "call_abc_1"
    assert body["messages"][2]["content"][0]["tool_use_id"] == "call_abc_1"


async def test_anthropic_drops_empty_texts_and_trims_a_final_assistant_prefill() -> None:
    messages = [user("Write a poem"), user("   "), assistant("Roses are red,  \n")]
    body = unmarked((await sent("anthropic", messages=messages))["body"])
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Write a poem"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Roses are red,"}]},
    ]


async def test_a_conversation_that_starts_with_the_assistant_gets_a_user_turn_first() -> None:
    body = (await sent("anthropic", messages=[assistant("Earlier answer"), user("More?")]))["body"]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_an_empty_conversation_is_refused_before_anything_is_sent(dialect: Dialect) -> None:
    async with ScriptedGateway([]) as gateway:
        with pytest.raises(LlmRejected) as caught:
            await client(gateway.url, dialect).stream(
                policy=POLICY, system_prompt="s", messages=[user("  ")], tools=[]
            )
        assert caught.value.code is ErrorCode.INVALID_REQUEST
        assert gateway.requests == []


def _policy(*models: str) -> LlmPolicy:
    return LlmPolicy(
        allowed_models=list(models), max_input_tokens=1, max_output_tokens=7, max_session_tokens=1
    )


async def _model_sent(policy: LlmPolicy, configured: str | None) -> str:
    async with ScriptedGateway(OK) as gateway:
        llm = LlmClient(GatewayConfig(gateway.url, None, "openai", model=configured))
        await llm.stream(policy=policy, system_prompt="s", messages=[user("hi")], tools=[])
        (request,) = gateway.requests
    return str(request.body["model"])


@pytest.mark.parametrize(
    ("allowed", "configured", "expected"),
    [
        (("*",), "llama3.1", "llama3.1"),  # local mode: no allowlist, the user's model
        (("model-a", "model-b"), "model-b", "model-b"),  # the user's model, allowed
        (("model-a", "model-b"), "gpt-x", "model-a"),  # not allowed: the organisation's first
        (("model-a",), None, "model-a"),  # nothing configured: seed 000 §6.2
        (("*", "model-a"), None, "model-a"),
    ],
)
async def test_the_model_is_the_configured_one_when_the_policy_allows_it(
    allowed: tuple[str, ...], configured: str | None, expected: str
) -> None:
    assert await _model_sent(_policy(*allowed), configured) == expected


@pytest.mark.parametrize(("allowed", "configured"), [(("*",), None), ((" ",), None)])
async def test_no_model_to_call_is_a_configuration_error_before_anything_is_sent(
    allowed: tuple[str, ...], configured: str | None
) -> None:
    async with ScriptedGateway([]) as gateway:
        llm = LlmClient(GatewayConfig(gateway.url, None, "openai", model=configured))
        with pytest.raises(LlmConfigError) as caught:
            await llm.stream(policy=_policy(*allowed), system_prompt="s", messages=[user("hi")], tools=[])
        assert gateway.requests == []
    assert caught.value.shape.details["variable"] == "LLM_GATEWAY_MODEL"


async def test_anthropic_sends_x_api_key_bearer_and_version_headers() -> None:
    async with ScriptedGateway(OK, token="tok-123") as gateway:
        await client(gateway.url, "anthropic", token="tok-123").stream(
            policy=POLICY, system_prompt="s", messages=[user("hi")], tools=[]
        )
        headers = gateway.requests[0].headers
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["x-api-key"] == "[redacted]"
    assert headers["authorization"] == "[redacted]"
    assert headers["accept"] == "text/event-stream"


async def test_openai_sends_only_a_bearer_token() -> None:
    async with ScriptedGateway(OK, token="tok-123") as gateway:
        await client(gateway.url, "openai", token="tok-123").stream(
            policy=POLICY, system_prompt="s", messages=[user("hi")], tools=[]
        )
        headers = gateway.requests[0].headers
    assert headers["authorization"] == "[redacted]"
    assert "x-api-key" not in headers
    assert "anthropic-version" not in headers


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_without_a_token_no_auth_header_is_sent(dialect: Dialect) -> None:
    headers = (await sent(dialect))["headers"]
    assert "authorization" not in headers
    assert "x-api-key" not in headers


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_each_call_uses_a_new_connection(dialect: Dialect) -> None:
    async with ScriptedGateway([{"text": "a"}, {"text": "b"}]) as gateway:
        llm = client(gateway.url, dialect)
        for _ in range(2):
            await llm.stream(policy=POLICY, system_prompt="s", messages=[user("hi")], tools=[])
        assert [r.headers["connection"] for r in gateway.requests] == ["close", "close"]
        gateway.assert_done()


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return content.split("\n\n")
    return [block["text"] for block in content if block["type"] == "text"]


def test_anthropics_own_api_gets_the_key_only_as_x_api_key() -> None:
    assert "authorization" not in auth_headers("anthropic", "sk-ant-api-key", "api.anthropic.com")
    assert auth_headers("anthropic", "sk-ant-api-key", "api.anthropic.com")["x-api-key"] == "sk-ant-api-key"
    assert auth_headers("anthropic", "k", "litellm.internal")["authorization"] == "Bearer k"
    assert "authorization" not in auth_headers("anthropic", "k", "API.Anthropic.com.")


async def _openai_body_for(model: str) -> dict[str, Any]:
    async with ScriptedGateway(OK) as gateway:
        llm = LlmClient(GatewayConfig(gateway.url, None, "openai", model=model))
        await llm.stream(policy=_policy("*"), system_prompt="s", messages=[user("hi")], tools=[])
        (request,) = gateway.requests
        gateway.assert_done()
    body: dict[str, Any] = request.body
    return body


# OpenAI's reasoning families refuse max_tokens ("Use 'max_completion_tokens' instead"), whoever
# forwards the request (LiteLLM, vLLM and OpenAI itself take max_completion_tokens); every other model
# behind a compatible server gets max_tokens, the one field Ollama, LM Studio and older servers read.
@pytest.mark.parametrize(
    ("model", "field"),
    [
        ("o1", "max_completion_tokens"),
        ("o1-preview", "max_completion_tokens"),
        ("o3-mini", "max_completion_tokens"),
        ("o4-mini-2025-04-16", "max_completion_tokens"),
        ("gpt-5", "max_completion_tokens"),
        ("gpt-5-mini", "max_completion_tokens"),
        ("gpt-5.1", "max_completion_tokens"),
        ("GPT-5-Nano", "max_completion_tokens"),
        ("openai/o3", "max_completion_tokens"),  # a LiteLLM provider prefix
        ("azure/o1-mini", "max_completion_tokens"),
        ("gpt-4o", "max_tokens"),
        ("gpt-4.1-mini", "max_tokens"),
        ("llama3.1", "max_tokens"),
        ("qwen2.5:7b", "max_tokens"),
        ("meta-llama/Llama-3.1-8B-Instruct", "max_tokens"),
        ("olmo-2", "max_tokens"),
        ("omni-moderation", "max_tokens"),
        ("model-o3", "max_tokens"),
    ],
)
async def test_openai_sends_the_output_limit_in_the_field_the_model_family_accepts(
    model: str, field: str
) -> None:
    body = await _openai_body_for(model)
    other = {"max_tokens", "max_completion_tokens"} - {field}
    assert body[field] == 7
    assert not other & set(body)


@pytest.mark.parametrize(
    ("endpoint", "model", "field"),
    [
        # OpenAI's own API: max_completion_tokens is the current field and every chat model takes it.
        ("https://api.openai.com/v1", "gpt-4o", "max_completion_tokens"),
        ("https://API.OpenAI.com./v1/chat/completions", "gpt-4o-mini", "max_completion_tokens"),
        ("https://my-resource.openai.azure.com/openai/v1", "my-deployment", "max_completion_tokens"),
        # OpenRouter documents max_tokens and maps it to each provider's own field itself.
        ("https://openrouter.ai/api/v1", "openai/o3-mini", "max_tokens"),
        ("http://localhost:11434/v1", "gpt-4o", "max_tokens"),
        ("http://litellm:4000", "o3", "max_completion_tokens"),
        ("https://notopenai.com/v1", "gpt-4o", "max_tokens"),
    ],
)
def test_openais_own_api_gets_max_completion_tokens_for_every_model(
    endpoint: str, model: str, field: str
) -> None:
    llm = LlmClient(GatewayConfig(endpoint, "key", "openai", model=model))
    body = llm.build_body(policy=_policy("*"), system_prompt="", messages=[user("hi")], tools=[])
    assert body[field] == 7
    assert not ({"max_tokens", "max_completion_tokens"} - {field}) & set(body)
