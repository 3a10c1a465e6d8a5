"""The offline demo model: what the desktop offers when no LLM gateway is configured (DESIGN.md).

It is not a language model and says so in every reply. It reads the request and answers
deterministically, in either dialect, and never runs out of turns:

1. the last message is a tool result → a short summary of what the tool returned, then the turn ends;
2. the request offers ``ReadFile`` and the prompt mentions a file path (``README.md``,
   ``src/app.py``, ``/etc/hosts``…) → one read-only ``ReadFile`` call for the first such path;
3. otherwise → a canned explanation of what the demo is and how to connect a real model.

Only ``ReadFile`` is ever called, and only for a path the user typed: the demo never writes, deletes,
runs commands or makes HTTP requests, and what it reads still passes the policy and, where the policy
says so, the user's approval.
"""

from __future__ import annotations

import re
from typing import Any

from .dialects import Dialect
from .script import ResponseTurn, ScriptedToolCall

__all__ = ["DEMO_LABEL", "demo_turn"]

DEMO_LABEL = "[Offline demo model — not a real LLM]"
READ_TOOL = "ReadFile"

_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|[~/.\\]|[\w-])[\w.~/\\-]*\.[A-Za-z0-9]{1,10}$")
_TRIM = "\"'`“”‘’()[]{}<>,;:!?"
_PROMPT_PREVIEW = 200
_RESULT_PREVIEW = 160


def demo_turn(dialect: Dialect, request: dict[str, Any], chunk_delay_ms: int = 0) -> ResponseTurn:
    """The demo model's answer to one request."""
    messages = request.get("messages")
    messages = messages if isinstance(messages, list) else []
    result = _last_tool_result(dialect, messages)
    if result is not None:
        return _turn(_summary(result), chunk_delay_ms)
    prompt = _last_user_text(dialect, messages)
    path = _first_path(prompt) if READ_TOOL in _offered_tools(dialect, request) else None
    if path is not None:
        text = (
            f"{DEMO_LABEL}\nI can't understand requests, but I can show how Cowork uses tools: "
            f"I'll read `{path}` with the {READ_TOOL} tool."
        )
        call = ScriptedToolCall(name=READ_TOOL, arguments={"path": path})
        return ResponseTurn(text=text, chunk_size=12, chunk_delay_ms=chunk_delay_ms, tool_calls=[call])
    return _turn(_explanation(prompt), chunk_delay_ms)


def _turn(text: str, chunk_delay_ms: int) -> ResponseTurn:
    return ResponseTurn(text=text, chunk_size=12, chunk_delay_ms=chunk_delay_ms, stop_reason="end_turn")


def _explanation(prompt: str) -> str:
    asked = " ".join(prompt.split())
    if len(asked) > _PROMPT_PREVIEW:
        asked = asked[: _PROMPT_PREVIEW - 1] + "…"
    quoted = f"You asked: “{asked}”.\n\n" if asked else ""
    return (
        f"{DEMO_LABEL}\n{quoted}This is Cowork's offline demo model. It does not understand language: "
        "it shows how answers stream in and how tools are used, without credentials or network. "
        f"Mention a file path (for example README.md) and it will read that file with the {READ_TOOL} "
        "tool.\n\nTo get real answers, connect an LLM gateway (Anthropic, OpenAI, Ollama or LiteLLM) "
        "in Settings."
    )


def _summary(result: tuple[str, bool]) -> str:
    content, failed = result
    if failed:
        return (
            f"{DEMO_LABEL}\nThe tool call did not succeed: {_preview(content) or 'no details'}.\n\n"
            "That is as far as the demo goes. Connect an LLM gateway in Settings for real work."
        )
    lines = [line for line in content.splitlines() if line.strip()]
    first = f" Its first line reads: “{_preview(lines[0])}”." if lines else ""
    return (
        f"{DEMO_LABEL}\nThe tool returned {len(content):,} characters in {len(lines):,} non-empty lines."
        f"{first}\n\nA real model would now work with this content; the demo stops here. "
        "Connect an LLM gateway in Settings for real work."
    )


def _preview(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _RESULT_PREVIEW else text[: _RESULT_PREVIEW - 1] + "…"


def _first_path(prompt: str) -> str | None:
    for word in prompt.split():
        candidate = word.strip(_TRIM).rstrip(".")
        if "://" in word or "@" in candidate or len(candidate) > 260:
            continue
        if _PATH.match(candidate) and not candidate.replace(".", "").isdigit():
            return candidate
    return None


def _offered_tools(dialect: Dialect, request: dict[str, Any]) -> set[str]:
    tools = request.get("tools")
    names: set[str] = set()
    if not isinstance(tools, list):
        return names
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        holder = tool.get("function") if dialect == "openai" else tool
        if isinstance(holder, dict) and isinstance(holder.get("name"), str):
            names.add(holder["name"])
    return names


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        )
    return ""


def _last_tool_result(dialect: Dialect, messages: list[Any]) -> tuple[str, bool] | None:
    if not messages or not isinstance(messages[-1], dict):
        return None
    last = messages[-1]
    if dialect == "openai":
        if last.get("role") != "tool":
            return None
        text = _text_of(last.get("content"))
        return text, text.startswith(("[tool call failed]", "[tool call denied]"))
    blocks = last.get("content")
    if last.get("role") != "user" or not isinstance(blocks, list):
        return None
    results = [part for part in blocks if isinstance(part, dict) and part.get("type") == "tool_result"]
    if not results:
        return None
    result = results[-1]
    return _text_of(result.get("content")), bool(result.get("is_error"))


def _last_user_text(dialect: Dialect, messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            text = _text_of(message.get("content"))
            if text.strip():
                return text
    return ""
