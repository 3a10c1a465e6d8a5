"""The OpenAI Chat Completions dialect: request body, headers and stream parser.

Streaming (https://platform.openai.com/docs/api-reference/chat-streaming): every event is a
``chat.completion.chunk`` whose ``choices[0].delta`` carries text (``content``) or tool-call pieces
(``tool_calls[i]``: ``index``, then ``id``/``function.name`` once and ``function.arguments`` in
fragments); ``finish_reason`` ends the choice; with ``stream_options.include_usage`` a last chunk
with empty ``choices`` carries ``usage``; ``data: [DONE]`` ends the stream. Servers that send a
whole tool call in one chunk, omit ``index`` or ``id``, or send no usage (Ollama, older vLLM) are
accepted. An ``{"error": …}`` chunk (LiteLLM, OpenRouter) is an error mid-stream; a JSON object that
is neither a chunk nor an error is a protocol error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from contracts.enums import StopReason
from contracts.tools import ToolDefinition

from .conversation import Turn, UserTurn
from .errors import LlmGuardrailBlocked
from .gateway_errors import error_for_status, status_for_error_type
from .response import LlmUsage
from .sse import SseEvent
from .streaming import Outcome, ToolCallBuilder, json_object, protocol_error

__all__ = [
    "OpenAiStream",
    "build_body",
    "envelope",
    "mark_settled",
    "max_tokens_field",
    "render_system",
    "render_tools",
    "takes_prompt_cache_key",
    "turn_messages",
]

DIALECT = "openai"

STOP_REASONS = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_TOKENS,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
}


# OpenAI's reasoning families (o1, o3, o4-mini…, gpt-5…), after any provider prefix ("openai/o3").
_REASONING_MODEL = re.compile(r"^(?:o\d+|gpt-5)(?:$|[-.:_])", re.IGNORECASE)


def max_tokens_field(model: str, host: str) -> str:
    """The body field that carries the output limit for this model at this host.

    OpenAI's API reference deprecates ``max_tokens`` for ``max_completion_tokens``, and its reasoning
    models refuse ``max_tokens`` outright ("Use 'max_completion_tokens' instead"). But Ollama and LM
    Studio read only ``max_tokens`` and silently ignore the newer field, so sending it everywhere would
    drop the limit there. Hence:

    * OpenAI's own API (``api.openai.com``, Azure OpenAI): ``max_completion_tokens`` for every model;
    * OpenRouter: ``max_tokens``, the field it documents and maps to each provider's own;
    * elsewhere (LiteLLM, vLLM, Ollama…): ``max_completion_tokens`` for an OpenAI reasoning model —
      it refuses the old field, and the servers that forward it (LiteLLM, vLLM) take the new one —
      and ``max_tokens`` for any other model, the one field every compatible server reads.
    """
    host = host.lower().rstrip(".")
    if host == "api.openai.com" or host.endswith(".openai.azure.com"):
        return "max_completion_tokens"
    if host == "openrouter.ai" or host.endswith(".openrouter.ai"):
        return "max_tokens"
    name = model.rsplit("/", 1)[-1].strip()
    return "max_completion_tokens" if _REASONING_MODEL.match(name) else "max_tokens"


def takes_prompt_cache_key(host: str) -> bool:
    """Only OpenAI's own API is sent ``prompt_cache_key``. It caches long prefixes by itself and uses
    the key to route requests that share one to the same cache. Compatible servers differ on unknown
    fields — some ignore them, some (strict proxies, older vLLM with ``extra="forbid"`` models) refuse
    the request — so elsewhere the prefix is simply kept byte for byte the same."""
    host = host.lower().rstrip(".")
    return host == "api.openai.com"


def render_system(system: str) -> list[dict[str, Any]]:
    """The system prompt as the message(s) that open the conversation."""
    return [{"role": "system", "content": system}] if system.strip() else []


def render_tools(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    """The tool definitions as sent, in the order given."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.tool_name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
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
    """The request body; ``host`` is the gateway's, which decides the output limit's field name and
    whether ``cache_key`` is sent as ``prompt_cache_key``. Made of :func:`envelope` and
    :func:`turn_messages`, as the client's :class:`~.request_body.BodyEncoder` encodes it too."""
    body = envelope(
        model=model, max_tokens=max_tokens, system=system, tools=tools, host=host, cache_key=cache_key
    )
    for index, turn in enumerate(turns):
        body["messages"].extend(turn_messages(turn, final=index == len(turns) - 1))
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
    """The body with only the system prompt's message in ``messages``."""
    body: dict[str, Any] = {
        "model": model,
        max_tokens_field(model, host): max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": render_system(system),
    }
    if tools:
        body["tools"] = render_tools(tools)
    if cache_key and takes_prompt_cache_key(host):
        body["prompt_cache_key"] = cache_key
    return body


def turn_messages(turn: Turn, *, final: bool = False) -> list[dict[str, Any]]:
    """The wire messages of one turn: a user turn's tool results, each a ``tool`` message, then its
    text; an assistant turn's one message. (``final`` changes nothing in this dialect.)"""
    if isinstance(turn, UserTurn):
        messages: list[dict[str, Any]] = []
        for result in turn.results:
            content = result.content
            if result.is_error:
                # No is_error flag in this dialect: say it in the text the model reads.
                content = f"[tool call {result.status.value}]\n{content}"
            messages.append({"role": "tool", "tool_call_id": result.tool_call_id, "content": content})
        if turn.images:
            # Content parts only when there is an image: servers that know no parts (older vLLM chat
            # templates) still read the plain-string form of every text-only turn.
            parts: list[dict[str, Any]] = [
                {
                    "type": "image_url",
                    "image_url": {"url": f"data:{image.media_type.value};base64,{image.data}"},
                }
                for image in turn.images
            ]
            if turn.texts:
                parts.append({"type": "text", "text": "\n\n".join(turn.texts)})
            messages.append({"role": "user", "content": parts})
        elif turn.texts:
            messages.append({"role": "user", "content": "\n\n".join(turn.texts)})
        return messages
    message: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(turn.texts) or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.tool_call_id,
                "type": "function",
                "function": {
                    "name": call.tool_name,
                    "arguments": json.dumps(call.arguments, ensure_ascii=False, allow_nan=False),
                },
            }
            for call in turn.tool_calls
        ]
    return [message]


def mark_settled(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """No breakpoints in this dialect: OpenAI caches a long enough unchanged prefix by itself."""
    return messages


@dataclass(slots=True)
class OpenAiStream:
    """Parses one attempt's chunks; see the module docstring."""

    now: Callable[[], float]
    done: bool = False
    _text: list[str] = field(default_factory=list)
    _calls: dict[int, ToolCallBuilder] = field(default_factory=dict)
    _model: str | None = None
    _message_id: str | None = None
    _usage: LlmUsage = field(default_factory=LlmUsage)
    _finish_reason: str | None = None

    def event(self, event: SseEvent) -> str | None:
        if self.done:
            return None
        if event.data == "[DONE]" or event.data.strip() == "[DONE]":
            self.done = True
            return None
        data = json_object(DIALECT, event)
        error = data.get("error")
        if error or event.event == "error":
            error = error if isinstance(error, dict) else {}
            raise error_for_status(status_for_error_type(error), data, {}, self.now, in_stream=True)
        choices = data.get("choices")
        usage = data.get("usage")
        if isinstance(usage, dict):
            self._take_usage(usage)
        if choices is None:
            if isinstance(usage, dict):
                return None
            raise protocol_error(DIALECT, "an event is not a chat.completion.chunk", event)
        if not isinstance(choices, list):
            raise protocol_error(DIALECT, "a chunk's choices is not a list", event)
        if self._model is None:
            model, chunk_id = data.get("model"), data.get("id")
            self._model = model if isinstance(model, str) and model else None
            self._message_id = chunk_id if isinstance(chunk_id, str) else None
        text: str | None = None
        for choice in choices:
            if not isinstance(choice, dict):
                raise protocol_error(DIALECT, "a choice is not an object", event)
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                text = self._delta(delta, event)
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self._finish_reason = reason
        return text

    def _delta(self, delta: dict[str, Any], event: SseEvent) -> str | None:
        calls = delta.get("tool_calls")
        if calls:
            if not isinstance(calls, list):
                raise protocol_error(DIALECT, "a delta's tool_calls is not a list", event)
            for position, piece in enumerate(calls):
                if not isinstance(piece, dict):
                    raise protocol_error(DIALECT, "a tool-call delta is not an object", event)
                index = piece.get("index", position)
                if not isinstance(index, int):
                    raise protocol_error(DIALECT, "a tool-call delta's index is not an integer", event)
                function = piece.get("function")
                function = function if isinstance(function, dict) else {}
                self._call_piece(index, piece.get("id"), function, event)
        legacy = delta.get("function_call")
        if isinstance(legacy, dict):
            self._call_piece(0, None, legacy, event)
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._text.append(content)
            return content
        return None

    def _call_piece(self, index: int, call_id: Any, function: dict[str, Any], event: SseEvent) -> None:
        builder = self._calls.get(index)
        if builder is None:
            builder = self._calls[index] = ToolCallBuilder()
        if isinstance(call_id, str) and call_id and not builder.call_id:
            builder.call_id = call_id
        name = function.get("name")
        if isinstance(name, str) and name and not builder.name:
            builder.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            builder.fragments.append(arguments)
        elif isinstance(arguments, dict):
            # Some servers send the arguments already decoded.
            builder.fragments.append(json.dumps(arguments))
        elif arguments is not None:
            raise protocol_error(DIALECT, "a tool call's arguments are neither text nor an object", event)

    def _take_usage(self, usage: dict[str, Any]) -> None:
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        if isinstance(prompt, int) and isinstance(completion, int) and prompt >= 0 and completion >= 0:
            # prompt_tokens includes the cached ones (prompt_tokens_details.cached_tokens): kept apart.
            details = usage.get("prompt_tokens_details")
            cached = details.get("cached_tokens") if isinstance(details, dict) else None
            cached = min(cached, prompt) if isinstance(cached, int) and cached > 0 else 0
            self._usage = LlmUsage(prompt - cached, completion, True, cache_read_tokens=cached)

    def outcome(self) -> Outcome:
        if self._finish_reason == "content_filter":
            raise LlmGuardrailBlocked(
                "The LLM gateway's content filter stopped the response (finish reason: content_filter)",
                details={"dialect": DIALECT, "stopReason": "content_filter"},
            )
        calls = [builder.build(DIALECT) for _, builder in sorted(self._calls.items())]
        default = StopReason.TOOL_USE if calls else StopReason.END_TURN
        return Outcome(
            text="".join(self._text),
            tool_calls=calls,
            stop_reason=STOP_REASONS.get(self._finish_reason or "", default),
            raw_stop_reason=self._finish_reason,
            usage=self._usage,
            model=self._model,
            message_id=self._message_id,
        )
