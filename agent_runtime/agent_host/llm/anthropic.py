"""The Anthropic Messages dialect: request body, headers and stream parser.

Streaming events (https://docs.anthropic.com/en/api/messages-streaming): ``message_start`` →
per content block ``content_block_start`` / ``content_block_delta``* / ``content_block_stop`` →
``message_delta`` (stop reason, output usage) → ``message_stop``; ``ping`` anywhere; ``error`` may
arrive mid-stream. Text deltas are handed on as they come; ``input_json_delta`` fragments are kept
until the end. Event types this parser does not know are skipped, as Anthropic's versioning policy
asks of clients (new event types may be added); what breaks the structure — data that is not a JSON
object, an event without a type, a delta for a block that never started or of the wrong kind — is a
protocol error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from contracts.enums import StopReason
from contracts.tools import ToolDefinition

from .conversation import AssistantTurn, Turn, UserTurn
from .errors import LlmGuardrailBlocked
from .gateway_errors import error_for_status, status_for_error_type
from .response import LlmUsage
from .sse import SseEvent
from .streaming import Outcome, ToolCallBuilder, json_object, protocol_error

__all__ = [
    "MAX_CACHE_BREAKPOINTS",
    "AnthropicStream",
    "build_body",
    "envelope",
    "mark_settled",
    "render_system",
    "render_tools",
    "turn_messages",
]

DIALECT = "anthropic"

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

MAX_CACHE_BREAKPOINTS = 4
"""Anthropic refuses a request with more ``cache_control`` blocks than this (HTTP 400)."""
EPHEMERAL = {"type": "ephemeral"}

STOP_REASONS = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    # A server-tool loop paused; we offer no server tools, so the turn simply ended.
    "pause_turn": StopReason.END_TURN,
    "max_tokens": StopReason.MAX_TOKENS,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
    "tool_use": StopReason.TOOL_USE,
}


def safe_id(tool_call_id: str) -> str:
    """Anthropic accepts tool-use ids of ``[A-Za-z0-9_-]`` only; ids from other models may not be."""
    return _ID_UNSAFE.sub("_", tool_call_id)


def render_system(system: str) -> list[dict[str, Any]]:
    """The system prompt as the stable system blocks it is sent as (without cache markers)."""
    return [{"type": "text", "text": system}] if system.strip() else []


def render_tools(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    """The tool definitions as sent, in the order given (without cache markers)."""
    return [
        {"name": tool.tool_name, "description": tool.description, "input_schema": tool.input_schema}
        for tool in tools
    ]


def build_body(
    *,
    model: str,
    max_tokens: int,
    system: str,
    turns: Sequence[Turn],
    tools: Sequence[ToolDefinition],
    host: str = "",
    cache_key: str | None = None,
) -> dict[str, Any]:
    """The request body; the same for every host (``host`` and ``cache_key`` are taken for the
    dialects' one signature: Anthropic caches by breakpoints, not by key).

    Prompt caching: Anthropic reads a request as tools → system → messages and caches the prefix up
    to each block marked ``cache_control``. Three breakpoints, within the API's four: the last tool
    definition (the tools alone, which outlive a changed system prompt), the last system block (the
    whole stable prefix) and the last block of the conversation's latest settled turn — the newest
    user turn, which the next request repeats unchanged; a trailing assistant turn is a prefill the
    model is still writing, so it is not settled.

    Made of :func:`envelope`, :func:`turn_messages` and :func:`mark_settled`, which the client's
    :class:`~.request_body.BodyEncoder` also uses to encode requests turn by turn.
    """
    body = envelope(
        model=model, max_tokens=max_tokens, system=system, tools=tools, host=host, cache_key=cache_key
    )
    messages: list[dict[str, Any]] = body["messages"]
    settled: int | None = None
    for index, turn in enumerate(turns):
        if isinstance(turn, UserTurn):
            settled = len(messages)
        messages.extend(turn_messages(turn, final=index == len(turns) - 1))
    if settled is not None:
        messages[settled:] = mark_settled(messages[settled:])
    return body


def envelope(
    *,
    model: str,
    max_tokens: int,
    system: str,
    tools: Sequence[ToolDefinition],
    host: str = "",
    cache_key: str | None = None,
) -> dict[str, Any]:
    """The body without the conversation (``messages`` empty), its breakpoints on the tools and the
    system prompt set."""
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "stream": True}
    system_blocks = render_system(system)
    if system_blocks:
        body["system"] = system_blocks
    body["messages"] = []
    tool_blocks = render_tools(tools)
    if tool_blocks:
        body["tools"] = tool_blocks
    for blocks in (tool_blocks, system_blocks):
        if blocks:
            blocks[-1]["cache_control"] = dict(EPHEMERAL)
    return body


def turn_messages(turn: Turn, *, final: bool) -> list[dict[str, Any]]:
    """The wire messages of one turn (none for an assistant turn with nothing to say). ``final``: the
    conversation's last turn."""
    if isinstance(turn, UserTurn):
        return [{"role": "user", "content": _user_content(turn)}]
    content = _assistant_content(turn, final)
    return [{"role": "assistant", "content": content}] if content else []


def mark_settled(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of the latest settled (user) turn with the conversation's breakpoint on their last
    block (copies: the unmarked messages may be reused by later requests)."""
    if not messages or not messages[0]["content"]:
        return messages
    first = messages[0]
    blocks = list(first["content"])
    blocks[-1] = {**blocks[-1], "cache_control": dict(EPHEMERAL)}
    return [{**first, "content": blocks}, *messages[1:]]


def _user_content(turn: UserTurn) -> list[dict[str, Any]]:
    # Tool results must come first in the user message that answers a tool-use turn.
    blocks: list[dict[str, Any]] = []
    for result in turn.results:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": safe_id(result.tool_call_id)}
        if result.content:
            block["content"] = result.content
        if result.is_error:
            block["is_error"] = True
        blocks.append(block)
    blocks.extend(
        {
            "type": "image",
            "source": {"type": "base64", "media_type": image.media_type.value, "data": image.data},
        }
        for image in turn.images
    )
    blocks.extend({"type": "text", "text": text} for text in turn.texts)
    return blocks


def _assistant_content(turn: AssistantTurn, final: bool) -> list[dict[str, Any]]:
    texts = list(turn.texts)
    if final and texts:
        # A final assistant message is a prefill the model continues (after max_tokens, §4.4);
        # Anthropic refuses one that ends in whitespace.
        texts[-1] = texts[-1].rstrip()
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text in texts if text]
    blocks.extend(
        {
            "type": "tool_use",
            "id": safe_id(call.tool_call_id),
            "name": call.tool_name,
            "input": call.arguments,
        }
        for call in turn.tool_calls
    )
    return blocks


@dataclass(slots=True)
class _Block:
    kind: str
    call: ToolCallBuilder | None = None


@dataclass(slots=True)
class AnthropicStream:
    """Parses one attempt's events; see the module docstring."""

    now: Callable[[], float]
    done: bool = False
    _text: list[str] = field(default_factory=list)
    _blocks: dict[int, _Block] = field(default_factory=dict)
    _started: bool = False
    _model: str | None = None
    _message_id: str | None = None
    _input_tokens: int = 0
    _cache_read_tokens: int = 0
    _cache_write_tokens: int = 0
    _output_tokens: int = 0
    _usage_reported: bool = False
    _stop_reason: str | None = None

    def event(self, event: SseEvent) -> str | None:
        data = json_object(DIALECT, event)
        kind = data.get("type")
        if not isinstance(kind, str):
            raise protocol_error(DIALECT, "an event has no type", event)
        if self.done:
            return None
        if kind == "content_block_delta":
            block = self._block(data, event)
            delta = data.get("delta")
            if not isinstance(delta, dict):
                raise protocol_error(DIALECT, "a content_block_delta has no delta", event)
            delta_kind = delta.get("type")
            if delta_kind == "text_delta":
                text = delta.get("text")
                if block.kind != "text" or not isinstance(text, str):
                    raise protocol_error(DIALECT, "a text_delta does not continue a text block", event)
                if text:
                    self._text.append(text)
                    return text
                return None
            if delta_kind == "input_json_delta":
                fragment = delta.get("partial_json")
                if block.call is None or not isinstance(fragment, str):
                    raise protocol_error(
                        DIALECT, "an input_json_delta does not continue a tool_use block", event
                    )
                block.call.fragments.append(fragment)
            return None
        if kind == "content_block_start":
            return self._start_block(data, event)
        if kind == "message_start":
            self._start_message(data, event)
        elif kind == "message_delta":
            self._message_delta(data, event)
        elif kind == "message_stop":
            if not self._started:
                raise protocol_error(DIALECT, "message_stop came before message_start", event)
            self.done = True
        elif kind == "error":
            error = data.get("error")
            error = error if isinstance(error, dict) else {}
            raise error_for_status(status_for_error_type(error), data, {}, self.now, in_stream=True)
        return None

    def _block(self, data: dict[str, Any], event: SseEvent) -> _Block:
        index = data.get("index")
        block = self._blocks.get(index) if isinstance(index, int) else None
        if block is None:
            raise protocol_error(DIALECT, "a delta refers to a content block that never started", event)
        return block

    def _start_block(self, data: dict[str, Any], event: SseEvent) -> str | None:
        if not self._started:
            raise protocol_error(DIALECT, "a content block started before message_start", event)
        index = data.get("index")
        block = data.get("content_block")
        if not isinstance(index, int) or not isinstance(block, dict):
            raise protocol_error(DIALECT, "a content_block_start lacks its index or block", event)
        if index in self._blocks:
            raise protocol_error(DIALECT, "a content block index was started twice", event)
        kind = block.get("type")
        if kind == "text":
            self._blocks[index] = _Block("text")
            text = block.get("text")
            if isinstance(text, str) and text:
                self._text.append(text)
                return text
        elif kind == "tool_use":
            call_id, name, initial = block.get("id"), block.get("name"), block.get("input")
            builder = ToolCallBuilder(
                call_id=call_id if isinstance(call_id, str) else "",
                name=name if isinstance(name, str) else "",
                initial=initial if isinstance(initial, dict) else None,
            )
            self._blocks[index] = _Block("tool_use", builder)
        else:
            # thinking, redacted_thinking, server tool blocks…: not part of what the loop needs.
            self._blocks[index] = _Block(str(kind))
        return None

    def _start_message(self, data: dict[str, Any], event: SseEvent) -> None:
        message = data.get("message")
        if not isinstance(message, dict):
            raise protocol_error(DIALECT, "message_start carries no message", event)
        self._started = True
        model, message_id = message.get("model"), message.get("id")
        self._model = model if isinstance(model, str) else None
        self._message_id = message_id if isinstance(message_id, str) else None
        usage = message.get("usage")
        if isinstance(usage, dict):
            self._take_usage(usage)

    def _message_delta(self, data: dict[str, Any], event: SseEvent) -> None:
        delta = data.get("delta")
        if isinstance(delta, dict):
            reason = delta.get("stop_reason")
            if isinstance(reason, str):
                self._stop_reason = reason
        usage = data.get("usage")
        if isinstance(usage, dict):
            self._take_usage(usage)

    def _take_usage(self, usage: dict[str, Any]) -> None:
        # The kinds stay apart (uncached input, cache reads, cache writes); a later event's count of a
        # kind replaces the earlier one, as message_delta's usage is cumulative.
        for key, slot in (
            ("input_tokens", "_input_tokens"),
            ("cache_read_input_tokens", "_cache_read_tokens"),
            ("cache_creation_input_tokens", "_cache_write_tokens"),
        ):
            value = usage.get(key)
            if isinstance(value, int) and value >= 0:
                setattr(self, slot, value)
                self._usage_reported = True
        output = usage.get("output_tokens")
        if isinstance(output, int) and output >= 0:
            self._output_tokens = output
            self._usage_reported = True

    def outcome(self) -> Outcome:
        if self._stop_reason == "refusal":
            raise LlmGuardrailBlocked(
                "The model declined to continue (stop reason: refusal)",
                details={"dialect": DIALECT, "stopReason": "refusal"},
            )
        calls = [block.call.build(DIALECT) for _, block in sorted(self._blocks.items()) if block.call]
        default = StopReason.TOOL_USE if calls else StopReason.END_TURN
        return Outcome(
            text="".join(self._text),
            tool_calls=calls,
            stop_reason=STOP_REASONS.get(self._stop_reason or "", default),
            raw_stop_reason=self._stop_reason,
            usage=LlmUsage(
                self._input_tokens,
                self._output_tokens,
                self._usage_reported,
                cache_read_tokens=self._cache_read_tokens,
                cache_write_tokens=self._cache_write_tokens,
            ),
            model=self._model,
            message_id=self._message_id,
        )
