"""Builders and recorders shared by the LLM client's tests."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agent_runtime.agent_host.llm import Dialect, GatewayConfig, LlmClient, RetrySettings, Timeouts
from contracts.enums import Role, ToolStatus
from contracts.messages import ConversationMessage
from contracts.policy import LlmPolicy
from contracts.tools import ToolCall, ToolDefinition

DIALECTS: tuple[Dialect, ...] = ("anthropic", "openai")

POLICY = LlmPolicy(
    allowed_models=["model-first", "model-second"],
    max_input_tokens=100_000,
    max_output_tokens=1234,
    max_session_tokens=1_000_000,
)

READ_FILE = ToolDefinition(
    tool_name="ReadFile",
    description="Read the contents of a file at the given path",
    input_schema={"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}},
)
RUN_COMMAND = ToolDefinition(
    tool_name="RunCommand",
    description="Execute a shell command and return stdout, stderr, and exit code",
    input_schema={"type": "object", "required": ["command"], "properties": {"command": {"type": "string"}}},
)

_ids = itertools.count()


def message(role: Role, content: str, **fields: Any) -> ConversationMessage:
    return ConversationMessage(
        message_id=f"m{next(_ids)}",
        session_id="s1",
        role=role,
        content=content,
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        **fields,
    )


def user(content: str) -> ConversationMessage:
    return message(Role.USER, content)


def system(content: str) -> ConversationMessage:
    return message(Role.SYSTEM, content)


def assistant(content: str = "", *calls: ToolCall) -> ConversationMessage:
    return message(Role.ASSISTANT, content, tool_calls=list(calls) or None)


def call(call_id: str, name: str = "ReadFile", **arguments: Any) -> ToolCall:
    return ToolCall(tool_call_id=call_id, tool_name=name, arguments=arguments)


def result(
    call_id: str, content: str, status: ToolStatus = ToolStatus.SUCCEEDED, name: str = "ReadFile"
) -> ConversationMessage:
    return message(Role.TOOL, content, tool_call_id=call_id, tool_name=name, tool_status=status)


@dataclass
class Recorder:
    """Stands in for sleep and the callbacks: remembers every call, never waits."""

    sleeps: list[float] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    discards: int = 0
    retries: list[tuple[int, float, str]] = field(default_factory=list)
    events: list[str] = field(default_factory=list)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.events.append(f"sleep {seconds:g}")

    def on_text(self, chunk: str) -> None:
        self.texts.append(chunk)
        self.events.append(f"text {chunk}")

    def on_discard(self) -> None:
        self.discards += 1
        self.events.append("discard")

    def on_retry(self, retry: int, delay: float, reason: str) -> None:
        self.retries.append((retry, delay, reason))
        self.events.append(f"retry {retry}")


def client(
    url: str,
    dialect: Dialect,
    recorder: Recorder | None = None,
    *,
    token: str | None = None,
    timeouts: Timeouts | None = None,
    retry: RetrySettings | None = None,
    random: float = 0.5,
) -> LlmClient:
    return LlmClient(
        GatewayConfig(url, token, dialect),
        sleep=(recorder or Recorder()).sleep,
        random=lambda: random,
        timeouts=timeouts or Timeouts(connect_s=5.0, read_s=10.0),
        retry=retry,
    )


async def ask(
    llm: LlmClient,
    recorder: Recorder | None = None,
    messages: list[ConversationMessage] | None = None,
    tools: list[ToolDefinition] | None = None,
    system_prompt: str = "You are a careful agent.",
) -> Any:
    recorder = recorder or Recorder()
    return await llm.stream(
        policy=POLICY,
        system_prompt=system_prompt,
        messages=messages if messages is not None else [user("Hello")],
        tools=tools if tools is not None else [READ_FILE],
        on_text=recorder.on_text,
        on_discard=recorder.on_discard,
        on_retry=recorder.on_retry,
    )


def unmarked(value: Any) -> Any:
    """``value`` without Anthropic's ``cache_control`` markers (for tests about everything else)."""
    if isinstance(value, dict):
        return {key: unmarked(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [unmarked(item) for item in value]
    return value
