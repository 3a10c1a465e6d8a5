"""The offline demo model: what the desktop offers when no LLM gateway is configured
(docs/architecture/index.md, "The embedded default").

It is not a language model and says so in every reply. It reads the request and answers
deterministically, in either dialect, and never runs out of turns. It shows what Cowork does with a
short tour, one tool call per turn, each step decided from the calls the current task has made so far:

1. the prompt names a file (``README.md``, ``src/app.py``…) and ``ReadFile`` is offered → it reads
   that file (a prompt without a path gets a canned explanation of the demo, and no tool call);
2. in a project folder, with ``WriteFile`` and ``EditFile`` offered → a small edit to its own file,
   :data:`DEMO_FILE` in the project folder: created with ``WriteFile`` unless an earlier task of the
   conversation made it (then read again with ``ReadFile``), then one line changed with ``EditFile``,
   so the user sees the approval with its diff (when the approval mode asks) and the patch preview;
3. with ``RunCommand`` offered → one harmless command, :data:`DEMO_COMMAND`;
4. then a summary, and the turn ends.

Each reply sums up the previous tool result. A refused or failed step ends the tour (the reading of
the user's file excepted: a missing file is reported and the tour goes on). The demo never touches a
file but the one the user named (read only) and its own, runs nothing but ``echo``, and every call
still passes the policy and, where the policy or approval mode says so, the user's approval.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .dialects import Dialect
from .script import ResponseTurn, ScriptedToolCall

__all__ = ["DEMO_COMMAND", "DEMO_FILE", "DEMO_LABEL", "demo_turn"]

DEMO_LABEL = "[Offline demo model — not a real LLM]"
READ_TOOL = "ReadFile"
WRITE_TOOL = "WriteFile"
EDIT_TOOL = "EditFile"
COMMAND_TOOL = "RunCommand"
DEMO_FILE = "cowork-demo.md"
DEMO_COMMAND = "echo Hello from the Cowork demo"
DRAFT, EDITED = "Status: draft", "Status: edited by the demo"
DEMO_CONTENT = (
    "# Cowork demo\n\n"
    "Cowork's offline demo model wrote this file to show how an edit looks: the next step changes\n"
    "the status line below with EditFile, and Review Changes shows the diff. Delete it when you like.\n\n"
    f"{DRAFT}\n"
)

_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|[~/.\\]|[\w-])[\w.~/\\-]*\.[A-Za-z0-9]{1,10}$")
_TRIM = "\"'`“”‘’()[]{}<>,;:!?"
_PROMPT_PREVIEW = 200
_RESULT_PREVIEW = 160
_FOLDERS_HEADING = "- Project folders"


@dataclass(frozen=True, slots=True)
class _Call:
    """A tool call of the conversation and what came back (``None`` before its result)."""

    name: str
    arguments: dict[str, Any]
    result: str | None = None
    failed: bool = False


def demo_turn(dialect: Dialect, request: dict[str, Any], chunk_delay_ms: int = 0) -> ResponseTurn:
    """The demo model's answer to one request."""
    messages = request.get("messages")
    messages = messages if isinstance(messages, list) else []
    offered = _offered_tools(dialect, request)
    prompt = _last_user_text(dialect, messages)
    before, task = _calls(dialect, messages)
    user_path = _first_path(prompt) if READ_TOOL in offered else None
    if not task:
        if user_path is None:
            return _turn(_explanation(prompt), chunk_delay_ms)
        text = (
            f"{DEMO_LABEL}\nI can't understand requests, but I can show how Cowork uses tools: "
            f"I'll read `{user_path}` with the {READ_TOOL} tool"
            + (", then make a small edit and run a harmless command." if _tour_offered(offered) else ".")
        )
        return _call(text, READ_TOOL, {"path": user_path}, chunk_delay_ms)
    last = task[-1]
    said = _summary(last)
    if last.failed and len(task) > 1:  # a refused or failed step of the tour ends it
        return _turn(f"{DEMO_LABEL}\n{said}\n\n{_THE_END}", chunk_delay_ms)
    demo = _demo_path(request, dialect, offered)
    on_demo = [call for call in task if call.arguments.get("path") == demo] if demo else []
    if demo is not None and not on_demo:
        if any(
            c.name in (WRITE_TOOL, EDIT_TOOL) and c.arguments.get("path") == demo and not c.failed
            for c in before
        ):
            text = f"Next, a small edit. An earlier task made `{demo}`: I'll read it again first."
            return _call(f"{DEMO_LABEL}\n{said}\n\n{text}", READ_TOOL, {"path": demo}, chunk_delay_ms)
        return _call(
            f"{DEMO_LABEL}\n{said}\n\nNext, a small edit. I'll create a demo file, `{demo}`, with"
            f" {WRITE_TOOL}, then change one line of it with {EDIT_TOOL}.",
            WRITE_TOOL,
            {"path": demo, "content": DEMO_CONTENT},
            chunk_delay_ms,
        )
    if demo is not None and not any(call.name == EDIT_TOOL for call in on_demo):
        content = DEMO_CONTENT if last.name == WRITE_TOOL else (last.result or "")
        old, new = (DRAFT, EDITED) if DRAFT in content else (EDITED, DRAFT)
        if old in content:
            return _call(
                f"{DEMO_LABEL}\n{said}\n\nNow the edit: {EDIT_TOOL} changes one line, “{old}” to"
                f" “{new}”. Cowork shows the diff — and asks you first when your approval mode says so.",
                EDIT_TOOL,
                {"path": demo, "oldString": old, "newString": new},
                chunk_delay_ms,
            )
        said += f" It is not the demo's file any more, so I'll leave `{demo}` alone."
    if COMMAND_TOOL in offered and not any(call.name == COMMAND_TOOL for call in task):
        after_edit = " Review Changes shows the diff of the edit." if last.name == EDIT_TOOL else ""
        return _call(
            f"{DEMO_LABEL}\n{said}{after_edit}\n\nLast, a harmless command: `{DEMO_COMMAND}` with"
            f" {COMMAND_TOOL}.",
            COMMAND_TOOL,
            {"command": DEMO_COMMAND},
            chunk_delay_ms,
        )
    return _turn(f"{DEMO_LABEL}\n{said}\n\n{_THE_END}", chunk_delay_ms)


_THE_END = (
    "A real model would now work with these results; the demo stops here. "
    "Connect an LLM gateway in Settings for real work."
)


def _tour_offered(offered: set[str]) -> bool:
    return {WRITE_TOOL, EDIT_TOOL} <= offered or COMMAND_TOOL in offered


def _turn(text: str, chunk_delay_ms: int) -> ResponseTurn:
    return ResponseTurn(text=text, chunk_size=12, chunk_delay_ms=chunk_delay_ms, stop_reason="end_turn")


def _call(text: str, name: str, arguments: dict[str, Any], chunk_delay_ms: int) -> ResponseTurn:
    call = ScriptedToolCall(name=name, arguments=arguments)
    return ResponseTurn(text=text, chunk_size=12, chunk_delay_ms=chunk_delay_ms, tool_calls=[call])


def _explanation(prompt: str) -> str:
    asked = " ".join(prompt.split())
    if len(asked) > _PROMPT_PREVIEW:
        asked = asked[: _PROMPT_PREVIEW - 1] + "…"
    quoted = f"You asked: “{asked}”.\n\n" if asked else ""
    return (
        f"{DEMO_LABEL}\n{quoted}This is Cowork's offline demo model. It does not understand language: "
        "it shows how answers stream in and how tools are used, without credentials or network. "
        f"Mention a file path (for example README.md) and it will read that file with the {READ_TOOL} "
        f"tool, then, in a project folder, make a small edit to a demo file of its own ({DEMO_FILE}) and "
        "run a harmless command.\n\nTo get real answers, connect an LLM gateway (Anthropic, OpenAI, "
        "Ollama or LiteLLM) in Settings."
    )


def _summary(call: _Call) -> str:
    content = call.result or ""
    if call.failed:
        return f"The {call.name} call did not succeed: {_preview(content) or 'no details'}."
    if call.name == READ_TOOL:
        lines = [line for line in content.splitlines() if line.strip()]
        first = f" Its first line reads: “{_preview(lines[0])}”." if lines else ""
        return f"The tool returned {len(content):,} characters in {len(lines):,} non-empty lines.{first}"
    if call.name == COMMAND_TOOL:
        return f"The command ran: “{_preview(content) or 'no output'}”."
    return f"{call.name} succeeded: {_preview(content) or 'done'}."


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


def _user_text(dialect: Dialect, message: Any) -> str:
    """What the user typed in ``message`` ("" for a message of tool results only)."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return ""
    return _text_of(message.get("content"))


def _calls(dialect: Dialect, messages: list[Any]) -> tuple[list[_Call], list[_Call]]:
    """The tool calls of the conversation with their results: those before the user's last message,
    and those since (the current task's), each in order."""
    results: dict[str, tuple[str, bool]] = {}
    for message in messages:
        if not isinstance(message, dict):
            continue
        if dialect == "openai" and message.get("role") == "tool":
            text = _text_of(message.get("content"))
            results[str(message.get("tool_call_id"))] = (text, text.startswith("[tool call "))
        elif (
            dialect == "anthropic"
            and message.get("role") == "user"
            and isinstance(message.get("content"), list)
        ):
            for part in message["content"]:
                if isinstance(part, dict) and part.get("type") == "tool_result":
                    results[str(part.get("tool_use_id"))] = (
                        _text_of(part.get("content")),
                        bool(part.get("is_error")),
                    )
    last_user = max((i for i, m in enumerate(messages) if _user_text(dialect, m).strip()), default=-1)
    before: list[_Call] = []
    task: list[_Call] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        for call_id, name, arguments in _assistant_calls(dialect, message):
            result, failed = results.get(call_id, (None, False))
            (task if index > last_user else before).append(_Call(name, arguments, result, failed))
    return before, task


def _assistant_calls(dialect: Dialect, message: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    found: list[tuple[str, str, dict[str, Any]]] = []
    if dialect == "openai":
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except (TypeError, ValueError):
                arguments = {}
            found.append(
                (
                    str(call.get("id")),
                    str(function.get("name")),
                    arguments if isinstance(arguments, dict) else {},
                )
            )
        return found
    content = message.get("content")
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "tool_use":
            arguments = part.get("input")
            found.append(
                (str(part.get("id")), str(part.get("name")), arguments if isinstance(arguments, dict) else {})
            )
    return found


def _system_text(dialect: Dialect, request: dict[str, Any]) -> str:
    if dialect == "anthropic":
        return _text_of(request.get("system"))
    messages = request.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    return _text_of(first.get("content")) if isinstance(first, dict) and first.get("role") == "system" else ""


def _demo_path(request: dict[str, Any], dialect: Dialect, offered: set[str]) -> str | None:
    """The demo's own file in the session's first project folder, as Cowork's system prompt names
    it; ``None`` without a project folder or the tools to edit."""
    if not {WRITE_TOOL, EDIT_TOOL} <= offered:
        return None
    lines = _system_text(dialect, request).splitlines()
    for index, line in enumerate(lines[:-1]):
        if line.startswith(_FOLDERS_HEADING) and lines[index + 1].startswith("  - "):
            folder = lines[index + 1][4:].strip()
            windows = "\\" in folder and "/" not in folder
            return folder.rstrip("/\\") + ("\\" if windows else "/") + DEMO_FILE
    return None


def _last_user_text(dialect: Dialect, messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            text = _text_of(message.get("content"))
            if text.strip():
                return text
    return ""
