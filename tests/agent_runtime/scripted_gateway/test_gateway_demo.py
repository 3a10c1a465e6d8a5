"""The offline demo model: labelled, deterministic, read-only, and never out of turns."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.llm import Dialect, GatewayConfig, LlmClient, LlmResponse
from agent_runtime.scripted_gateway import DEMO_LABEL, ScriptedGateway
from contracts.enums import StopReason, ToolStatus
from contracts.messages import ConversationMessage
from contracts.policy import LlmPolicy
from contracts.tools import ToolDefinition
from tests.agent_runtime.agent_host.llm.support import READ_FILE, RUN_COMMAND, assistant, call, result, user

POLICY = LlmPolicy(
    allowed_models=["demo"], max_input_tokens=1000, max_output_tokens=100, max_session_tokens=10**6
)
DIALECTS: tuple[Dialect, ...] = ("anthropic", "openai")


async def ask_demo(
    dialect: Dialect, messages: list[ConversationMessage], tools: list[ToolDefinition]
) -> LlmResponse:
    async with ScriptedGateway.demo() as gateway:
        return await LlmClient(GatewayConfig(gateway.url, None, dialect)).stream(
            policy=POLICY, system_prompt="You are Cowork.", messages=messages, tools=tools
        )


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_plain_prompt_gets_a_labelled_explanation_quoting_it(dialect: Dialect) -> None:
    reply = await ask_demo(dialect, [user("What is the capital of France?")], [READ_FILE])
    assert reply.text.startswith(DEMO_LABEL)
    assert "What is the capital of France?" in reply.text
    assert reply.tool_calls == []
    assert reply.stop_reason is StopReason.END_TURN


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_prompt_naming_a_file_gets_one_read_only_readfile_call(dialect: Dialect) -> None:
    reply = await ask_demo(
        dialect, [user("Please summarise `docs/guide.md`, thanks.")], [RUN_COMMAND, READ_FILE]
    )
    assert reply.text.startswith(DEMO_LABEL)
    assert [(c.tool_name, c.arguments) for c in reply.tool_calls] == [("ReadFile", {"path": "docs/guide.md"})]
    assert reply.stop_reason is StopReason.TOOL_USE


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_no_tool_is_called_when_readfile_is_not_offered(dialect: Dialect) -> None:
    reply = await ask_demo(dialect, [user("Read README.md")], [RUN_COMMAND])
    assert reply.tool_calls == []


@pytest.mark.parametrize(
    "prompt",
    [
        "Fetch https://example.com/index.html",
        "mail me at someone@example.com",
        "version 1.2.3 is out",
        "rm -rf / ; echo hi",
    ],
)
async def test_urls_addresses_and_numbers_are_not_taken_for_paths(prompt: str) -> None:
    reply = await ask_demo("anthropic", [user(prompt)], [READ_FILE])
    assert reply.tool_calls == []


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_after_a_tool_result_the_demo_summarises_and_stops(dialect: Dialect) -> None:
    messages = [
        user("Read notes.txt"),
        assistant("", call("c1", path="notes.txt")),
        result("c1", "first line here\nsecond line\n"),
    ]
    reply = await ask_demo(dialect, messages, [READ_FILE])
    assert reply.text.startswith(DEMO_LABEL)
    assert "first line here" in reply.text
    assert reply.tool_calls == []
    assert reply.stop_reason is StopReason.END_TURN


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_failed_tool_result_is_reported_as_such(dialect: Dialect) -> None:
    messages = [
        user("Read notes.txt"),
        assistant("", call("c1", path="notes.txt")),
        result("c1", "FILE_NOT_FOUND: notes.txt", ToolStatus.FAILED),
    ]
    reply = await ask_demo(dialect, messages, [READ_FILE])
    assert "did not succeed" in reply.text


async def test_the_demo_never_runs_out_of_turns() -> None:
    async with ScriptedGateway.demo() as gateway:
        llm = LlmClient(GatewayConfig(gateway.url, None, "openai"))
        for n in range(25):
            reply = await llm.stream(policy=POLICY, system_prompt="", messages=[user(f"q{n}")], tools=[])
            assert reply.text.startswith(DEMO_LABEL)
        gateway.assert_done()
        assert gateway.snapshot()["turnsPlayed"] == 25
