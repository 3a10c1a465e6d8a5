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


# ---------------------------------------------------------------- the tour: read, edit, command

PROJECT_PROMPT = (
    "You are Cowork.\n## Environment\n- Project folders (work inside these unless the user says otherwise):\n"
    "  - /home/me/proj\n"
)
WRITE_FILE = ToolDefinition(
    tool_name="WriteFile", description="Write a file", input_schema={"type": "object", "properties": {}}
)
EDIT_FILE = ToolDefinition(
    tool_name="EditFile", description="Edit a file", input_schema={"type": "object", "properties": {}}
)
ALL_TOOLS = [READ_FILE, WRITE_FILE, EDIT_FILE, RUN_COMMAND]
DEMO = "/home/me/proj/cowork-demo.md"


async def ask_with_project(
    dialect: Dialect, messages: list[ConversationMessage], tools: list[ToolDefinition] = ALL_TOOLS
) -> LlmResponse:
    async with ScriptedGateway.demo() as gateway:
        return await LlmClient(GatewayConfig(gateway.url, None, dialect)).stream(
            policy=POLICY, system_prompt=PROJECT_PROMPT, messages=messages, tools=tools
        )


def step(
    call_id: str, name: str, output: str, status: ToolStatus = ToolStatus.SUCCEEDED, **args: object
) -> list[ConversationMessage]:
    """One tool call of the model and its result."""
    return [assistant("", call(call_id, name, **args)), result(call_id, output, status, name=name)]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_the_tour_reads_writes_edits_runs_a_command_then_stops(dialect: Dialect) -> None:
    history: list[ConversationMessage] = [user("What is in notes.txt?")]
    seen: list[tuple[str, dict[str, object]]] = []
    outputs = {
        "ReadFile": "Remember the milk.\n",
        "WriteFile": f"Wrote {DEMO}",
        "EditFile": f"Edited {DEMO}",
        "RunCommand": "Hello from the Cowork demo\n",
    }
    for number in range(5):
        reply = await ask_with_project(dialect, history)
        assert reply.text.startswith(DEMO_LABEL)
        if not reply.tool_calls:
            break
        (made,) = reply.tool_calls
        seen.append((made.tool_name, made.arguments))
        history += step(f"c{number}", made.tool_name, outputs[made.tool_name], **made.arguments)
    assert [name for name, _ in seen] == ["ReadFile", "WriteFile", "EditFile", "RunCommand"]
    assert seen[1][1]["path"] == DEMO
    assert "Status: draft" in str(seen[1][1]["content"])
    assert seen[2][1] == {
        "path": DEMO,
        "oldString": "Status: draft",
        "newString": "Status: edited by the demo",
    }
    assert seen[3][1] == {"command": "echo Hello from the Cowork demo"}
    assert reply.stop_reason is StopReason.END_TURN
    assert "Hello from the Cowork demo" in reply.text


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_refused_edit_ends_the_tour(dialect: Dialect) -> None:
    history = [
        user("Read notes.txt"),
        *step("c1", "ReadFile", "milk", path="notes.txt"),
        *step("c2", "WriteFile", "ok", path=DEMO, content="Status: draft\n"),
        *step(
            "c3", "EditFile", "Denied: not now", ToolStatus.DENIED, path=DEMO, oldString="a", newString="b"
        ),
    ]
    reply = await ask_with_project(dialect, history)
    assert reply.tool_calls == []
    assert "did not succeed" in reply.text


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_later_task_reads_the_demo_file_it_made_and_edits_it_back(dialect: Dialect) -> None:
    history = [
        user("Read notes.txt"),
        *step("c1", "WriteFile", "ok", path=DEMO, content="x"),
        assistant("done"),
        user("Read notes.txt again"),
        *step("c2", "ReadFile", "milk", path="notes.txt"),
    ]
    reply = await ask_with_project(dialect, history)
    assert [(c.tool_name, c.arguments) for c in reply.tool_calls] == [("ReadFile", {"path": DEMO})]
    history += step("c3", "ReadFile", "# Cowork demo\n\nStatus: edited by the demo\n", path=DEMO)
    reply = await ask_with_project(dialect, history)
    assert [(c.tool_name, c.arguments) for c in reply.tool_calls] == [
        ("EditFile", {"path": DEMO, "oldString": "Status: edited by the demo", "newString": "Status: draft"})
    ]


async def test_without_a_project_folder_the_tour_skips_the_edit() -> None:
    async with ScriptedGateway.demo() as gateway:
        reply = await LlmClient(GatewayConfig(gateway.url, None, "anthropic")).stream(
            policy=POLICY,
            system_prompt="You are Cowork.\n- No project folder is open: this is a general conversation.\n",
            messages=[user("Read notes.txt"), *step("c1", "ReadFile", "milk", path="notes.txt")],
            tools=ALL_TOOLS,
        )
    assert [c.tool_name for c in reply.tool_calls] == ["RunCommand"]
