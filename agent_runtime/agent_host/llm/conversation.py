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
* a user message's images join its turn, before the turn's texts (an image kept only as an
  artifact, in a history, is replaced by a note saying so);
* empty and whitespace-only texts are dropped (Anthropic refuses them); a conversation that starts
  with an assistant turn gets a short user turn before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from contracts.enums import Role, ToolStatus
from contracts.images import ImageContent
from contracts.messages import ConversationMessage
from contracts.tools import ToolCall

__all__ = [
    "MISSING_RESULT_TEXT",
    "SYSTEM_NOTE_PREFIX",
    "AssistantTurn",
    "ToolResultPart",
    "Turn",
    "TurnSpan",
    "UserTurn",
    "build_turns",
    "merges_with",
    "turn_spans",
]

SYSTEM_NOTE_PREFIX = "[System note] "
MISSING_RESULT_TEXT = "No result was recorded for this tool call (the step was interrupted)."
CONTINUES_TEXT = "[Earlier conversation not shown]"
UNAVAILABLE_IMAGE_TEXT = "[An image the user attached here is no longer available]"


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
    images: list[ImageContent] = field(default_factory=list)
    """Images the user attached, each with its data; on the wire before ``texts`` (models read an
    image best before the words about it)."""


@dataclass(slots=True)
class AssistantTurn:
    texts: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)


Turn = UserTurn | AssistantTurn


@dataclass(slots=True)
class _RawUser:
    items: list[str | ToolResultPart] = field(default_factory=list)
    images: list[ImageContent] = field(default_factory=list)


def build_turns(messages: Sequence[ConversationMessage]) -> list[Turn]:
    return [span.turn for span in turn_spans(messages)]


@dataclass(slots=True)
class TurnSpan:
    """A turn and the messages it was made of: ``messages[start:end]`` (skipped empty messages
    included; a turn made up here — a missing result, the opening note — is empty, ``start == end``)."""

    turn: Turn
    start: int
    end: int


def turn_spans(
    messages: Sequence[ConversationMessage], start: int = 0, *, after: Turn | None = None
) -> list[TurnSpan]:
    """The turns of ``messages[start:]`` with the span of each, as :func:`build_turns` makes them.

    ``after`` is the turn built just before ``start`` (its messages unchanged): the first user turn
    answers its tool calls, and no opening note is added. The caller keeps the turn from ``messages``
    that could merge with ``messages[start]`` out of ``after`` (:func:`merges_with`)."""
    raw: list[tuple[_RawUser | AssistantTurn, int, int]] = []
    for index in range(start, len(messages)):
        message = messages[index]
        if message.role is Role.ASSISTANT:
            has_text = bool(message.content.strip())
            if not has_text and not message.tool_calls:
                continue
            if not raw or not isinstance(raw[-1][0], AssistantTurn):
                raw.append((AssistantTurn(), index, index + 1))
            assistant, first, _ = raw[-1]
            assert isinstance(assistant, AssistantTurn)
            raw[-1] = (assistant, first, index + 1)
            if has_text:
                assistant.texts.append(message.content)
            assistant.tool_calls.extend(message.tool_calls or [])
            continue
        item = _user_item(message)
        if item is None:
            continue
        if not raw or not isinstance(raw[-1][0], _RawUser):
            raw.append((_RawUser(), index, index + 1))
        user, first, _ = raw[-1]
        assert isinstance(user, _RawUser)
        raw[-1] = (user, first, index + 1)
        if not isinstance(item, ToolResultPart) and message.images:
            sendable = [image for image in message.images if image.data is not None]
            user.images.extend(sendable)
            if len(sendable) < len(message.images):
                item += "\n" + UNAVAILABLE_IMAGE_TEXT
        user.items.append(item)

    spans: list[TurnSpan] = []
    for entry, first, end in raw:
        if isinstance(entry, AssistantTurn):
            spans.append(TurnSpan(entry, first, end))
            continue
        before = spans[-1].turn if spans else after
        calls = before.tool_calls if isinstance(before, AssistantTurn) else []
        spans.append(TurnSpan(_pair(entry, calls), first, end))
    last = spans[-1].turn if spans else after
    if isinstance(last, AssistantTurn) and last.tool_calls and (spans or after is not None):
        spans.append(TurnSpan(_pair(_RawUser(), last.tool_calls), len(messages), len(messages)))
    if after is None and spans and isinstance(spans[0].turn, AssistantTurn):
        spans.insert(0, TurnSpan(UserTurn(texts=[CONTINUES_TEXT]), start, start))
    return spans


def merges_with(turn: Turn, message: ConversationMessage) -> bool:
    """Whether ``message`` would join ``turn`` if it came right after it (one side's messages in a
    row make one turn); an empty message that would be skipped joins nothing."""
    if message.role is Role.ASSISTANT:
        joins = bool(message.content.strip()) or bool(message.tool_calls)
        return joins and isinstance(turn, AssistantTurn)
    return isinstance(turn, UserTurn) and _user_item(message) is not None


def _user_item(message: ConversationMessage) -> str | ToolResultPart | None:
    """What a user, system or tool message adds to a user turn; None for an empty one (dropped)."""
    if message.role is Role.TOOL:
        assert message.tool_call_id is not None  # guaranteed by ConversationMessage's validator
        return ToolResultPart(
            tool_call_id=message.tool_call_id,
            tool_name=message.tool_name,
            content=message.content,
            status=message.tool_status or ToolStatus.SUCCEEDED,
        )
    if not message.content.strip():
        return "" if message.images else None
    if message.role is Role.SYSTEM:
        return SYSTEM_NOTE_PREFIX + message.content
    return message.content


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
    return UserTurn(results=results, texts=[text for text in texts if text], images=user.images)


def _orphan_text(result: ToolResultPart) -> str:
    name = result.tool_name or "a tool"
    return f"[Result of {name} call {result.tool_call_id}, {result.status.value}]\n{result.content}"
