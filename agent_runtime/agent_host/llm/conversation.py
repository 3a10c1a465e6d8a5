"""The thread reshaped into turns both dialects accept (seed 000 §5.2, §6.2).

The thread (``ConversationMessage`` list) may hold what neither API takes as is: system-role notes in
the middle (the truncation marker of §5.4, the guardrail note of §6.4), several messages of one role
in a row, tool results whose call was truncated away, calls whose result never arrived (a crash
mid-step). Both APIs answer such requests with HTTP 400, which no retry can fix and which fails the
task, so the request is made valid here, once, for both dialects:

* user, system and tool messages form **user turns**; assistant messages form **assistant turns**;
  consecutive messages of one side merge into one turn, so roles alternate;
* a system-role message becomes user-side text at its place, prefixed ``[System note]``: the notes
  are positional (they mark where history was cut, or what happened after a turn), Anthropic has no
  system role inside ``messages``, and chat templates of open models served by vLLM often require
  strict user/assistant alternation. The top-level system prompt stays in its own field;
* a user turn's tool results answer the calls of the assistant turn just before it, in call order;
  a call without a result gets an error result saying none was recorded; a result that answers no
  call of that turn becomes user text, so nothing the model should see is lost;
* empty and whitespace-only texts are dropped (Anthropic refuses them); a conversation that starts
  with an assistant turn gets a short user turn before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from contracts.enums import Role, ToolStatus
from contracts.messages import ConversationMessage
from contracts.tools import ToolCall

__all__ = [
    "MISSING_RESULT_TEXT",
    "SYSTEM_NOTE_PREFIX",
    "AssistantTurn",
    "ToolResultPart",
    "Turn",
    "UserTurn",
    "build_turns",
]

SYSTEM_NOTE_PREFIX = "[System note] "
MISSING_RESULT_TEXT = "No result was recorded for this tool call (the step was interrupted)."
CONTINUES_TEXT = "[Earlier conversation not shown]"


@dataclass(slots=True)
class ToolResultPart:
    tool_call_id: str
    tool_name: str | None
    content: str
    status: ToolStatus

    @property
    def is_error(self) -> bool:
        return self.status is not ToolStatus.SUCCEEDED


@dataclass(slots=True)
class UserTurn:
    results: list[ToolResultPart] = field(default_factory=list)
    """Tool results, in the order of the calls they answer; always before ``texts`` on the wire."""
    texts: list[str] = field(default_factory=list)


@dataclass(slots=True)
class AssistantTurn:
    texts: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)


Turn = UserTurn | AssistantTurn


@dataclass(slots=True)
class _RawUser:
    items: list[str | ToolResultPart] = field(default_factory=list)


def build_turns(messages: Sequence[ConversationMessage]) -> list[Turn]:
    raw: list[_RawUser | AssistantTurn] = []
    for message in messages:
        if message.role is Role.ASSISTANT:
            has_text = bool(message.content.strip())
            if not has_text and not message.tool_calls:
                continue
            if not raw or not isinstance(raw[-1], AssistantTurn):
                raw.append(AssistantTurn())
            assistant = raw[-1]
            assert isinstance(assistant, AssistantTurn)
            if has_text:
                assistant.texts.append(message.content)
            assistant.tool_calls.extend(message.tool_calls or [])
            continue
        item: str | ToolResultPart
        if message.role is Role.TOOL:
            assert message.tool_call_id is not None  # guaranteed by ConversationMessage's validator
            item = ToolResultPart(
                tool_call_id=message.tool_call_id,
                tool_name=message.tool_name,
                content=message.content,
                status=message.tool_status or ToolStatus.SUCCEEDED,
            )
        elif not message.content.strip():
            continue
        elif message.role is Role.SYSTEM:
            item = SYSTEM_NOTE_PREFIX + message.content
        else:
            item = message.content
        if not raw or not isinstance(raw[-1], _RawUser):
            raw.append(_RawUser())
        user = raw[-1]
        assert isinstance(user, _RawUser)
        user.items.append(item)

    turns: list[Turn] = []
    for entry in raw:
        if isinstance(entry, AssistantTurn):
            turns.append(entry)
            continue
        calls = turns[-1].tool_calls if turns and isinstance(turns[-1], AssistantTurn) else []
        turns.append(_pair(entry, calls))
    if turns and isinstance(turns[-1], AssistantTurn) and turns[-1].tool_calls:
        turns.append(_pair(_RawUser(), turns[-1].tool_calls))
    if turns and isinstance(turns[0], AssistantTurn):
        turns.insert(0, UserTurn(texts=[CONTINUES_TEXT]))
    return turns


def _pair(user: _RawUser, calls: list[ToolCall]) -> UserTurn:
    expected = {call.tool_call_id for call in calls}
    answered: dict[str, ToolResultPart] = {}
    texts: list[str] = []
    for item in user.items:
        if isinstance(item, str):
            texts.append(item)
        elif item.tool_call_id in expected and item.tool_call_id not in answered:
            answered[item.tool_call_id] = item
        else:
            texts.append(_orphan_text(item))
    results = [
        answered.get(call.tool_call_id)
        or ToolResultPart(call.tool_call_id, call.tool_name, MISSING_RESULT_TEXT, ToolStatus.FAILED)
        for call in calls
    ]
    return UserTurn(results=results, texts=texts)


def _orphan_text(result: ToolResultPart) -> str:
    name = result.tool_name or "a tool"
    return f"[Result of {name} call {result.tool_call_id}, {result.status.value}]\n{result.content}"
