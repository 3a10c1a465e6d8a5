"""Prompt caching (seed 002 "Prompt Cache State"): the breakpoints and cache key each dialect sends,
the cache reads and writes counted apart from input, the session's prefix state, and the scripted
gateway's model of the providers' caches."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agent_runtime.agent_host.llm import Dialect, LlmRejected
from agent_runtime.agent_host.llm import openai as openai_dialect
from agent_runtime.agent_host.llm.conversation import build_turns
from agent_runtime.agent_host.llm.prompt_cache import PromptCacheState, provider_family
from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.policy import LlmPolicy

from .support import DIALECTS, POLICY, READ_FILE, RUN_COMMAND, assistant, call, client, result, user

SYSTEM = "You are a careful agent. " * 20
EPHEMERAL = {"type": "ephemeral"}


def marked_paths(body: dict[str, Any]) -> list[str]:
    """Where the request carries ``cache_control``, as readable paths."""
    found: list[str] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            if "cache_control" in value:
                assert value["cache_control"] == EPHEMERAL
                found.append(path)
            for key, item in value.items():
                walk(item, f"{path}.{key}" if path else key)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")

    walk(body, "")
    return found


async def one_call(dialect: Dialect, messages: list[Any], tools: list[Any]) -> dict[str, Any]:
    async with ScriptedGateway([{"text": "ok"}]) as gateway:
        await client(gateway.url, dialect).stream(
            policy=POLICY, system_prompt=SYSTEM, messages=messages, tools=tools
        )
        (request,) = gateway.requests
    body: dict[str, Any] = request.body
    return body


async def test_anthropic_marks_the_last_tool_the_system_prompt_and_the_latest_user_turn() -> None:
    messages = [
        user("Read a.txt"),
        assistant("Reading.", call("toolu_1", path="a.txt")),
        result("toolu_1", "alpha"),
    ]
    body = await one_call("anthropic", messages, [READ_FILE, RUN_COMMAND])
    assert marked_paths(body) == ["system[0]", "messages[2].content[0]", "tools[1]"]
    assert body["messages"][2]["content"][0]["type"] == "tool_result"


async def test_anthropic_does_not_mark_a_trailing_assistant_prefill_the_model_still_writes() -> None:
    messages = [user("Write a poem"), assistant("Roses are red,")]
    body = await one_call("anthropic", messages, [])
    assert marked_paths(body) == ["system[0]", "messages[0].content[0]"]


async def test_openai_sends_no_cache_markers_and_keeps_the_system_prompt_first() -> None:
    body = await one_call("openai", [user("Hello")], [READ_FILE])
    assert marked_paths(body) == []
    assert body["messages"][0] == {"role": "system", "content": SYSTEM}
    assert "prompt_cache_key" not in body  # loopback: not OpenAI's own API


def test_the_prompt_cache_key_goes_only_to_openais_own_api() -> None:
    turns = build_turns([user("Hello")])
    common: dict[str, Any] = {
        "model": "gpt-4o",
        "max_tokens": 10,
        "system": SYSTEM,
        "turns": turns,
        "tools": [READ_FILE],
        "cache_key": "cowork-abc",
    }
    assert openai_dialect.build_body(**common, host="api.openai.com")["prompt_cache_key"] == "cowork-abc"
    for host in ("localhost", "litellm.internal", "openrouter.ai", "x.openai.azure.com"):
        assert "prompt_cache_key" not in openai_dialect.build_body(**common, host=host)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_repeated_prefix_is_read_from_the_cache_and_not_counted_as_input(dialect: Dialect) -> None:
    first = [user("Read a.txt")]
    second = [*first, assistant("", call("toolu_1", path="a.txt")), result("toolu_1", "alpha " * 50)]
    async with ScriptedGateway({"turns": [{"text": "ok"}], "repeatLastTurn": True}) as gateway:
        llm = client(gateway.url, dialect)
        one = await llm.stream(policy=POLICY, system_prompt=SYSTEM, messages=first, tools=[READ_FILE])
        two = await llm.stream(policy=POLICY, system_prompt=SYSTEM, messages=second, tools=[READ_FILE])
        recorded = gateway.requests
    assert one.usage.cache_read_tokens == 0
    assert two.usage.cache_read_tokens == recorded[1].cache_read_tokens > 0
    # The kinds are separate: the uncached input is what the gateway did not read from its cache.
    assert two.usage.prompt_tokens == (
        two.usage.input_tokens + two.usage.cache_read_tokens + two.usage.cache_write_tokens
    )
    assert two.usage.input_tokens < two.usage.prompt_tokens
    if dialect == "anthropic":
        assert one.usage.cache_write_tokens > 0  # the first request wrote the prefix


async def test_a_changed_tool_set_misses_the_anthropic_cache() -> None:
    messages = [user("Hello")]
    async with ScriptedGateway({"turns": [{"text": "ok"}], "repeatLastTurn": True}) as gateway:
        llm = client(gateway.url, "anthropic")
        await llm.stream(policy=POLICY, system_prompt=SYSTEM, messages=messages, tools=[READ_FILE])
        same = await llm.stream(policy=POLICY, system_prompt=SYSTEM, messages=messages, tools=[READ_FILE])
        other = await llm.stream(policy=POLICY, system_prompt=SYSTEM, messages=messages, tools=[RUN_COMMAND])
    assert same.usage.cache_read_tokens > 0
    assert other.usage.cache_read_tokens == 0


async def test_the_gateway_refuses_more_than_four_breakpoints_as_anthropic_does() -> None:
    def request(breakpoints: int) -> dict[str, Any]:
        blocks = [{"type": "text", "text": str(i), "cache_control": EPHEMERAL} for i in range(breakpoints)]
        return {
            "model": "m",
            "max_tokens": 10,
            "stream": True,
            "messages": [{"role": "user", "content": blocks}],
        }

    async with ScriptedGateway([{"text": "never played"}]) as gateway, httpx.AsyncClient() as http:
        answer = await http.post(f"{gateway.url}/v1/messages", json=request(5))
        accepted = await http.post(f"{gateway.url}/v1/messages", json=request(4))
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"] == "A maximum of 4 blocks with cache_control may be provided. Found 5."
    assert accepted.status_code == 200


async def test_the_client_never_sends_more_breakpoints_than_anthropic_allows() -> None:
    many_tools = [READ_FILE.model_copy(update={"tool_name": f"Tool{i}"}) for i in range(10)]
    messages = [user("a"), assistant("b"), user("c"), assistant("d"), user("e")]
    async with ScriptedGateway([{"text": "ok"}]) as gateway:
        await client(gateway.url, "anthropic").stream(
            policy=POLICY, system_prompt=SYSTEM, messages=messages, tools=many_tools
        )
        (request,) = gateway.requests
    assert request.outcome == "completed"
    assert 0 < len(marked_paths(request.body)) <= 4


# ------------------------------------------------------------------ the session's prefix state


def prefix_of(dialect: Dialect, *, model: str = "model-first", tools: list[Any] | None = None) -> Any:
    policy = LlmPolicy(
        allowed_models=[model], max_input_tokens=1000, max_output_tokens=100, max_session_tokens=10**6
    )
    llm = client("http://127.0.0.1:9", dialect)
    return llm.stable_prefix(policy=policy, system_prompt=SYSTEM, tools=tools or [READ_FILE])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_prefix_hash_is_stable_and_changes_with_its_reason(dialect: Dialect) -> None:
    state = PromptCacheState()
    assert state.observe(prefix_of(dialect)) is None  # the first request: nothing to invalidate
    first_hash = state.stable_prefix_hash
    assert state.observe(prefix_of(dialect)) is None
    assert state.stable_prefix_hash == first_hash
    assert state.observe(prefix_of(dialect, tools=[READ_FILE, RUN_COMMAND])) == ["tool_set_changed"]
    assert state.to_wire()["invalidationReason"] == "tool_set_changed"
    assert state.observe(prefix_of(dialect, model="model-second", tools=[READ_FILE, RUN_COMMAND])) == [
        "model_changed"
    ]
    assert state.to_wire()["invalidationReason"] == "model_changed"
    assert state.stable_prefix_hash != first_hash
    assert state.epoch == 3


def test_prefix_state_survives_its_wire_form_and_tolerates_damage() -> None:
    state = PromptCacheState()
    state.observe(prefix_of("anthropic"))
    state.observe(prefix_of("anthropic", tools=[RUN_COMMAND]))
    wire = state.to_wire()
    assert set(wire) >= {
        "providerFamily",
        "mode",
        "systemBlocks",
        "stablePrefixHash",
        "toolSchemaHash",
        "invalidationReason",
    }
    again = PromptCacheState.from_wire(wire)
    assert again == state
    assert again.observe(prefix_of("anthropic", tools=[RUN_COMMAND])) is None
    assert PromptCacheState.from_wire({"providerFamily": 5, "epoch": "x"}) == PromptCacheState()
    assert PromptCacheState.from_wire(None) == PromptCacheState()


@pytest.mark.parametrize(
    ("dialect", "host", "model", "family"),
    [
        ("anthropic", "api.anthropic.com", "claude-sonnet-4-5", "anthropic"),
        ("anthropic", "litellm", "claude-sonnet-4-5", "anthropic"),
        ("openai", "litellm", "bedrock/anthropic.claude-3-5-sonnet", "bedrock_claude"),
        ("openai", "litellm", "us.anthropic.claude-sonnet-4", "bedrock_claude"),
        ("openai", "api.openai.com", "gpt-4o", "openai"),
        ("openai", "res.openai.azure.com", "gpt-4o", "azure_openai"),
        ("openai", "openrouter.ai", "anthropic/claude-sonnet-4", "openrouter"),
        ("openai", "litellm", "gemini-2.5-pro", "gemini"),
        ("openai", "litellm", "gpt-4o-mini", "openai"),
        ("openai", "localhost", "llama3.1:8b", "generic"),
    ],
)
def test_provider_families(dialect: str, host: str, model: str, family: str) -> None:
    assert provider_family(dialect, host, model) == family


async def test_a_gateway_refusal_of_breakpoints_reaches_the_caller_in_its_words() -> None:
    script = [{"kind": "error", "status": 400, "message": "A maximum of 4 blocks with cache_control"}]
    async with ScriptedGateway(script) as gateway:
        with pytest.raises(LlmRejected) as caught:
            await client(gateway.url, "anthropic").stream(
                policy=POLICY, system_prompt=SYSTEM, messages=[user("x")], tools=[]
            )
    assert "cache_control" in caught.value.shape.message
