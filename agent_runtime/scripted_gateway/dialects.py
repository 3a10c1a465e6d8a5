"""How a scripted turn looks on the wire in each dialect: SSE events, error bodies, stop reasons.

The events follow the providers' documented streams: Anthropic Messages (``message_start``, ``ping``,
content blocks with ``text_delta`` / ``input_json_delta``, ``message_delta``, ``message_stop``) and
OpenAI Chat Completions (``chat.completion.chunk`` deltas, ``finish_reason``, a usage chunk when
``stream_options.include_usage`` was asked for, ``[DONE]``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from .prompt_cache import CacheUsage
from .script import ResponseTurn, ScriptedToolCall

__all__ = ["Dialect", "SseStep", "error_body", "response_steps", "stream_error_event"]

Dialect = Literal["anthropic", "openai"]

_STOP = {
    "anthropic": {
        "end_turn": "end_turn",
        "stop_sequence": "stop_sequence",
        "max_tokens": "max_tokens",
        "tool_use": "tool_use",
        "content_filter": "refusal",
    },
    "openai": {
        "end_turn": "stop",
        "stop_sequence": "stop",
        "max_tokens": "length",
        "tool_use": "tool_calls",
        "content_filter": "content_filter",
    },
}

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    400: "The request was blocked by the scripted gateway's guardrail",
    401: "Invalid authentication token",
    403: "Not allowed",
    404: "Not found",
    413: "The request is too large",
    422: "The request is not valid",
    429: "Rate limited (scripted)",
    500: "Internal error (scripted)",
    503: "Service unavailable (scripted)",
    529: "Overloaded (scripted)",
}

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@dataclass(frozen=True, slots=True)
class SseStep:
    """One SSE event; ``chunk`` marks the text chunks and argument fragments that cuts, holds and
    delays count."""

    data: bytes
    chunk: bool = False


def _event(name: str | None, payload: Any) -> bytes:
    body = payload if isinstance(payload, str) else _encode(payload)
    prefix = f"event: {name}\n" if name else ""
    return f"{prefix}data: {body}\n\n".encode()


def default_message(status: int) -> str:
    return _DEFAULT_MESSAGES.get(status, f"Scripted error {status}")


def error_body(dialect: Dialect, status: int, message: str) -> dict[str, Any]:
    if dialect == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = "server_error" if status >= 500 else "invalid_request_error"
    if status == 429:
        kind = "rate_limit_exceeded"
    return {"error": {"message": message, "type": kind, "param": None, "code": status}}


def stream_error_event(dialect: Dialect, status: int, message: str) -> bytes:
    if dialect == "anthropic":
        return _event("error", error_body(dialect, status, message))
    return _event(None, error_body(dialect, status, message))


def _fragments(text: str, pieces: int) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _estimate(characters: int) -> int:
    return max(1, characters // 4)


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything about one played turn that does not depend on the dialect."""

    turn: ResponseTurn
    turn_index: int
    model: str
    input_tokens: int
    output_tokens: int
    include_usage: bool
    stop: str
    cache: CacheUsage = field(default_factory=CacheUsage)
    """Prompt-cache reads and writes; Anthropic's ``input_tokens`` leaves them out, OpenAI's
    ``prompt_tokens`` includes the reads."""


def plan(
    dialect: Dialect,
    turn: ResponseTurn,
    turn_index: int,
    request: dict[str, Any],
    request_size: int,
    cache: CacheUsage | None = None,
) -> Plan:
    requested = request.get("model")
    model = turn.model or (requested if isinstance(requested, str) and requested else "scripted")
    arguments = sum(len(call.arguments_text()) for call in turn.tool_calls)
    usage = turn.usage
    # OpenAI sends a usage chunk only when asked to; Anthropic always reports usage.
    options = request.get("stream_options")
    asked = isinstance(options, dict) and options.get("include_usage") is True
    include_usage = not turn.omit_usage and (dialect == "anthropic" or asked)
    cache = cache or CacheUsage()
    if usage:
        # Scripted counts are exact: the cache model does not second-guess them.
        cache = CacheUsage(usage.cache_read_tokens, usage.cache_write_tokens)
        input_tokens = usage.input_tokens
    elif dialect == "anthropic":
        input_tokens = max(1, _estimate(request_size) - cache.read_tokens - cache.write_tokens)
    else:
        input_tokens = max(_estimate(request_size), cache.read_tokens)
    return Plan(
        turn=turn,
        turn_index=turn_index,
        model=model,
        input_tokens=input_tokens,
        output_tokens=usage.output_tokens if usage else _estimate(len(turn.full_text()) + arguments),
        include_usage=include_usage,
        stop=turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn"),
        cache=cache,
    )


def response_steps(dialect: Dialect, plan: Plan) -> tuple[list[SseStep], list[SseStep]]:
    """The events of a scripted response: (everything up to and including the last chunk, the end)."""
    if dialect == "anthropic":
        return _anthropic(plan)
    return _openai(plan)


def _call_id(dialect: Dialect, plan: Plan, index: int, call: ScriptedToolCall) -> str:
    if call.id:
        return call.id
    prefix = "toolu" if dialect == "anthropic" else "call"
    return f"{prefix}_scripted_{plan.turn_index}_{index}"


def _anthropic(plan: Plan) -> tuple[list[SseStep], list[SseStep]]:
    turn = plan.turn
    usage_start = {
        "input_tokens": plan.input_tokens,
        "cache_creation_input_tokens": plan.cache.write_tokens,
        "cache_read_input_tokens": plan.cache.read_tokens,
        "output_tokens": 1,
    }
    message: dict[str, Any] = {
        "id": f"msg_scripted_{plan.turn_index}",
        "type": "message",
        "role": "assistant",
        "model": plan.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
    }
    if not turn.omit_usage:
        message["usage"] = usage_start
    steps = [
        SseStep(_event("message_start", {"type": "message_start", "message": message})),
        SseStep(_event("ping", {"type": "ping"})),
    ]
    index = 0
    chunks = turn.text_chunks()
    if chunks:
        steps.append(
            SseStep(
                _event(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
        )
        for chunk in chunks:
            delta = {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": chunk},
            }
            steps.append(SseStep(_event("content_block_delta", delta), chunk=True))
        steps.append(SseStep(_event("content_block_stop", {"type": "content_block_stop", "index": 0})))
        index = 1
    for number, call in enumerate(turn.tool_calls):
        block = {
            "type": "tool_use",
            "id": _call_id("anthropic", plan, number, call),
            "name": call.name,
            "input": {},
        }
        steps.append(
            SseStep(
                _event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": block},
                )
            )
        )
        for fragment in _fragments(call.arguments_text(), call.argument_chunks):
            delta = {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": fragment},
            }
            steps.append(SseStep(_event("content_block_delta", delta), chunk=True))
        steps.append(SseStep(_event("content_block_stop", {"type": "content_block_stop", "index": index})))
        index += 1
    final: dict[str, Any] = {
        "type": "message_delta",
        "delta": {"stop_reason": _STOP["anthropic"][plan.stop], "stop_sequence": None},
    }
    if not turn.omit_usage:
        final["usage"] = {"output_tokens": plan.output_tokens}
    end = [SseStep(_event("message_delta", final)), SseStep(_event("message_stop", {"type": "message_stop"}))]
    return steps, end


def _openai(plan: Plan) -> tuple[list[SseStep], list[SseStep]]:
    turn = plan.turn
    created = int(time.time())
    base = {
        "id": f"chatcmpl-scripted-{plan.turn_index}",
        "object": "chat.completion.chunk",
        "created": created,
    }
    base["model"] = plan.model

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _event(None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    steps = [SseStep(chunk({"role": "assistant", "content": ""}))]
    steps.extend(SseStep(chunk({"content": text}), chunk=True) for text in turn.text_chunks())
    for number, call in enumerate(turn.tool_calls):
        fragments = _fragments(call.arguments_text(), call.argument_chunks) or [""]
        for position, fragment in enumerate(fragments):
            piece: dict[str, Any] = {"index": number, "function": {"arguments": fragment}}
            if position == 0:
                piece["id"] = _call_id("openai", plan, number, call)
                piece["type"] = "function"
                piece["function"]["name"] = call.name
            steps.append(SseStep(chunk({"tool_calls": [piece]}), chunk=True))
    end = [SseStep(chunk({}, _STOP["openai"][plan.stop]))]
    if plan.include_usage:
        usage = {
            "prompt_tokens": plan.input_tokens,
            "completion_tokens": plan.output_tokens,
            "total_tokens": plan.input_tokens + plan.output_tokens,
            "prompt_tokens_details": {"cached_tokens": min(plan.cache.read_tokens, plan.input_tokens)},
        }
        end.append(SseStep(_event(None, {**base, "choices": [], "usage": usage})))
    end.append(SseStep(b"data: [DONE]\n\n"))
    return steps, end
