"""What both dialects' stream parsers share: the parser protocol, JSON checks, tool-call assembly."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from contracts.enums import StopReason
from contracts.tools import ToolCall

from .errors import LlmMalformedToolCall, LlmProtocolError
from .response import LlmUsage
from .sse import SseEvent

__all__ = ["Outcome", "StreamParser", "ToolCallBuilder", "json_object", "protocol_error"]

_PREVIEW_CHARS = 120


@dataclass(frozen=True, slots=True)
class Outcome:
    """A finished stream, before it becomes an ``LlmResponse``."""

    text: str
    tool_calls: list[ToolCall]
    stop_reason: StopReason
    raw_stop_reason: str | None
    usage: LlmUsage
    model: str | None
    message_id: str | None


class StreamParser(Protocol):
    """One attempt's stream in one dialect. ``event`` returns the text chunk the event carries."""

    @property
    def done(self) -> bool:
        """The terminal event arrived (``message_stop``, ``[DONE]``)."""
        ...

    def event(self, event: SseEvent) -> str | None: ...

    def outcome(self) -> Outcome: ...


def protocol_error(dialect: str, problem: str, event: SseEvent | None = None) -> LlmProtocolError:
    details: dict[str, Any] = {"dialect": dialect}
    if event is not None:
        details["event"] = event.event[:100]
        details["dataPreview"] = event.data[:_PREVIEW_CHARS]
    return LlmProtocolError(
        f"The LLM gateway's stream is not valid {_DIALECT_NAMES.get(dialect, dialect)}: {problem}. "
        "Check LLM_GATEWAY_ENDPOINT and LLM_GATEWAY_API.",
        details=details,
    )


_DIALECT_NAMES = {"anthropic": "Anthropic Messages streaming", "openai": "OpenAI Chat Completions streaming"}

_decode = json.JSONDecoder().decode


def json_object(dialect: str, event: SseEvent) -> dict[str, Any]:
    try:
        value = _decode(event.data)
    except ValueError:
        raise protocol_error(dialect, "an event's data is not JSON", event) from None
    if not isinstance(value, dict):
        raise protocol_error(dialect, "an event's data is not a JSON object", event)
    return value


@dataclass(slots=True)
class ToolCallBuilder:
    """A tool call as its pieces arrive; arguments stay text until the stream is complete (§6.3)."""

    call_id: str = ""
    name: str = ""
    fragments: list[str] = field(default_factory=list)
    initial: dict[str, Any] | None = None

    def build(self, dialect: str) -> ToolCall:
        if not self.name:
            raise LlmMalformedToolCall(
                "The model produced a tool call without a tool name",
                details={"dialect": dialect, "toolCallId": self.call_id},
            )
        raw = "".join(self.fragments)
        if raw.strip():
            try:
                arguments = json.loads(raw)
            except ValueError:
                raise self._malformed(dialect, "are not valid JSON") from None
            if not isinstance(arguments, dict):
                raise self._malformed(dialect, "are not a JSON object")
        else:
            arguments = self.initial or {}
        return ToolCall(
            tool_call_id=self.call_id or f"call_{uuid.uuid4().hex[:24]}",
            tool_name=self.name,
            arguments=arguments,
        )

    def _malformed(self, dialect: str, problem: str) -> LlmMalformedToolCall:
        return LlmMalformedToolCall(
            f"The model produced arguments for tool {self.name[:100]} that {problem}",
            details={"dialect": dialect, "toolName": self.name[:100], "toolCallId": self.call_id[:100]},
        )
